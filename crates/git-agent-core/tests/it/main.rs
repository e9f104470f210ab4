//! Integration tests of `git-agent-core` against real temporary repositories and,
//! for the model, the fake servers of `testkit` over real HTTP.

mod context;
mod generate;
mod golden;
mod pr;
mod support;
mod tools;
