//! `git-agent` as a process, on real repositories, with the model behind the
//! fake servers on 127.0.0.1.

mod cli;
mod errors;
mod limits;
mod message;
mod sent;
mod support;
mod untrusted;
