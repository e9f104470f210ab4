//! Corrections in what `read` returns (`ultragit flag`, `ultragit correct`;
//! stored in the note, see [`ultragit_schema::correction`]).
//!
//! When a matched region's note carries corrections that target it, the
//! returned region shows the corrected text and lists every correction that
//! took effect in [`ScoredRegion::corrections`] (a `set` with the text it
//! replaced, so the original stays available); the note itself is never
//! changed. A flagged region's confidence is lowered by
//! [`crate::score::FLAGGED_FACTOR`] and its items are withheld from the
//! decisions ([`crate::decisions`]). Markdown (below the region's line) and
//! pretty output (before the intent) say that the region was flagged or
//! corrected, by whom, when and why. Corrections are untrusted note text like the rest: the renderings
//! fold their whitespace onto one line (a reason cannot open a heading) and
//! escape control characters with the rest of the output.

use std::fmt::Write as _;

use ultragit_schema::correction::apply;
use ultragit_schema::{
    Annotation, AppliedCorrection, CorrectionKind, RegionAnnotation, ScoredRegion,
};

use crate::score::flag_penalty;

/// `region` of `note` with the note's corrections applied, and the ones that
/// took effect.
pub(crate) fn correct(
    note: &Annotation,
    region: RegionAnnotation,
) -> (RegionAnnotation, Vec<AppliedCorrection>) {
    if note.corrections.is_empty() {
        return (region, Vec::new());
    }
    apply(&region, &note.corrections)
}

/// `confidence` lowered when one of `corrections` is a flag.
pub(crate) fn confidence(confidence: f64, corrections: &[AppliedCorrection]) -> f64 {
    flag_penalty(
        confidence,
        corrections.iter().any(|c| c.correction.is_flag()),
    )
}

/// The intent of `region` of `note` as corrected (for related annotations).
pub(crate) fn intent(note: &Annotation, region: &RegionAnnotation) -> String {
    correct(note, region.clone()).0.intent
}

/// One line per correction of `scored`, and whether it is a flag: e.g.
/// `intent (corrected 2026-11-24 by Ann <a@x>: reason); was: …`, or for a
/// flag `2026-11-24 by Ann <a@x>: reason`.
fn lines(scored: &ScoredRegion) -> Vec<(bool, String)> {
    scored
        .corrections
        .iter()
        .map(|applied| {
            let c = &applied.correction;
            let by = format!(
                "{} by {}: {}",
                c.timestamp_utc()
                    .map_or_else(|| c.timestamp.clone(), |t| t.format("%Y-%m-%d").to_string()),
                one_line(&c.author),
                one_line(&c.reason)
            );
            let field = c.field.as_ref().map_or("", |f| f.as_str());
            let value = one_line(c.value.as_deref().unwrap_or_default());
            let text = match &c.kind {
                CorrectionKind::Flag => by,
                CorrectionKind::Set => {
                    let was = applied
                        .previous
                        .as_deref()
                        .map_or_else(|| "(none)".to_owned(), one_line);
                    format!("{field} (corrected {by}); was: {was}")
                }
                CorrectionKind::Add => format!("{field}: added \"{value}\" (corrected {by})"),
                _ => format!("{field}: removed \"{value}\" (corrected {by})"),
            };
            (c.is_flag(), text)
        })
        .collect()
}

/// The compact markdown of a region's corrections, on the indented lines
/// below its bullet: `  **Flagged** …` first, then `  **Corrected** …`.
pub(crate) fn write_compact_markdown(out: &mut String, scored: &ScoredRegion) {
    let lines = lines(scored);
    for (_, flag) in lines.iter().filter(|(is_flag, _)| *is_flag) {
        let _ = writeln!(out, "  **Flagged** {flag} — its items are withheld");
    }
    // A removed entry is retired: its text is not repeated for a model.
    for (applied, (_, change)) in scored.corrections.iter().zip(&lines) {
        let c = &applied.correction;
        match &c.kind {
            CorrectionKind::Flag => {}
            CorrectionKind::Remove => {
                let field = c.field.as_ref().map_or("", |f| f.as_str());
                let by = change.rsplit_once(" (corrected ").map_or("", |(_, by)| by);
                let _ = writeln!(out, "  **Corrected** {field}: one removed (corrected {by}");
            }
            _ => {
                let _ = writeln!(out, "  **Corrected** {change}");
            }
        }
    }
}

/// The pretty lines of a region's corrections (`    corrected    …`).
pub(crate) fn write_pretty(out: &mut String, scored: &ScoredRegion) {
    for (is_flag, text) in lines(scored) {
        let label = if is_flag { "flagged" } else { "corrected" };
        let _ = writeln!(out, "    {label:<12} {text}");
    }
}

/// `text` with every run of whitespace (newlines included) as one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};
    use ultragit_schema::{
        AstAnchor, ConfidenceFactors, ContextLevel, Correction, CorrectionField, CorrectionTarget,
        LineRange,
    };

    use super::*;

    fn scored(corrections: Vec<Correction>) -> ScoredRegion {
        let region = RegionAnnotation::new(
            "a.rs",
            AstAnchor::new("function", "f"),
            LineRange::new(1, 3),
            "Does f.",
        );
        let mut note = Annotation::new("c", "2025-01-01T00:00:00Z", "s", ContextLevel::Inferred);
        note.corrections = corrections;
        let (region, corrections) = correct(&note, region);
        ScoredRegion {
            region,
            commit_sha: "c".repeat(40),
            timestamp: Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0).unwrap(),
            confidence: 0.8,
            confidence_factors: ConfidenceFactors::default(),
            commit_date: None,
            related: Vec::new(),
            corrections,
            changed_since: Vec::new(),
            focus: None,
        }
    }

    #[test]
    fn markdown_puts_flags_then_corrections_below_the_region_on_one_line_each() {
        let target = CorrectionTarget::unit("a.rs", "f");
        let mut set = Correction::flag(
            target.clone(),
            "moved\n## Not a heading",
            "Ann",
            "2025-02-01T00:00:00Z",
        );
        set.kind = CorrectionKind::Set;
        set.field = Some(CorrectionField::Intent);
        set.value = Some("Does g.".into());
        let flag = Correction::flag(target, "stale", "Bob <b@x>", "2025-03-01T10:00:00+02:00");
        let region = scored(vec![set, flag]);
        assert_eq!(region.region.intent, "Does g.");
        assert_eq!(confidence(0.8, &region.corrections), 0.4);

        let mut out = String::new();
        write_compact_markdown(&mut out, &region);
        assert_eq!(
            out,
            "  **Flagged** 2025-03-01 by Bob <b@x>: stale — its items are withheld\n\
             \x20 **Corrected** intent (corrected 2025-02-01 by Ann: moved ## Not a heading); was: Does f.\n"
        );
        let mut pretty = String::new();
        write_pretty(&mut pretty, &region);
        assert_eq!(
            pretty,
            "    corrected    intent (corrected 2025-02-01 by Ann: moved ## Not a heading); was: Does f.\n    \
             flagged      2025-03-01 by Bob <b@x>: stale\n"
        );
        let mut none = String::new();
        write_compact_markdown(&mut none, &scored(Vec::new()));
        assert_eq!(none, "");
    }
}
