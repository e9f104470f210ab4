//! `code-commit` as a process.

mod cli;
mod run;
