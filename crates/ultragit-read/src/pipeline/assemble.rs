//! Stage 7, *assemble*: the output around the ranked regions: what depends
//! on the scopes (from the notes index), the cross-cutting concerns that
//! mention them, the query's echo and the counts.

use std::collections::HashSet;

use gitctx::ObjectId;
use outline::MatchKind;
use ultragit_schema::{
    CrossCuttingEntry, DependencyEntry, LineRange, QueryEcho, READ_SCHEMA_V1, ReadOutput,
    ReadStats, ScoredRegion,
};

use crate::error::ReadError;
use crate::index::IndexedDependency;
use crate::query::{ReadQuery, SinceFilter};
use crate::regions::Fetched;
use crate::scope::{Resolved, ResolvedScope};

use super::Run;
use super::notes::FetchedNotes;

impl Run<'_> {
    /// Stage 7: the output around the ranked `regions`: what depends on the
    /// scopes, the cross-cutting concerns that mention them, the query's echo,
    /// the counts and every warning so far.
    pub(super) fn assemble(
        &mut self,
        query: &ReadQuery,
        resolved: &Resolved,
        notes: &FetchedNotes,
        regions: Vec<ScoredRegion>,
        related_hops: u32,
    ) -> Result<ReadOutput, ReadError> {
        let dependencies_on_this = self.dependencies_on(resolved, &regions)?;
        let concern_notes = self.concern_notes(&notes.fetched, query);
        let cross_cutting = cross_cutting(resolved, &regions, &concern_notes);
        let regions_returned = regions.len() as u32;
        Ok(ReadOutput {
            schema: READ_SCHEMA_V1.to_owned(),
            query: echo(query, resolved, self.pipeline.config.default_max_regions),
            regions,
            dependencies_on_this,
            cross_cutting,
            decisions: Vec::new(),
            stats: ReadStats {
                commits_examined: notes.commits_examined,
                annotations_found: notes.fetched.len() as u32,
                regions_returned,
                related_hops,
                items_retired: 0,
            },
            trimmed: None,
            warnings: std::mem::take(&mut self.warnings),
        })
    }

    /// `dependencies_on_this`: the semantic dependencies annotated regions
    /// declare on a unit in scope, through the reverse dependency index
    /// ([`crate::index`]); newest annotated commit first, each (dependent
    /// region, nature, target) once. With `depsScanLimit` set, only the most
    /// recent that many annotated commits count. `regions` are the regions
    /// returned for the query: in a file without a grammar, the anchors they
    /// name are the units a line-range scope covers. Dependencies recorded
    /// under the file's former names count too (`DepsIndex::former_names`, from
    /// the names its blame gives: no process more, and nothing to look up
    /// when blame names no other path).
    pub(super) fn dependencies_on(
        &mut self,
        resolved: &Resolved,
        regions: &[ScoredRegion],
    ) -> Result<Vec<DependencyEntry>, ReadError> {
        let limit = self.pipeline.config.deps_scan_limit;
        if limit == Some(0) || !self.notes_ref_exists {
            return Ok(Vec::new());
        }
        let index = self.index()?;
        // The notes whose cross-cutting concerns name a queried file, for
        // `concern_notes` (which looks at every note read so far).
        let mut concerning: Vec<String> = Vec::new();
        for path in &resolved.paths {
            concerning.extend(index.concerning(path).iter().map(|c| c.to_hex()));
        }
        self.load_notes(&concerning)?;
        let allowed: Option<HashSet<ObjectId>> =
            limit.map(|n| index.most_recent(n as usize).into_iter().collect());
        let mut found: Vec<IndexedDependency<'_>> = Vec::new();
        for scope in &resolved.scopes {
            let units = units_in_scope(scope, resolved, regions);
            let former = match self.blamed_paths.get(scope.file()) {
                Some(blamed) if !blamed.is_empty() => {
                    index.former_names(self.repo(), scope.file(), |_| Ok(blamed.clone()))?
                }
                _ => Vec::new(),
            };
            let mut candidates = index.dependents(scope.file(), None);
            for name in &former {
                candidates.extend(index.dependents(name, None));
            }
            found.extend(candidates.into_iter().filter(|dep| {
                allowed.as_ref().is_none_or(|a| a.contains(&dep.commit))
                    && units.covers(dep.target_anchor)
                    && !is_self(dep, scope, &former)
            }));
        }
        found.sort_by_key(|d| std::cmp::Reverse((d.commit_time, d.commit)));
        let mut out: Vec<DependencyEntry> = Vec::new();
        let mut seen = HashSet::new();
        for dep in found {
            let key = (
                dep.source_file,
                dep.source_anchor,
                dep.nature,
                dep.target_file,
                dep.target_anchor,
            );
            if seen.insert(key) {
                out.push(DependencyEntry {
                    file: dep.source_file.to_owned(),
                    anchor: dep.source_anchor.to_owned(),
                    nature: dep.nature.to_owned(),
                    commit: dep.commit.to_hex(),
                    target_file: dep.target_file.to_owned(),
                    target_anchor: dep.target_anchor.to_owned(),
                });
            }
        }
        Ok(out)
    }
}

/// A region's dependency on its own unit (under any of the file's names) is
/// not a dependency on this.
fn is_self(dep: &IndexedDependency<'_>, scope: &ResolvedScope, former: &[String]) -> bool {
    (dep.source_file == scope.file() || former.iter().any(|f| f == dep.source_file))
        && scope
            .anchor()
            .is_some_and(|a| outline::match_name(a, dep.source_anchor) == Some(MatchKind::Exact))
}

/// The units a scope covers, as dependency targets name them.
enum UnitsInScope<'a> {
    /// The whole file: every unit.
    All,
    /// These units (names as the outline or the notes give them).
    Named(Vec<&'a str>),
}

impl UnitsInScope<'_> {
    fn covers(&self, target_anchor: &str) -> bool {
        match self {
            UnitsInScope::All => true,
            UnitsInScope::Named(names) => names
                .iter()
                .any(|name| crate::index::anchors_match(target_anchor, name)),
        }
    }
}

/// The units in `scope`: its anchor; for a line range, the units of today's
/// outline overlapping it, or — in a file without a grammar — the anchors of
/// the returned regions of that file overlapping it; for the whole file,
/// every unit.
fn units_in_scope<'a>(
    scope: &'a ResolvedScope,
    resolved: &'a Resolved,
    regions: &'a [ScoredRegion],
) -> UnitsInScope<'a> {
    if let Some(anchor) = scope.anchor() {
        return UnitsInScope::Named(vec![anchor]);
    }
    let Some(range) = scope.echo.line_range else {
        return UnitsInScope::All;
    };
    let overlaps =
        |lines: &ultragit_schema::LineRange| lines.start <= range.end && lines.end >= range.start;
    UnitsInScope::Named(match resolved.units(scope.file()) {
        Some(units) => units
            .iter()
            .filter(|unit| unit.lines.start <= range.end && unit.lines.end >= range.start)
            .map(|unit| unit.qualified_name.as_str())
            .collect(),
        None => regions
            .iter()
            .filter(|r| r.region.file == scope.file() && overlaps(&r.region.lines))
            .map(|r| r.region.ast_anchor.name.as_str())
            .collect(),
    })
}

/// Cross-cutting concerns of the fetched annotations that bear on a queried
/// scope: a concern whose `file:anchor` names a unit the scope covers — the
/// whole file, the unit asked for, or a unit whose lines today overlap the
/// lines asked for (in a file without a grammar: the anchor of a returned
/// region there) — or that names only the file and was declared by a commit
/// whose regions this read returns for the file. A concern about other code
/// in the same file is not about this query.
fn cross_cutting(
    resolved: &Resolved,
    regions: &[ScoredRegion],
    fetched: &[Fetched],
) -> Vec<CrossCuttingEntry> {
    let names_unit = |queried: &str, anchor: &str| {
        matches!(
            outline::match_name(queried, anchor),
            Some(MatchKind::Exact | MatchKind::Unqualified)
        )
    };
    let mut out: Vec<CrossCuttingEntry> = Vec::new();
    for note in fetched {
        let returned = |file: &str| {
            regions
                .iter()
                .any(|r| r.commit_sha == note.commit && r.region.file == file)
        };
        for concern in &note.annotation.cross_cutting {
            let mentions = concern.regions.iter().any(|reference| {
                let (file, anchor) = reference.split_once(':').unwrap_or((reference, ""));
                let anchor = anchor.trim();
                resolved.scopes.iter().any(|scope| {
                    if file != scope.file() {
                        return false;
                    }
                    if anchor.is_empty() {
                        return scope.echo.line_range.is_none() && scope.anchor().is_none()
                            || returned(file);
                    }
                    if let Some(queried) = scope.anchor() {
                        return names_unit(queried, anchor);
                    }
                    let Some(range) = scope.echo.line_range else {
                        return true;
                    };
                    let overlaps =
                        |lines: &LineRange| lines.start <= range.end && lines.end >= range.start;
                    match resolved.units(file) {
                        Some(units) => units.iter().any(|u| {
                            overlaps(&LineRange {
                                start: u.lines.start,
                                end: u.lines.end,
                            }) && names_unit(&u.qualified_name, anchor)
                        }),
                        None => regions.iter().any(|r| {
                            r.region.file == file
                                && overlaps(&r.region.lines)
                                && names_unit(&r.region.ast_anchor.name, anchor)
                        }),
                    }
                })
            });
            let duplicate = out
                .iter()
                .any(|e| e.description == concern.description && e.regions == concern.regions);
            if mentions && !duplicate {
                out.push(CrossCuttingEntry {
                    description: concern.description.clone(),
                    regions: concern.regions.clone(),
                    nature: concern.nature.clone(),
                    commit: note.commit.clone(),
                });
            }
        }
    }
    out
}

/// The query as the output repeats it, with the scopes it resolved to.
fn echo(query: &ReadQuery, resolved: &Resolved, default_max: u32) -> QueryEcho {
    QueryEcho {
        files: resolved.paths.clone(),
        anchor: query.anchor.clone(),
        lines: query.lines,
        since: query.since.as_ref().map(|s| match s {
            SinceFilter::Date(d) => d.to_rfc3339(),
            SinceFilter::Sha(sha) => sha.clone(),
        }),
        tags: query.tags.clone().unwrap_or_default(),
        context_level: query.context_level,
        min_confidence: query.min_confidence,
        depth: query.depth,
        max_regions: query.max_regions.unwrap_or(default_max),
        max_tokens: query.max_tokens,
        scopes: resolved.scopes.iter().map(|s| s.echo.clone()).collect(),
        ambiguous_anchor: resolved.ambiguous,
    }
}
