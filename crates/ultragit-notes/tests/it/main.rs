//! The notes lifecycle against real repositories and real git: set-up and
//! hooks, rewrites, sync with real remotes, remap, corrections, doctor.

mod correct;
mod doctor;
mod remap;
mod rewrite;
mod setup;
mod support;
mod sync;
mod sync_union;
