//! Integration tests.

mod apply;
mod build;
mod parse;
mod policy;
mod run;
