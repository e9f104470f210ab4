//! The checks of `.git/ultragit/`: the size of its caches and the commits
//! `failed.log` lists that still have no note.

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader, Read as _};

use gitctx::{BlameCache, ObjectId};
use safe_io::Dir;
use safe_io::fs::FileKind;

use super::{CACHE_WARN_BYTES, Check, Doctor, Finding, Repair, listed, plural, truncate};
use crate::error::NotesError;
use crate::{NOTES_REF, author};

/// The most of `failed.log` that is read.
const FAILED_LOG_LIMIT: u64 = 16 * 1024 * 1024;

impl Doctor<'_> {
    /// The size of `.git/ultragit/` and its caches, with the read pipeline's
    /// blame cache and outline cache on their own; the blame cache's entries
    /// outside the kept window (which no read uses any more, see
    /// `gitctx::blame_cache`) are counted and pruned by the repair. The
    /// outline cache (one entry per file read, see
    /// `ultragit_read::outline_cache`) bounds itself: it is only reported.
    pub(super) fn cache(&self) -> Result<Finding, NotesError> {
        let id = "cache";
        let state = author::state_dir(&self.repo.common_dir());
        let Some(dir) = Dir::open(self.repo.common_dir())?.open_dir_optional(author::STATE_DIR)?
        else {
            return Ok(Check::ok(id, format!("{} does not exist yet", state.display())).into());
        };
        let total = tree_size(&dir, 0)?;
        let cache = match dir.open_dir_optional("cache")? {
            Some(cache) => tree_size(&cache, 0)?,
            None => 0,
        };
        let blame = blame_cache(&state);
        let usage = blame.usage();
        let stale = blame.outside(&self.repo.blame_window()?);
        let mut message = format!(
            "{} uses {} ({} of it caches, always safe to delete); blame cache: {} for {}, {}",
            state.display(),
            human_bytes(total),
            human_bytes(cache),
            plural(usize_of(usage.files), "entry", "entries"),
            plural(usize_of(usage.paths), "file", "files"),
            human_bytes(usage.bytes)
        );
        let repair = (stale.files > 0).then(|| {
            message.push_str(&format!(
                ", {} ({}) outside the kept window",
                plural(usize_of(stale.files), "entry", "entries"),
                human_bytes(stale.bytes)
            ));
            Repair::PruneBlameCache
        });
        let (outlines, outline_bytes) = match dir.open_dir_optional(OUTLINE_CACHE)? {
            Some(outline) => entries_size(&outline)?,
            None => (0, 0),
        };
        message.push_str(&format!(
            "; outline cache: {} ({})",
            plural(outlines, "entry", "entries"),
            human_bytes(outline_bytes)
        ));
        let check = if cache > CACHE_WARN_BYTES {
            Check::warn(id, message).with_fix(format!("rm -rf {}", state.join("cache").display()))
        } else if repair.is_some() {
            Check::ok(id, message).with_fix("ultragit doctor --fix (or ultragit cache warm)")
        } else {
            Check::ok(id, message)
        };
        Ok(Finding { check, repair })
    }

    /// Removes the blame cache's entries outside the kept window.
    pub(super) fn prune_blame_cache(&self) -> Result<String, NotesError> {
        let blame = blame_cache(&author::state_dir(&self.repo.common_dir()));
        let removed = blame.prune_outside(&self.repo.blame_window()?);
        Ok(format!(
            "pruned {} ({}) outside the kept window from {}",
            plural(
                usize_of(removed.files),
                "blame cache entry",
                "blame cache entries"
            ),
            human_bytes(removed.bytes),
            blame.dir().display()
        ))
    }

    pub(super) fn failures(&self) -> Result<Check, NotesError> {
        let id = "failures";
        let Some(dir) = Dir::open(self.repo.common_dir())?.open_dir_optional(author::STATE_DIR)?
        else {
            return Ok(Check::ok(id, "no failed annotations recorded"));
        };
        if dir.kind("failed.log")?.is_none() {
            return Ok(Check::ok(id, "no failed annotations recorded"));
        }
        // `{time} {sha} {reason}` per line; the newest last.
        let file = dir.open_file("failed.log")?;
        let log = dir.path().join("failed.log");
        let mut order: Vec<ObjectId> = Vec::new();
        let mut reasons: HashMap<ObjectId, String> = HashMap::new();
        let mut lines = 0usize;
        for line in BufReader::new(file.take(FAILED_LOG_LIMIT)).split(b'\n') {
            let line = line.map_err(|e| NotesError::io(&log, e))?;
            let line = String::from_utf8_lossy(&line);
            let mut words = line.splitn(3, ' ');
            let (Some(_time), Some(sha)) = (words.next(), words.next()) else {
                continue;
            };
            let Ok(commit) = sha.parse::<ObjectId>() else {
                continue;
            };
            lines += 1;
            if reasons
                .insert(commit, words.next().unwrap_or("").to_owned())
                .is_none()
            {
                order.push(commit);
            } else {
                order.retain(|c| *c != commit);
                order.push(commit);
            }
        }
        // A failure is resolved once the commit has a note, or is gone.
        let open: Vec<ObjectId> = crate::unannotated(&self.repo.notes(NOTES_REF)?, order)?
            .into_iter()
            .filter(|c| self.repo.commit_info_by_id(*c).is_ok())
            .collect();
        let Some(newest) = open.last() else {
            return Ok(Check::ok(
                id,
                format!(
                    "{}: {}, every one since annotated",
                    log.display(),
                    plural(lines, "entry", "entries")
                ),
            ));
        };
        let reason = reasons.get(newest).map(String::as_str).unwrap_or("");
        Ok(Check::warn(
            id,
            format!(
                "{} still without a note after a failed annotation: {} (newest: {}: {})",
                plural(open.len(), "commit", "commits"),
                listed(open.iter().rev()),
                newest.short(),
                truncate(reason, 200)
            ),
        )
        .with_fix(format!(
            "ultragit annotate --commit {} (the reasons are in {})",
            newest.to_hex(),
            log.display()
        )))
    }
}

/// Bytes in the files below `dir` (links are not followed; at most 16 levels).
fn tree_size(dir: &Dir, depth: usize) -> Result<u64, NotesError> {
    if depth > 16 {
        return Ok(0);
    }
    let mut total = 0;
    for (name, kind) in dir.entries()? {
        match kind {
            FileKind::File => {
                let file = dir.open_file(&name)?;
                total += file
                    .metadata()
                    .map_err(|e| NotesError::io(&dir.path().join(&name), e))?
                    .len();
            }
            FileKind::Dir => total += tree_size(&dir.open_dir(&name)?, depth + 1)?,
            _ => {}
        }
    }
    Ok(total)
}

/// The read pipeline's outline cache below the state directory
/// (`ultragit_read::GitReadPipeline::default_outline_cache`).
const OUTLINE_CACHE: &str = "cache/outline";

/// The entries of a cache directory (its regular files, temporary ones —
/// named with a leading dot — left out) and their size.
fn entries_size(dir: &Dir) -> Result<(usize, u64), NotesError> {
    let mut count = 0;
    let mut bytes = 0;
    for (name, kind) in dir.entries()? {
        if kind != FileKind::File || name.to_string_lossy().starts_with('.') {
            continue;
        }
        let file = dir.open_file(&name)?;
        count += 1;
        bytes += file
            .metadata()
            .map_err(|e| NotesError::io(&dir.path().join(&name), e))?
            .len();
    }
    Ok((count, bytes))
}

/// The read pipeline's blame cache (`ultragit_read::GitReadPipeline::
/// default_blame_cache`, which this crate does not depend on) in the state
/// directory `state`.
pub(crate) fn blame_cache(state: &std::path::Path) -> BlameCache {
    BlameCache::new(state.join("cache").join("blame"))
}

fn usize_of(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

fn human_bytes(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    const GIB: u64 = 1024 * MIB;
    match bytes {
        b if b >= GIB => format!("{:.1} GiB", b as f64 / GIB as f64),
        b if b >= MIB => format!("{:.1} MiB", b as f64 / MIB as f64),
        b if b >= KIB => format!("{:.1} KiB", b as f64 / KIB as f64),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(512), "512 bytes");
        assert_eq!(human_bytes(3 * 1024 * 1024 / 2), "1.5 MiB");
    }
}
