//! Stage 4 of spec 003 §4: the regions of the fetched notes that concern the
//! query's scopes.
//!
//! Overlap is judged in the annotating commit's own line coordinates (blame's
//! original lines); a matched region's lines are moved to today's, widened to
//! its unit in today's outline (see the [pipeline](crate::pipeline) docs).

use std::collections::HashMap;
use std::rc::Rc;

use chrono::{DateTime, Utc};
use gitctx::{BlameEntry, ObjectId};
use outline::{MatchKind, Unit};
use ultragit_schema::{Annotation, LineRange, RegionAnnotation};

use crate::scope::{Resolved, ResolvedScope};
use crate::score::MatchType;

/// A note that passed the filters.
#[derive(Clone)]
pub(crate) struct Fetched {
    pub(crate) commit: String,
    pub(crate) annotation: Rc<Annotation>,
    /// When the note was written.
    pub(crate) timestamp: DateTime<Utc>,
    /// The annotated commit's committer date (what recency and `--since`
    /// judge; the note's timestamp when the commit cannot be read).
    pub(crate) committed: DateTime<Utc>,
}

/// A region matched to a scope, its lines already in today's coordinates.
pub(crate) struct Matched {
    pub(crate) region: RegionAnnotation,
    /// Index into the fetched annotations.
    pub(crate) note: usize,
    /// Index of the region in its annotation.
    pub(crate) region_index: usize,
    pub(crate) match_type: MatchType,
    /// The region's lines as written (its commit's coordinates), for dedup.
    original: LineRange,
    /// Where the note's own (narrower) lines are today, when `region.lines`
    /// is its whole unit ([`focus`]).
    pub(crate) focus: Option<LineRange>,
    /// The other commits blame names for today's lines of the region, with
    /// how many lines each (candidates for staleness: the pipeline keeps the
    /// later ones without a note).
    pub(crate) others: Vec<(ObjectId, u32)>,
    /// Matched in a scope resolved through the notes: today's outline has no
    /// unit of its name to judge its stability by.
    pub(crate) by_notes: bool,
}

/// A region of a scope's file that matched nothing: its lines are impossible or
/// no longer survive (told apart by the pipeline, which warns about the
/// impossible ones).
pub(crate) struct Dropped {
    pub(crate) note: usize,
    pub(crate) region: usize,
    /// The highest line of the annotating commit's file that blame saw
    /// survive: the file had at least this many lines, so a region ending
    /// there or before is possible.
    pub(crate) seen_lines: u32,
}

/// What stage 4 found: the matched regions (each once, with its best match),
/// and the regions of the scopes' files that matched nothing.
pub(crate) struct Matches {
    pub(crate) matched: Vec<Matched>,
    pub(crate) dropped: Vec<Dropped>,
}

/// The regions of `fetched` that concern the scopes of `resolved`, each scope
/// judged against its blame (`blames[i]` is the blame of scope `i`).
pub(crate) fn match_regions(
    resolved: &Resolved,
    blames: &[Vec<BlameEntry>],
    fetched: &[Fetched],
) -> Matches {
    let mut matched: Vec<Matched> = Vec::new();
    let mut dropped: Vec<Dropped> = Vec::new();
    for (scope, entries) in resolved.scopes.iter().zip(blames) {
        let units = resolved.units(scope.file());
        filter_regions(scope, entries, units, fetched, &mut matched, &mut dropped);
    }
    Matches {
        matched: dedup_matches(matched),
        dropped,
    }
}

/// One scope's part of [`match_regions`]: the regions of the blamed commits' notes that concern
/// it, with their lines moved to today's coordinates.
///
/// A line-range scope matches a region whose lines overlap the range (judged
/// in the annotating commit's coordinates, through the blame of the range),
/// or whose anchor names a unit the lines lie in ([`ResolvedScope::blame_range`]
/// widened the blame to those units, so their notes are among `fetched`).
fn filter_regions(
    scope: &ResolvedScope,
    entries_all: &[BlameEntry],
    units: Option<&[Unit]>,
    fetched: &[Fetched],
    out: &mut Vec<Matched>,
    dropped: &mut Vec<Dropped>,
) {
    let by_commit = group_by_commit(entries_all);
    // The blame of the lines asked for, when the scope's blame covers more
    // (the units the lines lie in): line overlap is judged on these only.
    let widened = scope.blame_range() != scope.echo.line_range;
    let in_range: Vec<BlameEntry> = match scope.echo.line_range {
        Some(range) if widened => clip_blame(entries_all, range),
        _ => Vec::new(),
    };
    let by_commit_in_range = group_by_commit(&in_range);
    let named = fetched
        .iter()
        .filter(|note| by_commit.contains_key(&note.commit))
        .flat_map(|note| &note.annotation.regions)
        .any(|region| {
            matches!(
                name_match(scope, region),
                Some((MatchKind::Exact | MatchKind::Unqualified, _))
            )
        });
    for (index, note) in fetched.iter().enumerate() {
        let Some(entries) = by_commit.get(&note.commit) else {
            continue;
        };
        let entries_in_range: &[&BlameEntry] = if widened {
            by_commit_in_range
                .get(&note.commit)
                .map_or(&[], Vec::as_slice)
        } else {
            entries
        };
        for (region_index, region) in note.annotation.regions.iter().enumerate() {
            let same_file = region.file == scope.file()
                || entries.iter().any(|e| e.original_path == region.file);
            if !same_file {
                continue;
            }
            if region.lines.start == 0 || region.lines.end < region.lines.start {
                dropped.push(Dropped {
                    note: index,
                    region: region_index,
                    seen_lines: 0,
                });
                continue;
            }
            let surviving = surviving_lines(region, entries);
            // A fuzzy name counts only when no region of this scope matches by
            // name exactly (exact > unqualified > fuzzy, as for scopes): `encode`
            // is two edits from `decode` but is not about it.
            let name_match = name_match(scope, region)
                .filter(|(kind, _)| !matches!(kind, MatchKind::Fuzzy { .. }) || !named);
            let not_current = Dropped {
                note: index,
                region: region_index,
                seen_lines: entries.iter().map(|e| e.original_end).max().unwrap_or(0),
            };
            let (match_type, today) = match (name_match, &scope.query_anchor, scope.echo.line_range)
            {
                (Some((kind, range)), _, _) => {
                    let Some(today) = surviving.or(range) else {
                        dropped.push(not_current);
                        continue;
                    };
                    (anchor_match(kind), today)
                }
                (None, Some(_), Some(_)) | (None, None, Some(_)) => {
                    let Some(today) = surviving_lines(region, entries_in_range) else {
                        // Alive elsewhere in the units the lines lie in, but
                        // not in the lines: not this scope's, and not stale.
                        if surviving.is_none() {
                            dropped.push(not_current);
                        }
                        continue;
                    };
                    let len = region.lines.end - region.lines.start + 1;
                    let kept = count_surviving(region, entries_in_range);
                    let overlap_ratio = f64::from(kept) / f64::from(len);
                    (MatchType::LineOverlap { overlap_ratio }, today)
                }
                // An anchor that could not be resolved (no grammar) matches by name
                // only.
                (None, Some(_), None) => continue,
                (None, None, None) => {
                    let Some(today) = surviving else {
                        dropped.push(not_current);
                        continue;
                    };
                    (MatchType::WholeFile, today)
                }
            };
            let mut region = region.clone();
            let original = region.lines;
            region.lines = widen_to_unit(&region, today, units);
            let focus = focus(&region.file, original, region.lines, entries);
            let others = other_commits(&note.commit, region.lines, entries_all);
            out.push(Matched {
                region,
                note: index,
                region_index,
                match_type,
                original,
                focus,
                others,
                by_notes: scope.resolved_by_notes(),
            });
        }
    }
}

/// Blame entries by commit (hex), in blame's order.
fn group_by_commit(entries: &[BlameEntry]) -> HashMap<String, Vec<&BlameEntry>> {
    let mut by_commit: HashMap<String, Vec<&BlameEntry>> = HashMap::new();
    for entry in entries {
        by_commit
            .entry(entry.commit.to_hex())
            .or_default()
            .push(entry);
    }
    by_commit
}

/// How a region's anchor name matches the scope, and the lines of what it
/// matched: against the unit the anchor resolved to (so `B::run` does not
/// match the scope of `A::run`), or the anchor as asked when it could not be
/// resolved; for a line range, against the units the lines lie in (exactly
/// or unqualified only, exact first).
fn name_match(
    scope: &ResolvedScope,
    region: &RegionAnnotation,
) -> Option<(MatchKind, Option<LineRange>)> {
    let name = &region.ast_anchor.name;
    if let Some(anchor) = scope.anchor() {
        return outline::match_name(anchor, name).map(|kind| (kind, scope.echo.line_range));
    }
    scope
        .echo
        .units
        .iter()
        .filter_map(|unit| match outline::match_name(&unit.name, name)? {
            kind @ (MatchKind::Exact | MatchKind::Unqualified) => Some((kind, Some(unit.lines))),
            MatchKind::Fuzzy { .. } => None,
        })
        .min_by_key(|(kind, _)| !matches!(kind, MatchKind::Exact))
}

/// Blame only knows the lines a commit itself last changed; lines of the region
/// that an older commit wrote are attributed to that one. When today's outline has
/// the region's unit (by name) around those lines, the unit's range is the
/// region's today; otherwise the span of its surviving lines is.
fn widen_to_unit(region: &RegionAnnotation, today: LineRange, units: Option<&[Unit]>) -> LineRange {
    let Some(units) = units else {
        return today;
    };
    units
        .iter()
        .filter(|unit| unit.lines.start <= today.start && unit.lines.end >= today.end)
        .filter(|unit| {
            matches!(
                outline::match_name(&region.ast_anchor.name, &unit.qualified_name),
                Some(MatchKind::Exact | MatchKind::Unqualified)
            )
        })
        .min_by_key(|unit| unit.lines.end - unit.lines.start)
        .map(|unit| LineRange {
            start: unit.lines.start,
            end: unit.lines.end,
        })
        .unwrap_or(today)
}

/// Where a region stored as `stored` (its commit's coordinates) is today,
/// when it is narrower than `reported` (the unit it is reported at): its two
/// ends moved by as much as its first and last surviving lines moved (blame
/// knows only the lines the commit itself last changed, so the ends may be
/// other commits' lines, carried by the same shift), cut to `reported`.
/// `None` when the note covered its unit (or more), or none of its lines
/// survive.
fn focus(
    file: &str,
    stored: LineRange,
    reported: LineRange,
    entries: &[&BlameEntry],
) -> Option<LineRange> {
    if stored.end - stored.start >= reported.end - reported.start {
        return None;
    }
    let mut first: Option<(u32, i64)> = None;
    let mut last: Option<(u32, i64)> = None;
    for entry in entries.iter().filter(|e| e.original_path == file) {
        let start = stored.start.max(entry.original_start);
        let end = stored.end.min(entry.original_end);
        if start > end {
            continue;
        }
        let shift = i64::from(entry.final_start) - i64::from(entry.original_start);
        if first.is_none_or(|(line, _)| start < line) {
            first = Some((start, shift));
        }
        if last.is_none_or(|(line, _)| end > line) {
            last = Some((end, shift));
        }
    }
    let moved = |line: u32, shift: i64| u32::try_from(i64::from(line) + shift).unwrap_or(1);
    let start = moved(stored.start, first?.1).max(reported.start);
    let end = moved(stored.end, last?.1).min(reported.end);
    let focus = LineRange { start, end };
    (start <= end && focus != reported).then_some(focus)
}

/// Today's span of the region's lines that survive in this commit's blame
/// entries (judged in the commit's own coordinates).
pub(crate) fn surviving_lines(
    region: &RegionAnnotation,
    entries: &[&BlameEntry],
) -> Option<LineRange> {
    let mut span: Option<LineRange> = None;
    for entry in entries.iter().filter(|e| e.original_path == region.file) {
        let start = region.lines.start.max(entry.original_start);
        let end = region.lines.end.min(entry.original_end);
        if start > end {
            continue;
        }
        let (Some(from), Some(to)) = (entry.to_final(start), entry.to_final(end)) else {
            continue;
        };
        span = Some(match span {
            None => LineRange {
                start: from,
                end: to,
            },
            Some(s) => LineRange {
                start: s.start.min(from),
                end: s.end.max(to),
            },
        });
    }
    span
}

/// The commits other than `commit` that blame names for today's `lines`,
/// each with its number of lines there, in the order blame lists them.
fn other_commits(commit: &str, lines: LineRange, entries: &[BlameEntry]) -> Vec<(ObjectId, u32)> {
    let mut out: Vec<(ObjectId, u32)> = Vec::new();
    for entry in entries {
        let start = entry.final_start.max(lines.start);
        let end = entry.final_end.min(lines.end);
        if start > end || entry.commit.to_hex() == commit {
            continue;
        }
        match out.iter_mut().find(|(id, _)| *id == entry.commit) {
            Some((_, count)) => *count += end - start + 1,
            None => out.push((entry.commit, end - start + 1)),
        }
    }
    out
}

fn count_surviving(region: &RegionAnnotation, entries: &[&BlameEntry]) -> u32 {
    entries
        .iter()
        .filter(|e| e.original_path == region.file)
        .map(|e| {
            let start = region.lines.start.max(e.original_start);
            let end = region.lines.end.min(e.original_end);
            if start > end { 0 } else { end - start + 1 }
        })
        .sum()
}

fn anchor_match(kind: MatchKind) -> MatchType {
    match kind {
        MatchKind::Exact => MatchType::ExactAnchor,
        MatchKind::Unqualified => MatchType::UnqualifiedAnchor,
        MatchKind::Fuzzy { distance } => MatchType::FuzzyAnchor { distance },
    }
}

/// The same region matched by several scopes (an ambiguous anchor, two files of
/// one commit) is kept once, with its best match.
fn dedup_matches(matched: Vec<Matched>) -> Vec<Matched> {
    let mut best: Vec<Matched> = Vec::with_capacity(matched.len());
    let mut index: HashMap<(usize, String, String, u32, u32), usize> = HashMap::new();
    for m in matched {
        // The note index stands for the commit: one note per commit.
        let key = (
            m.note,
            m.region.file.clone(),
            m.region.ast_anchor.name.clone(),
            m.original.start,
            m.original.end,
        );
        match index.get(&key) {
            Some(&i) if m.match_type.rank() < best[i].match_type.rank() => best[i] = m,
            Some(_) => {}
            None => {
                index.insert(key, best.len());
                best.push(m);
            }
        }
    }
    best
}

/// The entries of a whole-file blame for today's lines `range`, cut to it
/// (what `git blame -L` over the range answers).
pub(crate) fn clip_blame(entries: &[BlameEntry], range: LineRange) -> Vec<BlameEntry> {
    entries
        .iter()
        .filter(|e| e.final_start <= range.end && e.final_end >= range.start)
        .map(|e| {
            let head = range.start.saturating_sub(e.final_start);
            let tail = e.final_end.saturating_sub(range.end);
            BlameEntry {
                original_start: e.original_start + head,
                original_end: e.original_end - tail,
                final_start: e.final_start + head,
                final_end: e.final_end - tail,
                ..e.clone()
            }
        })
        .collect()
}
