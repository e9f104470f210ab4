//! `commit-text`: the text of commit messages — read, cleaned up and checked.
//! Used alike by git-agent's commit message, its squash message and its
//! release note.
//!
//! - [`Message`]: a message as git reads it, `{ subject, body, trailers }`.
//! - [`trailer`]: the one trailer grammar ([`Trailer`]; which keys count as
//!   trailers rather than prose); [`kept_trailers`]: which trailers a
//!   generated message may keep.
//! - [`Conventional`]: the one Conventional Commits header grammar (which
//!   grammar, and why, is documented on it).
//! - [`TaskId`], [`pull_requests`] and [`issue_references`]: the references a
//!   message makes.
//! - [`check()`]: one model answer against a task's [`Checks`] — bounded,
//!   shaped (the deterministic cleanup of control characters, thinking blocks,
//!   fences, preambles, attribution and unrequested trailers, and a reflow to
//!   72 columns), then validated: every problem an imperative sentence for the
//!   model's one repair request ([`Rules`]; the squash rules with
//!   [`Checks::squash`]; the repository's subject style with
//!   [`Checks::style`]).
//! - [`Prefix`], [`Style`] and [`SubjectStyle`]: a subject's `type:` or
//!   `component:` prefix and the style a repository's recent subjects show
//!   (the mood check of a subject's first word is `validate`'s).
//! - [`clamp`]: messages from history cut to a size for prepared context.
//!
//! - **Dependencies:** `regex` only; none of our crates. Pure text: no git, no
//!   model, no I/O, no printing.
//! - **Invariant:** every function is total: any text, however hostile, gives
//!   a result without panicking, in time linear (or near it) in its length.
//! - **Invariant:** a shaped message holds no control character but newline
//!   and tab, no escape sequence and no bidirectional override, so model text
//!   reaches neither `git commit` nor a terminal with them; shaping is
//!   idempotent.
//! - **Invariant:** an answer over 64 KiB is refused as one problem without
//!   being shaped.

mod check;
pub mod clamp;
mod conventional;
mod message;
mod reflow;
mod refs;
mod shape;
mod style;
pub mod trailer;
mod validate;

#[cfg(test)]
mod corpus;

pub use check::{Checks, check};
pub use conventional::Conventional;
pub use message::Message;
pub use refs::{TaskId, ensure_task_id, issue_references, pull_requests, task_id_suffix};
pub use shape::{ShapeOptions, kept_trailers};
pub use style::{Prefix, Style, SubjectStyle};
pub use trailer::Trailer;
pub use validate::{Rules, SubmoduleRule, quote};

/// Target width, in characters, of the subject and of every body line.
const WIDTH: usize = 72;

/// Compiles one of the crate's built-in patterns; the tests exercise every
/// one, so this cannot fail at run time.
fn built_in(pattern: &str) -> regex::Regex {
    regex::Regex::new(pattern).expect("a built-in pattern is valid")
}
