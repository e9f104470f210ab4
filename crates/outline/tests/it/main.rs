//! Integration tests of the `outline` crate (one binary, one module per topic).

mod anchor;
mod carry;
mod golden;
mod languages;
mod parse;
mod stability;

use outline::Unit;

/// One line per unit: `L{start}-{end} {kind} {qualified_name} | {signature}`.
pub fn render(units: &[Unit]) -> String {
    units.iter().map(|unit| format!("{unit}\n")).collect()
}
