//! Where a run's trace goes, and what a failed run tells the binary.
//!
//! A generation-only command (`commit-msg`, `pr-message`, `release-note`
//! without `--out`) keeps its trace in a session directory
//! ([`Trace::session`]); when `.git-agent/` cannot be written safely — git
//! tracks it, or a symbolic link or special file sits where the session goes —
//! the run goes on without a trace and says why: the repository may refuse us a
//! trace, not the message. A command that acts on its result (`commit`,
//! `release-note --out`) streams a summarized trace to the [`Console`] the
//! binary hands over instead ([`Trace::console`]).
//!
//! Libraries never print: what the user should read on stderr goes to the
//! binary's [`Notices`], and a failure comes back as [`Failed`], naming the
//! session directory whose trace keeps more.

use std::io::Write;
use std::path::{Path, PathBuf};

use agent::{ConsoleSink, Event, NullSink, SessionSink, TraceSink};
use llm::{LlmProvider, Redactor};
use serde_json::Value;

use crate::error::Error;
use crate::session;

/// Lines for the user, which the binary shows on stderr.
pub trait Notices {
    /// A warning, always shown.
    fn warn(&mut self, line: &str);
    /// A line shown only with `--debug`.
    fn debug(&mut self, line: &str);
}

/// What the binary hands every run: the model, the redactor that masks its
/// key in traces, and where notices go.
pub struct Host<'a> {
    pub provider: &'a dyn LlmProvider,
    pub redactor: Redactor,
    pub notices: &'a mut dyn Notices,
}

impl std::fmt::Debug for Host<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host").finish_non_exhaustive()
    }
}

/// The terminal a command that acts on its result streams its trace to: the
/// binary's stdout, and whether it is a terminal (colour).
pub struct Console {
    out: Box<dyn Write + Send>,
    color: bool,
}

impl Console {
    pub fn new(out: impl Write + Send + 'static, color: bool) -> Console {
        Console {
            out: Box::new(out),
            color,
        }
    }
}

impl std::fmt::Debug for Console {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Console")
            .field("color", &self.color)
            .finish_non_exhaustive()
    }
}

/// A run that failed: why, and the session directory whose trace keeps more
/// (`None` without one).
#[derive(Debug)]
pub struct Failed {
    pub error: Error,
    pub trace: Option<PathBuf>,
}

impl From<Error> for Failed {
    fn from(error: Error) -> Self {
        Failed { error, trace: None }
    }
}

/// A run's trace: its sink, and the session directory when there is one.
pub struct Trace {
    sink: Box<dyn TraceSink>,
    dir: Option<PathBuf>,
    /// A session reports the trace's own problems when the run ends.
    session: bool,
}

impl std::fmt::Debug for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trace")
            .field("dir", &self.dir)
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

impl Trace {
    /// The trace session of a generation-only `command` in the working tree at
    /// `root`, started now, holding `metadata`: its path is a debug notice;
    /// without one (`.git-agent/` refused) the run keeps no trace and warns
    /// why.
    pub fn session(
        root: &Path,
        command: &str,
        metadata: Value,
        redactor: Redactor,
        notices: &mut dyn Notices,
    ) -> Trace {
        let session = session::create_session_dir(root, command, chrono::Utc::now())
            .map_err(|err| err.to_string())
            .and_then(|dir| {
                let path = dir.path().to_path_buf();
                SessionSink::create(dir, metadata, redactor)
                    .map(|sink| (sink, path.clone()))
                    .map_err(|err| format!("{}: {err}", path.display()))
            });
        match session {
            Ok((sink, path)) => {
                notices.debug(&format!("session: {}", path.display()));
                Trace {
                    sink: Box::new(sink),
                    dir: Some(path),
                    session: true,
                }
            }
            Err(why) => {
                notices.warn(&format!("no trace is kept: {why}"));
                Trace {
                    sink: Box::new(NullSink),
                    dir: None,
                    session: true,
                }
            }
        }
    }

    /// The summarized trace on `console` of a command that acts on its
    /// result, which begins with `started`.
    pub fn console(console: Console, redactor: Redactor, started: &Event) -> Trace {
        let mut sink = ConsoleSink::new(console.out, console.color, redactor).summarized();
        sink.record(started);
        Trace {
            sink: Box::new(sink),
            dir: None,
            session: false,
        }
    }

    /// The sink the run records into.
    pub fn sink(&mut self) -> &mut dyn TraceSink {
        self.sink.as_mut()
    }

    /// Records one event of the command's own (after the model's run).
    pub fn record(&mut self, event: &Event) {
        self.sink.record(event);
    }

    /// Ends the model's run with `result`: a session warns of the trace's
    /// problems, and a failure names the session directory.
    pub fn finish<T>(
        &mut self,
        result: Result<T, Error>,
        notices: &mut dyn Notices,
    ) -> Result<T, Failed> {
        if self.session {
            for problem in self.sink.problems() {
                notices.warn(&format!("trace: {problem}"));
            }
        }
        result.map_err(|error| Failed {
            error,
            trace: self.dir.clone(),
        })
    }
}
