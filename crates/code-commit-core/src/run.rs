//! The edit loop of spec 001: one initial attempt and up to three repair
//! rounds.
//!
//! ```text
//! preflight ─▶ prompt ─▶ model ─▶ parse ─▶ verify every block ─▶ apply all-or-nothing ─▶ build.sh
//!                ▲                  │ rejected (no blocks, bad syntax, a        │ fails
//!                │                  │ protected path, cut off, elided…)          │
//!                └── repair prompt ◀┴────────────────────────────────────────────┘
//! ```
//!
//! A rejected response changes nothing on disk and counts as a failed attempt;
//! the repair prompt then carries why it was rejected and, when a build ran
//! before, that build's output (still true of the files on disk). The build
//! output a repair prompt carries is bounded by
//! [`RunOptions::build_output_bytes`] (256 KiB by default; spec 001 asks for
//! the entire output): beyond it the start and the end are kept, the cut
//! marked. When every round is used, the report's `failure` says in the user's
//! words what happened last: the build still failing (with the end of its
//! output), or the model's last answer rejected (build.sh did not run on it).
//! Repair stops early when the model repeats its previous response. By default
//! a failed run keeps its changes for the supervisor to review with git, and
//! says so ([`Step::Undo`], [`Report::undo`]): the files, and the commands that
//! undo them (code-commit never stages). With
//! [`RunOptions::revert_on_failure`] it puts back exactly the files it changed
//! and nothing else (see [`crate::undo`]).
//!
//! Around every build the protected files (`protect`) are compared:
//! a build that changed, created or deleted one fails its attempt, the files are
//! named in the progress, the log (`N-tampered.txt`) and the report, and the run
//! stops there. The first build reports how it was confined ([`Step::Sandbox`]:
//! Landlock, or why not).
//!
//! This module holds the preflight and the entry point, [`run`]. Each run is a
//! session (the private `session` module): one `attempt()` per round, which
//! asks, checks and applies and returns `Result<Applied, Rejected>`, then the
//! build, which runs on tokio's blocking pool.

use std::path::Path;

use llm::{LlmProvider, Redactor};
use safe_io::{Dir, FileKind};

use crate::config::CONFIG_DIR;
use crate::error::Error;
use crate::policy::Policy;
use crate::protect::Protected;
use crate::session::Inputs;
use crate::session::Session;
pub use crate::session::{Report, RunOptions, Step};

/// The files a run needs, relative to the project.
const QUERY_FILE: &str = "agent-config/query.txt";
/// The code rollup.
const ROLLUP_FILE: &str = "agent-config/codeRollup.txt";
/// The build script.
const BUILD_SCRIPT: &str = "build.sh";
/// The largest query read: 4 MiB (far more than anyone types).
const QUERY_LIMIT: u64 = 4 * 1024 * 1024;
/// The largest code rollup read: 32 MiB (about eight million tokens, beyond
/// any model's context).
const ROLLUP_LIMIT: u64 = 32 * 1024 * 1024;
/// The largest `.gitignore` read.
const GITIGNORE_LIMIT: u64 = safe_io::fs::CONFIG_LIMIT;

/// Reads `rel` below the project as an input: a regular file, no link on the
/// way, at most `limit` bytes.
fn read_required(
    root: &Dir,
    rel: &'static str,
    limit: u64,
    hint: &'static str,
) -> Result<String, Error> {
    match root.read(rel, limit) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(err) if err.is_not_found() => Err(Error::MissingFile {
            path: rel.to_owned(),
            hint,
        }),
        Err(err) => Err(unsafe_input(rel, &err)),
    }
}

/// Why an input cannot be used, said for a person.
fn unsafe_input(rel: &str, err: &safe_io::Error) -> Error {
    let reason = match err {
        safe_io::Error::Symlink { path } if path.ends_with(CONFIG_DIR) => format!(
            "{CONFIG_DIR}/ is a symbolic link; code-commit reads its files only from a real directory in the project"
        ),
        safe_io::Error::Symlink { .. } => "is a symbolic link; code-commit reads it only as a regular file in the project, never through a link".to_owned(),
        safe_io::Error::NotRegular { kind, .. } => {
            format!("is {}, not a regular file", kind.describe())
        }
        safe_io::Error::NotDirectory { path, kind } => {
            format!("{} is {}, not a directory", path.display(), kind.describe())
        }
        safe_io::Error::TooLarge { limit, .. } => format!(
            "is larger than the limit of {} MiB",
            (limit / (1024 * 1024)).max(1)
        ),
        other => other.to_string(),
    };
    Error::Unsafe {
        path: rel.to_owned(),
        reason,
    }
}

/// Checks that `.gitignore` keeps `agent-config/` out of git: a line
/// `/agent-config` (or `/agent-config/`). `.gitignore` is read as a regular
/// file of at most 1 MiB, never through a link.
fn gitignore_ok(root: &Dir) -> Result<(), Error> {
    let text = match root.read(".gitignore", GITIGNORE_LIMIT) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(err) if err.is_not_found() => return Err(Error::NotIgnored),
        Err(err) => return Err(unsafe_input(".gitignore", &err)),
    };
    let ok = text
        .lines()
        .map(str::trim)
        .any(|l| l == format!("/{CONFIG_DIR}") || l == format!("/{CONFIG_DIR}/"));
    if ok { Ok(()) } else { Err(Error::NotIgnored) }
}

/// Refuses a project whose `agent-config/` git tracks (see [`Error::Tracked`]).
fn check_untracked(policy: &Policy) -> Result<(), Error> {
    let tracked = policy.tracked_under(CONFIG_DIR).map_err(Error::Git)?;
    match tracked.split_first() {
        None => Ok(()),
        Some((first, rest)) => Err(Error::Tracked {
            path: first.clone(),
            more: rest.len(),
        }),
    }
}

/// The checks of spec 001 before anything is sent: the project is in a git
/// working tree, git tracks nothing under `agent-config/` (checked before
/// anything is read from it), the query and the rollup exist as regular files,
/// `.gitignore` protects `agent-config/`, and `build.sh` is a regular file.
pub fn preflight(project: &Path) -> Result<Inputs, Error> {
    let policy = Policy::new(project)?;
    check_untracked(&policy)?;
    let root = Dir::open(policy.project_dir()).map_err(|e| unsafe_input(".", &e))?;
    let query = read_required(
        &root,
        QUERY_FILE,
        QUERY_LIMIT,
        "write what you want changed in it (the query is sent to the model as is)",
    )?;
    let codebase = read_required(
        &root,
        ROLLUP_FILE,
        ROLLUP_LIMIT,
        "create it with codeRollup.sh before running code-commit",
    )?;
    gitignore_ok(&root)?;
    match root.kind(BUILD_SCRIPT) {
        Ok(Some(FileKind::File)) => {}
        Ok(None) => {
            return Err(Error::MissingFile {
                path: BUILD_SCRIPT.to_owned(),
                hint: "code-commit judges every change by whether build.sh exits 0",
            });
        }
        Ok(Some(kind)) => {
            return Err(Error::Unsafe {
                path: BUILD_SCRIPT.to_owned(),
                reason: format!(
                    "is {}, not a regular file; code-commit runs only a regular build.sh in the project",
                    kind.describe()
                ),
            });
        }
        Err(err) => return Err(unsafe_input(BUILD_SCRIPT, &err)),
    }
    let protected = Protected::new(policy.project_dir(), Some(&policy.git_common_dir()));
    Ok(Inputs {
        query,
        codebase,
        policy,
        root,
        protected,
    })
}

/// Runs the loop on `project` with `provider`, logging under
/// `agent-config/logs/`. `progress` hears about every step.
pub async fn run(
    project: &Path,
    inputs: &Inputs,
    provider: &dyn LlmProvider,
    redactor: &Redactor,
    options: &RunOptions,
    progress: &mut dyn FnMut(&Step),
) -> Result<Report, Error> {
    Session::start(project, inputs, provider, redactor, options, progress)?
        .run()
        .await
}
