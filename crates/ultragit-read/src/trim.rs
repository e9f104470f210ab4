//! `--max-tokens` trimming (spec 003 §4.8).
//!
//! The estimate is the rendered output (in the query's format) in bytes / 4. When
//! it is over budget:
//! 1. regions are dropped newest first (by the annotated commit's date, see
//!    [`crate::score`]) until one is left,
//!    together with cross-cutting entries only their commits contributed;
//! 2. fields are trimmed on every remaining region, one step at a time, in the
//!    spec's order: `related` removed; `reasoning` cut to its first sentence, then
//!    removed; `risk_notes` likewise; `tags` removed — then (our addition, still
//!    before touching `intent` or `constraints`) `semantic_dependencies` and the
//!    anchor's `signature`;
//! 3. if even that is too big, `cross_cutting` and `dependencies_on_this` entries
//!    go from the end;
//! 4. if one region still does not fit, the output keeps the *top* region (the
//!    best by confidence, which step 1 may have dropped) with its fields trimmed
//!    as in step 2, and a warning that the budget is too small for one full
//!    region. One region's intent and constraints are the minimum worth
//!    returning: a read never trims to zero regions.
//!
//! **Invariant:** `intent` and `constraints` are never removed from a region that
//! stays. The remaining regions are put back in confidence order, and `trimmed`
//! says what happened (it stays `None` when nothing had to go). A budget smaller
//! than that minimum cannot be met; the output then says how far over it is.

use ultragit_schema::{ReadOutput, ScoredRegion, TrimmedInfo};

use crate::format::estimate_tokens;
use crate::query::Format;
use crate::rank::sort_by_confidence;

/// The strategy name reported in `trimmed`.
pub(crate) const STRATEGY: &str = "newest_commits_first";

/// Trims `output` to `max_tokens` as the module docs say.
pub fn trim_to_budget(output: &mut ReadOutput, max_tokens: u32, format: Format, verbose: bool) {
    if estimate_tokens(output, format, verbose) <= max_tokens {
        return;
    }
    let original = output.regions.len() as u32;
    let top = top_region(&output.regions);
    let mut dropped: Vec<String> = Vec::new();
    let over = |output: &mut ReadOutput, dropped: &[String]| {
        output.stats.regions_returned = output.regions.len() as u32;
        output.trimmed = Some(TrimmedInfo {
            original_regions: original,
            returned_regions: output.regions.len() as u32,
            dropped_commits: dropped.to_vec(),
            strategy: STRATEGY.to_owned(),
            estimated_tokens: 0,
        });
        let estimate = estimate_tokens(output, format, verbose);
        if let Some(t) = output.trimmed.as_mut() {
            t.estimated_tokens = estimate;
        }
        // The notice's own number may add a digit; measure once more.
        let estimate = estimate_tokens(output, format, verbose);
        if let Some(t) = output.trimmed.as_mut() {
            t.estimated_tokens = estimate;
        }
        estimate > max_tokens
    };

    // 1. Newest regions first, keeping one.
    output.regions.sort_by(|a, b| {
        b.date()
            .cmp(&a.date())
            .then(a.confidence.total_cmp(&b.confidence))
    });
    while output.regions.len() > 1 && over(output, &dropped) {
        let gone = output.regions.remove(0);
        drop_commit(output, &mut dropped, gone);
    }

    // 2. Fields, step by step, on every remaining region.
    for step in FIELD_STEPS {
        if !over(output, &dropped) {
            break;
        }
        output.regions.iter_mut().for_each(step);
    }

    // 3. The lists.
    while over(output, &dropped) && !output.cross_cutting.is_empty() {
        output.cross_cutting.pop();
    }
    while over(output, &dropped) && !output.dependencies_on_this.is_empty() {
        output.dependencies_on_this.pop();
    }

    // 4. Not even one full region fits: the top one, at its minimum.
    if over(output, &dropped)
        && let Some(mut top) = top
    {
        FIELD_STEPS.iter().for_each(|step| step(&mut top));
        for gone in std::mem::take(&mut output.regions) {
            if gone.commit_sha != top.commit_sha {
                drop_commit(output, &mut dropped, gone);
            }
        }
        dropped.retain(|commit| *commit != top.commit_sha);
        output.regions.push(top);
        output.warnings.push(format!(
            "--max-tokens {max_tokens} is too small for one full region: the top region is returned with only its intent and constraints"
        ));
    }
    sort_by_confidence(&mut output.regions);
    over(output, &dropped);
}

/// Step 2's field trims, in the spec's order (then ours).
const FIELD_STEPS: [fn(&mut ScoredRegion); 8] = [
    |r| r.related.clear(),
    |r| r.region.reasoning = r.region.reasoning.as_deref().map(first_sentence),
    |r| r.region.reasoning = None,
    |r| r.region.risk_notes = r.region.risk_notes.as_deref().map(first_sentence),
    |r| r.region.risk_notes = None,
    |r| r.region.tags.clear(),
    |r| r.region.semantic_dependencies.clear(),
    |r| r.region.ast_anchor.signature = None,
];

/// The best region by confidence (the ranking's order), if any.
fn top_region(regions: &[ScoredRegion]) -> Option<ScoredRegion> {
    let mut ranked = regions.to_vec();
    sort_by_confidence(&mut ranked);
    ranked.into_iter().next()
}

/// Records a dropped region's commit and removes cross-cutting entries no
/// remaining region's commit shares.
fn drop_commit(output: &mut ReadOutput, dropped: &mut Vec<String>, gone: ScoredRegion) {
    let commit = gone.commit_sha;
    let still_used = output.regions.iter().any(|r| r.commit_sha == commit);
    if !still_used {
        output.cross_cutting.retain(|c| c.commit != commit);
    }
    if !dropped.contains(&commit) {
        dropped.push(commit);
    }
}

/// The text up to and including its first sentence end (`.`, `!` or `?` followed
/// by whitespace, or a line break).
pub(crate) fn first_sentence(text: &str) -> String {
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            return text[..i].trim_end().to_owned();
        }
        if matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1).is_none_or(u8::is_ascii_whitespace) {
            return text[..=i].to_owned();
        }
    }
    text.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sentences() {
        for (text, first) in [
            ("One. Two.", "One."),
            ("Version 1.2 is out! Then more", "Version 1.2 is out!"),
            ("no end", "no end"),
            ("line one\nline two", "line one"),
            ("Why? Because.", "Why?"),
        ] {
            assert_eq!(first_sentence(text), first, "{text:?}");
        }
    }
}
