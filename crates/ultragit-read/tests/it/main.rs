//! The read pipeline against real repositories whose notes are written with
//! `gitctx`, as the writing agent writes them.

mod smoke;
mod support;
