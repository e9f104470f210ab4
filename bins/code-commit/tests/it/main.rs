//! `code-commit` as a process.

mod attacks;
mod cli;
mod run;
