//! `--max-tokens` trimming (spec 003 §4.8, reordered so that what an agent
//! acts on is kept longest).
//!
//! The estimate is the rendered output (in the query's format) in bytes / 4. When
//! it is over budget, in this order, each step only while still over:
//! 1. fields are trimmed on every region, one step at a time: `related`
//!    removed; `reasoning` cut to its first sentence, then removed;
//!    `risk_notes` likewise and `tags` removed (a risk note stays among the
//!    decisions); `semantic_dependencies` (also among the decisions) and the
//!    anchor's `signature` removed; the `intent` cut to its first sentence,
//!    then to [`SHORT_INTENT`] characters;
//! 2. regions are dropped, the lowest in the ranking first (confidence,
//!    then newest), until one is left, together with cross-cutting entries
//!    only their commits contributed;
//! 3. `cross_cutting` and then `dependencies_on_this` entries go from the
//!    end;
//! 4. the [decisions](ultragit_schema::ReadOutput::decisions) go from the
//!    end (dependencies first, then the lowest-ranked constraints and
//!    risks), counted in `trimmed.dropped_decisions`;
//! 5. if even one region and no decision do not fit, a warning says the
//!    budget is too small for one full region.
//!
//! Spec 003 drops the newest regions first and trims fields after; we keep
//! the decisions (every matched region's constraints, risks and
//! dependencies, deduplicated) until last and drop whole regions — which
//! then only carry an intent — from the bottom of the ranking: measured by
//! `cargo xtask bench delivery`, that is what lets an 800-token read hand
//! over the active constraints of a unit with dozens of annotated changes.
//! The strategy is reported as `lowest_confidence_first`.
//!
//! **Invariant:** `intent` (possibly shortened) and `constraints` are never
//! removed from a region that stays; a read that matched regions keeps at
//! least one. The remaining regions stay in confidence order, and `trimmed`
//! says what happened (it stays `None` when nothing had to go). A budget
//! smaller than that minimum cannot be met; the output then says how far over
//! it is.

use ultragit_schema::{ReadOutput, ScoredRegion, TrimmedInfo};

use crate::format::estimate_tokens;
use crate::query::Format;
use crate::rank::sort_by_confidence;

/// The strategy name reported in `trimmed`.
pub(crate) const STRATEGY: &str = "lowest_confidence_first";

/// The longest a shortened intent gets, in characters (an ellipsis added).
pub const SHORT_INTENT: usize = 120;

/// Trims `output` to `max_tokens` as the module docs say.
pub fn trim_to_budget(output: &mut ReadOutput, max_tokens: u32, format: Format, verbose: bool) {
    if estimate_tokens(output, format, verbose) <= max_tokens {
        return;
    }
    let original = output.regions.len() as u32;
    let mut dropped: Vec<String> = Vec::new();
    let mut dropped_decisions = 0u32;
    let over = |output: &mut ReadOutput, dropped: &[String], dropped_decisions: u32| {
        output.stats.regions_returned = output.regions.len() as u32;
        output.trimmed = Some(TrimmedInfo {
            original_regions: original,
            returned_regions: output.regions.len() as u32,
            dropped_commits: dropped.to_vec(),
            strategy: STRATEGY.to_owned(),
            estimated_tokens: 0,
            dropped_decisions,
        });
        // The notice's own number may add a digit; measure twice.
        for _ in 0..2 {
            let estimate = estimate_tokens(output, format, verbose);
            if let Some(t) = output.trimmed.as_mut() {
                t.estimated_tokens = estimate;
            }
        }
        output.trimmed.as_ref().map_or(0, |t| t.estimated_tokens) > max_tokens
    };

    // 1. Fields, step by step, on every region.
    for step in FIELD_STEPS {
        if !over(output, &dropped, dropped_decisions) {
            break;
        }
        output.regions.iter_mut().for_each(step);
    }

    // 2. Regions, lowest ranked first, keeping one.
    sort_by_confidence(&mut output.regions);
    while output.regions.len() > 1 && over(output, &dropped, dropped_decisions) {
        if let Some(gone) = output.regions.pop() {
            drop_commit(output, &mut dropped, gone);
        }
    }

    // 3. The lists.
    while over(output, &dropped, dropped_decisions) && !output.cross_cutting.is_empty() {
        output.cross_cutting.pop();
    }
    while over(output, &dropped, dropped_decisions) && !output.dependencies_on_this.is_empty() {
        output.dependencies_on_this.pop();
    }

    // 4. The decisions, from the end.
    while over(output, &dropped, dropped_decisions) && !output.decisions.is_empty() {
        output.decisions.pop();
        dropped_decisions += 1;
    }

    // 5. Not even that fits.
    if over(output, &dropped, dropped_decisions) && !output.regions.is_empty() {
        output.warnings.push(format!(
            "--max-tokens {max_tokens} is too small for one full region: the top region is returned with only its intent and constraints"
        ));
    }
    over(output, &dropped, dropped_decisions);
}

/// Step 1's field trims, in order.
const FIELD_STEPS: [fn(&mut ScoredRegion); 10] = [
    |r| r.related.clear(),
    |r| r.region.reasoning = r.region.reasoning.as_deref().map(first_sentence),
    |r| r.region.reasoning = None,
    |r| r.region.risk_notes = r.region.risk_notes.as_deref().map(first_sentence),
    |r| r.region.risk_notes = None,
    |r| r.region.tags.clear(),
    |r| r.region.semantic_dependencies.clear(),
    |r| r.region.ast_anchor.signature = None,
    |r| r.region.intent = first_sentence(&r.region.intent),
    |r| r.region.intent = shortened(&r.region.intent, SHORT_INTENT),
];

/// `text` cut to at most `max` characters at a word boundary, with an
/// ellipsis when cut.
pub(crate) fn shortened(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    let cut = match cut.rfind(char::is_whitespace) {
        Some(space) if space > max / 2 => &cut[..space],
        _ => cut.as_str(),
    };
    format!("{}…", cut.trim_end_matches([',', ';', ':', ' ']))
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
