//! Where and how a command was invoked ([`Invocation`]): what every command's
//! `run` takes. A leaf: the command modules and [`crate::cli`], which names
//! them, both depend on it.

use std::path::{Path, PathBuf};

use frontend::Context;

/// Where and how a command was invoked: what every command's `run` takes.
pub struct Invocation<'a> {
    cwd: PathBuf,
    /// The front end's context (warnings, the runtime, `--debug`).
    pub ctx: &'a Context,
}

impl<'a> Invocation<'a> {
    /// A command run in `cwd`.
    pub fn new(cwd: PathBuf, ctx: &'a Context) -> Invocation<'a> {
        Invocation { cwd, ctx }
    }

    /// The directory the command runs in.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The environment variable `name` (the binary is where the environment is
    /// read; libraries get values, never the environment).
    pub fn env(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}
