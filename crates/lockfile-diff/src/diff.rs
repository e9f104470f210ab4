//! The diff itself: the package version changes between the old and new
//! contents of one lockfile, and their compact rendering for a prompt.

use std::fmt;

use crate::kind::{LockKind, parse};
use crate::order::{compare_names, in_version_order};
use crate::packages::Packages;

/// How the versions of one package differ between the old and new contents.
///
/// Every list is in version order (see [`summarize`]). For a package only in
/// the new contents `old` and `kept` are empty; for one only in the old
/// contents `new` and `kept` are empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageChange {
    /// The package name as the lockfile writes it (npm scope included).
    pub name: String,
    /// Versions present only in the old contents.
    pub old: Vec<String>,
    /// Versions present only in the new contents.
    pub new: Vec<String>,
    /// Versions present in both; only a changed package has any.
    pub kept: Vec<String>,
}

impl fmt::Display for PackageChange {
    /// Writes `name old → new` for a changed package, `name new` for an added
    /// one and `name old` for a removed one. When a changed package only
    /// gained or only lost versions, both sides list all their versions
    /// (`name 1.0 → 1.0, 2.0`) so that the change does not read as a
    /// replacement.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = &self.name;
        if self.kept.is_empty() && self.old.is_empty() {
            return write!(f, "{name} {}", self.new.join(", "));
        }
        if self.kept.is_empty() && self.new.is_empty() {
            return write!(f, "{name} {}", self.old.join(", "));
        }
        if self.old.is_empty() || self.new.is_empty() {
            let before = version_union(&self.kept, &self.old);
            let after = version_union(&self.kept, &self.new);
            return write!(f, "{name} {} → {}", before.join(", "), after.join(", "));
        }
        write!(
            f,
            "{name} {} → {}",
            self.old.join(", "),
            self.new.join(", ")
        )
    }
}

/// The package version changes of one staged lockfile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockSummary {
    /// The lockfile's path, as given to [`summarize`].
    pub path: String,
    /// The lockfile's format.
    pub kind: LockKind,
    /// Packages present on both sides whose versions differ.
    pub changed: Vec<PackageChange>,
    /// Packages present only in the new contents.
    pub added: Vec<PackageChange>,
    /// Packages present only in the old contents.
    pub removed: Vec<PackageChange>,
    /// Why a side could not be parsed; when set, the three lists are empty.
    pub unparsed: Option<String>,
}

/// Compares the old and new contents of the lockfile at `path`.
///
/// `old` is `None` when the file is added (typically: absent at HEAD) and
/// `new` is `None` when it is deleted (absent from the index); a missing side
/// holds no packages. If either present side fails to [`parse`], `unparsed`
/// says why (naming the side) and no changes are listed. The lists are
/// alphabetical by name (case-insensitively, ties in byte order), and the
/// versions within each change are in version order: digit runs compare
/// numerically (`1.10.0` after `1.9.0`), other runs as strings, with plain
/// string order to break ties.
pub fn summarize(path: &str, kind: LockKind, old: Option<&str>, new: Option<&str>) -> LockSummary {
    let mut summary = LockSummary {
        path: path.to_owned(),
        kind,
        changed: Vec::new(),
        added: Vec::new(),
        removed: Vec::new(),
        unparsed: None,
    };
    let read = |text: Option<&str>| text.map_or_else(|| Ok(Packages::new()), |t| parse(kind, t));
    let (old, new) = match (read(old), read(new)) {
        (Ok(old), Ok(new)) => (old, new),
        (old, new) => {
            let reasons: Vec<String> = [("old", old.err()), ("new", new.err())]
                .into_iter()
                .filter_map(|(side, err)| err.map(|err| format!("{side} content: {err}")))
                .collect();
            summary.unparsed = Some(reasons.join("; "));
            return summary;
        }
    };

    for (name, before) in &old {
        match new.get(name) {
            None => summary.removed.push(PackageChange {
                name: name.clone(),
                old: in_version_order(before.iter()),
                new: Vec::new(),
                kept: Vec::new(),
            }),
            Some(after) if after == before => {}
            Some(after) => summary.changed.push(PackageChange {
                name: name.clone(),
                old: in_version_order(before.difference(after)),
                new: in_version_order(after.difference(before)),
                kept: in_version_order(before.intersection(after)),
            }),
        }
    }
    for (name, after) in &new {
        if !old.contains_key(name) {
            summary.added.push(PackageChange {
                name: name.clone(),
                old: Vec::new(),
                new: in_version_order(after.iter()),
                kept: Vec::new(),
            });
        }
    }
    for list in [
        &mut summary.changed,
        &mut summary.added,
        &mut summary.removed,
    ] {
        list.sort_by(|a, b| compare_names(&a.name, &b.name));
    }
    summary
}

impl LockSummary {
    /// True when there is nothing to report: no package changed and both
    /// sides were read. An unreadable side is worth reporting, so it is not
    /// empty.
    pub fn is_empty(&self) -> bool {
        self.unparsed.is_none() && self.package_count() == 0
    }

    /// The number of packages changed, added or removed.
    pub fn package_count(&self) -> usize {
        self.changed.len() + self.added.len() + self.removed.len()
    }

    /// One compact plain-text block for a prompt, without a trailing newline:
    ///
    /// ```text
    /// Cargo.lock (Cargo): 2 changed, 1 added, 1 removed
    ///   changed: serde 1.0.200 → 1.0.210; syn 1.0.109, 2.0.60 → 2.0.66
    ///   added: memchr 2.7.4
    ///   removed: winapi 0.3.9
    /// ```
    ///
    /// The header counts only non-empty groups. At most `max_entries`
    /// packages are listed in all, shared among the groups so that a long
    /// "changed" list cannot crowd out the added and removed ones; a group
    /// that is cut ends with `… and N more`. An unreadable lockfile
    /// is one line, `path (kind): could not read package versions: reason`,
    /// and one with no changes reads `path (kind): no package version
    /// changes`.
    pub fn render(&self, max_entries: usize) -> String {
        let head = format!("{} ({})", self.path, self.kind.name());
        if let Some(reason) = &self.unparsed {
            let reason: String = reason
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            return format!("{head}: could not read package versions: {reason}");
        }
        let groups = [
            ("changed", &self.changed),
            ("added", &self.added),
            ("removed", &self.removed),
        ];
        let counts: Vec<String> = groups
            .iter()
            .filter(|(_, list)| !list.is_empty())
            .map(|(label, list)| format!("{} {label}", list.len()))
            .collect();
        if counts.is_empty() {
            return format!("{head}: no package version changes");
        }
        let mut out = format!("{head}: {}", counts.join(", "));
        let lens = groups.map(|(_, list)| list.len());
        let allowance = share_out(lens, max_entries);
        for ((label, list), shown) in groups.into_iter().zip(allowance) {
            if list.is_empty() {
                continue;
            }
            let mut items: Vec<String> = list.iter().take(shown).map(ToString::to_string).collect();
            if shown < list.len() {
                items.push(format!("… and {} more", list.len() - shown));
            }
            out.push_str(&format!("\n  {label}: {}", items.join("; ")));
        }
        out
    }
}

/// Shares `budget` entries among groups of `lens` sizes so that no group with
/// entries is crowded out by another: equal shares, and what a small group
/// leaves goes to the others (in group order for the remainder).
fn share_out(lens: [usize; 3], budget: usize) -> [usize; 3] {
    let mut shown = [0usize; 3];
    let mut left = budget;
    loop {
        let open: Vec<usize> = (0..3).filter(|&i| shown[i] < lens[i]).collect();
        if open.is_empty() || left == 0 {
            return shown;
        }
        let share = (left / open.len()).max(1);
        for i in open {
            let take = share.min(lens[i] - shown[i]).min(left);
            shown[i] += take;
            left -= take;
        }
    }
}

/// The versions of both lists, in version order.
fn version_union(a: &[String], b: &[String]) -> Vec<String> {
    in_version_order(a.iter().chain(b))
}
