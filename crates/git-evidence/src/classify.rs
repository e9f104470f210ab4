//! What kind of change each path is, so the prompt budget goes to the changes a
//! person wrote: lockfiles are summarized as package version changes, generated
//! files as statistics, and hand-written files get the diff text.
//!
//! Generated means: the gitattribute `linguist-generated` is set, or `-diff`
//! (git itself will not diff it), or a well-known generated or vendored path
//! (`*.min.js`, `*.pb.go`, `vendor/`, `node_modules/`, …), or the new content's
//! first lines say `Code generated … DO NOT EDIT` (the Go convention many
//! generators follow).

use gitctx::{FileDiff, LineKind, Repo};
use lockfile_diff::{self as lockfile, LockKind};

/// The kind of one changed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// Written by a person: its diff text is shown.
    Handwritten,
    /// A package manager's lockfile: summarized as package version changes.
    Lockfile(LockKind),
    /// Generated or vendored: statistics only; the reason says why.
    Generated(String),
    /// Binary content: no text to show.
    Binary,
    /// A submodule's commit pointer moved.
    Submodule,
}

impl Class {
    /// A short label for path lists (`lockfile`, `generated: linguist-generated`).
    pub fn label(&self) -> String {
        match self {
            Class::Handwritten => String::new(),
            Class::Lockfile(kind) => format!("lockfile ({})", kind.name()),
            Class::Generated(reason) => format!("generated: {reason}"),
            Class::Binary => "binary".to_owned(),
            Class::Submodule => "submodule".to_owned(),
        }
    }
}

/// Suffixes of files generators and minifiers write.
const GENERATED_SUFFIXES: &[&str] = &[
    ".min.js",
    ".min.css",
    ".min.mjs",
    ".js.map",
    ".css.map",
    ".pb.go",
    ".pb.cc",
    ".pb.h",
    "_pb2.py",
    "_pb2_grpc.py",
    "_pb2.pyi",
    ".g.dart",
    ".freezed.dart",
    ".designer.cs",
    "_generated.go",
    ".generated.ts",
    ".generated.js",
];

/// Directories whose contents are vendored or built, at any depth.
const GENERATED_DIRS: &[&str] = &["vendor", "node_modules", "third_party", "__generated__"];

/// Classifies one file of a diff. `repo` answers gitattribute questions (the
/// index's `.gitattributes` first, as the commit will record them).
pub fn classify(repo: &Repo, file: &FileDiff) -> Class {
    if file.is_submodule() {
        return Class::Submodule;
    }
    let path = file.path();
    if let Some(kind) = lockfile::kind_of(path) {
        return Class::Lockfile(kind);
    }
    if file.binary {
        return Class::Binary;
    }
    if let Some(reason) = generated_reason(repo, path, file) {
        return Class::Generated(reason);
    }
    Class::Handwritten
}

fn generated_reason(repo: &Repo, path: &str, file: &FileDiff) -> Option<String> {
    if repo
        .attribute(path, "linguist-generated")
        .is_ok_and(|v| v.is_set())
    {
        return Some("linguist-generated".to_owned());
    }
    if repo
        .attribute(path, "linguist-vendored")
        .is_ok_and(|v| v.is_set())
    {
        return Some("linguist-vendored".to_owned());
    }
    if repo
        .attribute(path, "diff")
        .is_ok_and(|v| v == gitctx::AttrValue::Unset)
    {
        return Some("-diff".to_owned());
    }
    if let Some(reason) = generated_by_name(path) {
        return Some(reason);
    }
    if says_generated(file) {
        return Some("\"Code generated … DO NOT EDIT\" header".to_owned());
    }
    None
}

/// The reason a path is generated or vendored by its name alone.
pub(crate) fn generated_by_name(path: &str) -> Option<String> {
    let lower = path.to_ascii_lowercase();
    if let Some(suffix) = GENERATED_SUFFIXES.iter().find(|s| lower.ends_with(*s)) {
        return Some(format!("*{suffix}"));
    }
    let mut dirs = lower.split('/').rev().skip(1);
    if let Some(dir) = dirs.find(|d| GENERATED_DIRS.contains(d)) {
        return Some(format!("{dir}/"));
    }
    None
}

/// The first lines of the new content carry the `Code generated … DO NOT EDIT`
/// marker.
fn says_generated(file: &FileDiff) -> bool {
    let Some(first) = file.hunks.first() else {
        return false;
    };
    if first.new_start > 1 {
        return false;
    }
    first
        .lines
        .iter()
        .filter(|l| l.kind != LineKind::Removed)
        .take(5)
        .any(|l| l.content.contains("Code generated") && l.content.contains("DO NOT EDIT"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names() {
        for (path, rule) in [
            ("web/app.min.js", Some("*.min.js")),
            ("api/v1/user.pb.go", Some("*.pb.go")),
            ("vendor/x/y.go", Some("vendor/")),
            ("web/node_modules/a/index.js", Some("node_modules/")),
            ("src/vendor.rs", None),
            ("src/main.rs", None),
        ] {
            assert_eq!(generated_by_name(path).as_deref(), rule, "{path}");
        }
    }
}
