//! `ultragit show`: a commit's annotation as stored (JSON) or for people (pretty).

use std::fmt::Write as _;

use ultragit_schema::Annotation;

/// The note as indented JSON.
pub fn render_json(annotation: &Annotation) -> String {
    let mut text = annotation.to_json_pretty();
    text.push('\n');
    text
}

/// The annotation for people. Notes are untrusted (teammates', models'):
/// control characters come out as visible escapes, never raw
/// ([`safe_io::term::sanitize`]).
pub fn render_pretty(annotation: &Annotation) -> String {
    let text = pretty_text(annotation);
    match safe_io::term::sanitize(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(clean) => clean,
    }
}

fn pretty_text(annotation: &Annotation) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "commit     {}", annotation.commit);
    let _ = writeln!(
        out,
        "annotated  {} ({})",
        annotation.timestamp,
        annotation.context_level.as_str()
    );
    let mut provenance = annotation.provenance.operation.as_str().to_owned();
    if !annotation.provenance.derived_from.is_empty() {
        provenance.push_str(&format!(
            " of {}",
            annotation.provenance.derived_from.join(", ")
        ));
    }
    let _ = writeln!(out, "provenance {provenance}");
    if let Some(task) = annotation.task.as_deref().filter(|t| !t.trim().is_empty()) {
        let _ = writeln!(out, "task       {task}");
    }
    let _ = writeln!(out, "summary    {}", annotation.summary);
    for region in &annotation.regions {
        let _ = writeln!(
            out,
            "\n{} {} ({}, lines {}-{})",
            region.file,
            region.ast_anchor.name,
            region.ast_anchor.unit_type,
            region.lines.start,
            region.lines.end
        );
        let _ = writeln!(out, "  intent: {}", region.intent);
        if let Some(reasoning) = &region.reasoning {
            let _ = writeln!(out, "  reasoning: {reasoning}");
        }
        for constraint in &region.constraints {
            let _ = writeln!(
                out,
                "  constraint ({}): {}",
                constraint.source.as_str(),
                constraint.text
            );
        }
        for dep in &region.semantic_dependencies {
            let _ = writeln!(
                out,
                "  depends on {}:{}: {}",
                dep.file, dep.anchor, dep.nature
            );
        }
        for related in &region.related_annotations {
            let short = &related.commit[..related.commit.len().min(7)];
            let _ = writeln!(
                out,
                "  related {short} {}: {}",
                related.anchor, related.relationship
            );
        }
        if !region.tags.is_empty() {
            let _ = writeln!(out, "  tags: {}", region.tags.join(", "));
        }
        if let Some(risk) = &region.risk_notes {
            let _ = writeln!(out, "  risk: {risk}");
        }
    }
    if !annotation.cross_cutting.is_empty() {
        let _ = writeln!(out, "\ncross-cutting:");
        for concern in &annotation.cross_cutting {
            let _ = writeln!(
                out,
                "  {} ({}): {}",
                concern.description,
                concern.nature,
                concern.regions.join(", ")
            );
        }
    }
    out
}
