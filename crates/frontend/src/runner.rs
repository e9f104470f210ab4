//! The one front-end runner: [`run`] takes a binary's clap parser and its entry
//! point and does everything around the command, the same way for all three
//! binaries:
//!
//! 1. the hidden `--generate KIND` flag (shell completions), recognised before
//!    clap so it stays out of `--help` and out of the completions themselves;
//! 2. parsing (clap prints its own usage errors, `--help` and `--version`);
//! 3. the command, with a [`Context`]: `--debug`, `warning:` lines, the tokio
//!    runtime (built once, on first use: `ultragit read` never starts one) and
//!    the redactor that masks the provider's key in everything printed;
//! 4. the outcome: its text on stdout (a closed pipe is success), or the error
//!    in the one shape ([`CommandError::render`]), and the exit status from the
//!    one table ([`ErrorKind::exit_code`]).
//!
//! This module is where the binaries' output happens on their behalf: the
//! rest of the crate neither prints nor exits.

use std::cell::{OnceCell, RefCell};
use std::ffi::OsString;
use std::future::Future;
use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::Arc;

use clap_complete::Shell;
use llm::Redactor;
use safe_io::term::{sanitize, sanitize_line};

use crate::error::{CommandError, EXIT_FAILURE, EXIT_SUCCESS, ErrorKind};

/// A binary's parsed command line, as the runner needs it.
pub trait Cli: clap::Parser {
    /// Whether `--debug` was given: errors then print their causes.
    fn debug(&self) -> bool;
}

/// What a command that did not fail hands back.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// For stdout (may be empty).
    pub stdout: String,
    /// The exit status.
    pub status: Status,
}

/// The exit status of a command that did not fail.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Exit 0.
    #[default]
    Success,
    /// Exit 1 without an error of ours: the command did its work and its answer
    /// is "no" (the build still fails, the tool result is not ok, the read's
    /// error is the JSON object on stdout).
    Failure,
}

impl Outcome {
    /// Success with `text` on stdout.
    pub fn text(text: impl Into<String>) -> Outcome {
        Outcome {
            stdout: text.into(),
            status: Status::Success,
        }
    }

    /// Success with nothing on stdout.
    pub fn nothing() -> Outcome {
        Outcome::default()
    }

    /// The same text, with exit status 1 (see [`Status::Failure`]).
    pub fn failed(self) -> Outcome {
        Outcome {
            status: Status::Failure,
            ..self
        }
    }

    fn exit_code(&self) -> u8 {
        match self.status {
            Status::Success => EXIT_SUCCESS,
            Status::Failure => EXIT_FAILURE,
        }
    }
}

/// What the runner gives the command: `--debug`, stderr lines in the common
/// shape, the async runtime and secret masking.
pub struct Context {
    debug: bool,
    stderr: RefCell<Box<dyn Write>>,
    runtime: OnceCell<tokio::runtime::Runtime>,
    redactor: RefCell<Option<Redactor>>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("debug", &self.debug)
            .field("runtime", &self.runtime.get().is_some())
            .finish_non_exhaustive()
    }
}

impl Context {
    pub(crate) fn new(debug: bool, stderr: Box<dyn Write>) -> Context {
        Context {
            debug,
            stderr: RefCell::new(stderr),
            runtime: OnceCell::new(),
            redactor: RefCell::new(None),
        }
    }

    /// From now on, everything the runner prints on stderr (warnings, debug
    /// lines, the error) is masked with `redactor`.
    pub(crate) fn redact_with(&self, redactor: &Redactor) {
        *self.redactor.borrow_mut() = Some(redactor.clone());
    }

    /// `warning: {message}` on stderr, now.
    pub fn warn(&self, message: impl std::fmt::Display) {
        self.line(&format!("warning: {message}"));
    }

    /// `message` on stderr as it is, now: a command's progress (`code-commit`'s
    /// steps).
    pub fn progress(&self, message: impl std::fmt::Display) {
        self.line(&message.to_string());
    }

    /// Where a library that logs from other threads (the MCP server) writes:
    /// each line goes to stderr as `{prefix}{line}`, masked with the redactor
    /// registered by then and escaped to one line. The context's own writer is
    /// not shared between threads, so these lines go to the process's stderr
    /// directly (which is that writer under [`run`]).
    pub fn line_sink(&self, prefix: &str) -> Arc<dyn Fn(&str) + Send + Sync> {
        let prefix = prefix.to_owned();
        let redactor = self.redactor.borrow().clone();
        Arc::new(move |line: &str| {
            let line = match &redactor {
                Some(redactor) => redactor.redact(line),
                None => line.to_owned(),
            };
            let _ = writeln!(io::stderr(), "{prefix}{}", sanitize_line(&line));
        })
    }

    /// `message` on stderr, only with `--debug`.
    pub fn debug_line(&self, message: impl std::fmt::Display) {
        if self.debug {
            self.line(&message.to_string());
        }
    }

    /// Runs `future` to completion on the runtime, which is built the first
    /// time (two worker threads).
    pub fn block_on<F: Future>(&self, future: F) -> Result<F::Output, CommandError> {
        if self.runtime.get().is_none() {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .map_err(|err| {
                    CommandError::from_error(ErrorKind::Internal, err)
                        .context("cannot start the async runtime")
                })?;
            let _ = self.runtime.set(runtime);
        }
        let runtime = self.runtime.get().expect("the runtime was just set");
        Ok(runtime.block_on(future))
    }

    fn masked(&self, text: &str) -> String {
        match &*self.redactor.borrow() {
            Some(redactor) => redactor.redact(text),
            None => text.to_owned(),
        }
    }

    /// One line (or block) on stderr: masked, control characters escaped.
    fn line(&self, text: &str) {
        let text = self.masked(text);
        let _ = writeln!(self.stderr.borrow_mut(), "{}", sanitize(&text));
    }

    fn error(&self, err: CommandError, usage: Option<String>) {
        let err = match &*self.redactor.borrow() {
            Some(redactor) => err.redacted(redactor),
            None => err,
        };
        let text = usage.unwrap_or_else(|| err.render(self.debug));
        let _ = self.stderr.borrow_mut().write_all(text.as_bytes());
    }
}

/// Runs a binary: `args` is its command line (`std::env::args_os()`), `entry` the
/// command (see the module docs). Returns the exit status for `main`.
pub fn run<C: Cli>(
    args: impl IntoIterator<Item = OsString>,
    entry: impl FnOnce(C, &Context) -> Result<Outcome, CommandError>,
) -> ExitCode {
    let code = execute::<C>(
        args.into_iter().collect(),
        &mut io::stdout(),
        Box::new(io::stderr()),
        entry,
    );
    ExitCode::from(code)
}

/// [`run`] with the streams given (tests pass buffers).
pub(crate) fn execute<C: Cli>(
    args: Vec<OsString>,
    stdout: &mut dyn Write,
    stderr: Box<dyn Write>,
    entry: impl FnOnce(C, &Context) -> Result<Outcome, CommandError>,
) -> u8 {
    match generate_request(&args) {
        Some(Ok(kind)) => {
            let context = Context::new(false, stderr);
            return write_stdout(
                &context,
                stdout,
                &generate(kind, C::command()),
                EXIT_SUCCESS,
            );
        }
        Some(Err(message)) => {
            let err = CommandError::usage(message);
            let code = err.exit_code();
            Context::new(false, stderr).error(err, None);
            return code;
        }
        None => {}
    }
    let cli = match C::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(err) => {
            // clap's own output: help and version on stdout, errors on stderr.
            let _ = err.print();
            return if err.use_stderr() {
                ErrorKind::Usage.exit_code()
            } else {
                EXIT_SUCCESS
            };
        }
    };
    let context = Context::new(cli.debug(), stderr);
    match entry(cli, &context) {
        Ok(outcome) => write_stdout(
            &context,
            stdout,
            outcome.stdout.as_bytes(),
            outcome.exit_code(),
        ),
        Err(err) => {
            if !err.stdout().is_empty() {
                let _ = stdout
                    .write_all(context.masked(err.stdout()).as_bytes())
                    .and_then(|()| stdout.flush());
            }
            let code = err.exit_code();
            let usage = err
                .usage_of()
                .map(|path| usage_error::<C>(path, err.message()));
            context.error(err, usage);
            code
        }
    }
}

/// Writes a command's output: `code`, unless the write fails other than by a
/// closed pipe (`tool | head`), which is not a failure.
fn write_stdout(context: &Context, stdout: &mut dyn Write, bytes: &[u8], code: u8) -> u8 {
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => code,
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => code,
        Err(err) => {
            let err = CommandError::from_error(ErrorKind::Internal, err)
                .context("cannot write the output");
            let code = err.exit_code();
            context.error(err, None);
            code
        }
    }
}

/// A usage error found after parsing, rendered as clap renders its own, with the
/// usage of the subcommand at `path` (names separated by spaces).
fn usage_error<C: clap::CommandFactory>(path: &str, message: &str) -> String {
    let mut cmd = C::command();
    cmd.build();
    let mut sub = &mut cmd;
    for name in path.split_whitespace() {
        // A path that names no subcommand falls back to the nearest command.
        if sub.find_subcommand(name).is_none() {
            break;
        }
        sub = sub
            .find_subcommand_mut(name)
            .expect("the subcommand was just found");
    }
    sub.error(clap::error::ErrorKind::ArgumentConflict, sanitize(message))
        .render()
        .to_string()
}

/// What the hidden `--generate` flag can produce: completions for a shell (fish
/// is what `make install` installs).
const GENERATE: [(&str, Shell); 3] = [
    ("complete-fish", Shell::Fish),
    ("complete-bash", Shell::Bash),
    ("complete-zsh", Shell::Zsh),
];

/// Recognises `BINARY --generate KIND` (or `--generate=KIND`) as the whole command
/// line.
///
/// `None`: not a generate request, parse normally. `Some(Err(message))`: a generate
/// request with an unknown kind.
fn generate_request(args: &[OsString]) -> Option<Result<Shell, String>> {
    let first = args.get(1)?.to_str()?;
    let kind = match first.strip_prefix("--generate") {
        Some("") if args.len() == 3 => args[2].to_str().unwrap_or_default(),
        Some(rest) if args.len() == 2 && rest.starts_with('=') => &rest[1..],
        _ => return None,
    };
    let known = GENERATE.iter().find(|(name, _)| *name == kind);
    Some(match known {
        Some((_, shell)) => Ok(*shell),
        None => {
            let names: Vec<&str> = GENERATE.iter().map(|(name, _)| *name).collect();
            Err(format!(
                "unknown --generate value '{kind}' (expected one of: {})",
                names.join(", ")
            ))
        }
    })
}

/// The completions for `shell`, for the command `cmd` (its name is the binary's).
fn generate(shell: Shell, mut cmd: clap::Command) -> Vec<u8> {
    let name = cmd.get_name().to_owned();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, name, &mut out);
    out
}

#[cfg(test)]
mod tests;
