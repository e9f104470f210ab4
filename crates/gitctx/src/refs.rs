//! Tags, semantic-version tags, `origin/HEAD`, repository config and submodule
//! gitlinks.

use std::cmp::Reverse;
use std::fmt;
use std::path::Path;

use crate::error::{Error, Result, git, is_not_found};
use crate::oid::ObjectId;
use crate::repo::{GITLINK_MODE, Repo};

/// A tag that points (possibly through an annotated tag object) at a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag {
    /// The short name, e.g. `v1.2.0`.
    pub name: String,
    /// The commit the tag peels to.
    pub commit: ObjectId,
    /// An annotated tag (a tag object) rather than a lightweight one.
    pub annotated: bool,
}

/// `MAJOR.MINOR.PATCH`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
}

/// Which component to bump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bump {
    Major,
    Minor,
    Patch,
}

impl Version {
    /// Parses `vX.Y.Z` or `X.Y.Z` exactly (no pre-release or build suffix, no
    /// leading zeros except a lone `0`).
    pub fn parse_tag(name: &str) -> Option<Version> {
        let digits = name.strip_prefix('v').unwrap_or(name);
        let mut parts = digits.split('.');
        let mut next = || -> Option<u64> {
            let part = parts.next()?;
            let valid = !part.is_empty()
                && part.bytes().all(|b| b.is_ascii_digit())
                && (part == "0" || !part.starts_with('0'));
            if valid { part.parse().ok() } else { None }
        };
        let version = Version {
            major: next()?,
            minor: next()?,
            patch: next()?,
        };
        parts.next().is_none().then_some(version)
    }

    /// The next version: `1.2.3` bumped by `Minor` is `1.3.0`. `None` when the
    /// component is already the largest number (a tag named by the repository
    /// may say `v18446744073709551615.0.0`).
    pub fn bump(self, bump: Bump) -> Option<Version> {
        Some(match bump {
            Bump::Major => Version {
                major: self.major.checked_add(1)?,
                minor: 0,
                patch: 0,
            },
            Bump::Minor => Version {
                major: self.major,
                minor: self.minor.checked_add(1)?,
                patch: 0,
            },
            Bump::Patch => Version {
                patch: self.patch.checked_add(1)?,
                ..self
            },
        })
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// A tag whose name is a semantic version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemverTag {
    pub tag: Tag,
    pub version: Version,
}

/// Where `origin/HEAD` points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteHead {
    /// The full ref it points at, e.g. `refs/remotes/origin/main`.
    pub refname: String,
    /// The short form, e.g. `origin/main`.
    pub shorthand: String,
    pub commit: ObjectId,
}

/// A submodule recorded in a tree: its path and the commit it is pinned to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gitlink {
    pub path: String,
    pub commit: ObjectId,
}

impl Repo {
    /// Every tag that peels to a commit, sorted by name.
    pub fn tags(&self) -> Result<Vec<Tag>> {
        let repo = &self.inner;
        let names = repo.tag_names(None).map_err(git("listing tags"))?;
        let mut tags = Vec::new();
        for name in names.iter().filter_map(|n| n.ok().flatten()) {
            let reference = match repo.find_reference(&format!("refs/tags/{name}")) {
                Ok(r) => r,
                Err(err) if is_not_found(&err) => continue,
                Err(err) => return Err(git("reading a tag")(err)),
            };
            let annotated = reference.peel_to_tag().is_ok();
            let Ok(commit) = reference.peel_to_commit() else {
                continue; // a tag of a tree or blob is not a release point
            };
            tags.push(Tag {
                name: name.to_owned(),
                commit: ObjectId::from_git(commit.id()),
                annotated,
            });
        }
        tags.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(tags)
    }

    /// The highest-versioned `vX.Y.Z`/`X.Y.Z` tag whose commit is reachable from
    /// `rev` (inclusive). "Latest" means highest version, not nearest: a hotfix tag
    /// on an old line does not hide the newest release. When `v1.2.0` and `1.2.0`
    /// both exist, the `v` form wins.
    pub fn latest_semver_tag(&self, rev: &str) -> Result<Option<SemverTag>> {
        let head = self.resolve_commit(rev)?;
        let mut candidates: Vec<SemverTag> = self
            .tags()?
            .into_iter()
            .filter_map(|tag| {
                let version = Version::parse_tag(&tag.name)?;
                Some(SemverTag { tag, version })
            })
            .collect();
        candidates.sort_by_key(|c| (Reverse(c.version), Reverse(c.tag.name.starts_with('v'))));
        for candidate in candidates {
            if self.is_ancestor(candidate.tag.commit, head)? {
                return Ok(Some(candidate));
            }
        }
        Ok(None)
    }

    /// Where `refs/remotes/origin/HEAD` points, `None` when it is not set.
    pub fn origin_head(&self) -> Result<Option<RemoteHead>> {
        let reference = match self.inner.find_reference("refs/remotes/origin/HEAD") {
            Ok(r) => r,
            Err(err) if is_not_found(&err) => return Ok(None),
            Err(err) => return Err(git("reading origin/HEAD")(err)),
        };
        let resolved = match reference.resolve() {
            Ok(r) => r,
            // A dangling symbolic ref (its branch was deleted) counts as unset.
            Err(err) if is_not_found(&err) => return Ok(None),
            Err(err) => return Err(git("reading origin/HEAD")(err)),
        };
        let refname = resolved.name().unwrap_or_default().to_owned();
        let shorthand = refname
            .strip_prefix("refs/remotes/")
            .unwrap_or(&refname)
            .to_owned();
        let commit = resolved
            .peel_to_commit()
            .map_err(git("reading origin/HEAD"))?
            .id();
        Ok(Some(RemoteHead {
            refname,
            shorthand,
            commit: ObjectId::from_git(commit),
        }))
    }

    /// A config value as libgit2 reads it from git's standard places
    /// (repository, user and system config), `None` when unset. The files the
    /// `GIT_CONFIG_GLOBAL` and `GIT_CONFIG_SYSTEM` variables name, which git
    /// processes read instead, are not read here (see the crate docs).
    pub fn config_get(&self, key: &str) -> Result<Option<String>> {
        self.config_read(key, git2::Config::get_string)
    }

    /// A boolean config value (`true/yes/on/1`, `false/no/off/0`).
    pub fn config_get_bool(&self, key: &str) -> Result<Option<bool>> {
        self.config_read(key, git2::Config::get_bool)
    }

    /// An integer config value (`k`, `m`, `g` suffixes allowed, as git does).
    pub fn config_get_i64(&self, key: &str) -> Result<Option<i64>> {
        self.config_read(key, git2::Config::get_i64)
    }

    /// `key` read from a snapshot of the config with `get`, `None` when unset.
    fn config_read<T>(
        &self,
        key: &str,
        get: impl FnOnce(&git2::Config, &str) -> std::result::Result<T, git2::Error>,
    ) -> Result<Option<T>> {
        let config = self.config_snapshot()?;
        match get(&config, key) {
            Ok(value) => Ok(Some(value)),
            Err(err) if is_not_found(&err) => Ok(None),
            Err(err) => Err(config_error(key, err)),
        }
    }

    /// Sets a value in the repository's own config (`.git/config`).
    pub fn config_set(&self, key: &str, value: &str) -> Result<()> {
        let mut local = self.local_config()?;
        local
            .set_str(key, value)
            .map_err(|err| config_error(key, err))
    }

    /// Adds `value` to the multi-valued key `key` in the repository's own config,
    /// unless it is already one of its values. Returns `true` when it added it.
    pub fn config_add_unique(&self, key: &str, value: &str) -> Result<bool> {
        let mut local = self.local_config()?;
        let mut present = false;
        if let Ok(mut entries) = local.multivar(key, None) {
            while let Some(entry) = entries.next() {
                let entry = entry.map_err(|err| config_error(key, err))?;
                if entry.value_bytes() == value.as_bytes() {
                    present = true;
                }
            }
        }
        if present {
            return Ok(false);
        }
        // A pattern that matches no existing value appends a new one.
        local
            .set_multivar(key, "^\\b\\B$", value)
            .map_err(|err| config_error(key, err))?;
        Ok(true)
    }

    /// Removes a value from the repository's own config. `false` when it was unset.
    pub fn config_unset(&self, key: &str) -> Result<bool> {
        let mut local = self.local_config()?;
        match local.remove(key) {
            Ok(()) => Ok(true),
            Err(err) if is_not_found(&err) => Ok(false),
            Err(err) => Err(config_error(key, err)),
        }
    }

    fn config_snapshot(&self) -> Result<git2::Config> {
        self.inner
            .config()
            .and_then(|mut c| c.snapshot())
            .map_err(git("reading config"))
    }

    fn local_config(&self) -> Result<git2::Config> {
        self.inner
            .config()
            .and_then(|c| c.open_level(git2::ConfigLevel::Local))
            .map_err(git("opening the repository config"))
    }

    /// The submodule gitlinks in the tree of `rev`, sorted by path.
    pub fn gitlinks(&self, rev: &str) -> Result<Vec<Gitlink>> {
        let tree = self
            .find_commit(rev)?
            .tree()
            .map_err(git("reading a tree"))?;
        let mut out = Vec::new();
        let mut failure = None;
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.filemode() as u32 != GITLINK_MODE {
                return git2::TreeWalkResult::Ok;
            }
            match entry.name() {
                Ok(name) => out.push(Gitlink {
                    path: format!("{dir}{name}"),
                    commit: ObjectId::from_git(entry.id()),
                }),
                Err(_) => {
                    failure = Some(Error::InvalidInput {
                        what: format!("submodule under '{dir}'"),
                        reason: "its name is not UTF-8".to_owned(),
                    });
                    return git2::TreeWalkResult::Abort;
                }
            }
            git2::TreeWalkResult::Ok
        })
        .or_else(|err| {
            // An abort we asked for is reported through `failure`.
            if failure.is_some() {
                Ok(())
            } else {
                Err(git("walking a tree")(err))
            }
        })?;
        if let Some(err) = failure {
            return Err(err);
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    /// Opens the checked-out submodule at `path` (relative to the working tree),
    /// `None` when it is not checked out locally.
    pub fn open_submodule(&self, path: &str) -> Result<Option<Repo>> {
        let dir = self.root().join(Path::new(path));
        if !dir.join(".git").exists() {
            return Ok(None);
        }
        match Repo::open(&dir) {
            Ok(repo) => Ok(Some(repo)),
            Err(Error::NotARepository { .. }) => Ok(None),
            Err(err) => Err(err),
        }
    }
}

fn config_error(key: &str, err: git2::Error) -> Error {
    if matches!(
        err.code(),
        git2::ErrorCode::InvalidSpec | git2::ErrorCode::Invalid
    ) || err.class() == git2::ErrorClass::Config
    {
        Error::InvalidInput {
            what: format!("config '{key}'"),
            reason: err.message().to_owned(),
        }
    } else {
        git("using config")(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_semver_tags() {
        let v = |s| Version::parse_tag(s);
        assert_eq!(
            v("v1.2.3"),
            Some(Version {
                major: 1,
                minor: 2,
                patch: 3
            })
        );
        assert_eq!(v("10.0.0").map(|v| v.to_string()), Some("10.0.0".into()));
        for bad in [
            "1.2",
            "v1.2.3.4",
            "1.2.3-rc1",
            "v01.2.3",
            "vv1.2.3",
            "release-1.2.3",
            "",
            "1..3",
        ] {
            assert_eq!(v(bad), None, "{bad}");
        }
    }

    #[test]
    fn bumps() {
        let base = Version::parse_tag("1.2.3").unwrap();
        assert_eq!(base.bump(Bump::Patch).unwrap().to_string(), "1.2.4");
        assert_eq!(base.bump(Bump::Minor).unwrap().to_string(), "1.3.0");
        assert_eq!(base.bump(Bump::Major).unwrap().to_string(), "2.0.0");
    }
}
