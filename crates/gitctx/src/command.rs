//! Hardened `git` processes.
//!
//! **Invariant:** every git process the toolkit starts is built here, and runs
//! - with a fixed locale (`LC_ALL=C`, `LANG=C`), so output and exit behaviour do not
//!   depend on the user's language;
//! - with `GIT_OPTIONAL_LOCKS=0`, so read-only commands never take the index lock;
//! - with `core.fsmonitor=false` set through `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/
//!   `GIT_CONFIG_VALUE_n` (never on the command line, so argv a spec fixes stays
//!   exactly as written);
//! - without inherited `GIT_*` variables that would redirect or reshape it
//!   (`GIT_DIR`, `GIT_WORK_TREE`, `GIT_INDEX_FILE`, `GIT_OBJECT_DIRECTORY`,
//!   `GIT_CONFIG_PARAMETERS`, `GIT_TRACE*`, …). Only identity, config-location and
//!   credential-helper variables pass through (`PASSED_THROUGH`);
//! - with `GIT_TERMINAL_PROMPT=0`, so git never waits for a password;
//! - with `GIT_LITERAL_PATHSPECS=1`, so a path is always a path, never a glob;
//! - with no program the repository configured: `.gitattributes` is untrusted, so
//!   attributes are read from the empty tree (`GIT_ATTR_SOURCE`, git 2.42 and
//!   later; submodule processes inherit it) and no `diff=`/`filter=` attribute can
//!   start a textconv, external diff or clean/smudge/process filter; on older git,
//!   the documented fallback empties every filter driver git's config defines
//!   (`filter.<name>.clean`/`smudge`/`process` = "", `required` = false) through
//!   the same `GIT_CONFIG_*` variables; `GIT_PAGER=cat` and `core.fsmonitor=false`
//!   keep the pager and the file-system monitor out. Callers that produce diffs
//!   or blame also pass `--no-textconv` and `--no-ext-diff` (`diff.external` is
//!   config, not an attribute). A consequence, chosen over running the
//!   repository's programs: `text`/`eol` conversions named in `.gitattributes`
//!   do not apply in these processes, so a file whose stat data is stale and
//!   whose content differs from the index only by such a conversion can show
//!   as modified in `git status`; `.git/info/attributes` and
//!   `core.attributesFile`, which are the user's own, still apply.
//!
//! The one exception is [`Repo::user_command`](crate::Repo::user_command), for
//! porcelain git that runs the user's programs (`git commit`): it runs as if the
//! user typed it — their environment, locale, hooks, filters (Git LFS), pager
//! and signing, none of the variables above — and gets only our own `-c`
//! options, arguments and stdin. Hooks see exactly what they see by hand, so a
//! hook that filters with a glob pathspec (lint-staged, pre-commit) still
//! matches.
//!
//! Callers put paths after `--`. Failures are classified by exit status and by checks
//! made before the command runs, never by parsing stderr.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// Inherited `GIT_*` variables that still reach git: who the user is, where their
/// config lives, and how they authenticate. Everything else named `GIT_*` is removed.
pub(crate) const PASSED_THROUGH: &[&str] = &[
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_EXEC_PATH",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
];

/// Inherited variables removed even from a [user command](GitCommand::in_user_environment):
/// they would point git at another repository, work tree, index or object
/// store than the one the toolkit opened and showed evidence of, so a commit
/// could land somewhere else than what its message describes.
pub(crate) const LOCATION_VARS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
];

/// Config every git process gets, in addition to what the caller adds.
const BASE_CONFIG: &[(&str, &str)] = &[("core.fsmonitor", "false")];

/// The empty tree (SHA-1): attributes read from it are none at all. git knows
/// this object without it being stored.
pub(crate) const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// The first git release whose `GIT_ATTR_SOURCE` we rely on (the variable came
/// with `--attr-source` in 2.41–2.42; older gits ignore it, so it is always set
/// and the fallback is added below this version).
const ATTR_SOURCE_SINCE: (u32, u32) = (2, 42);

/// The installed git's `(major, minor)`, asked once per process; `None` when it
/// cannot be told (treated as old).
fn git_version() -> Option<(u32, u32)> {
    static VERSION: std::sync::OnceLock<Option<(u32, u32)>> = std::sync::OnceLock::new();
    *VERSION.get_or_init(|| {
        let output = scrubbed_git(Path::new("/"))
            .arg("--version")
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()?;
        parse_version(&String::from_utf8_lossy(&output.stdout))
    })
}

/// Asks the installed git's version on a thread of its own, so that the
/// first git command of the process (which needs it) does not wait for
/// `git --version`: for a process about to run git soon, e.g. a read about to
/// blame. Best effort; a second call does nothing.
pub fn prefetch_git_version() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let _ = std::thread::Builder::new().spawn(|| {
            let _ = git_version();
        });
    });
}

/// `git version 2.47.3` (or `2.39.5 (Apple Git-154)`, `2.45.0.windows.1`) →
/// `(2, 47)`.
fn parse_version(text: &str) -> Option<(u32, u32)> {
    let rest = text.trim().strip_prefix("git version ")?;
    let mut parts = rest.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The fallback for gits without `GIT_ATTR_SOURCE`: every filter driver the
/// config defines, emptied and not required, so no attribute can start it.
fn filter_guard(dir: &Path) -> Vec<(String, String)> {
    let mut guard = Vec::new();
    for name in configured_filters(dir) {
        for (key, value) in [
            ("clean", ""),
            ("smudge", ""),
            ("process", ""),
            ("required", "false"),
        ] {
            guard.push((format!("filter.{name}.{key}"), value.to_owned()));
        }
    }
    guard
}

/// `git` in `dir` with the inherited `GIT_*` variables that would redirect it
/// removed; the base of every command here.
fn scrubbed_git(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir);
    for name in scrubbed_vars(std::env::vars_os().map(|(k, _)| k)) {
        cmd.env_remove(name);
    }
    cmd
}

/// The filter drivers git's config defines for `dir` (`filter.<name>.*`), for
/// the fallback on gits without `GIT_ATTR_SOURCE`. One `git config` process.
fn configured_filters(dir: &Path) -> Vec<String> {
    let output = scrubbed_git(dir)
        .args([
            "config",
            "--null",
            "--name-only",
            "--get-regexp",
            r"^filter\..*\.(clean|smudge|process)$",
        ])
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    let Ok(output) = output else {
        return Vec::new();
    };
    let mut names: Vec<String> = output
        .stdout
        .split(|b| *b == 0)
        .filter_map(|key| {
            let key = std::str::from_utf8(key).ok()?;
            let rest = key.strip_prefix("filter.")?;
            let dot = rest.rfind('.')?;
            Some(rest[..dot].to_owned())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The names among `vars` that [`GitCommand`] removes from a child's environment.
pub(crate) fn scrubbed_vars<I, K>(vars: I) -> Vec<OsString>
where
    I: IntoIterator<Item = K>,
    K: AsRef<OsStr>,
{
    vars.into_iter()
        .filter(|name| {
            let name = name.as_ref();
            let Some(text) = name.to_str() else {
                return false;
            };
            text.starts_with("GIT_") && !PASSED_THROUGH.contains(&text)
        })
        .map(|name| name.as_ref().to_owned())
        .collect()
}

/// A git invocation under construction. Build with [`GitCommand::new`], add
/// arguments, then [`run`](GitCommand::run) it or turn it into a
/// [`std::process::Command`].
#[derive(Debug)]
pub struct GitCommand {
    dir: PathBuf,
    args: Vec<OsString>,
    config: Vec<(String, String)>,
    env: Vec<(OsString, OsString)>,
    stdin: Option<Vec<u8>>,
    timeout: Option<Duration>,
    max_stdout: Option<usize>,
    user: bool,
}

impl GitCommand {
    /// A git command that runs in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        GitCommand {
            dir: dir.into(),
            args: Vec::new(),
            config: Vec::new(),
            env: Vec::new(),
            stdin: None,
            timeout: None,
            max_stdout: None,
            user: false,
        }
    }

    /// Runs as the user would run it: see [`Repo::user_command`](crate::Repo::user_command),
    /// the entry point meant for this. Nothing is hardened: the inherited
    /// environment passes as it is (only [`LOCATION_VARS`] are removed), no
    /// locale, lock, prompt, pathspec, attribute, pager or config variable is
    /// set, and [`config`](GitCommand::config) values go on the command line as
    /// `-c key=value` (git passes those on to hooks as the user's own `-c`
    /// would), so nothing of ours but the arguments, those options and stdin
    /// reaches the process and its hooks.
    pub(crate) fn in_user_environment(mut self) -> Self {
        self.user = true;
        self
    }

    /// Kills the process if it has not finished after `timeout`; the run then
    /// fails with [`Error::Timeout`].
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Reads at most `bytes` of standard output: once they have arrived the
    /// process is stopped, and the run returns them as `stdout` (its status
    /// then says it was killed; a caller tells the cut by the length). For
    /// commands whose output has no bound of its own (`git grep` over a large
    /// tree).
    pub fn max_stdout(mut self, bytes: usize) -> Self {
        self.max_stdout = Some(bytes);
        self
    }

    /// Appends one argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Appends several arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Adds a config value for this process only (through the environment, not argv).
    pub fn config(mut self, key: &str, value: &str) -> Self {
        self.config.push((key.to_owned(), value.to_owned()));
        self
    }

    /// Sets an environment variable for this process. Applied after scrubbing, so a
    /// caller may deliberately set e.g. `GIT_AUTHOR_DATE`.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Bytes written to the process's stdin.
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }

    /// The arguments, joined for messages.
    pub fn display_args(&self) -> String {
        self.args
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The [`std::process::Command`] (stdin/stdout/stderr not configured):
    /// hardened, or as the user's own for [`in_user_environment`](GitCommand::in_user_environment).
    pub fn to_command(&self) -> Command {
        if self.user {
            return self.user_command();
        }
        let mut cmd = scrubbed_git(&self.dir);
        cmd.args(&self.args);
        cmd.env("LC_ALL", "C")
            .env("LANG", "C")
            .env("LANGUAGE", "C")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_LITERAL_PATHSPECS", "1")
            .env("GIT_ATTR_SOURCE", EMPTY_TREE)
            .env("GIT_PAGER", "cat");
        let guard = if git_version().is_none_or(|v| v < ATTR_SOURCE_SINCE) {
            filter_guard(&self.dir)
        } else {
            Vec::new()
        };
        let config: Vec<(&str, &str)> = BASE_CONFIG
            .iter()
            .copied()
            .chain(guard.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .chain(self.config.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .collect();
        cmd.env("GIT_CONFIG_COUNT", config.len().to_string());
        for (i, (key, value)) in config.iter().enumerate() {
            cmd.env(format!("GIT_CONFIG_KEY_{i}"), key);
            cmd.env(format!("GIT_CONFIG_VALUE_{i}"), value);
        }
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        cmd
    }

    /// The user's own `git`: their environment without [`LOCATION_VARS`], our
    /// config as `-c` options before the arguments.
    fn user_command(&self) -> Command {
        let mut cmd = Command::new("git");
        cmd.current_dir(&self.dir);
        for name in LOCATION_VARS {
            cmd.env_remove(name);
        }
        for (key, value) in &self.config {
            cmd.arg("-c").arg(format!("{key}={value}"));
        }
        cmd.args(&self.args);
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        cmd
    }

    /// Runs the command to completion, capturing stdout and stderr. A non-zero exit
    /// is [`Error::Command`].
    pub fn run(&self) -> Result<Output> {
        let output = self.run_unchecked()?;
        if output.status.success() {
            Ok(output)
        } else {
            Err(self.failure(&output))
        }
    }

    /// Runs the command to completion and returns its output whatever the exit
    /// status. For commands whose exit status is an answer (e.g. `merge-base
    /// --is-ancestor`).
    pub fn run_unchecked(&self) -> Result<Output> {
        let mut cmd = self.to_command();
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd.stdin(if self.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        let bounded = self.timeout.is_some() || self.max_stdout.is_some();
        #[cfg(unix)]
        if bounded {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let mut child = cmd.spawn().map_err(|source| Error::Spawn { source })?;
        // Feed stdin from a thread so a large input cannot deadlock against a child
        // that fills its stdout pipe first. A child that exits without reading all
        // of stdin is reported through its exit status, not as a broken pipe here.
        let writer = self.stdin.as_ref().map(|bytes| {
            let mut pipe = child.stdin.take().expect("stdin was configured as piped");
            let bytes = bytes.clone();
            std::thread::spawn(move || pipe.write_all(&bytes))
        });
        let output = if bounded {
            wait_with_timeout(child, self.timeout, self.max_stdout)
        } else {
            child.wait_with_output().map(Some)
        };
        if let Some(writer) = writer {
            let _ = writer.join();
        }
        match output {
            Ok(Some(output)) => Ok(output),
            Ok(None) => Err(Error::Timeout {
                args: self.display_args(),
                after: self.timeout.unwrap_or_default(),
            }),
            Err(source) => Err(Error::Spawn { source }),
        }
    }

    /// Runs the command and returns stdout as text (lossy UTF-8).
    pub fn run_text(&self) -> Result<String> {
        let output = self.run()?;
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// The error for a failed run.
    pub fn failure(&self, output: &Output) -> Error {
        let status = match output.status.code() {
            Some(code) => format!("exit status {code}"),
            None => "killed by a signal".to_owned(),
        };
        let mut stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        const MAX_STDERR: usize = 4000;
        if stderr.len() > MAX_STDERR {
            let mut cut = MAX_STDERR;
            while !stderr.is_char_boundary(cut) {
                cut -= 1;
            }
            stderr.truncate(cut);
            stderr.push('…');
        }
        Error::Command {
            args: self.display_args(),
            status,
            stderr,
        }
    }

    /// The directory the command runs in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Waits for `child`, reading its output on helper threads; kills it and returns
/// `None` once `limit` has passed. Once `max_stdout` bytes of output have
/// arrived, kills it and returns them.
fn wait_with_timeout(
    mut child: Child,
    limit: Option<Duration>,
    max_stdout: Option<usize>,
) -> std::io::Result<Option<Output>> {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    fn drain(
        pipe: Option<impl Read + Send + 'static>,
        max: u64,
        full: Arc<AtomicBool>,
    ) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(pipe) = pipe {
                let _ = pipe.take(max).read_to_end(&mut buf);
                if buf.len() as u64 >= max {
                    full.store(true, Ordering::SeqCst);
                }
            }
            buf
        })
    }
    let full = Arc::new(AtomicBool::new(false));
    let max = max_stdout.map_or(u64::MAX, |n| n as u64);
    let stdout = drain(child.stdout.take(), max, Arc::clone(&full));
    let stderr = drain(
        child.stderr.take(),
        u64::MAX,
        Arc::new(AtomicBool::new(false)),
    );
    let deadline = limit.map(|limit| Instant::now() + limit);
    loop {
        if full.load(Ordering::SeqCst) {
            kill_group(&mut child);
            return Ok(Some(Output {
                status: child.wait()?,
                stdout: stdout.join().unwrap_or_default(),
                stderr: stderr.join().unwrap_or_default(),
            }));
        }
        if let Some(status) = child.try_wait()? {
            return Ok(Some(Output {
                status,
                stdout: stdout.join().unwrap_or_default(),
                stderr: stderr.join().unwrap_or_default(),
            }));
        }
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            kill_group(&mut child);
            // The readers finish on their own once every holder of the pipes is
            // gone; their output is not needed.
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Kills a timed-out child and, on Unix, its process group (the child was started
/// as a group leader), so helpers it spawned die with it: `killpg(SIGKILL)`, no
/// process of its own.
fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    {
        // The child leads its group until it is reaped, which happens below.
        let _ = rustix::process::kill_process_group(
            rustix::process::Pid::from_child(child),
            rustix::process::Signal::KILL,
        );
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests;
