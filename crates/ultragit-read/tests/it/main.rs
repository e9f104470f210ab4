//! The read pipeline against real repositories whose notes are written with
//! `gitctx`, as the writing agent writes them (spec 003 §8).

mod api;
mod assembly;
mod blame_carry;
mod cache;
mod decisions;
mod filtering;
mod index;
mod merge_shaped;
mod notes;
mod properties;
mod references;
mod scope;
mod scoring;
mod support;
mod trimming;
