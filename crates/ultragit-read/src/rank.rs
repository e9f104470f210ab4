//! Stage 6 of spec 003 §4: the scored regions ranked, filtered and cut, and
//! the orders the output keeps (also after trimming, see [`crate::trim`]).

use ultragit_schema::ScoredRegion;

use crate::query::ReadQuery;

/// Ranks `scored` best first and keeps the regions `query` admits
/// (`--min-confidence`, `--tags`); [`cap`] then keeps the first ones.
pub(crate) fn rank(mut scored: Vec<ScoredRegion>, query: &ReadQuery) -> Vec<ScoredRegion> {
    sort_by_confidence(&mut scored);
    scored.retain(|r| r.confidence >= query.min_confidence);
    if let Some(tags) = &query.tags {
        let wanted: Vec<String> = tags.iter().map(|t| t.trim().to_lowercase()).collect();
        scored.retain(|r| {
            r.region
                .tags
                .iter()
                .any(|t| wanted.contains(&t.trim().to_lowercase()))
        });
    }
    scored
}

/// The first `query.max_regions` (else `default_max`) of the ranked
/// regions, grouped by the order of `files` when several were asked for.
pub(crate) fn cap(
    mut ranked: Vec<ScoredRegion>,
    query: &ReadQuery,
    default_max: u32,
    files: &[String],
) -> Vec<ScoredRegion> {
    let cap = query.max_regions.unwrap_or(default_max) as usize;
    ranked.truncate(cap);
    group_by_file(&mut ranked, files);
    ranked
}

/// Best first; ties newest (by commit date) first, then by file and anchor, so output is stable.
pub(crate) fn sort_by_confidence(regions: &mut [ScoredRegion]) {
    regions.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then(b.date().cmp(&a.date()))
            .then(a.region.file.cmp(&b.region.file))
            .then(a.region.ast_anchor.name.cmp(&b.region.ast_anchor.name))
            .then(a.region.lines.start.cmp(&b.region.lines.start))
    });
}

/// Multi-file output groups regions by file, in the order the files were asked
/// for (spec 003 §4.10); within a file the confidence order stays. Regions of a
/// file that was renamed since they were written sort with the file they were
/// found in last.
pub(crate) fn group_by_file(regions: &mut [ScoredRegion], files: &[String]) {
    if files.len() < 2 {
        return;
    }
    let rank = |file: &str| files.iter().position(|f| f == file).unwrap_or(files.len());
    regions.sort_by_key(|r| rank(&r.region.file));
}
