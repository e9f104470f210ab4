//! Scope discovery: the directories on the targets' chains, and the one
//! guidance file of a family that each of them holds.
//!
//! Cost: one `lstat` per distinct target, one per distinct directory on the
//! chains, and at most one per candidate name per directory and family; a
//! directory is never listed and the tree is never walked.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use crate::{Family, GuidanceError, Source};

/// The repository root, checked once per request.
#[derive(Debug)]
pub(crate) struct Root {
    /// Absolute, lexically cleaned (no `.` components, no trailing
    /// separator), symlinks not resolved: what users see in the heading.
    pub(crate) abs: PathBuf,
    /// Fully resolved: what symlinked candidates must stay inside.
    canonical: PathBuf,
}

impl Root {
    /// Checks that `root` is a listable directory.
    pub(crate) fn open(root: &Path) -> Result<Self, GuidanceError> {
        let fail = |source| GuidanceError::Root {
            path: root.to_path_buf(),
            source,
        };
        let abs: PathBuf = std::path::absolute(root)
            .map_err(fail)?
            .components()
            .collect();
        let meta = fs::metadata(&abs).map_err(fail)?;
        if !meta.is_dir() {
            return Err(GuidanceError::NotADirectory {
                path: root.to_path_buf(),
            });
        }
        // Opening the directory is enough to know it is readable; it is never
        // iterated.
        fs::read_dir(&abs).map_err(fail)?;
        let canonical = fs::canonicalize(&abs).map_err(fail)?;
        Ok(Self { abs, canonical })
    }

    fn path_of(&self, rel: &str) -> PathBuf {
        let mut path = self.abs.clone();
        if !rel.is_empty() {
            path.push(rel);
        }
        path
    }
}

/// The directories guidance is looked for in, and the heading's directory.
#[derive(Debug)]
pub(crate) struct Scope {
    /// Repository-relative directories (`""` is the root), each an existing
    /// real directory, root first, every parent before its children, in the
    /// order the targets first reach them.
    pub(crate) dirs: Vec<String>,
    /// The deepest directory common to every target's directory, as
    /// components (empty: the root).
    pub(crate) common: Vec<String>,
}

impl Scope {
    pub(crate) fn collect(root: &Root, targets: &[String]) -> Self {
        let mut dirs = vec![String::new()];
        // Whether a relative directory exists as a real directory; the root
        // always does.
        let mut known: HashMap<String, bool> = HashMap::from([(String::new(), true)]);
        let mut seen_targets: HashSet<&str> = HashSet::new();
        let mut common: Option<Vec<String>> = None;

        for target in targets {
            if !seen_targets.insert(target.as_str()) {
                continue;
            }
            let dir = target_dir(root, target);
            common = Some(match common {
                None => dir.iter().map(|part| (*part).to_owned()).collect(),
                Some(mut common) => {
                    let shared = common
                        .iter()
                        .zip(&dir)
                        .take_while(|(a, b)| a.as_str() == **b)
                        .count();
                    common.truncate(shared);
                    common
                }
            });

            let mut rel = String::new();
            for part in &dir {
                if !rel.is_empty() {
                    rel.push('/');
                }
                rel.push_str(part);
                let exists = match known.get(&rel) {
                    Some(&exists) => exists,
                    None => {
                        let exists = is_real_dir(&root.path_of(&rel));
                        known.insert(rel.clone(), exists);
                        if exists {
                            dirs.push(rel.clone());
                        }
                        exists
                    }
                };
                // Nothing below a missing directory (or a symlink, which git
                // never looks through) is looked at.
                if !exists {
                    break;
                }
            }
        }

        Self {
            dirs,
            common: common.unwrap_or_default(),
        }
    }
}

/// The directory of one target, as repository-relative components: the
/// target itself when it is a real directory on disk, else its parent.
/// Targets that could leave the repository or enter `.git` give the root.
fn target_dir<'t>(root: &Root, target: &'t str) -> Vec<&'t str> {
    let Some(mut parts) = target_parts(target) else {
        return Vec::new();
    };
    if !parts.is_empty() && !is_real_dir(&root.path_of(&parts.join("/"))) {
        parts.pop();
    }
    parts
}

/// Splits a repository-relative target into plain components, dropping
/// empty and `.` ones. `None` for a target that is absolute, has a `..`
/// component, has a `.git` component (any ASCII case, for case-insensitive
/// file systems), or has a component this platform would not read as one
/// plain name.
fn target_parts(target: &str) -> Option<Vec<&str>> {
    let path = Path::new(target);
    if target.starts_with('/') || path.has_root() || path.is_absolute() {
        return None;
    }
    let mut parts = Vec::new();
    for part in target.split('/') {
        match part {
            "" | "." => continue,
            ".." => return None,
            _ if part.eq_ignore_ascii_case(".git") => return None,
            _ => {}
        }
        let mut components = Path::new(part).components();
        match (components.next(), components.next()) {
            (Some(Component::Normal(name)), None) if name == part => parts.push(part),
            _ => return None,
        }
    }
    Some(parts)
}

/// A directory that is not a symlink. Any error counts as "no".
fn is_real_dir(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir())
}

/// For each directory, the first candidate of `family` that counts, as a
/// [`Source`] with its text cut to `max_file_bytes`.
pub(crate) fn find(
    root: &Root,
    dirs: &[String],
    family: Family,
    max_file_bytes: usize,
) -> Vec<Source> {
    dirs.iter()
        .filter_map(|dir| {
            family.candidates().iter().find_map(|name| {
                let path = if dir.is_empty() {
                    (*name).to_owned()
                } else {
                    format!("{dir}/{name}")
                };
                read_candidate(root, &root.path_of(&path), max_file_bytes).map(|read| Source {
                    path,
                    text: read.text,
                    truncated: read.truncated,
                    file_len: read.file_len,
                })
            })
        })
        .collect()
}

struct Loaded {
    text: String,
    truncated: bool,
    file_len: u64,
}

/// Reads a candidate if it counts: a regular file, or a symlink whose
/// resolved target is a regular file inside the canonical root, that can be
/// opened and read and whose shown text is not whitespace-only. Every error
/// (not found, permission denied, …) means "does not count".
fn read_candidate(root: &Root, path: &Path, max_file_bytes: usize) -> Option<Loaded> {
    // The type is checked before opening: opening a FIFO would block.
    let meta = fs::symlink_metadata(path).ok()?;
    let file_type = meta.file_type();
    let file = if file_type.is_symlink() {
        // The checked, resolved path is the one opened.
        let resolved = fs::canonicalize(path).ok()?;
        if !resolved.starts_with(&root.canonical) || !fs::metadata(&resolved).ok()?.is_file() {
            return None;
        }
        File::open(resolved).ok()?
    } else if file_type.is_file() {
        File::open(path).ok()?
    } else {
        return None;
    };
    let file_len = file.metadata().ok()?.len();
    let limit = u64::try_from(max_file_bytes)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes).ok()?;

    let mut truncated = bytes.len() > max_file_bytes;
    if truncated {
        bytes.truncate(max_file_bytes);
        let keep = complete_prefix_len(&bytes);
        bytes.truncate(keep);
    }
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    // Replacement characters are wider than the bytes they replace.
    truncated |= cut(&mut text, max_file_bytes);
    if text.trim().is_empty() {
        return None;
    }
    Some(Loaded {
        text,
        truncated,
        // The file may have grown since it was opened.
        file_len: file_len.max(u64::try_from(bytes.len()).unwrap_or(u64::MAX)),
    })
}

/// The length of `bytes` without a UTF-8 sequence left incomplete by a cut at
/// its end, so a cut character does not become a replacement character.
fn complete_prefix_len(bytes: &[u8]) -> usize {
    let tail = bytes.len().saturating_sub(3);
    for start in (tail..bytes.len()).rev() {
        let byte = bytes[start];
        if byte & 0b1100_0000 == 0b1000_0000 {
            continue; // a continuation byte: the lead is further back
        }
        let width = match byte {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if bytes.len() - start < width {
            start
        } else {
            bytes.len()
        };
    }
    bytes.len()
}

/// Cuts `text` to at most `max` bytes at a character boundary; true if
/// anything was cut.
pub(crate) fn cut(text: &mut String, max: usize) -> bool {
    if text.len() <= max {
        return false;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_parts_rejects_escapes() {
        for target in [
            "/etc",
            "..",
            "a/../b",
            "a/..",
            ".git",
            ".git/HEAD",
            "sub/.GIT/x",
        ] {
            assert_eq!(target_parts(target), None, "{target:?}");
        }
        assert_eq!(target_parts(""), Some(vec![]));
        assert_eq!(target_parts("."), Some(vec![]));
        assert_eq!(target_parts("./a//b/"), Some(vec!["a", "b"]));
        assert_eq!(target_parts("a/.gitignore"), Some(vec!["a", ".gitignore"]));
        assert_eq!(target_parts("...x"), Some(vec!["...x"]));
    }

    #[test]
    fn incomplete_tails_are_dropped() {
        let e_acute = "é".as_bytes(); // 2 bytes
        let euro = "€".as_bytes(); // 3 bytes
        assert_eq!(complete_prefix_len(b"abc"), 3);
        assert_eq!(complete_prefix_len(&[b'a', e_acute[0]]), 1);
        assert_eq!(complete_prefix_len(&[b'a', e_acute[0], e_acute[1]]), 3);
        assert_eq!(complete_prefix_len(&[b'a', euro[0], euro[1]]), 1);
        assert_eq!(complete_prefix_len(&[b'a', 0xFF]), 2);
        assert_eq!(complete_prefix_len(&[0x80, 0x80, 0x80]), 3);
        assert_eq!(complete_prefix_len(&[]), 0);
    }

    #[test]
    fn cut_respects_char_boundaries() {
        let mut text = String::from("a€b");
        assert!(cut(&mut text, 3));
        assert_eq!(text, "a");
        let mut text = String::from("abc");
        assert!(!cut(&mut text, 3));
        assert!(cut(&mut text, 0));
        assert_eq!(text, "");
    }
}
