//! Integration tests of the `outline` crate (one binary, one module per topic).

mod anchor;
mod carry;
mod golden;
mod languages;
mod parse;
mod stability;

use std::path::PathBuf;

use outline::Unit;

/// One line per unit: `L{start}-{end} {kind} {qualified_name} | {signature}`.
pub fn render(units: &[Unit]) -> String {
    units.iter().map(|unit| format!("{unit}\n")).collect()
}

/// A realistic fixture: this crate's `tests/fixtures/NAME`, else the
/// workspace's `fixtures/outline/NAME` (Rust and Python).
pub fn fixture(name: &str) -> String {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let own = crate_dir.join("tests/fixtures").join(name);
    let path = if own.exists() {
        own
    } else {
        crate_dir.join("../../fixtures/outline").join(name)
    };
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read fixture {}: {error}", path.display()))
}
