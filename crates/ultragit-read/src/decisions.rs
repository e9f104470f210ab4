//! The decisions a read hands over ([`ReadOutput::decisions`]), and the
//! items it withholds because they are retired.
//!
//! **What an agent acts on.** The constraints, risk notes and semantic
//! dependencies of the matched regions are the items an agent about to edit
//! the code must keep true. They are collected from every matched region
//! that passed the query's filters — before the region cap, so a unit with
//! more annotated changes than `--max-regions` still hands over all of its
//! items — best region first, each item once (texts compared by
//! [`same_item_text`](ultragit_schema::same_item_text); the commits of every region that records it are
//! listed, best first). Constraints and risk notes come first, in the order
//! of their regions; dependencies after them. Trimming to a budget keeps
//! them longest and drops them from the end ([`crate::trim`]).
//!
//! **Retired items are not delivered.** This is the definition the read is
//! held to (ARCHITECTURE.md, "Active and retired decisions"; measured by
//! `cargo xtask bench delivery`). An item of a region the read matched is
//! *active* unless:
//! - its region is flagged (`ultragit flag`: a `flag` correction that
//!   targets it) — the region stays in the output with the flag, its items
//!   are not among the decisions;
//! - a correction removed it (`remove` of a constraint) or replaced it (a
//!   `set` of the risk note): applied before this stage
//!   ([`crate::corrections`]), so the old text is simply gone;
//! - a later note retired it: a note on a commit that descends from the
//!   item's commit and that HEAD reaches has a region on the same unit (its
//!   anchor names the unit, its file is the file or one of the names blame
//!   gives its lines) whose [`RegionAnnotation::retires`] lists the item's
//!   text. Such notes are found through the notes index
//!   ([`DepsIndex::annotating`]) as well as among the notes the read already
//!   loaded, so a retiring note whose own lines have since been rewritten
//!   still counts.
//!
//! Retired items are removed from the regions returned too (in every
//! format), and counted in `stats.items_retired`; their text is never
//! shown.
//!
//! A region none of whose lines survive at HEAD is not matched at all
//! ([`crate::pipeline`]): its items are retired by the code itself.
//!
//! [`RegionAnnotation::retires`]: ultragit_schema::RegionAnnotation::retires
//! [`DepsIndex::annotating`]: crate::DepsIndex::annotating

use std::collections::HashMap;

use ultragit_schema::{Decision, ScoredRegion, item_text_key};

/// Whether a flag correction targets `region`: its items are withheld.
pub(crate) fn flagged(region: &ScoredRegion) -> bool {
    region.corrections.iter().any(|c| c.correction.is_flag())
}

/// The decisions of `regions` (best first, already filtered), as the module
/// docs say.
pub(crate) fn collect(regions: &[ScoredRegion]) -> Vec<Decision> {
    let mut first = Items::default();
    let mut dependencies = Items::default();
    for scored in regions.iter().filter(|r| !flagged(r)) {
        let r = &scored.region;
        let commit = &scored.commit_sha;
        let (file, anchor) = (&r.file, &r.ast_anchor.name);
        for constraint in &r.constraints {
            add(
                &mut first,
                Decision {
                    kind: Decision::CONSTRAINT.to_owned(),
                    text: constraint.text.clone(),
                    source: Some(constraint.source.as_str().to_owned()),
                    on: None,
                    commits: vec![commit.clone()],
                    file: file.clone(),
                    anchor: anchor.clone(),
                },
            );
        }
        if let Some(risk) = r.risk_notes.as_deref().filter(|t| !t.trim().is_empty()) {
            add(
                &mut first,
                Decision {
                    kind: Decision::RISK.to_owned(),
                    text: risk.to_owned(),
                    source: None,
                    on: None,
                    commits: vec![commit.clone()],
                    file: file.clone(),
                    anchor: anchor.clone(),
                },
            );
        }
        for dependency in &r.semantic_dependencies {
            add(
                &mut dependencies,
                Decision {
                    kind: Decision::DEPENDENCY.to_owned(),
                    text: dependency.nature.clone(),
                    source: None,
                    on: Some(format!("{}:{}", dependency.file, dependency.anchor)),
                    commits: vec![commit.clone()],
                    file: file.clone(),
                    anchor: anchor.clone(),
                },
            );
        }
    }
    let mut all = first.list;
    all.extend(dependencies.list);
    all
}

/// Decisions in the order first met, each found by its kind and
/// [`item_text_key`] (the same item as `same_item_text` says).
#[derive(Default)]
struct Items {
    list: Vec<Decision>,
    index: HashMap<(String, String), usize>,
}

/// Adds `decision` to `items`, or its commit to the entry of the same kind
/// and text already there.
fn add(items: &mut Items, decision: Decision) {
    if decision.text.trim().is_empty() {
        return;
    }
    let key = (decision.kind.clone(), item_text_key(&decision.text));
    match items.index.get(&key) {
        Some(&at) => {
            let existing = &mut items.list[at];
            for commit in decision.commits {
                if !existing.commits.contains(&commit) {
                    existing.commits.push(commit);
                }
            }
        }
        None => {
            items.index.insert(key, items.list.len());
            items.list.push(decision);
        }
    }
}

/// The items of a flagged region (withheld from the decisions), for
/// `stats.items_retired`.
pub(crate) fn items_of(region: &ScoredRegion) -> u32 {
    let r = &region.region;
    let risk = u32::from(
        r.risk_notes
            .as_deref()
            .is_some_and(|t| !t.trim().is_empty()),
    );
    r.constraints.len() as u32 + r.semantic_dependencies.len() as u32 + risk
}

/// Removes from `region` every item whose text `retired` says is retired,
/// returning how many went.
pub(crate) fn remove_retired(region: &mut ScoredRegion, retired: impl Fn(&str) -> bool) -> u32 {
    let before = items_of(region);
    let r = &mut region.region;
    r.constraints.retain(|c| !retired(&c.text));
    r.semantic_dependencies.retain(|d| !retired(&d.nature));
    if r.risk_notes.as_deref().is_some_and(&retired) {
        r.risk_notes = None;
    }
    before - items_of(region)
}
