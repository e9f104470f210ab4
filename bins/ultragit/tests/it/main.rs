//! `ultragit read` as a process, on temporary repositories annotated as the
//! writing agent would annotate them.

mod golden;
mod read;
mod support;
