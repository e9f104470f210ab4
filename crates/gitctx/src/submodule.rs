//! What a commit's `.gitmodules` declares, read by git's own config parser.
//!
//! `.gitmodules` is committed, so it is untrusted input (issue 13). It is read
//! with `git config --blob <id> --no-includes -z --list` through the hardened
//! [`GitCommand`](crate::GitCommand), so quoting, escapes, comments and
//! continuation lines mean exactly what they mean to git, and:
//!
//! - **Invariant:** no `include.path`/`includeIf` is followed: a committed
//!   `.gitmodules` cannot make us read a file outside the commit.
//! - **Invariant:** the work is bounded before git runs: a `.gitmodules` over
//!   `MAX_GITMODULES_BYTES` is refused, and so is one whose listing could
//!   outgrow `MAX_LISTING_BYTES` (git repeats a section's name in front of
//!   every key, so a long `[submodule "…"]` header over many short lines
//!   would multiply).
//! - **Invariant:** only a regular file counts: a `.gitmodules` that is a
//!   symbolic link or a directory in the commit declares nothing, as for git.
//! - Errors are classified by the checks above and git's exit status: a
//!   `.gitmodules` refused by a bound or that git cannot read as config is
//!   [`Error::InvalidInput`].

use crate::error::{Error, Result, git};
use crate::repo::Repo;
use std::collections::BTreeMap;

/// The largest `.gitmodules` read: 1 MiB, [`safe_io::fs::CONFIG_LIMIT`].
const MAX_GITMODULES_BYTES: u64 = safe_io::fs::CONFIG_LIMIT;

/// The largest listing git may be asked to produce from a `.gitmodules`: 4 MiB.
const MAX_LISTING_BYTES: u64 = 4 * 1024 * 1024;

/// The name of the file, at the top of the tree.
const GITMODULES: &str = ".gitmodules";

impl Repo {
    /// `path → url` for every submodule the `.gitmodules` of `rev`'s tree
    /// declares with both a path and a URL, read by git's own config parser
    /// (`git config --blob <id> --no-includes -z --list`); empty when there is
    /// no such regular file (a symbolic link there declares nothing, as for
    /// git). When a name sets a key twice the last value counts, as in git;
    /// when two names declare one path, the name that sorts last counts.
    ///
    /// The file is untrusted: includes are never followed, and a file over
    /// 1 MiB, or whose listing could outgrow 4 MiB (git repeats a section's
    /// header in front of each of its keys), is refused before git runs, as
    /// is one git cannot read as config: [`Error::InvalidInput`].
    pub fn submodule_urls(&self, rev: &str) -> Result<BTreeMap<String, String>> {
        let Some(entry) = self.blob_at(rev, GITMODULES)? else {
            return Ok(BTreeMap::new());
        };
        if entry.symlink {
            return Ok(BTreeMap::new());
        }
        let invalid = |reason: String| Error::InvalidInput {
            what: format!("{GITMODULES} at {rev}"),
            reason,
        };
        if entry.size > MAX_GITMODULES_BYTES {
            return Err(invalid(format!(
                "it is {} bytes, over the limit of {MAX_GITMODULES_BYTES}",
                entry.size
            )));
        }
        let blob = self
            .inner
            .find_blob(entry.id)
            .map_err(git("reading a file"))?;
        let bound = listing_bound(blob.content());
        if bound > MAX_LISTING_BYTES {
            return Err(invalid(format!(
                "git's listing of it could reach {bound} bytes, over the limit of {MAX_LISTING_BYTES}"
            )));
        }
        let output = self
            .git()
            .args(["config", "--blob"])
            .arg(entry.id.to_string())
            .args(["--no-includes", "-z", "--list"])
            .run_unchecked()?;
        if !output.status.success() {
            let status = output
                .status
                .code()
                .map_or("a signal".to_owned(), |code| format!("exit status {code}"));
            return Err(invalid(format!(
                "git cannot read it as a config file ({status})"
            )));
        }
        Ok(urls_from_listing(&output.stdout))
    }
}

/// The most bytes `git config --list -z` can print for `content`: every value
/// and key name comes from the text (escapes only shrink it), and each entry
/// repeats its section header (no longer than the longest line) and adds a
/// few separators. Entries are at most one per line.
fn listing_bound(content: &[u8]) -> u64 {
    let lines = content.split(|&b| b == b'\n');
    let (count, longest) = lines.fold((0_u64, 0_u64), |(count, longest), line| {
        (count + 1, longest.max(line.len() as u64))
    });
    2 * content.len() as u64 + count * (longest + 8)
}

/// `path → url` from the `-z` listing: `key\nvalue\0` records, a key
/// without a value (`key\0`) for a bare boolean.
fn urls_from_listing(listing: &[u8]) -> BTreeMap<String, String> {
    let mut by_name: BTreeMap<String, (Option<String>, Option<String>)> = BTreeMap::new();
    for record in listing.split(|&b| b == 0) {
        let record = String::from_utf8_lossy(record);
        let Some((key, value)) = record.split_once('\n') else {
            continue;
        };
        // Sections and variable names come lowercased; the subsection (the
        // submodule's name) keeps its case and may hold dots.
        let Some(rest) = key.strip_prefix("submodule.") else {
            continue;
        };
        let (name, slot) = if let Some(name) = rest.strip_suffix(".path") {
            (name, 0)
        } else if let Some(name) = rest.strip_suffix(".url") {
            (name, 1)
        } else {
            continue;
        };
        let entry = by_name.entry(name.to_owned()).or_default();
        let value = Some(value.to_owned());
        if slot == 0 {
            entry.0 = value;
        } else {
            entry.1 = value;
        }
    }
    by_name
        .into_values()
        .filter_map(|(path, url)| Some((path?, url?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_become_paths_and_urls() {
        let listing = b"submodule.a.path\nvendor/a\0submodule.a.url\n../a.git\0\
            submodule.we.ird\"Name.path\nx y\0submodule.we.ird\"Name.url\nhttps://e.com/x.git\0\
            submodule.only.path\nlonely\0submodule.bare.path\0submodule.bare.url\nu\0\
            core.bare\nfalse\0submodule.a.url\n../a2.git\0";
        let urls = urls_from_listing(listing);
        let expected: BTreeMap<String, String> =
            [("vendor/a", "../a2.git"), ("x y", "https://e.com/x.git")]
                .into_iter()
                .map(|(p, u)| (p.to_owned(), u.to_owned()))
                .collect();
        assert_eq!(urls, expected);
    }

    #[test]
    fn the_listing_bound_covers_repeated_headers() {
        assert_eq!(listing_bound(b""), 8);
        // Three lines, the longest 11 bytes: each may repeat those 11 bytes.
        assert_eq!(listing_bound(b"[submodule]\nx\ny"), 2 * 15 + 3 * (11 + 8));
        let hostile = format!(
            "[submodule \"{}\"]\n{}",
            "n".repeat(200_000),
            "url=x\n".repeat(100_000)
        );
        assert!(listing_bound(hostile.as_bytes()) > MAX_LISTING_BYTES);
    }
}
