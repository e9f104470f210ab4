//! `code-commit` as a process.

mod attacks;
mod cli;
mod errors;
mod run;
