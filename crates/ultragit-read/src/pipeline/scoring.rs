//! Stage 5, *score*: each matched region's confidence, its related
//! annotations followed, and the later unannotated commits that changed it.

use std::collections::{HashSet, VecDeque};
use std::rc::Rc;

use chrono::{DateTime, Utc};
use gitctx::ObjectId;
use outline::MatchKind;
use ultragit_schema::{
    Annotation, ConfidenceFactors, RegionAnnotation, ResolvedRelated, ScoredRegion,
    UnannotatedChange,
};

use crate::corrections;
use crate::regions::{Fetched, Matched};
use crate::score::{
    MatchType, round3, rounded, score_anchor_stability, score_context_level, score_provenance,
    score_recency, score_staleness,
};

use super::{CommitMeta, Run};

/// What stage 5 found: every matched region scored, in no particular order.
pub(super) struct Scored {
    pub(super) regions: Vec<ScoredRegion>,
    /// Related annotations resolved, over all regions.
    pub(super) related_hops: u32,
}

impl Run<'_> {
    /// Stage 5: each matched region scored, with its related annotations
    /// followed up to `depth` hops.
    pub(super) fn score(
        &mut self,
        matched: Vec<Matched>,
        fetched: &[Fetched],
        depth: u32,
    ) -> Scored {
        let mut related_hops = 0;
        let mut regions: Vec<ScoredRegion> = Vec::with_capacity(matched.len());
        for m in matched {
            let note = &fetched[m.note];
            let mut factors =
                self.factors(&note.annotation, note.committed, &m.region, m.match_type);
            if m.by_notes {
                factors.anchor_stability = score_anchor_stability(&m.region, None, m.match_type);
            }
            let changed_since = self.changed_since(note.committed, &m.others);
            let changed: u32 = changed_since.iter().map(|c| c.lines).sum();
            let span = m.region.lines.end.saturating_sub(m.region.lines.start) + 1;
            factors.anchor_stability *= score_staleness(changed, span);
            let (confidence_factors, confidence) = rounded(factors);
            let related = self.follow(&note.commit, &m.region, depth);
            related_hops += related.len() as u32;
            let (region, corrections) = corrections::correct(&note.annotation, m.region);
            regions.push(ScoredRegion {
                region,
                commit_sha: note.commit.clone(),
                timestamp: note.timestamp,
                commit_date: Some(note.committed),
                confidence: round3(corrections::confidence(confidence, &corrections)),
                confidence_factors,
                related,
                corrections,
                changed_since,
                focus: m.focus,
            });
        }
        Scored {
            regions,
            related_hops,
        }
    }

    /// The four confidence factors of `region`, of `annotation` on a commit
    /// dated `committed`, matched to the query as `matched`.
    pub(super) fn factors(
        &mut self,
        annotation: &Annotation,
        committed: DateTime<Utc>,
        region: &RegionAnnotation,
        matched: MatchType,
    ) -> ConfidenceFactors {
        ConfidenceFactors {
            recency: score_recency(
                committed,
                self.head_time,
                self.pipeline.config.recency_half_life,
            ),
            context_level: score_context_level(&annotation.context_level),
            anchor_stability: self.stability(region, matched),
            provenance: score_provenance(&annotation.provenance.operation),
        }
    }

    /// The anchor-stability factor of `region` against today's outline, cached.
    pub(super) fn stability(&mut self, region: &RegionAnnotation, matched: MatchType) -> f64 {
        let class = match matched {
            MatchType::FuzzyAnchor { .. } => 1,
            MatchType::LineOverlap { .. } => 2,
            _ => 0,
        };
        let key = (
            region.file.clone(),
            region.ast_anchor.name.clone(),
            region.ast_anchor.signature.clone(),
            class,
        );
        if let Some(score) = self.stability.get(&key) {
            return *score;
        }
        let units = self.outline_at_head(&region.file);
        let score = score_anchor_stability(region, units.as_deref().map(Vec::as_slice), matched);
        self.stability.insert(key, score);
        score
    }

    /// The date and subject of commit `id`, read in-process once per read.
    pub(super) fn commit_meta(&mut self, id: ObjectId) -> Option<Rc<CommitMeta>> {
        if let Some(meta) = self.commits.get(&id) {
            return meta.clone();
        }
        let meta = self.repo().commit_info_by_id(id).ok().map(|info| {
            Rc::new(CommitMeta {
                time: info.committer.time.to_utc(),
                summary: info.summary,
            })
        });
        self.commits.insert(id, meta.clone());
        meta
    }

    /// The committer date of the commit `hex`.
    pub(super) fn commit_time(&mut self, hex: &str) -> Option<DateTime<Utc>> {
        let id = hex.parse().ok()?;
        self.commit_meta(id).map(|meta| meta.time)
    }

    /// Staleness: of the `others` blame names for a region's lines today, the
    /// commits after `committed` (the annotated commit's date) that have no
    /// usable note, oldest first.
    pub(super) fn changed_since(
        &mut self,
        committed: DateTime<Utc>,
        others: &[(ObjectId, u32)],
    ) -> Vec<UnannotatedChange> {
        let mut out: Vec<UnannotatedChange> = Vec::new();
        for &(id, lines) in others {
            let hex = id.to_hex();
            // Every blamed commit's note was looked up: `Some(None)` is none.
            if !matches!(self.notes.get(&hex), Some(None)) {
                continue;
            }
            let Some(meta) = self.commit_meta(id) else {
                continue;
            };
            if meta.time > committed {
                out.push(UnannotatedChange {
                    commit: hex,
                    date: Some(meta.time),
                    summary: meta.summary.clone(),
                    lines,
                });
            }
        }
        out.sort_by(|a, b| a.date.cmp(&b.date).then(a.commit.cmp(&b.commit)));
        out
    }

    /// Stage 5: the related annotations of a region, breadth first, up to `depth`
    /// hops, never visiting a (commit, anchor) pair twice.
    pub(super) fn follow(
        &mut self,
        commit: &str,
        region: &RegionAnnotation,
        depth: u32,
    ) -> Vec<ResolvedRelated> {
        let mut out = Vec::new();
        if depth == 0 {
            return out;
        }
        let mut visited: HashSet<(String, String)> = HashSet::new();
        visited.insert((commit.to_owned(), region.ast_anchor.name.clone()));
        let mut queue: VecDeque<(ultragit_schema::RelatedAnnotation, u32)> = region
            .related_annotations
            .iter()
            .cloned()
            .map(|r| (r, 1))
            .collect();
        while let Some((link, hop)) = queue.pop_front() {
            let Some(target) = self.resolve_commit(&link.commit) else {
                continue; // a commit that is gone: skip it
            };
            if !visited.insert((target.clone(), link.anchor.clone())) {
                continue;
            }
            if self.load_notes(std::slice::from_ref(&target)).is_err() {
                continue;
            }
            let Some(Some(annotation)) = self.notes.get(&target).cloned() else {
                continue;
            };
            let Some(found) = annotation.regions.iter().find(|r| {
                matches!(
                    outline::match_name(&link.anchor, &r.ast_anchor.name),
                    Some(MatchKind::Exact | MatchKind::Unqualified)
                )
            }) else {
                continue;
            };
            let committed = self
                .commit_time(&target)
                .or_else(|| annotation.timestamp_utc())
                .unwrap_or(self.head_time);
            let factors = self.factors(&annotation, committed, found, MatchType::ExactAnchor);
            out.push(ResolvedRelated {
                commit: target.clone(),
                anchor: link.anchor.clone(),
                relationship: link.relationship.clone(),
                confidence: rounded(factors).1,
                intent: Some(corrections::intent(&annotation, found)),
            });
            if hop < depth {
                for next in &found.related_annotations {
                    queue.push_back((next.clone(), hop + 1));
                }
            }
        }
        out
    }

    pub(super) fn resolve_commit(&self, rev: &str) -> Option<String> {
        if let Ok(id) = rev.parse::<ObjectId>() {
            return Some(id.to_hex());
        }
        self.repo().resolve_commit(rev).ok().map(|id| id.to_hex())
    }
}
