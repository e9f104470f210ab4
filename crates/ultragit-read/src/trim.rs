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
//!    go from the end, and only then the last region (one region's intent and
//!    constraints are the minimum worth returning).
//!
//! **Invariant:** `intent` and `constraints` are never removed from a region that
//! stays. The remaining regions are put back in confidence order, and `trimmed`
//! says what happened (it stays `None` when nothing had to go). A budget smaller
//! than the empty output cannot be met; the output then says how far it got.

use ultragit_schema::{ReadOutput, ScoredRegion, TrimmedInfo};

use crate::format::estimate_tokens;
use crate::query::Format;
use crate::rank::sort_by_confidence;

/// The strategy name reported in `trimmed`.
pub const STRATEGY: &str = "newest_commits_first";

/// Trims `output` to `max_tokens` as the module docs say.
pub fn trim_to_budget(output: &mut ReadOutput, max_tokens: u32, format: Format, verbose: bool) {
    if estimate_tokens(output, format, verbose) <= max_tokens {
        return;
    }
    let original = output.regions.len() as u32;
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
    let steps: [fn(&mut ScoredRegion); 8] = [
        |r| r.related.clear(),
        |r| r.region.reasoning = r.region.reasoning.as_deref().map(first_sentence),
        |r| r.region.reasoning = None,
        |r| r.region.risk_notes = r.region.risk_notes.as_deref().map(first_sentence),
        |r| r.region.risk_notes = None,
        |r| r.region.tags.clear(),
        |r| r.region.semantic_dependencies.clear(),
        |r| r.region.ast_anchor.signature = None,
    ];
    for step in steps {
        if !over(output, &dropped) {
            break;
        }
        output.regions.iter_mut().for_each(step);
    }

    // 3. The lists, then the last region.
    while over(output, &dropped) && !output.cross_cutting.is_empty() {
        output.cross_cutting.pop();
    }
    while over(output, &dropped) && !output.dependencies_on_this.is_empty() {
        output.dependencies_on_this.pop();
    }
    if over(output, &dropped)
        && let Some(gone) = output.regions.pop()
    {
        drop_commit(output, &mut dropped, gone);
    }
    sort_by_confidence(&mut output.regions);
    over(output, &dropped);
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
pub fn first_sentence(text: &str) -> String {
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
        assert_eq!(first_sentence("One. Two."), "One.");
        assert_eq!(
            first_sentence("Version 1.2 is out! Then more"),
            "Version 1.2 is out!"
        );
        assert_eq!(first_sentence("no end"), "no end");
        assert_eq!(first_sentence("line one\nline two"), "line one");
        assert_eq!(first_sentence("Why? Because."), "Why?");
    }
}
