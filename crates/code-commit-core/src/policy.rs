//! The path policy: which files a model's blocks may write or delete.
//!
//! Every block of a response is judged before anything is written ([`verify`]); one
//! rejection means the response is not applied at all. Paths are judged as git
//! would judge them on any operating system, so a spelling that is harmless on
//! Linux but reaches `.git` on Windows or macOS is refused everywhere.
//!
//! # Rules, in the order they are checked
//!
//! 1. **Spelling.** Refused: an empty path; NUL and other control characters;
//!    backslashes; absolute paths (`/x`), `//server` (UNC), `~` at the start, drive
//!    letters (`C:`, `c:/x`, `C:x`); any `:` (NTFS alternate streams); empty
//!    components (`a//b`, a trailing `/`); `..`, and any component that is only
//!    dots and spaces once invisible characters are removed (`...`, `.. `); names
//!    longer than 255 bytes. A leading `./` and inner `.` components are dropped.
//! 2. **Protected names.** Each component is compared after removing Unicode
//!    default-ignorable code points (zero-width characters, bidi controls,
//!    variation selectors, soft hyphen, …), then trailing dots and spaces (NTFS
//!    drops them), in lower case (NTFS and HFS+ fold case). Refused: `.git` and its
//!    NTFS short name `git~N` at any depth and everything under it; `.gitignore`,
//!    `.gitattributes` and `.gitmodules` at any depth (they change what git shows
//!    the supervisor); `Cargo.lock`, `LLMInstructions.md` and `UserSpecification.md`
//!    at any depth; `build.sh` and `codeRollup.sh` at the top of the project; the
//!    top-level `agent-config` and `target` directories and everything under them.
//! 3. **Invisible characters.** A path that still holds a default-ignorable code
//!    point is refused: a reviewer could not tell it from its visible twin.
//! 4. **Ignore rules.** The path and each of its parent directories, relative to the
//!    repository root (the project directory may be a subdirectory), must not match
//!    git's ignore rules (every `.gitignore`, negations, `info/exclude`,
//!    `core.excludesFile`), tracked or not: the supervisor reviews changes with
//!    `git status` and `git diff`, which do not show ignored files.
//! 5. **File system.** Walking from the project directory, no existing component may
//!    be a symbolic link (dangling ones included), an existing component the path
//!    goes through must be a directory and must not be a nested git repository, the
//!    target must not be a directory or a special file, a written file must have a
//!    single hard link, a deleted file must exist, and the deepest existing ancestor,
//!    canonicalized, must be inside the canonical project directory.
//!
//! Across blocks, [`verify`] also refuses two blocks that reach the same file
//! through different spellings, and a block whose path runs through a file another
//! block writes or deletes.
//!
//! **Invariant:** this module only reads the file system.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use gitctx::Repo;

use crate::parse::{Action, Block};

/// The project directory (the directory code-commit runs in) and its repository.
#[derive(Debug)]
pub struct Policy {
    /// The canonical project directory.
    project: PathBuf,
    /// The project directory relative to the repository root, `/`-separated, with a
    /// trailing `/` (empty at the root).
    prefix: String,
    repo: Repo,
}

/// A path that passed the policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The normalized path relative to the project directory, `/`-separated.
    pub rel: String,
    /// The absolute path: the canonical project directory joined with `rel`.
    pub abs: PathBuf,
}

/// A path the policy refused, and why (a reason written for the model).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct Rejection {
    /// The path as the model wrote it.
    pub path: String,
    /// What is wrong and what to do instead.
    pub reason: String,
}

/// Why the project directory cannot be judged.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The directory (or the repository root) cannot be resolved.
    #[error("cannot resolve {}: {source}", path.display())]
    Resolve {
        /// The path that could not be canonicalized.
        path: PathBuf,
        /// The file system error.
        #[source]
        source: io::Error,
    },
    /// The project path is not a directory.
    #[error("{} is not a directory: run code-commit in the project directory", path.display())]
    NotADirectory {
        /// The canonical project path.
        path: PathBuf,
    },
    /// No git working tree contains the project directory.
    #[error(
        "{} is not inside a git working tree: code-commit needs git so the supervisor can review every change",
        path.display()
    )]
    NotInRepository {
        /// The canonical project directory.
        path: PathBuf,
        /// What git reported.
        #[source]
        source: gitctx::Error,
    },
    /// The project directory is not under the working tree's root (or is inside
    /// the `.git` directory).
    #[error(
        "{} is not inside the working tree of the repository at {}",
        path.display(),
        root.display()
    )]
    OutsideWorkTree {
        /// The canonical project directory.
        path: PathBuf,
        /// The canonical working tree root.
        root: PathBuf,
    },
    /// The project directory's path relative to the repository is not UTF-8.
    #[error("{} is not valid UTF-8 relative to its repository", path.display())]
    NonUtf8 {
        /// The canonical project directory.
        path: PathBuf,
    },
}

impl Policy {
    /// The policy for `project_dir`, which must be a directory inside a git working
    /// tree (found as git finds it, from any subdirectory).
    pub fn new(project_dir: &Path) -> Result<Policy, PolicyError> {
        let project = project_dir
            .canonicalize()
            .map_err(|source| PolicyError::Resolve {
                path: project_dir.to_path_buf(),
                source,
            })?;
        if !project.is_dir() {
            return Err(PolicyError::NotADirectory { path: project });
        }
        let repo = Repo::discover(&project).map_err(|source| PolicyError::NotInRepository {
            path: project.clone(),
            source,
        })?;
        let root = repo
            .root()
            .canonicalize()
            .map_err(|source| PolicyError::Resolve {
                path: repo.root().to_path_buf(),
                source,
            })?;
        let outside = || PolicyError::OutsideWorkTree {
            path: project.clone(),
            root: root.clone(),
        };
        let relative = project.strip_prefix(&root).map_err(|_| outside())?;
        let mut prefix = String::new();
        for component in relative.components() {
            let Component::Normal(name) = component else {
                return Err(outside());
            };
            let name = name.to_str().ok_or_else(|| PolicyError::NonUtf8 {
                path: project.clone(),
            })?;
            if prefix.is_empty() && is_dot_git(&fold(name)) {
                return Err(outside());
            }
            prefix.push_str(name);
            prefix.push('/');
        }
        Ok(Policy {
            project,
            prefix,
            repo,
        })
    }

    /// The canonical project directory.
    pub fn project_dir(&self) -> &Path {
        &self.project
    }

    /// The files git tracks at or below `dir` (relative to the project),
    /// relative to the project, sorted.
    pub(crate) fn tracked_under(&self, dir: &str) -> Result<Vec<String>, gitctx::Error> {
        let paths = self.repo.tracked_under(&format!("{}{dir}", self.prefix))?;
        Ok(paths
            .into_iter()
            .map(|p| p.strip_prefix(&self.prefix).map(str::to_owned).unwrap_or(p))
            .collect())
    }

    /// Whether git ignores `rel` (relative to the project) and does not track it.
    pub(crate) fn is_ignored(&self, rel: &str) -> Result<bool, gitctx::Error> {
        self.repo.is_ignored(&format!("{}{rel}", self.prefix))
    }

    /// The content of `rel` (relative to the project) at `HEAD`; `None` when
    /// it is not a file there, there is no `HEAD` yet, or it cannot be read.
    pub(crate) fn head_content(&self, rel: &str) -> Option<Vec<u8>> {
        self.repo
            .file_at_opt("HEAD", &format!("{}{rel}", self.prefix))
            .ok()
            .flatten()
    }

    /// The git directory all worktrees of the repository share (hooks and
    /// config live there).
    pub(crate) fn git_common_dir(&self) -> PathBuf {
        self.repo.common_dir()
    }

    /// Judges one path for one action (rules in the module docs).
    pub fn check(&self, raw: &str, action: &Action) -> Result<Target, Rejection> {
        let reject = |reason: String| Rejection {
            path: raw.to_owned(),
            reason,
        };
        let components = spelling(raw).map_err(reject)?;
        let rel = components.join("/");
        if let Some(reason) = protected(&components) {
            return Err(reject(reason));
        }
        if let Some(c) = raw.chars().find(|c| is_ignorable(*c)) {
            return Err(reject(format!(
                "the path holds the invisible character U+{:04X}; write the path with visible characters only",
                u32::from(c)
            )));
        }
        self.ignored(&components).map_err(reject)?;
        let abs = self.walk(&components, action).map_err(reject)?;
        Ok(Target { rel, abs })
    }

    /// Rule 4: the path and its parents must not match git's ignore rules.
    fn ignored(&self, components: &[String]) -> Result<(), String> {
        let mut repo_rel = self.prefix.clone();
        for (i, component) in components.iter().enumerate() {
            repo_rel.push_str(component);
            let last = i + 1 == components.len();
            // A parent is a directory, whether or not it exists yet (`secret/` only
            // matches directories).
            let probe = if last {
                repo_rel.clone()
            } else {
                format!("{repo_rel}/")
            };
            let ignored = self.repo.matches_ignore_rules(&probe).map_err(|err| {
                format!(
                    "cannot check git's ignore rules for this path ({err}); choose another path"
                )
            })?;
            if ignored {
                let shown = components[..=i].join("/");
                return Err(if last {
                    format!(
                        "`{shown}` is ignored by .gitignore, so the supervisor would not see the change in git status; choose a path git does not ignore"
                    )
                } else {
                    format!(
                        "`{shown}/` is ignored by .gitignore, so the supervisor would not see changes under it in git status; choose a path git does not ignore"
                    )
                });
            }
            repo_rel.push('/');
        }
        Ok(())
    }

    /// Rule 5: the file system walk. Returns the absolute path.
    fn walk(&self, components: &[String], action: &Action) -> Result<PathBuf, String> {
        let mut current = self.project.clone();
        let mut deepest = self.project.clone();
        // `spelling` never returns an empty list; an empty one names the project.
        let Some(last) = components.len().checked_sub(1) else {
            return Err(
                "the path names the project directory itself; name a file inside it".to_owned(),
            );
        };
        for (i, component) in components.iter().enumerate() {
            current.push(component);
            let shown = components[..=i].join("/");
            let meta = match fs::symlink_metadata(&current) {
                Ok(meta) => meta,
                Err(err) if err.kind() == io::ErrorKind::NotFound => {
                    if matches!(action, Action::Delete) {
                        return Err(format!(
                            "`{shown}` does not exist, so `{}` cannot be deleted; delete only files that exist",
                            components.join("/")
                        ));
                    }
                    break;
                }
                Err(err) => {
                    return Err(format!(
                        "cannot inspect `{shown}` ({err}); choose another path"
                    ));
                }
            };
            let kind = meta.file_type();
            if kind.is_symlink() {
                return Err(format!(
                    "`{shown}` is a symbolic link; code-commit never writes through symlinks, so write the file at its real path inside the project"
                ));
            }
            if i < last {
                if !kind.is_dir() {
                    return Err(format!(
                        "`{shown}` is a file, not a directory, so nothing can be created under it; choose another path"
                    ));
                }
                if fs::symlink_metadata(current.join(".git")).is_ok() {
                    return Err(format!(
                        "`{shown}` is a separate git repository (a submodule or nested clone) whose changes the supervisor does not review here; leave its files alone"
                    ));
                }
            } else {
                if kind.is_dir() {
                    return Err(format!(
                        "`{shown}` is a directory; a block replaces or deletes one file, so name a file"
                    ));
                }
                if !kind.is_file() {
                    return Err(format!(
                        "`{shown}` is not a regular file (a device, socket or pipe); leave it alone"
                    ));
                }
                if matches!(action, Action::Write(_)) && hard_links(&meta) > 1 {
                    return Err(format!(
                        "`{shown}` has {} hard links, so writing it could change a file elsewhere; leave it unchanged",
                        hard_links(&meta)
                    ));
                }
            }
            deepest.clone_from(&current);
        }
        let resolved = deepest
            .canonicalize()
            .map_err(|err| format!("cannot resolve the path ({err}); choose another path"))?;
        if !resolved.starts_with(&self.project) {
            return Err(
                "the path leads outside the project directory; paths must be relative to the project directory, without .."
                    .to_owned(),
            );
        }
        let mut abs = self.project.clone();
        abs.extend(components);
        Ok(abs)
    }
}

/// Judges every block; returns the targets in block order, or every rejection in
/// block order.
pub fn verify(policy: &Policy, blocks: &[Block]) -> Result<Vec<(Target, Action)>, Vec<Rejection>> {
    let mut accepted: Vec<(Target, Action, &str)> = Vec::new();
    let mut rejections = Vec::new();
    for block in blocks {
        let target = match policy.check(&block.path, &block.action) {
            Ok(target) => target,
            Err(rejection) => {
                rejections.push(rejection);
                continue;
            }
        };
        if let Some(reason) = conflict(&target, &accepted) {
            rejections.push(Rejection {
                path: block.path.clone(),
                reason,
            });
            continue;
        }
        accepted.push((target, block.action.clone(), &block.path));
    }
    if rejections.is_empty() {
        Ok(accepted
            .into_iter()
            .map(|(target, action, _)| (target, action))
            .collect())
    } else {
        Err(rejections)
    }
}

/// A clash between `target` and the targets accepted before it.
fn conflict(target: &Target, accepted: &[(Target, Action, &str)]) -> Option<String> {
    accepted.iter().find_map(|(other, _, raw)| {
        if other.rel == target.rel {
            Some(format!(
                "`{}` is the same file as the earlier block ^^^{raw}; send exactly one block per file",
                target.rel
            ))
        } else if is_under(&target.rel, &other.rel) {
            Some(format!(
                "the earlier block ^^^{raw} makes `{}` a file, so nothing can be created under it; choose one of the two paths",
                other.rel
            ))
        } else if is_under(&other.rel, &target.rel) {
            Some(format!(
                "the earlier block ^^^{raw} needs `{}` to be a directory, so it cannot be a file; choose one of the two paths",
                target.rel
            ))
        } else {
            None
        }
    })
}

/// True when `path` lies strictly under the directory `dir`.
fn is_under(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir)
        .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(unix)]
fn hard_links(meta: &fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.nlink()
}

#[cfg(not(unix))]
fn hard_links(_meta: &fs::Metadata) -> u64 {
    // std offers no stable link count elsewhere; the symlink and containment
    // checks still apply.
    1
}

const RELATIVE: &str = "paths must be relative to the project directory, without ..";

/// Rule 1: the components of a well-spelled path (`.` dropped), or why not.
fn spelling(raw: &str) -> Result<Vec<String>, String> {
    if raw.is_empty() {
        return Err("the path is empty; write a file path relative to the project directory, like src/main.rs".to_owned());
    }
    if let Some(c) = raw.chars().find(|c| c.is_control()) {
        return Err(format!(
            "the path holds the control character U+{:04X}; write a plain path",
            u32::from(c)
        ));
    }
    if raw.contains('\\') {
        return Err(
            "the path holds a backslash; separate directories with / (paths are relative to the project directory, like src/main.rs)"
                .to_owned(),
        );
    }
    if raw.starts_with("//") {
        return Err(format!("`{raw}` is a network (UNC) path; {RELATIVE}"));
    }
    if raw.starts_with('/') {
        return Err(format!("`{raw}` is absolute; {RELATIVE}"));
    }
    if raw.starts_with('~') {
        return Err(format!("`~` stands for a home directory; {RELATIVE}"));
    }
    let mut chars = raw.chars();
    if let (Some(letter), Some(':')) = (chars.next(), chars.next())
        && letter.is_ascii_alphabetic()
    {
        return Err(format!("`{letter}:` is a drive letter; {RELATIVE}"));
    }
    if raw.contains(':') {
        return Err(
            "`:` is not allowed in paths (NTFS reads it as a drive letter or an alternate data stream); choose a name without it"
                .to_owned(),
        );
    }
    let pieces: Vec<&str> = raw.split('/').collect();
    let mut components = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        if piece.is_empty() {
            return Err(if i + 1 == pieces.len() {
                "the path ends with /; name a file, not a directory".to_owned()
            } else {
                "the path has an empty component (//); separate directories with a single /"
                    .to_owned()
            });
        }
        if *piece == "." {
            continue;
        }
        if *piece == ".." || fold(piece).is_empty() {
            return Err(format!("`{piece}` is not allowed: {RELATIVE}"));
        }
        if piece.len() > 255 {
            return Err(
                "a name in the path is longer than 255 bytes; choose a shorter name".to_owned(),
            );
        }
        components.push((*piece).to_owned());
    }
    if components.is_empty() {
        return Err(
            "the path names the project directory itself; name a file inside it".to_owned(),
        );
    }
    Ok(components)
}

/// Names protected in any directory (folded), with why.
const PROTECTED_ANYWHERE: &[(&str, &str)] = &[
    (
        ".gitignore",
        ".gitignore files are protected: they decide what the supervisor sees in git status",
    ),
    (
        ".gitattributes",
        ".gitattributes files are protected: they change how git shows changes to the supervisor",
    ),
    (
        ".gitmodules",
        ".gitmodules is protected: it decides where submodules come from",
    ),
    (
        "cargo.lock",
        "Cargo.lock is protected: cargo maintains it during the build; change Cargo.toml instead",
    ),
    (
        "llminstructions.md",
        "LLMInstructions.md is protected: it holds the supervisor's instructions",
    ),
    (
        "userspecification.md",
        "UserSpecification.md files are protected: they hold the user's specification",
    ),
];

/// Names protected at the top of the project (folded): a file that is the
/// whole path (`true`), or a directory with everything below it; with why.
const PROTECTED_AT_TOP: &[(&str, bool, &str)] = &[
    (
        "build.sh",
        true,
        "build.sh is protected: it is the supervisor's build, which decides whether the change passes",
    ),
    (
        "coderollup.sh",
        true,
        "codeRollup.sh is protected: the supervisor builds the code rollup with it",
    ),
    (
        "agent-config",
        false,
        "agent-config/ is protected: it holds code-commit's query, configuration and logs",
    ),
    (
        "target",
        false,
        "target/ is protected: it holds build output, which the build recreates",
    ),
];

/// Rule 2: why a (spelled-correctly) path is protected, if it is.
fn protected(components: &[String]) -> Option<String> {
    let folded: Vec<String> = components.iter().map(|c| fold(c)).collect();
    if let Some(at) = folded.iter().position(|c| is_dot_git(c)) {
        return Some(format!(
            "`.git` (written `{}`) is protected: the supervisor reviews changes with git",
            components[at]
        ));
    }
    let anywhere = PROTECTED_ANYWHERE
        .iter()
        .find(|&&(name, _)| folded.iter().any(|c| c == name))
        .map(|&(_, why)| why);
    let first = folded.first().map(String::as_str);
    let at_top = PROTECTED_AT_TOP
        .iter()
        .find(|&&(name, whole, _)| first == Some(name) && (!whole || folded.len() == 1))
        .map(|&(_, _, why)| why);
    anywhere.or(at_top).map(str::to_owned)
}

/// `.git`, or its NTFS 8.3 short name `git~N`, in folded form.
fn is_dot_git(folded: &str) -> bool {
    folded == ".git"
        || folded
            .strip_prefix("git~")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// A component as a case-folding, dot-trimming file system sees it: without
/// default-ignorable code points, without trailing dots and spaces, in lower case.
fn fold(component: &str) -> String {
    let visible: String = component.chars().filter(|c| !is_ignorable(*c)).collect();
    visible.trim_end_matches(['.', ' ']).to_lowercase()
}

/// Unicode's `Default_Ignorable_Code_Point` property (Unicode 15): characters that
/// render as nothing, which HFS+ and APFS lookups skip.
fn is_ignorable(c: char) -> bool {
    matches!(
        u32::from(c),
        0x00AD
            | 0x034F
            | 0x061C
            | 0x115F..=0x1160
            | 0x17B4..=0x17B5
            | 0x180B..=0x180F
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x206F
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFEFF
            | 0xFFA0
            | 0xFFF0..=0xFFF8
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE0FFF
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding() {
        for (raw, folded) in [
            (".GIT", ".git"),
            (".git. . ", ".git"),
            (".g\u{200c}it", ".git"),
            ("\u{feff}.gi\u{fe0f}t", ".git"),
            ("Cargo.lock.", "cargo.lock"),
            ("...", ""),
            ("a.b", "a.b"),
        ] {
            assert_eq!(fold(raw), folded, "{raw:?}");
        }
    }

    #[test]
    fn dot_git_names() {
        for name in [".git", "git~1", "git~12"] {
            assert!(is_dot_git(name), "{name}");
        }
        for name in ["git~", "git~x", ".github", "git"] {
            assert!(!is_dot_git(name), "{name}");
        }
    }

    #[test]
    fn spelling_rules() {
        let ok = |raw: &str, want: &[&str]| assert_eq!(spelling(raw).unwrap(), want, "{raw}");
        ok("a/b", &["a", "b"]);
        ok("./a/./b", &["a", "b"]);
        ok("././a", &["a"]);
        ok(".hidden", &[".hidden"]);
        for bad in [
            "", "/a", "//s/x", "~/a", "C:", "c:/x", "C:x", "a:b", "a\\b", "a//b", "a/", "..",
            "a/../b", "...", ".. ", ".", "./", "a\0b", "a\tb",
        ] {
            assert!(spelling(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn protection() {
        let p = |raw: &str| protected(&spelling(raw).unwrap());
        for raw in [
            "sub/.git/config",
            "GIT~1/config",
            "a/b/.gitignore",
            "build.sh",
            "target",
        ] {
            assert!(p(raw).is_some(), "{raw}");
        }
        for raw in ["scripts/build.sh", "x/target/y", "src/lib.rs"] {
            assert!(p(raw).is_none(), "{raw}");
        }
    }

    #[test]
    fn under() {
        assert!(is_under("a/b", "a"));
        assert!(!is_under("ab", "a"));
        assert!(!is_under("a", "a"));
    }
}
