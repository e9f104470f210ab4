//! Integration tests.

mod apply;
mod attacks;
mod build;
mod parse;
mod policy;
mod run;
mod sandbox;
mod support;
