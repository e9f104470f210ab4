//! `commit-text`: the text of commit messages — read, cleaned up and checked.
//! Used alike by git-agent's commit message, its squash message and its
//! release note.
//!
//! - [`Message`]: a message as git reads it, `{ subject, body, trailers }`.
//! - [`trailer`]: the one trailer grammar ([`Trailer`]; which keys count as
//!   trailers rather than prose; which trailers a generated message may keep).
//! - [`Conventional`]: the one Conventional Commits header grammar (which
//!   grammar, and why, is documented on it).
//! - [`TaskId`] and [`pull_requests`]: the references a message makes.
//! - [`shape()`]: the deterministic cleanup of a model's answer (control
//!   characters, thinking blocks, fences, preambles, attribution, unrequested
//!   trailers, [`reflow`] to [`WIDTH`] columns).
//! - [`validate()`] and [`squash_problems`]: the problems of a shaped message,
//!   each an imperative sentence for the model's one repair request;
//!   [`check()`] runs the whole chain for one answer against a task's
//!   [`Checks`].
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
//! - **Invariant:** an answer over [`MAX_ANSWER_BYTES`] is refused as one
//!   problem without being shaped.

mod check;
pub mod clamp;
mod conventional;
mod message;
mod reflow;
mod refs;
mod shape;
pub mod trailer;
mod validate;

#[cfg(test)]
mod corpus;

pub use check::{Checks, MAX_ANSWER_BYTES, check};
pub use conventional::Conventional;
pub use message::{Message, subject};
pub use reflow::reflow;
pub use refs::{TaskId, ensure_task_id, pull_requests, task_id_suffix};
pub use shape::{ShapeOptions, shape, strip_controls, strip_think};
pub use trailer::Trailer;
pub use validate::{Rules, SubmoduleRule, quote, squash_problems, validate};

/// Target width, in characters, of the subject and of every body line.
pub const WIDTH: usize = 72;
