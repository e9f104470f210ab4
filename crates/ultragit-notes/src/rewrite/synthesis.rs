//! The squash synthesis: one annotation for a commit that several annotated
//! commits became (`git rebase -i` squash/fixup, a server-side squash merge),
//! made locally and deterministically — no model call.
//!
//! - Every source region is carried to the new commit ([`super::lines`]) and
//!   the survivors are joined with [`ultragit_schema::merge::add_region`] (the
//!   same region from two sources appears once); a region whose unit no longer
//!   exists is dropped and named in `synthesis_notes`.
//! - Cross-cutting concerns are joined with `add_concern`; summaries and tasks
//!   are joined in source order, repeats left out; the context level is
//!   `enhanced` when any source's is.
//! - Provenance: `squash`, `derived_from` = every source in the order given
//!   (unannotated ones included: `synthesis_notes` names them),
//!   `original_annotations_preserved` true only when every source region
//!   survived.

use gitctx::{ObjectId, Repo};
use ultragit_schema::merge::{add_concern, add_region};
use ultragit_schema::{
    Annotation, ContextLevel, Provenance, ProvenanceOperation, SCHEMA_V1, ValidationContext,
};

use super::lines::{Carried, FileMap, Target};
use crate::error::NotesError;

/// What [`synthesize`] made.
#[derive(Debug, Clone, PartialEq)]
pub struct Synthesis {
    /// The synthesized annotation of the new commit (validated); `None` when no
    /// source had an annotation (there is nothing to carry, and nothing is
    /// written).
    pub annotation: Option<Annotation>,
    /// The sources without an annotation.
    pub unannotated: Vec<ObjectId>,
    /// The regions dropped: `file:anchor (from <short>): why`.
    pub dropped: Vec<String>,
    /// Problems that removed a carried region or concern at validation.
    pub warnings: Vec<String>,
}

/// Synthesizes the annotation of `new` from its `sources` (each commit with its
/// parsed annotation, `None` when it has none or it does not parse), oldest
/// first. See the module docs for the rules.
pub fn synthesize(
    repo: &Repo,
    new: ObjectId,
    sources: &[(ObjectId, Option<Annotation>)],
) -> Result<Synthesis, NotesError> {
    let mut target = Target::new(repo, new);
    let mut regions = Vec::new();
    let mut concerns = Vec::new();
    let mut dropped = Vec::new();
    let mut unannotated = Vec::new();
    let mut summaries: Vec<String> = Vec::new();
    let mut tasks: Vec<String> = Vec::new();
    let mut enhanced = false;
    let mut annotated = 0;
    for (source, note) in sources {
        let Some(note) = note else {
            if !unannotated.contains(source) {
                unannotated.push(*source);
            }
            continue;
        };
        annotated += 1;
        let map = FileMap::between(repo, *source, new)?;
        for region in &note.regions {
            match target.carry(&map, region)? {
                Carried::Kept(region) => {
                    add_region(&mut regions, &region);
                }
                Carried::Dropped(why) => dropped.push(format!(
                    "{}:{} (from {}): {why}",
                    region.file,
                    region.ast_anchor.name,
                    source.short()
                )),
            }
        }
        for concern in &note.cross_cutting {
            add_concern(&mut concerns, concern);
        }
        push_text(&mut summaries, Some(&note.summary));
        push_text(&mut tasks, note.task.as_deref());
        enhanced |= note.context_level == ContextLevel::Enhanced;
    }
    if annotated == 0 {
        return Ok(Synthesis {
            annotation: None,
            unannotated,
            dropped,
            warnings: Vec::new(),
        });
    }
    let mut notes = vec![format!(
        "Synthesized locally from {} source commits ({}) without a model call.",
        sources.len(),
        sources
            .iter()
            .map(|(id, _)| id.short())
            .collect::<Vec<_>>()
            .join(", ")
    )];
    if !unannotated.is_empty() {
        notes.push(format!(
            "Without an annotation: {}.",
            unannotated
                .iter()
                .map(ObjectId::short)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !dropped.is_empty() {
        notes.push(format!(
            "Dropped (their unit no longer exists): {}.",
            dropped.join("; ")
        ));
    }
    let hex = new.to_hex();
    let mut annotation = Annotation {
        schema: SCHEMA_V1.to_owned(),
        commit: hex.clone(),
        timestamp: super::now(),
        task: (!tasks.is_empty()).then(|| tasks.join("; ")),
        summary: summaries.join(" "),
        context_level: if enhanced {
            ContextLevel::Enhanced
        } else {
            ContextLevel::Inferred
        },
        regions,
        cross_cutting: concerns,
        provenance: Provenance {
            operation: ProvenanceOperation::Squash,
            derived_from: sources.iter().map(|(id, _)| id.to_hex()).collect(),
            original_annotations_preserved: dropped.is_empty(),
            synthesis_notes: Some(notes.join(" ")),
        },
        corrections: Vec::new(),
    };
    let warnings = annotation
        .strip_invalid(&ValidationContext {
            expected_commit: Some(&hex),
            commit_files: None,
        })
        .iter()
        .map(|p| format!("dropped an invalid carried annotation: {p}"))
        .collect();
    Ok(Synthesis {
        annotation: Some(annotation),
        unannotated,
        dropped,
        warnings,
    })
}

/// Appends a trimmed, non-empty text that is not there yet.
fn push_text(texts: &mut Vec<String>, text: Option<&str>) {
    if let Some(text) = text.map(str::trim).filter(|t| !t.is_empty())
        && !texts.iter().any(|t| t == text)
    {
        texts.push(text.to_owned());
    }
}
