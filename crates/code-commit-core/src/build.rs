//! Running the project's `build.sh`.
//!
//! - **Invariant:** the build passes if and only if `build.sh` exits with status 0;
//!   output on stderr does not matter ([`BuildResult::passed`]).
//! - **Invariant:** `build.sh` never sees a removed variable nor any variable whose
//!   value contains one of [`BuildOptions::scrub_values`] (the API key). This is the
//!   one place the library touches the environment: it filters what the child
//!   inherits, and reads nothing for itself.
//! - **Invariant:** the build runs in its own process group with stdin at
//!   `/dev/null`. On timeout the whole group is killed, helpers it started
//!   included, and the result is [`BuildStatus::TimedOut`].
//! - **Invariant:** memory stays bounded: stdout and stderr are read concurrently,
//!   each on its own thread (so a chatty build cannot deadlock on a full pipe), and
//!   at most [`MAX_STREAM_BYTES`] of each is kept: the first quarter and the last
//!   three quarters, with the cut marked in place and [`BuildResult::truncated`]
//!   set.
//! - **Invariant:** with [`BuildOptions::sandbox`] set, `build.sh` starts on a
//!   thread of its own restricted by Landlock ([`crate::sandbox`]): the key's
//!   location unreadable, writes only inside the project, the temporary
//!   directory and the build caches. It gets a private temporary directory
//!   (`TMPDIR`, `TMP`, `TEMP`), removed after the build. When the kernel has no
//!   Landlock, [`BuildResult::sandbox`] says so and the build runs unconfined.
//! - When a sandboxed build fails after creating entries it could not read
//!   (directly in the project root, see the sandbox's limitation), it is run
//!   again, with them readable, up to `MAX_SANDBOX_RERUNS` times;
//!   [`BuildResult::notes`] says so.
//! - After `build.sh` exits, its output is read until the pipes close. If
//!   processes it left behind keep them open past a grace period, the group is
//!   killed; if the pipes are still open after that (a process that left the
//!   group), the output read so far is used and the reader threads are left to
//!   finish when those processes do.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};

use crate::sandbox::{self, SandboxPolicy, SandboxStatus};

/// The most output kept per stream (stdout, stderr), plus a one-line cut marker.
pub const MAX_STREAM_BYTES: usize = 32 * 1024 * 1024;

/// The build timeout [`BuildOptions::default`] uses.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// How long to wait for the output pipes to close after `build.sh` has exited,
/// before killing what it left behind (and again after that).
const PIPE_GRACE: Duration = Duration::from_secs(5);

/// How often the runner checks whether the build has finished.
const POLL: Duration = Duration::from_millis(10);

/// How the build runs.
#[derive(Clone, PartialEq, Eq)]
pub struct BuildOptions {
    /// How long `build.sh` may run before its process group is killed.
    pub timeout: Duration,
    /// Names of environment variables `build.sh` must not inherit.
    pub remove_env: Vec<String>,
    /// Secret values: every variable whose value contains one of them is removed
    /// too. Empty strings are ignored.
    pub scrub_values: Vec<String>,
    /// The Landlock sandbox to run `build.sh` in; `None` runs it unconfined.
    pub sandbox: Option<SandboxPolicy>,
    /// Where the private temporary directory of a sandboxed build is created
    /// (the system's temporary directory, as the binary found it); `None` keeps
    /// the inherited `TMPDIR`.
    pub temp_root: Option<PathBuf>,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            timeout: DEFAULT_TIMEOUT,
            remove_env: Vec::new(),
            scrub_values: Vec::new(),
            sandbox: None,
            temp_root: None,
        }
    }
}

/// Never shows the secret values.
impl fmt::Debug for BuildOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuildOptions")
            .field("timeout", &self.timeout)
            .field("remove_env", &self.remove_env)
            .field(
                "scrub_values",
                &format_args!("[{} redacted]", self.scrub_values.len()),
            )
            .field("sandbox", &self.sandbox)
            .field("temp_root", &self.temp_root)
            .finish()
    }
}

/// How `build.sh` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildStatus {
    /// It exited with this status.
    Exited(i32),
    /// It was killed by a signal (not by the timeout).
    Signaled,
    /// It ran past the timeout and its process group was killed.
    TimedOut,
}

/// The outcome of one run of `build.sh`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildResult {
    /// How it ended.
    pub status: BuildStatus,
    /// Its stdout (bounded: see `truncated`).
    pub stdout: Vec<u8>,
    /// Its stderr (bounded: see `truncated`).
    pub stderr: Vec<u8>,
    /// Wall time from start to exit (or to the kill).
    pub elapsed: Duration,
    /// True when a stream exceeded [`MAX_STREAM_BYTES`] and its middle was cut; the
    /// cut is marked by a line in the stream.
    pub truncated: bool,
    /// How the build was confined.
    pub sandbox: SandboxStatus,
    /// Lines about the run itself (the sandbox hid new entries, the build was
    /// run again), shown after the status line.
    pub notes: Vec<String>,
}

/// The line [`BuildResult::log_text`] adds when output was cut.
const TRUNCATED_NOTE: &str =
    "note: the output exceeded 32 MiB per stream; the middle was cut where marked";

/// Room reserved for the cut line of [`BuildResult::prompt_text`], which is always
/// shorter (two 20-digit numbers and some words).
const CUT_LINE_RESERVE: usize = 96;

impl BuildResult {
    /// True if and only if `build.sh` exited with status 0.
    pub fn passed(&self) -> bool {
        self.status == BuildStatus::Exited(0)
    }

    /// One line saying how the build ended, e.g. `build.sh exited with status 3`.
    pub(crate) fn status_text(&self) -> String {
        match self.status {
            BuildStatus::Exited(code) => format!("build.sh exited with status {code}"),
            BuildStatus::Signaled => "build.sh was killed by a signal".to_owned(),
            BuildStatus::TimedOut => format!(
                "build.sh timed out after {:.1} s and was killed",
                self.elapsed.as_secs_f64()
            ),
        }
    }

    /// The text of `build.txt`: the status line, a note if output was cut, then
    /// `--- stdout ---`, the stdout, `--- stderr ---`, the stderr (lossy UTF-8).
    /// Each stream that does not end with a newline gets one.
    pub fn log_text(&self) -> String {
        let mut text = self.status_text();
        text.push('\n');
        if self.truncated {
            text.push_str(TRUNCATED_NOTE);
            text.push('\n');
        }
        for note in &self.notes {
            text.push_str(note);
            text.push('\n');
        }
        for (heading, bytes) in [("stdout", &self.stdout), ("stderr", &self.stderr)] {
            text.push_str("--- ");
            text.push_str(heading);
            text.push_str(" ---\n");
            text.push_str(&String::from_utf8_lossy(bytes));
            if !bytes.is_empty() && !bytes.ends_with(b"\n") {
                text.push('\n');
            }
        }
        text
    }

    /// The build output for a repair prompt: [`log_text`](Self::log_text) when it
    /// fits in `max_bytes`; otherwise its status line, about a quarter of the budget
    /// from the start of the output and three quarters from its end, cut at line
    /// boundaries (inside a line only when a line is longer than half its part),
    /// and between them a line saying how many bytes and lines were cut. The result
    /// is at most `max_bytes` long unless `max_bytes` cannot hold the status line
    /// and the cut line, which are always kept.
    pub fn prompt_text(&self, max_bytes: usize) -> String {
        cut_middle(self.log_text(), max_bytes)
    }
}

/// `full` (a status line, then output) in at most `max_bytes`, as
/// [`BuildResult::prompt_text`] describes: cut this way after redaction, so no
/// cut can split a secret in two.
pub(crate) fn cut_middle(full: String, max_bytes: usize) -> String {
    if full.len() <= max_bytes {
        return full;
    }
    let split = full.find('\n').map_or(full.len(), |i| i + 1);
    let (status, body) = full.split_at(split);
    let budget = max_bytes.saturating_sub(status.len() + CUT_LINE_RESERVE);
    let head_budget = budget / 4;
    let tail_budget = budget - head_budget;

    // Cut at a line boundary unless that would give up more than half of the
    // part (a very long line): then cut inside the line.
    let head_limit = floor_char_boundary(body, head_budget);
    let head_end = match body[..head_limit].rfind('\n') {
        Some(i) if i + 1 >= head_limit / 2 => i + 1,
        _ => head_limit,
    };
    let tail_limit = ceil_char_boundary(body, body.len().saturating_sub(tail_budget));
    let at_line_start = tail_limit == 0 || body.as_bytes()[tail_limit - 1] == b'\n';
    let tail_start = match body[tail_limit..].find('\n') {
        Some(i) if !at_line_start && i < (body.len() - tail_limit) / 2 => tail_limit + i + 1,
        _ => tail_limit,
    };
    let tail_start = tail_start.max(head_end);
    let cut = &body[head_end..tail_start];
    let lines = cut.matches('\n').count();

    let mut text = String::with_capacity(max_bytes);
    text.push_str(status);
    text.push_str(&body[..head_end]);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!(
        "[... {} bytes ({lines} lines) of output cut here ...]\n",
        cut.len()
    ));
    text.push_str(&body[tail_start..]);
    text
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

fn ceil_char_boundary(text: &str, mut index: usize) -> usize {
    index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

/// Why `build.sh` could not be run at all (a failing build is a [`BuildResult`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// There is no `build.sh` in the project directory.
    #[error("{} does not exist: the project needs a build.sh", path.display())]
    Missing {
        /// Where `build.sh` was expected.
        path: PathBuf,
    },
    /// `build.sh` is a directory or some other non-file.
    #[error("{} is not a regular file, so it cannot be run", path.display())]
    NotAFile {
        /// The path of `build.sh`.
        path: PathBuf,
    },
    /// `build.sh` (or the project directory) could not be examined.
    #[error("could not examine {}: {source}", path.display())]
    Inspect {
        /// The path that could not be examined.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The process could not be started.
    #[error("could not start {program} for {}: {source}", script.display())]
    Spawn {
        /// What was executed: the script itself or `sh`.
        program: String,
        /// The path of `build.sh`.
        script: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Waiting for the process failed; its group was killed.
    #[error("could not wait for build.sh: {source}")]
    Wait {
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The sandbox could not be set up (Landlock is there but refused the rules,
    /// or a path could not be opened).
    #[error(
        "could not set up the build sandbox: {0}; set build_sandbox = false in agent-config/config.toml or ~/.config/code-commit/config.toml to build without it"
    )]
    Sandbox(#[from] sandbox::SandboxError),
    /// The private temporary directory could not be created.
    #[error("could not create a temporary directory for build.sh in {}: {source}", path.display())]
    TempDir {
        /// Where it was to be created.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
}

/// Runs `project_dir/build.sh` (see the module invariants): directly when it is
/// executable, so its shebang is respected, else (or when the kernel cannot
/// execute it) as `sh build.sh`.
pub fn run_build(project_dir: &Path, options: &BuildOptions) -> Result<BuildResult, BuildError> {
    let mut notes = Vec::new();
    let mut elapsed = Duration::ZERO;
    let mut reruns = 0;
    loop {
        let mut once = run_once(project_dir, options)?;
        elapsed += once.result.elapsed;
        if once.result.passed() || once.hidden.is_empty() {
            once.result.notes = notes;
            once.result.elapsed = elapsed;
            return Ok(once.result);
        }
        if reruns == MAX_SANDBOX_RERUNS {
            notes.push(hidden_note(&once.hidden, &once.result.sandbox, false));
            once.result.notes = notes;
            once.result.elapsed = elapsed;
            return Ok(once.result);
        }
        // The build may have failed only because the sandbox kept it from
        // reading what it created where Landlock cannot grant new entries:
        // again, now that they exist and are granted.
        notes.push(hidden_note(&once.hidden, &once.result.sandbox, true));
        reruns += 1;
    }
}

/// How many times a sandboxed build that failed after creating entries it
/// could not read is run again (each time only when it created new ones: a
/// Rust project in a fresh clone creates `Cargo.lock`, then `target/`).
pub(crate) const MAX_SANDBOX_RERUNS: u32 = 3;

/// Says which new entries the sandbox kept unreadable, and what to do.
fn hidden_note(hidden: &[PathBuf], status: &SandboxStatus, again: bool) -> String {
    let list: Vec<String> = hidden.iter().map(|p| p.display().to_string()).collect();
    let denied = match status {
        SandboxStatus::Enforced { denied, .. } if !denied.is_empty() => denied
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        _ => "the API key's location".to_owned(),
    };
    if again {
        format!(
            "note: build.sh failed after creating {} where the sandbox cannot let it read new entries (Landlock keeps {denied} unreadable by granting its siblings, which exist before the build); build.sh was run again, with them readable",
            list.join(", ")
        )
    } else {
        format!(
            "note: build.sh again created {} that it could not read during the build; if that is why it fails, keep the API key outside the project (~/.config/code-commit/api-key or an environment variable) so the build may read the whole project, or set build_sandbox = false",
            list.join(", ")
        )
    }
}

/// One run of `build.sh`, and the entries it created that the sandbox kept
/// unreadable to it.
struct Once {
    result: BuildResult,
    hidden: Vec<PathBuf>,
}

fn run_once(project_dir: &Path, options: &BuildOptions) -> Result<Once, BuildError> {
    let dir = std::path::absolute(project_dir).map_err(|source| BuildError::Inspect {
        path: project_dir.to_owned(),
        source,
    })?;
    let script = dir.join("build.sh");
    let meta = match fs::symlink_metadata(&script) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Err(BuildError::Missing { path: script });
        }
        Err(source) => {
            return Err(BuildError::Inspect {
                path: script,
                source,
            });
        }
    };
    if !meta.is_file() {
        return Err(BuildError::NotAFile { path: script });
    }
    let mut env = child_env(std::env::vars_os(), options);
    let executable = meta.permissions().mode() & 0o111 != 0;

    // The private temporary directory lives until the build is over.
    let mut _temp = None;
    let mut prepared = None;
    if let Some(policy) = &options.sandbox {
        let mut policy = policy.clone();
        if let Some(root) = &options.temp_root {
            let temp = tempfile::Builder::new()
                .prefix("code-commit-build-")
                .tempdir_in(root)
                .map_err(|source| BuildError::TempDir {
                    path: root.clone(),
                    source,
                })?;
            env.retain(|(name, _)| !["TMPDIR", "TMP", "TEMP"].iter().any(|n| name == n));
            for name in ["TMPDIR", "TMP", "TEMP"] {
                env.push((OsString::from(name), temp.path().as_os_str().to_owned()));
            }
            policy.writable.push(temp.path().to_path_buf());
            _temp = Some(temp);
        }
        prepared = Some(sandbox::prepare(&policy, &dir)?);
    }

    let start = Instant::now();
    let (mut child, sandbox_status, watched) = match prepared {
        None => (
            spawn(&dir, &script, executable, &env)?,
            SandboxStatus::Off,
            Vec::new(),
        ),
        Some((rules, watched)) => {
            let (dir, script_path) = (dir.clone(), script.clone());
            // Landlock restricts the calling thread and what it starts: this
            // thread does nothing but restrict itself and spawn the build.
            let confined = thread::Builder::new()
                .name("build-sandbox".to_owned())
                .spawn(move || -> Result<(Child, SandboxStatus), BuildError> {
                    let status = sandbox::restrict(rules)?;
                    Ok((spawn(&dir, &script_path, executable, &env)?, status))
                })
                .map_err(|source| BuildError::Spawn {
                    program: "the build-sandbox thread".to_owned(),
                    script: script.clone(),
                    source,
                })?;
            let (child, status) = confined.join().map_err(|_| {
                BuildError::Sandbox(sandbox::SandboxError(
                    "the thread that starts build.sh panicked".to_owned(),
                ))
            })??;
            (child, status, watched)
        }
    };
    let stdout = Reader::start(child.stdout.take(), MAX_STREAM_BYTES);
    let stderr = Reader::start(child.stderr.take(), MAX_STREAM_BYTES);

    // A timeout too large to add is no timeout.
    let deadline = start.checked_add(options.timeout);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status_of(status),
            Ok(None) if deadline.is_some_and(|deadline| Instant::now() >= deadline) => {
                kill_group(&mut child);
                break BuildStatus::TimedOut;
            }
            Ok(None) => thread::sleep(POLL),
            Err(source) => {
                kill_group(&mut child);
                return Err(BuildError::Wait { source });
            }
        }
    };
    let elapsed = start.elapsed();

    if !wait_for(&[&stdout, &stderr], PIPE_GRACE) {
        // Something build.sh started still holds the pipes.
        kill_group(&mut child);
        wait_for(&[&stdout, &stderr], PIPE_GRACE);
    }
    let (stdout, stdout_cut) = stdout.finish();
    let (stderr, stderr_cut) = stderr.finish();
    let hidden = if matches!(sandbox_status, SandboxStatus::Enforced { .. }) {
        watched
            .iter()
            .flat_map(sandbox::Watched::new_entries)
            .collect()
    } else {
        Vec::new()
    };
    Ok(Once {
        result: BuildResult {
            status,
            stdout,
            stderr,
            elapsed,
            truncated: stdout_cut || stderr_cut,
            sandbox: sandbox_status,
            notes: Vec::new(),
        },
        hidden,
    })
}

/// The inherited environment minus the removed names and every variable whose
/// value contains a secret.
fn child_env(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    options: &BuildOptions,
) -> Vec<(OsString, OsString)> {
    vars.into_iter()
        .filter(|(name, value)| {
            !options
                .remove_env
                .iter()
                .any(|removed| OsStr::new(removed) == name)
                && !options
                    .scrub_values
                    .iter()
                    .any(|secret| contains(value.as_encoded_bytes(), secret.as_bytes()))
        })
        .collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty()
        && haystack
            .windows(needle.len())
            .any(|window| window == needle)
}

/// How many times a spawn that failed with "text file busy" is retried. That
/// error is transient: another thread of this process forked while it still had
/// `build.sh` open for writing, and the fork holds the descriptor until it execs.
const BUSY_RETRIES: u32 = 20;

/// `ENOEXEC` on Linux and the BSDs: the kernel does not know how to run the file
/// (an executable script without a shebang); a shell does.
const ENOEXEC: i32 = 8;

fn spawn(
    dir: &Path,
    script: &Path,
    executable: bool,
    env: &[(OsString, OsString)],
) -> Result<Child, BuildError> {
    let command = |direct: bool| {
        let mut cmd = if direct {
            Command::new(script)
        } else {
            let mut sh = Command::new("sh");
            sh.arg(script);
            sh
        };
        cmd.current_dir(dir)
            .env_clear()
            .envs(env.iter().map(|(name, value)| (name, value)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        cmd
    };
    let spawn_error = |direct: bool, source| BuildError::Spawn {
        program: if direct {
            script.display().to_string()
        } else {
            "sh".to_owned()
        },
        script: script.to_owned(),
        source,
    };

    let mut direct = executable;
    let mut busy = 0;
    loop {
        match command(direct).spawn() {
            Ok(child) => return Ok(child),
            Err(err) if direct && err.raw_os_error() == Some(ENOEXEC) => direct = false,
            Err(err) if err.kind() == io::ErrorKind::ExecutableFileBusy && busy < BUSY_RETRIES => {
                busy += 1;
                thread::sleep(POLL * busy);
            }
            Err(err) => return Err(spawn_error(direct, err)),
        }
    }
}

fn status_of(status: ExitStatus) -> BuildStatus {
    match status.code() {
        Some(code) => BuildStatus::Exited(code),
        None => BuildStatus::Signaled,
    }
}

/// Kills the build's process group (the child leads it) with SIGKILL, then the
/// child itself, and reaps it. Killing an already reaped leader's group is
/// harmless while any of its members live (the group id stays taken), and a
/// no-op otherwise (`ESRCH`, ignored).
fn kill_group(child: &mut Child) {
    let _ = kill_process_group(Pid::from_child(child), Signal::KILL);
    let _ = child.kill();
    let _ = child.wait();
}

/// Waits until every reader has reached the end of its pipe, at most `limit`;
/// returns whether they all did.
fn wait_for(readers: &[&Reader], limit: Duration) -> bool {
    let until = Instant::now() + limit;
    loop {
        if readers.iter().all(|reader| reader.done()) {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        thread::sleep(POLL);
    }
}

/// A thread reading one output pipe into a [`Capture`].
#[derive(Debug)]
struct Reader {
    capture: Arc<Mutex<Capture>>,
    thread: Option<JoinHandle<()>>,
}

impl Reader {
    fn start(pipe: Option<impl io::Read + Send + 'static>, limit: usize) -> Reader {
        let capture = Arc::new(Mutex::new(Capture::new(limit)));
        let thread = pipe.map(|mut pipe| {
            let capture = Arc::clone(&capture);
            thread::spawn(move || {
                let mut buf = vec![0; 64 * 1024];
                loop {
                    match pipe.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => lock(&capture).push(&buf[..n]),
                        Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
            })
        });
        Reader { capture, thread }
    }

    fn done(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// What was read so far; a reader still blocked is left running.
    fn finish(mut self) -> (Vec<u8>, bool) {
        if self.done()
            && let Some(thread) = self.thread.take()
        {
            let _ = thread.join();
        }
        lock(&self.capture).take()
    }
}

fn lock(capture: &Mutex<Capture>) -> std::sync::MutexGuard<'_, Capture> {
    capture.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A bounded copy of a stream: its first `limit / 4` bytes and its last
/// `limit - limit / 4`, and how many bytes in between were dropped.
#[derive(Debug)]
struct Capture {
    head: Vec<u8>,
    head_limit: usize,
    tail: std::collections::VecDeque<u8>,
    tail_limit: usize,
    dropped: u64,
}

impl Capture {
    fn new(limit: usize) -> Capture {
        let head_limit = limit / 4;
        Capture {
            head: Vec::new(),
            head_limit,
            tail: std::collections::VecDeque::new(),
            tail_limit: limit - head_limit,
            dropped: 0,
        }
    }

    fn push(&mut self, mut bytes: &[u8]) {
        let room = self.head_limit - self.head.len();
        let (to_head, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        bytes = rest;
        if bytes.len() >= self.tail_limit {
            let skip = bytes.len() - self.tail_limit;
            self.dropped += (self.tail.len() + skip) as u64;
            self.tail.clear();
            bytes = &bytes[skip..];
        } else {
            let excess = (self.tail.len() + bytes.len()).saturating_sub(self.tail_limit);
            self.tail.drain(..excess);
            self.dropped += excess as u64;
        }
        self.tail.extend(bytes);
    }

    /// The kept bytes, with a marker line where bytes were dropped, and whether
    /// any were.
    fn take(&mut self) -> (Vec<u8>, bool) {
        let mut out = std::mem::take(&mut self.head);
        let truncated = self.dropped > 0;
        if truncated {
            if !out.is_empty() && !out.ends_with(b"\n") {
                out.push(b'\n');
            }
            out.extend_from_slice(
                format!("[... {} bytes of output cut here ...]\n", self.dropped).as_bytes(),
            );
        }
        out.extend(self.tail.drain(..));
        (out, truncated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(limit: usize, chunks: &[&[u8]]) -> (String, bool) {
        let mut capture = Capture::new(limit);
        for chunk in chunks {
            capture.push(chunk);
        }
        let (bytes, cut) = capture.take();
        (String::from_utf8(bytes).unwrap(), cut)
    }

    #[test]
    fn capture_keeps_everything_up_to_the_limit() {
        assert_eq!(
            captured(8, &[b"abc", b"defgh"]),
            ("abcdefgh".to_owned(), false)
        );
        assert_eq!(captured(8, &[]), (String::new(), false));
    }

    #[test]
    fn capture_keeps_the_head_and_the_tail_and_marks_the_cut() {
        // Head 2 bytes, tail 6 bytes.
        assert_eq!(
            captured(8, &[b"abcdefghij"]),
            (
                "ab\n[... 2 bytes of output cut here ...]\nefghij".to_owned(),
                true
            )
        );
        // Many small chunks: the same result as one big one.
        let chunks: Vec<&[u8]> = b"abcdefghij".chunks(1).collect();
        assert_eq!(captured(8, &chunks), captured(8, &[b"abcdefghij"]));
        // A chunk larger than the whole tail replaces it.
        assert_eq!(
            captured(8, &[b"ab\n", b"xyz", b"0123456789"]),
            (
                "ab\n[... 8 bytes of output cut here ...]\n456789".to_owned(),
                true
            )
        );
    }

    #[test]
    fn capture_memory_is_bounded() {
        let mut capture = Capture::new(1000);
        for _ in 0..10_000 {
            capture.push(&[b'x'; 333]);
            assert!(capture.head.len() + capture.tail.len() <= 1000);
        }
        assert_eq!(capture.dropped, 333 * 10_000 - 1000);
    }

    #[test]
    fn env_loses_removed_names_and_secret_bearing_values() {
        let vars = [
            ("PATH", "/bin"),
            ("OPENAI_API_KEY", "sk-abc"),
            ("AUTH_HEADER", "Bearer sk-secret-123"),
            ("KEEP", "value"),
            ("EMPTY", ""),
        ]
        .map(|(name, value)| (OsString::from(name), OsString::from(value)));
        let options = BuildOptions {
            remove_env: vec!["OPENAI_API_KEY".to_owned(), "NOT_SET".to_owned()],
            scrub_values: vec!["sk-secret-123".to_owned(), String::new()],
            ..BuildOptions::default()
        };
        let names: Vec<OsString> = child_env(vars, &options)
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(names, ["PATH", "KEEP", "EMPTY"]);
    }

    #[test]
    fn debug_output_never_shows_secrets() {
        let options = BuildOptions {
            scrub_values: vec!["sk-very-secret".to_owned()],
            ..BuildOptions::default()
        };
        let debug = format!("{options:?}");
        assert!(!debug.contains("sk-very-secret"), "{debug}");
        assert!(debug.contains("[1 redacted]"), "{debug}");
    }

    fn result(stdout: &str, stderr: &str) -> BuildResult {
        BuildResult {
            status: BuildStatus::Exited(1),
            stdout: stdout.as_bytes().to_vec(),
            stderr: stderr.as_bytes().to_vec(),
            elapsed: Duration::ZERO,
            truncated: false,
            sandbox: SandboxStatus::Off,
            notes: Vec::new(),
        }
    }

    #[test]
    fn prompt_text_is_the_log_text_when_it_fits() {
        let r = result("a\nb\n", "c");
        assert_eq!(r.prompt_text(1000), r.log_text());
        assert_eq!(r.prompt_text(r.log_text().len()), r.log_text());
    }

    #[test]
    fn prompt_text_cuts_at_line_boundaries() {
        let stdout: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
        let r = result(&stdout, "the error\n");
        let text = r.prompt_text(1000);
        assert!(text.len() <= 1000, "{}", text.len());
        assert!(text.starts_with("build.sh exited with status 1\n--- stdout ---\nline 1\n"));
        assert!(
            text.ends_with("line 1000\n--- stderr ---\nthe error\n"),
            "{text}"
        );
        let lines: Vec<&str> = text.lines().collect();
        let note = lines.iter().position(|l| l.starts_with("[... ")).unwrap();
        // Whole lines on both sides of the cut.
        assert!(lines[note - 1].starts_with("line "));
        assert!(lines[note + 1].starts_with("line "));
        let before: usize = lines[note - 1][5..].parse().unwrap();
        let after: usize = lines[note + 1][5..].parse().unwrap();
        let cut_lines = after - before - 1;
        let cut_bytes: usize = (before + 1..after)
            .map(|i| format!("line {i}\n").len())
            .sum();
        assert_eq!(
            lines[note],
            format!("[... {cut_bytes} bytes ({cut_lines} lines) of output cut here ...]")
        );
        // Roughly a quarter before the cut, three quarters after.
        let head = text.find("[... ").unwrap();
        let tail = text.len() - text.find(" cut here ...]\n").unwrap();
        assert!(head < tail, "{head} {tail}");
    }

    #[test]
    fn prompt_text_cuts_inside_a_single_huge_line() {
        let r = result(&"é".repeat(5000), "");
        let text = r.prompt_text(500);
        assert!(text.len() <= 500, "{}", text.len());
        // Cut on character boundaries, a line break on each side of the note.
        let (head, cut, tail) = ("é".repeat(39), 4829 * "é".len(), "é".repeat(132));
        assert_eq!(
            text,
            format!(
                "build.sh exited with status 1\n--- stdout ---\n{head}\n[... {cut} bytes (0 lines) of output cut here ...]\n{tail}\n--- stderr ---\n"
            )
        );
    }

    #[test]
    fn prompt_text_keeps_status_and_cut_line_in_a_tiny_budget() {
        let r = result(&"x\n".repeat(100), "");
        // Both streams with their headers: 15 + 200 + 15 bytes, 102 lines.
        assert_eq!(
            r.prompt_text(10),
            "build.sh exited with status 1\n[... 230 bytes (102 lines) of output cut here ...]\n"
        );
    }

    #[test]
    fn log_text_notes_truncation_and_status_lines() {
        let mut r = result("", "");
        r.truncated = true;
        assert_eq!(
            r.log_text(),
            format!(
                "build.sh exited with status 1\n{TRUNCATED_NOTE}\n--- stdout ---\n--- stderr ---\n"
            )
        );
        r.status = BuildStatus::Signaled;
        assert_eq!(r.status_text(), "build.sh was killed by a signal");
        r.status = BuildStatus::TimedOut;
        r.elapsed = Duration::from_millis(2049);
        assert_eq!(
            r.status_text(),
            "build.sh timed out after 2.0 s and was killed"
        );
    }
}
