//! What the unit tests share.

use std::collections::HashMap;

/// An environment lookup that knows only `vars`, as binaries pass one in.
pub(crate) fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}
