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
fn filter_regions(
    scope: &ResolvedScope,
    entries_all: &[BlameEntry],
    units: Option<&[Unit]>,
    fetched: &[Fetched],
    out: &mut Vec<Matched>,
    dropped: &mut Vec<Dropped>,
) {
    let mut by_commit: HashMap<String, Vec<&BlameEntry>> = HashMap::new();
    for entry in entries_all {
        by_commit
            .entry(entry.commit.to_hex())
            .or_default()
            .push(entry);
    }
    let named = fetched
        .iter()
        .filter(|note| by_commit.contains_key(&note.commit))
        .flat_map(|note| &note.annotation.regions)
        .any(|region| {
            matches!(
                name_match(scope, region),
                Some(MatchKind::Exact | MatchKind::Unqualified)
            )
        });
    for (index, note) in fetched.iter().enumerate() {
        let Some(entries) = by_commit.get(&note.commit) else {
            continue;
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
                .filter(|kind| !matches!(kind, MatchKind::Fuzzy { .. }) || !named);
            let not_current = Dropped {
                note: index,
                region: region_index,
                seen_lines: entries.iter().map(|e| e.original_end).max().unwrap_or(0),
            };
            let (match_type, today) = match (name_match, &scope.query_anchor, scope.echo.line_range)
            {
                (Some(kind), _, range) => {
                    let Some(today) = surviving.or(range) else {
                        dropped.push(not_current);
                        continue;
                    };
                    (anchor_match(kind), today)
                }
                (None, Some(_), Some(_)) | (None, None, Some(_)) => {
                    let Some(today) = surviving else {
                        dropped.push(not_current);
                        continue;
                    };
                    let len = region.lines.end - region.lines.start + 1;
                    let kept = count_surviving(region, entries);
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
            let others = other_commits(&note.commit, region.lines, entries_all);
            out.push(Matched {
                region,
                note: index,
                region_index,
                match_type,
                original,
                others,
                by_notes: scope.resolved_by_notes(),
            });
        }
    }
}

/// How a region's anchor name matches the scope: against the unit the anchor
/// resolved to (so `B::run` does not match the scope of `A::run`), or the anchor as
/// asked when it could not be resolved.
fn name_match(scope: &ResolvedScope, region: &RegionAnnotation) -> Option<MatchKind> {
    outline::match_name(scope.anchor()?, &region.ast_anchor.name)
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
