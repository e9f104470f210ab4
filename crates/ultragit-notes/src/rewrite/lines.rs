//! Carrying a region from the commit whose note describes it to a rewritten
//! commit: the file followed through renames, the lines re-resolved.
//!
//! A region's `lines` are in the coordinates of the commit that wrote it. At
//! the new commit they are found again:
//! - in a language with a grammar (`outline`), through the region's anchor: the
//!   unit of that name (exact or unqualified; a fuzzy match only where the
//!   region's old lines, mapped through the diff, still overlap it) gives the
//!   new lines; no such unit means the unit no longer exists and the region is
//!   dropped;
//! - otherwise the old lines are mapped through the diff from the old commit
//!   to the new one (zero context lines); a region none of whose lines survive
//!   is dropped.

use std::collections::HashMap;

use gitctx::{DiffOptions, FileStatus, Hunk, ObjectId, Repo};
use outline::{MatchKind, Unit};
use ultragit_schema::{LineRange, RegionAnnotation};

use crate::error::NotesError;

/// The largest file outlined again (larger files fall back to the line map).
const OUTLINE_LIMIT: u64 = 4 * 1024 * 1024;

/// How the files of one source commit became the files of the new commit.
#[derive(Debug, Default)]
pub(crate) struct FileMap {
    /// Files that changed, by their path at the source commit. A file not
    /// listed is unchanged (same path, same lines).
    changed: HashMap<String, Change>,
}

#[derive(Debug)]
enum Change {
    Deleted,
    Changed { path: String, hunks: Vec<Hunk> },
}

impl FileMap {
    /// The map from `source` to `new` (one tree diff, renames followed).
    pub(crate) fn between(
        repo: &Repo,
        source: ObjectId,
        new: ObjectId,
    ) -> Result<FileMap, NotesError> {
        let options = DiffOptions {
            context_lines: 0,
            ..DiffOptions::default()
        };
        let diff = repo.diff_revs(&source.to_hex(), &new.to_hex(), &options)?;
        let mut changed = HashMap::new();
        for file in diff.files {
            let Some(old_path) = file.old_path.clone() else {
                continue; // added: no region of the source can be in it
            };
            let change = match (file.status, file.new_path) {
                (FileStatus::Deleted, _) | (_, None) => Change::Deleted,
                (_, Some(path)) => Change::Changed {
                    path,
                    hunks: file.hunks,
                },
            };
            changed.insert(old_path, change);
        }
        Ok(FileMap { changed })
    }

    /// Where `path` is at the new commit and the lines of `range` there
    /// (`None` for the lines when none of them survived); `None` when the file
    /// was deleted.
    fn follow(&self, path: &str, range: LineRange) -> Option<(String, Option<LineRange>)> {
        match self.changed.get(path) {
            None => Some((path.to_owned(), Some(range))),
            Some(Change::Deleted) => None,
            Some(Change::Changed { path, hunks }) => Some((path.clone(), map_range(hunks, range))),
        }
    }
}

/// The new line of `line` through zero-context `hunks` (sorted, as git emits
/// them); `None` when the line was removed or replaced.
pub(crate) fn map_line(hunks: &[Hunk], line: u32) -> Option<u32> {
    let mut delta: i64 = 0;
    for hunk in hunks {
        // An empty side's start is the line *before* the change.
        let (first_old, next_old) = if hunk.old_lines == 0 {
            (hunk.old_start + 1, hunk.old_start + 1)
        } else {
            (hunk.old_start, hunk.old_start + hunk.old_lines)
        };
        let next_new = if hunk.new_lines == 0 {
            hunk.new_start + 1
        } else {
            hunk.new_start + hunk.new_lines
        };
        if line < first_old {
            break;
        }
        if line < next_old {
            return None;
        }
        delta = i64::from(next_new) - i64::from(next_old);
    }
    u32::try_from(i64::from(line) + delta)
        .ok()
        .filter(|l| *l > 0)
}

/// The smallest range holding every surviving line of `range`.
pub(crate) fn map_range(hunks: &[Hunk], range: LineRange) -> Option<LineRange> {
    if range.start == 0 || range.start > range.end {
        return None;
    }
    let mut out: Option<LineRange> = None;
    // Bounded: a region's range is at most the file's length, and files we
    // read are bounded.
    for line in range.start..=range.end.min(range.start.saturating_add(200_000)) {
        if let Some(new) = map_line(hunks, line) {
            out = Some(match out {
                None => LineRange::new(new, new),
                Some(r) => LineRange::new(r.start.min(new), r.end.max(new)),
            });
        }
    }
    out
}

/// What became of one region.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Carried {
    /// The region at the new commit, its lines re-resolved.
    Kept(Box<RegionAnnotation>),
    /// The region was dropped, and why.
    Dropped(String),
}

/// The files of the new commit, read and outlined once.
pub(crate) struct Target<'r> {
    repo: &'r Repo,
    new: String,
    files: HashMap<String, Option<FileAt>>,
}

struct FileAt {
    lines: u32,
    /// `None`: no grammar for the file (or it could not be read as text).
    units: Option<Vec<Unit>>,
}

impl<'r> Target<'r> {
    pub(crate) fn new(repo: &'r Repo, new: ObjectId) -> Self {
        Target {
            repo,
            new: new.to_hex(),
            files: HashMap::new(),
        }
    }

    fn file(&mut self, path: &str) -> Result<Option<&FileAt>, NotesError> {
        if !self.files.contains_key(path) {
            let file = match self.repo.file_size_at(&self.new, path)? {
                None => None,
                Some(size) if size > OUTLINE_LIMIT => Some(FileAt {
                    lines: u32::MAX,
                    units: None,
                }),
                Some(_) => self.repo.file_at_opt(&self.new, path)?.map(|bytes| {
                    let text = String::from_utf8_lossy(&bytes);
                    FileAt {
                        lines: gitctx::count_lines(&bytes),
                        units: outline::outline(path, &text).ok(),
                    }
                }),
            };
            self.files.insert(path.to_owned(), file);
        }
        Ok(self.files.get(path).and_then(Option::as_ref))
    }

    /// Carries `region` (in the coordinates of the commit `map` starts from)
    /// to the new commit.
    pub(crate) fn carry(
        &mut self,
        map: &FileMap,
        region: &RegionAnnotation,
    ) -> Result<Carried, NotesError> {
        let name = &region.ast_anchor.name;
        let Some((path, mapped)) = map.follow(&region.file, region.lines) else {
            return Ok(Carried::Dropped(format!("{} was deleted", region.file)));
        };
        let Some(file) = self.file(&path)? else {
            return Ok(Carried::Dropped(format!("{path} no longer exists")));
        };
        let lines = match &file.units {
            Some(units) => match find_unit(units, region, mapped) {
                Some(unit) => LineRange::new(unit.lines.start, unit.lines.end),
                None => {
                    return Ok(Carried::Dropped(format!(
                        "{name} no longer exists in {path}"
                    )));
                }
            },
            None => match mapped {
                Some(range) => range,
                None => {
                    return Ok(Carried::Dropped(format!(
                        "the lines of {name} in {path} were all removed"
                    )));
                }
            },
        };
        let end = lines.end.min(file.lines.max(1));
        let mut carried = region.clone();
        carried.file = path;
        carried.lines = LineRange::new(lines.start.min(end), end);
        Ok(Carried::Kept(Box::new(carried)))
    }
}

/// The regions of `source`'s note carried to `new` (see the module docs):
/// the kept ones, and `file:anchor: why` for each dropped one. What an amend,
/// a rebase and a remapped copy (`remap`) all do with one source's regions.
pub(crate) fn carry_regions(
    repo: &Repo,
    source: ObjectId,
    new: ObjectId,
    regions: &[RegionAnnotation],
) -> Result<(Vec<RegionAnnotation>, Vec<String>), NotesError> {
    let map = FileMap::between(repo, source, new)?;
    let mut target = Target::new(repo, new);
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    for region in regions {
        match target.carry(&map, region)? {
            Carried::Kept(region) => kept.push(*region),
            Carried::Dropped(why) => {
                dropped.push(format!("{}:{}: {why}", region.file, region.ast_anchor.name))
            }
        }
    }
    Ok((kept, dropped))
}

/// The unit of the outline the region's anchor names: exact or unqualified
/// matches, else fuzzy ones overlapping the mapped lines; several candidates
/// are narrowed to the region's kind, then to the nearest to its mapped lines.
fn find_unit(units: &[Unit], region: &RegionAnnotation, mapped: Option<LineRange>) -> Option<Unit> {
    let resolution = outline::resolve_anchor(units, &region.ast_anchor.name).ok()?;
    let overlaps = |unit: &Unit| {
        mapped.is_some_and(|m| unit.lines.start <= m.end && unit.lines.end >= m.start)
    };
    let mut candidates: Vec<&Unit> = match resolution.match_kind {
        MatchKind::Exact | MatchKind::Unqualified => resolution.units.iter().collect(),
        MatchKind::Fuzzy { .. } => resolution.units.iter().filter(|u| overlaps(u)).collect(),
    };
    if candidates.len() > 1 {
        let same_kind: Vec<&Unit> = candidates
            .iter()
            .copied()
            .filter(|u| u.kind.anchor_type() == region.ast_anchor.unit_type)
            .collect();
        if !same_kind.is_empty() {
            candidates = same_kind;
        }
    }
    let anchor = mapped.map_or(region.lines.start, |m| m.start);
    candidates
        .into_iter()
        .min_by_key(|u| (!overlaps(u), u.lines.start.abs_diff(anchor)))
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(old_start: u32, old_lines: u32, new_start: u32, new_lines: u32) -> Hunk {
        Hunk {
            old_start,
            old_lines,
            new_start,
            new_lines,
            header: String::new(),
            lines: Vec::new(),
        }
    }

    #[test]
    fn lines_move_past_insertions_and_deletions() {
        // Two lines inserted after line 5; lines 10-11 deleted; line 20 replaced by two.
        let hunks = [hunk(5, 0, 6, 2), hunk(10, 2, 11, 0), hunk(20, 1, 20, 2)];
        let check =
            |old: u32, new: Option<u32>| assert_eq!(map_line(&hunks, old), new, "line {old}");
        check(1, Some(1));
        check(5, Some(5));
        check(6, Some(8));
        check(9, Some(11));
        check(10, None);
        check(11, None);
        check(12, Some(12));
        check(19, Some(19));
        check(20, None);
        check(21, Some(22));
        // At the top of the file.
        assert_eq!(map_line(&[hunk(1, 2, 0, 0)], 3), Some(1));
        assert_eq!(map_line(&[hunk(0, 0, 1, 3)], 1), Some(4));
    }

    #[test]
    fn ranges_keep_their_surviving_lines() {
        let hunks = [hunk(5, 0, 6, 2), hunk(10, 2, 11, 0)];
        assert_eq!(
            map_range(&hunks, LineRange::new(4, 12)),
            Some(LineRange::new(4, 12))
        );
        assert_eq!(map_range(&hunks, LineRange::new(10, 11)), None);
        assert_eq!(
            map_range(&[], LineRange::new(3, 4)),
            Some(LineRange::new(3, 4))
        );
        assert_eq!(map_range(&[], LineRange::new(4, 3)), None);
    }
}
