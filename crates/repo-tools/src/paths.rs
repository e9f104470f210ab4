//! Workspace-relative paths: what a model may name, and where it leads on disk.
//!
//! Every path argument of every tool goes through [`normalize`] (text only) and, when
//! the tool touches the file system, `resolve` (canonical path, still inside the
//! workspace).
//!
//! **Invariant:** a path that passed both never leaves the workspace, whether by
//! spelling (`/x`, `C:\x`, `\\server\share`, `a/../..`) or through a symlink, and
//! never reaches into a `.git` directory (repository internals such as `.git/config`
//! may hold credentials, and are no working-tree content).

use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};

/// A validated workspace-relative path: normal components only, no `.`/`..`,
/// joined with `/`. The empty path is the workspace root.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RelPath {
    text: String,
}

impl RelPath {
    /// The workspace root itself.
    pub(crate) fn root() -> RelPath {
        RelPath::default()
    }

    /// A path as git's index records it (`/`-separated; git refuses empty, `.`,
    /// `..` and `.git` components), taken as is: a `\` in it is part of a name.
    /// `None` when it is not such a path.
    pub(crate) fn from_index(path: &str) -> Option<RelPath> {
        let clean = !path.contains('\0')
            && path
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != ".." && !is_git_dir_name(c));
        clean.then(|| RelPath {
            text: path.to_owned(),
        })
    }

    /// True for the workspace root.
    pub(crate) fn is_root(&self) -> bool {
        self.text.is_empty()
    }

    /// The path with `/` separators; empty for the root.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The path for messages: `.` for the root.
    pub(crate) fn display(&self) -> &str {
        if self.is_root() { "." } else { &self.text }
    }

    /// True when `path` (workspace-relative, `/`-separated) is this path or lies
    /// under it. Every path lies under the root.
    pub(crate) fn contains(&self, path: &str) -> bool {
        self.is_root()
            || path == self.text
            || path
                .strip_prefix(self.text.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    }

    /// The parent directory and the last component; `None` for the root.
    pub(crate) fn split_last(&self) -> Option<(RelPath, &str)> {
        if self.is_root() {
            return None;
        }
        Some(match self.text.rsplit_once('/') {
            Some((parent, name)) => (
                RelPath {
                    text: parent.to_owned(),
                },
                name,
            ),
            None => (RelPath::root(), self.text.as_str()),
        })
    }

    /// `root` joined with this path.
    pub(crate) fn under(&self, root: &Path) -> PathBuf {
        let mut out = root.to_path_buf();
        out.extend(self.text.split('/').filter(|c| !c.is_empty()));
        out
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.display())
    }
}

/// Why a path argument is refused. Every variant is the caller's mistake
/// (`INVALID_ARGUMENT`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("the path is empty; give a workspace-relative path such as 'src'")]
    Empty,
    #[error("'{0}' contains a NUL character")]
    Nul(String),
    #[error("'{0}' is a UNC path; give a path relative to the workspace root")]
    Unc(String),
    #[error("'{0}' is absolute; give a path relative to the workspace root")]
    Absolute(String),
    #[error("'{0}' has a drive letter; give a path relative to the workspace root")]
    DriveLetter(String),
    #[error("'{0}' leads outside the workspace")]
    Escapes(String),
    #[error("'{0}' reaches into a .git directory, which these tools do not read")]
    GitDir(String),
}

/// Checks and normalizes a workspace-relative path, without touching the disk.
///
/// `/` and `\` are both separators (so a file name containing `\` cannot be named).
/// Empty components and `.` are dropped, `..` removes the component before it.
/// Refused: the empty string, NUL, UNC paths (`\\server\share`, `//server/share`),
/// absolute paths (`/x`, `\x`), drive letters (`C:\x`, `C:/x`, `C:x`), a `..` with
/// nothing left to remove, and any `.git` component (ASCII case-insensitive, as
/// case-insensitive file systems see it).
pub fn normalize(input: &str) -> Result<RelPath, PathError> {
    let owned = || input.to_owned();
    if input.is_empty() {
        return Err(PathError::Empty);
    }
    if input.contains('\0') {
        return Err(PathError::Nul(owned()));
    }
    let is_sep = |c: char| c == '/' || c == '\\';
    let mut chars = input.chars();
    let (first, second) = (chars.next(), chars.next());
    if first.is_some_and(is_sep) && second.is_some_and(is_sep) {
        return Err(PathError::Unc(owned()));
    }
    if first.is_some_and(is_sep) {
        return Err(PathError::Absolute(owned()));
    }
    if has_drive_letter(input) {
        return Err(PathError::DriveLetter(owned()));
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in input.split(is_sep) {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(PathError::Escapes(owned()));
                }
            }
            _ => parts.push(part),
        }
    }
    if parts.iter().any(|part| is_git_dir_name(part)) {
        return Err(PathError::GitDir(owned()));
    }
    // `a/../C:/x` must not become `C:/x`, which the check above refuses.
    if parts.first().is_some_and(|first| has_drive_letter(first)) {
        return Err(PathError::DriveLetter(owned()));
    }
    Ok(RelPath {
        text: parts.join("/"),
    })
}

/// True when `text` starts with a drive letter (`C:`).
fn has_drive_letter(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic()) && chars.next() == Some(':')
}

fn is_git_dir_name(name: &str) -> bool {
    name.eq_ignore_ascii_case(".git")
}

/// Why a validated path does not lead anywhere usable.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ResolveError {
    /// Nothing is there (or a component on the way is not a directory).
    #[error("'{0}' does not exist")]
    Missing(RelPath),
    /// It exists, but a symlink takes it outside the workspace or into `.git`.
    #[error("'{0}' leads outside the workspace through a symbolic link")]
    Escapes(RelPath),
    /// The file system refused to tell.
    #[error("'{path}' cannot be inspected: {source}")]
    Io {
        path: RelPath,
        #[source]
        source: io::Error,
    },
}

/// The canonical path `rel` leads to under `canonical_root` (itself canonical),
/// with every symlink followed. It must exist, stay under `canonical_root`, and not
/// pass through a `.git` directory.
pub(crate) fn resolve(canonical_root: &Path, rel: &RelPath) -> Result<PathBuf, ResolveError> {
    let joined = rel.under(canonical_root);
    let canonical = match joined.canonicalize() {
        Ok(path) => path,
        Err(err)
            if matches!(
                err.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            // Missing — unless it would lead out if it existed, so that nothing is
            // learnt about what lies outside (a dangling link to an outside path is
            // refused like a link to an existing one).
            return Err(match would_lead_to(&joined) {
                Some(path) if is_inside(&path, canonical_root) => {
                    ResolveError::Missing(rel.clone())
                }
                _ => ResolveError::Escapes(rel.clone()),
            });
        }
        Err(source) => {
            return Err(ResolveError::Io {
                path: rel.clone(),
                source,
            });
        }
    };
    if !is_inside(&canonical, canonical_root) {
        return Err(ResolveError::Escapes(rel.clone()));
    }
    Ok(canonical)
}

/// The most symbolic links a path may pass through (Linux's limit).
const MAX_LINK_HOPS: usize = 40;

/// Where the absolute `path` leads with every link that exists followed, when its
/// end does not exist: the canonical existing part, then the missing rest as
/// written (`..` taken lexically there). `None` for a link loop.
fn would_lead_to(path: &Path) -> Option<PathBuf> {
    let mut pending: Vec<std::ffi::OsString> = Vec::new();
    push_components(&mut pending, path);
    let mut current = PathBuf::from("/");
    let mut missing = false;
    let mut hops = 0;
    while let Some(name) = pending.pop() {
        if name == ".." {
            current.pop();
            continue;
        }
        let next = current.join(&name);
        if missing {
            current = next;
            continue;
        }
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                hops += 1;
                if hops > MAX_LINK_HOPS {
                    return None;
                }
                let target = std::fs::read_link(&next).ok()?;
                if target.is_absolute() {
                    current = PathBuf::from("/");
                }
                push_components(&mut pending, &target);
            }
            Ok(_) => current = next,
            Err(_) => {
                missing = true;
                current = next;
            }
        }
    }
    Some(current)
}

/// Pushes the names and `..` of `path` onto `stack` so that they pop in order.
fn push_components(stack: &mut Vec<std::ffi::OsString>, path: &Path) {
    let start = stack.len();
    for component in path.components() {
        match component {
            Component::Normal(name) => stack.push(name.to_owned()),
            Component::ParentDir => stack.push("..".into()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    stack[start..].reverse();
}

/// True when the canonical `path` is `root` or below it, and not in a `.git`
/// directory there.
pub(crate) fn is_inside(path: &Path, root: &Path) -> bool {
    let Ok(inside) = path.strip_prefix(root) else {
        return false;
    };
    !inside.components().any(|c| match c {
        Component::Normal(name) => name.to_str().is_some_and(is_git_dir_name),
        _ => false,
    })
}

/// A workspace-relative `/`-separated path from a relative [`Path`]; `None` when a
/// component is not UTF-8 or not a plain name.
pub(crate) fn slash_path(path: &Path) -> Option<String> {
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(name) => parts.push(name.to_str()?),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: Result<&str, &str>) {
        let got = normalize(input);
        match expected {
            Ok(text) => assert_eq!(
                got.map(|p| p.as_str().to_owned()),
                Ok(text.to_owned()),
                "{input:?}"
            ),
            Err(kind) => {
                let err = got.expect_err(input);
                let name = format!("{err:?}");
                assert!(name.starts_with(kind), "{input:?}: {name} is not {kind}");
            }
        }
    }

    /// What [`normalize`] makes of paths: groups with what they are `about`,
    /// each case `[input, "ok", normalized]` or `[input, "err", the error's
    /// variant]`.
    const NORMALIZE_CASES: &str = include_str!("paths/normalize_cases.json");

    #[test]
    fn normalizes_or_refuses_as_each_case_says() {
        let groups: Vec<serde_json::Value> =
            serde_json::from_str(NORMALIZE_CASES).expect("the cases are JSON");
        let count: usize = groups
            .iter()
            .map(|g| g["cases"].as_array().map_or(0, Vec::len))
            .sum();
        assert_eq!(count, 35, "the table is whole");
        for group in &groups {
            for case in group["cases"].as_array().expect("a group's cases") {
                let text = |i: usize| {
                    case[i]
                        .as_str()
                        .unwrap_or_else(|| panic!("no text at {i}: {case}"))
                };
                let expected = match text(1) {
                    "ok" => Ok(text(2)),
                    "err" => Err(text(2)),
                    other => panic!("neither ok nor err: {other}"),
                };
                check(text(0), expected);
            }
        }
    }

    #[test]
    fn contains_is_by_component() {
        let src = normalize("src").unwrap();
        assert!(src.contains("src"));
        assert!(src.contains("src/a.rs"));
        assert!(!src.contains("src2/a.rs"));
        assert!(!src.contains("sr"));
        assert!(RelPath::root().contains("anything"));
        assert_eq!(RelPath::root().display(), ".");
    }

    #[test]
    fn split_last_names_parent_and_file() {
        let split = |text: &str| {
            normalize(text)
                .unwrap()
                .split_last()
                .map(|(parent, name)| (parent.as_str().to_owned(), name.to_owned()))
        };
        assert_eq!(
            split("a/b/c.rs"),
            Some(("a/b".to_owned(), "c.rs".to_owned()))
        );
        assert_eq!(split("c.rs"), Some((String::new(), "c.rs".to_owned())));
        assert_eq!(RelPath::root().split_last(), None);
    }

    #[test]
    fn dangling_links_are_judged_by_where_they_would_lead() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = root.join("ws");
        std::fs::create_dir(&ws).unwrap();
        let link = |target: &str, name: &str| {
            std::os::unix::fs::symlink(target, ws.join(name)).unwrap();
        };
        link("../elsewhere/missing", "out");
        link("/nonexistent-dir/x", "abs");
        link("missing/deeper", "in");
        link("out", "chain");
        link("loop", "loop");
        link("./sub/../../ws/missing", "around");
        let judge = |name: &str| resolve(&ws, &normalize(name).unwrap());
        assert!(matches!(judge("out"), Err(ResolveError::Escapes(_))));
        assert!(matches!(judge("abs"), Err(ResolveError::Escapes(_))));
        assert!(matches!(judge("chain"), Err(ResolveError::Escapes(_))));
        assert!(matches!(judge("loop"), Err(ResolveError::Io { .. })));
        assert!(matches!(judge("in"), Err(ResolveError::Missing(_))));
        assert!(matches!(judge("around"), Err(ResolveError::Missing(_))));
        assert!(matches!(judge("nothing"), Err(ResolveError::Missing(_))));
        assert!(matches!(judge("out/below"), Err(ResolveError::Escapes(_))));
    }
}
