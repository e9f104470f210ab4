//! Integration tests of `release-note` against real temporary repositories
//! and, for the model, the fake servers of `testkit` over real HTTP.

mod release;
mod ripgrep;
