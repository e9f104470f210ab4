//! The orders a summary is written in: package names alphabetical ignoring
//! case, versions in version order. Both are total, so output is
//! deterministic whatever the lockfile's own order.

use std::cmp::Ordering;

/// Sorts versions into version order (see [`compare_versions`]).
pub(crate) fn in_version_order<'a>(versions: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = versions.cloned().collect();
    out.sort_by(|a, b| compare_versions(a, b));
    out
}

/// Alphabetical order ignoring case, ties broken by byte order so the order
/// is total.
pub(crate) fn compare_names(a: &str, b: &str) -> Ordering {
    a.chars()
        .flat_map(char::to_lowercase)
        .cmp(b.chars().flat_map(char::to_lowercase))
        .then_with(|| a.cmp(b))
}

/// Version order: both versions split into runs of ASCII digits and runs of
/// anything else, compared run by run. Digit runs compare as numbers (of any
/// length) and before other runs; other runs compare as strings; a version
/// that runs out first is smaller. Equal runs fall back to string order.
///
/// This is deliberately not semver: `1.0.0-rc.1` sorts after `1.0.0`. It
/// only has to put the versions of one package in a readable order.
pub(crate) fn compare_versions(a: &str, b: &str) -> Ordering {
    let (mut left, mut right) = (Runs(a), Runs(b));
    loop {
        match (left.next(), right.next()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let order = compare_runs(x, y);
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

fn compare_runs(x: &str, y: &str) -> Ordering {
    let digits = |s: &str| s.starts_with(|c: char| c.is_ascii_digit());
    match (digits(x), digits(y)) {
        (true, true) => {
            let (x, y) = (x.trim_start_matches('0'), y.trim_start_matches('0'));
            x.len().cmp(&y.len()).then_with(|| x.cmp(y))
        }
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => x.cmp(y),
    }
}

/// Maximal runs of ASCII digits and of other characters.
struct Runs<'a>(&'a str);

impl<'a> Iterator for Runs<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let digit = self.0.chars().next()?.is_ascii_digit();
        let end = self
            .0
            .find(|c: char| c.is_ascii_digit() != digit)
            .unwrap_or(self.0.len());
        let (run, rest) = self.0.split_at(end);
        self.0 = rest;
        Some(run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_numerically_by_component() {
        let ordered = [
            "0.9",
            "1.2.3",
            "1.9.0",
            "1.10.0",
            "1.10.0-beta",
            "2.0.0",
            "10.0.0",
            "99999999999999999999999.0",
            "v0.0.0-20220811171246-fbc7d0a398ab",
            "v0.20.0",
        ];
        for window in ordered.windows(2) {
            assert_eq!(
                compare_versions(window[0], window[1]),
                Ordering::Less,
                "{window:?}"
            );
            assert_eq!(
                compare_versions(window[1], window[0]),
                Ordering::Greater,
                "{window:?}"
            );
        }
        assert_eq!(compare_versions("1.01", "1.1"), "1.01".cmp("1.1"));
        assert_eq!(compare_versions("1.0", "1.0"), Ordering::Equal);
    }
}
