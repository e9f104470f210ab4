//! The errors of every git-agent task.

/// Why a task could not produce its artifact.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error(transparent)]
    Git(#[from] gitctx::Error),
    /// `commit-msg`/`commit` without `--amend` and an empty index diff.
    #[error("nothing is staged: stage the changes to describe with `git add` first")]
    NothingStaged,
    /// `--amend` on a branch without commits.
    #[error("there is no commit to amend yet: HEAD has no commits")]
    NothingToAmend,
    /// `pr-message` without `origin/HEAD`.
    #[error(
        "origin/HEAD is not set, so there is no base branch to compare with: run `git remote set-head origin --auto` (or `git remote set-head origin main`)"
    )]
    NoOriginHead,
    /// `pr-message` on a branch with no commits beyond its base.
    #[error("HEAD has no commits beyond {base}: there is nothing to describe")]
    NothingToDescribe { base: String },
    /// `pr-message` when HEAD and the base share no history.
    #[error("HEAD and {base} have no common history: there is no merge base to compare with")]
    UnrelatedHistories { base: String },
    /// `release-note patch|minor|major` without a version tag to start from.
    #[error(
        "no tag like v1.2.3 or 1.2.3 is reachable from HEAD, so there is no version to bump: pass BASE and RELEASE instead, e.g. `git-agent release-note <first-commit> HEAD`"
    )]
    NoVersionTag,
    /// `release-note` over a range without commits.
    #[error(
        "there are no commits between {base} and {release}: nothing to write about (is the order BASE RELEASE?)"
    )]
    EmptyRange { base: String, release: String },
    /// `release-note --out`: the file cannot be written.
    #[error("cannot write {}: {source}", path.display())]
    Output {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("project guidance: {0}")]
    Guidance(#[from] guidance::GuidanceError),
    /// An option value that cannot be used.
    #[error("{0}")]
    InvalidOption(String),
    /// The model's run failed (provider error, timeout, tools misused).
    #[error(transparent)]
    Agent(agent::AgentError),
    /// The message still broke the rules after the repair pass.
    #[error(
        "the generated message is still invalid after one repair pass: {}",
        agent::problem_summary(problems)
    )]
    Invalid {
        problems: Vec<String>,
        /// The last message, for the user to fix by hand.
        message: String,
    },
    /// `.git-agent/` comes with the repository: git tracks something there, so
    /// it is not ours to write into.
    #[error(
        "git tracks {} (for example '{example}'), so git-agent will not write its traces or messages there: run `git rm -r --cached {dir}` and add `{dir}/` to .gitignore",
        dir
    )]
    TrackedDir { dir: String, example: String },
    /// A file of git-agent's own could not be written safely (a symbolic
    /// link or special file where it belongs).
    #[error(transparent)]
    Unsafe(#[from] safe_io::Error),
    /// The session trace directory could not be created.
    #[error("could not create the trace session {}: {source}", path.display())]
    Session {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl From<agent::AgentError> for Error {
    fn from(err: agent::AgentError) -> Self {
        match err {
            agent::AgentError::Invalid { problems, output } => Error::Invalid {
                problems,
                message: output,
            },
            other => Error::Agent(other),
        }
    }
}
