//! Every library error type the binaries meet, classified once ([`Classify`]),
//! so `?` turns each into a [`crate::CommandError`] of the right kind.
//!
//! A wrapper delegates to what it wraps (a provider error inside an agent error
//! is a provider error wherever it surfaces). Library enums are
//! `#[non_exhaustive]`: a variant added later is classified by the `_` arm of
//! its type, which names the most likely kind.

use code_commit_core::build::BuildError;
use ultragit_annotate::{AgentError as AnnotateAgentError, AnnotateError};
use ultragit_notes::NotesError;

use crate::error::{Classify, ErrorKind};
use crate::openai::AuthError;
use crate::provider::ProviderError;

impl Classify for gitctx::Error {
    fn kind(&self) -> ErrorKind {
        use gitctx::Error as E;
        match self {
            E::NotARepository { .. }
            | E::BareRepository { .. }
            | E::UnsafeRepository { .. }
            | E::RevNotFound { .. }
            | E::AmbiguousRev { .. }
            | E::WrongObjectKind { .. }
            | E::UnbornHead { .. }
            | E::PathNotFound { .. }
            | E::NotAFile { .. }
            | E::InvalidLineRange { .. }
            | E::InvalidInput { .. }
            | E::NoteTooLarge { .. } => ErrorKind::User,
            E::Unsafe(err) => err.kind(),
            _ => ErrorKind::Git,
        }
    }
}

impl Classify for safe_io::Error {
    /// A link, a special file or an oversized file where a file of ours or of
    /// the repository belongs: the user removes it. A plain I/O failure too is
    /// about the user's files (permissions, a full disk).
    fn kind(&self) -> ErrorKind {
        ErrorKind::User
    }
}

impl Classify for llm::LlmError {
    fn kind(&self) -> ErrorKind {
        match self {
            llm::LlmError::Config { .. } => ErrorKind::Config,
            _ => ErrorKind::Provider,
        }
    }
}

impl Classify for agent::AgentError {
    fn kind(&self) -> ErrorKind {
        match self {
            agent::AgentError::Provider(err) => err.kind(),
            _ => ErrorKind::Provider,
        }
    }
}

impl Classify for ProviderError {
    fn kind(&self) -> ErrorKind {
        match self {
            ProviderError::MissingKey { .. } => ErrorKind::Config,
            ProviderError::Llm(err) => err.kind(),
        }
    }
}

impl Classify for AuthError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Config
    }
}

impl Classify for ultragit_read::ReadError {
    fn kind(&self) -> ErrorKind {
        use ultragit_read::ReadError as E;
        match self {
            E::Blame { .. } => ErrorKind::Git,
            E::Git(err) => err.kind(),
            E::Config(_) | E::ConfigFile(_) => ErrorKind::Config,
            _ => ErrorKind::User,
        }
    }
}

impl Classify for AnnotateAgentError {
    fn kind(&self) -> ErrorKind {
        match self {
            AnnotateAgentError::Provider(err) => err.kind(),
            AnnotateAgentError::Git { .. } => ErrorKind::Git,
            _ => ErrorKind::Provider,
        }
    }
}

impl Classify for AnnotateError {
    fn kind(&self) -> ErrorKind {
        match self {
            AnnotateError::Agent(err) => err.kind(),
            AnnotateError::Git(err) => err.kind(),
            AnnotateError::Config(_) | AnnotateError::ConfigFile(_) => ErrorKind::Config,
            AnnotateError::Unsafe(err) => err.kind(),
            AnnotateError::Notes(err) => err.kind(),
            _ => ErrorKind::User,
        }
    }
}

impl Classify for NotesError {
    fn kind(&self) -> ErrorKind {
        match self {
            NotesError::Git(err) => err.kind(),
            NotesError::Unsafe(err) => err.kind(),
            NotesError::Io { .. } => ErrorKind::Internal,
            _ => ErrorKind::User,
        }
    }
}

impl Classify for git_evidence::Error {
    fn kind(&self) -> ErrorKind {
        use git_evidence::Error as E;
        match self {
            E::Git(err) => err.kind(),
            E::Agent(err) => err.kind(),
            E::Invalid { .. } => ErrorKind::Provider,
            E::Unsafe(err) => err.kind(),
            E::Session { .. } => ErrorKind::Internal,
            _ => ErrorKind::User,
        }
    }
}

impl Classify for code_commit_core::Error {
    fn kind(&self) -> ErrorKind {
        use code_commit_core::Error as E;
        match self {
            E::Git(err) => err.kind(),
            E::Config(_) | E::ConfigValue(_) => ErrorKind::Config,
            E::Provider(err) => err.kind(),
            E::Build(err) => match err {
                BuildError::Missing { .. } | BuildError::NotAFile { .. } => ErrorKind::User,
                BuildError::Sandbox(_) => ErrorKind::Config,
                _ => ErrorKind::Internal,
            },
            E::Apply(_) | E::Io { .. } => ErrorKind::Internal,
            _ => ErrorKind::User,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_errors_and_git_failures_are_told_apart() {
        let not_a_repo = gitctx::Error::NotARepository {
            path: "/tmp/x".into(),
        };
        assert_eq!(not_a_repo.kind(), ErrorKind::User);
        let failed = gitctx::Error::Command {
            args: "blame".into(),
            status: "exit status 128".into(),
            stderr: String::new(),
        };
        assert_eq!(failed.kind(), ErrorKind::Git);
        let read = ultragit_read::ReadError::Git(failed);
        assert_eq!(read.kind(), ErrorKind::Git);
        let core = git_evidence::Error::Git(not_a_repo);
        assert_eq!(core.kind(), ErrorKind::User);
        assert_eq!(git_evidence::Error::NothingStaged.kind(), ErrorKind::User);
    }

    #[test]
    fn a_provider_error_is_one_wherever_it_surfaces() {
        let api = || llm::LlmError::Api {
            provider: "openai-chat",
            status: 401,
            message: "bad key".into(),
        };
        assert_eq!(api().kind(), ErrorKind::Provider);
        assert_eq!(
            agent::AgentError::Provider(api()).kind(),
            ErrorKind::Provider
        );
        assert_eq!(
            git_evidence::Error::from(agent::AgentError::Provider(api())).kind(),
            ErrorKind::Provider
        );
        assert_eq!(
            AnnotateError::Agent(AnnotateAgentError::Provider(api())).kind(),
            ErrorKind::Provider
        );
        assert_eq!(
            code_commit_core::Error::Provider(api()).kind(),
            ErrorKind::Provider
        );
        let config = llm::LlmError::Config {
            provider: "openai-chat",
            message: "no model".into(),
        };
        assert_eq!(ProviderError::Llm(config).kind(), ErrorKind::Config);
        let missing = ProviderError::MissingKey {
            variable: "KEY".into(),
        };
        assert_eq!(missing.kind(), ErrorKind::Config);
    }

    #[test]
    fn a_configuration_error_keeps_its_cause() {
        let cause = || layered_config::ConfigError::File {
            file: ".ultragit-config.toml".into(),
            message: "unknown field `modle`".into(),
        };
        let read = ultragit_read::ReadError::Config(cause());
        assert_eq!(read.kind(), ErrorKind::Config);
        let annotate = AnnotateError::Config(cause());
        assert_eq!(annotate.kind(), ErrorKind::Config);
        for err in [
            crate::CommandError::from(read),
            crate::CommandError::from(annotate),
        ] {
            assert_eq!(err.kind(), ErrorKind::Config);
            let debug = err.render(true);
            assert!(
                debug.ends_with("\ncaused by: .ultragit-config.toml: unknown field `modle`\n"),
                "{debug}"
            );
            assert!(!err.render(false).contains("caused by"));
        }
        let core = code_commit_core::Error::ConfigValue(cause());
        assert_eq!(core.kind(), ErrorKind::Config);
        let source = std::error::Error::source(&core).map(ToString::to_string);
        assert_eq!(source.as_deref(), Some(cause().to_string().as_str()));
    }
}
