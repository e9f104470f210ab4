//! `frontend`: the wiring the three binaries (`ultragit`, `git-agent`,
//! `code-commit`) share, so none of them carries a copy.
//!
//! Today: the hidden `--generate` flag (shell completions for `make install`), the
//! mapping of output errors to exit codes (a closed pipe is not a failure),
//! [`env`]: the environment variables the binaries read and how they become library
//! settings (proxies, author context names), [`provider`]: building the LLM
//! provider from provider settings and the key's variable, and [`openai`]:
//! `git-agent`'s resolution of OpenAI credentials (flag → Codex ChatGPT sign-in →
//! `OPENAI_*` → default).
//!
//! - **Dependencies:** `llm` (its settings types and `build_provider`); `clap`,
//!   `clap_complete`, `serde_json` (Codex's `auth.json`).
//! - **Invariant:** this crate never prints, exits or reads the environment itself;
//!   it returns bytes and exit codes, and the binary's `main` does the I/O.

pub mod env;
pub mod openai;
pub mod provider;

use std::io;
use std::process::ExitCode;

use clap_complete::Shell;

/// What the hidden `--generate` flag can produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generate {
    /// Completions for fish (what `make install` installs).
    CompleteFish,
    /// Completions for bash.
    CompleteBash,
    /// Completions for zsh.
    CompleteZsh,
}

impl Generate {
    const ALL: [(&'static str, Generate); 3] = [
        ("complete-fish", Generate::CompleteFish),
        ("complete-bash", Generate::CompleteBash),
        ("complete-zsh", Generate::CompleteZsh),
    ];
}

/// Recognises `BINARY --generate KIND` (or `--generate=KIND`) as the whole command
/// line. The flag is handled before clap sees the arguments so that it stays out of
/// `--help` and out of the completions it generates.
///
/// `None`: not a generate request, parse normally. `Some(Err(message))`: a generate
/// request with an unknown kind.
pub fn generate_request(args: &[std::ffi::OsString]) -> Option<Result<Generate, String>> {
    let first = args.get(1)?.to_str()?;
    let kind = match first.strip_prefix("--generate") {
        Some("") if args.len() == 3 => args[2].to_str().unwrap_or_default(),
        Some(rest) if args.len() == 2 && rest.starts_with('=') => &rest[1..],
        _ => return None,
    };
    let known = Generate::ALL.iter().find(|(name, _)| *name == kind);
    Some(match known {
        Some((_, generate)) => Ok(*generate),
        None => {
            let names: Vec<&str> = Generate::ALL.iter().map(|(name, _)| *name).collect();
            Err(format!(
                "unknown --generate value '{kind}' (expected one of: {})",
                names.join(", ")
            ))
        }
    })
}

/// The generated text for `kind`, for the command `cmd` (its name is the binary's).
pub fn generate(kind: Generate, mut cmd: clap::Command) -> Vec<u8> {
    let shell = match kind {
        Generate::CompleteFish => Shell::Fish,
        Generate::CompleteBash => Shell::Bash,
        Generate::CompleteZsh => Shell::Zsh,
    };
    let name = cmd.get_name().to_owned();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, name, &mut out);
    out
}

/// Exit status for the result of writing a command's output: success, or a closed
/// pipe (`tool | head`), exits 0; any other write error is a failure.
pub fn output_status(result: io::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fish_completions_name_the_binary_and_its_flags() {
        let cmd = clap::Command::new("demo").arg(
            clap::Arg::new("verbose")
                .long("verbose")
                .action(clap::ArgAction::SetTrue),
        );
        let text = String::from_utf8(generate(Generate::CompleteFish, cmd)).unwrap();
        assert!(text.contains("complete -c demo"), "{text}");
        assert!(text.contains("-l verbose"), "{text}");
    }

    #[test]
    fn recognises_generate_requests_only_as_the_whole_command_line() {
        let args = |list: &[&str]| {
            list.iter()
                .map(std::ffi::OsString::from)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            generate_request(&args(&["bin", "--generate", "complete-fish"])),
            Some(Ok(Generate::CompleteFish))
        );
        assert_eq!(
            generate_request(&args(&["bin", "--generate=complete-zsh"])),
            Some(Ok(Generate::CompleteZsh))
        );
        assert!(matches!(
            generate_request(&args(&["bin", "--generate", "man"])),
            Some(Err(message)) if message.contains("complete-fish")
        ));
        assert_eq!(generate_request(&args(&["bin"])), None);
        assert_eq!(
            generate_request(&args(&["bin", "read", "--generate", "x"])),
            None
        );
        assert_eq!(generate_request(&args(&["bin", "--generate"])), None);
    }

    #[test]
    fn broken_pipe_is_success() {
        let pipe = io::Error::from(io::ErrorKind::BrokenPipe);
        assert_eq!(output_status(Err(pipe)), ExitCode::SUCCESS);
        let other = io::Error::other("disk full");
        assert_eq!(output_status(Err(other)), ExitCode::FAILURE);
        assert_eq!(output_status(Ok(())), ExitCode::SUCCESS);
    }
}
