//! The release-note task (spec 004 "Release note generation"): `prepare`
//! computes the evidence (refs, commits with clamped messages, paths,
//! statistics, excerpts, operator [`signals`], submodule groups, [`candidates`],
//! [`links`]), `task` asks the model for structured JSON ([`answer`]) and builds
//! the Markdown locally ([`markdown`]).

pub mod answer;
pub mod candidates;
#[cfg(test)]
mod fixtures;
pub mod links;
pub mod markdown;
pub mod prepare;
pub mod signals;
pub mod task;
pub mod types;

pub use prepare::{RangeSpec, ReleaseLimits};
pub use task::{Note, Request};
pub use types::*;
