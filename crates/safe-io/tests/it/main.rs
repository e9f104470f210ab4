//! Integration tests of `safe-io` on a real file system.

mod fs;
mod term;
