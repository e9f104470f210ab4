//! Carrying notes to commits that make the same change: cherry-picks (git runs
//! no `post-rewrite` for them) and rewrites made elsewhere — a forge's rebase or
//! squash merge — that leave the annotated commits on no branch.
//!
//! **Matching.** Two commits make the same change when their stable patch-ids
//! are equal (`gitctx::patch_id`): a cherry-pick, or a commit rebased without
//! conflicts, keeps its original's. A squash merge makes one commit whose
//! patch-id is that of the branch's combined diff (merge base → tip).
//!
//! - [`cherry_pick`]: a new commit without a note gets the note of an annotated
//!   commit with its patch-id: first the one its `(cherry picked from commit X)`
//!   trailer names (`git cherry-pick -x`), then the annotated commits not
//!   reachable from it.
//! - [`remap`]: annotated commits not reachable from a ref (`origin/HEAD`) are
//!   matched to commits on the ref that have no note: by patch-id (rebase
//!   merges, cherry-picks) — the note is copied — or by the combined diff of a
//!   chain of them (squash merges) — a squash note is synthesized from every
//!   commit of the chain ([`crate::rewrite::synthesize`], as for a local
//!   squash).
//!
//! **Fail closed.** No match, nothing written. A source whose patch-id two
//! candidate commits share, or a chain two candidates match, is *ambiguous*:
//! nothing is written and it is reported. Several sources with one patch-id
//! (the original and its amended or picked copies) describe one change: their
//! notes are joined with [`ultragit_schema::merge`]. A commit that has a note
//! is never a target, so a rerun does nothing new, and a note is never
//! replaced. Every written note is validated and parses as `ultragit/v1`.
//!
//! **Copies.** A copied note keeps the source's regions, their line ranges
//! re-resolved at the new commit exactly as a rewrite carries them
//! (through their anchors where the language has a grammar, else through
//! the diff between the two commits; see `rewrite`'s `carry_regions`), and
//! gets `provenance.operation = "amend"`, `derived_from` the sources,
//! `original_annotations_preserved` (true unless a region's unit is gone)
//! and `synthesis_notes` saying where it came from and how it was matched.
//!
//! **Bounded.** Only commits with notes are sources (at most
//! [`MAX_SOURCES`]); candidates on the ref are its non-merge commits
//! committed since the oldest source's committer date less [`CLOCK_SLACK`]
//! (at most [`MAX_CANDIDATES`], newest first); a chain is at most
//! [`MAX_CHAIN`] commits. Patch-ids of annotated commits are cached in
//! `.git/ultragit/patch-ids` (commit → patch-id; commits are immutable),
//! written through `safe-io`; it is safe to delete, and a concurrent writer
//! may drop an entry, which is only computed again.

use std::collections::{BTreeMap, HashMap, HashSet};

use gitctx::{DiffOptions, ObjectId, PatchId, Repo};
use ultragit_schema::{Annotation, Provenance, ProvenanceOperation, ValidationContext};

use crate::error::NotesError;
use crate::rewrite::carry_regions;
use crate::{NOTES_REF, author};

/// The patch-id cache's file in `.git/ultragit/`.
pub(crate) const CACHE_FILE: &str = "patch-ids";

/// The largest cache file read (about 400,000 entries); a larger one is
/// ignored and rewritten.
const CACHE_LIMIT: u64 = 32 * 1024 * 1024;

/// The cache file's first line.
const CACHE_HEADER: &str = "# ultragit patch-ids v1: <commit> <stable patch-id, or - for none>";

/// At most this many annotated commits are considered as sources.
pub(crate) const MAX_SOURCES: usize = 20_000;

/// At most this many commits of the ref are considered as targets.
pub(crate) const MAX_CANDIDATES: usize = 20_000;

/// At most this many commits make one chain (a squash-merged branch).
pub(crate) const MAX_CHAIN: usize = 1_000;

/// At most this many unmatched sources are followed to find squash-merged
/// chains.
pub(crate) const MAX_CHAIN_SOURCES: usize = 2_000;

/// Candidates may be committed this long (seconds) before the oldest source:
/// clocks differ between machines.
pub(crate) const CLOCK_SLACK: i64 = 24 * 60 * 60;

/// How many of HEAD's reflog entries are searched for the one that made a
/// commit.
const REFLOG_DEPTH: usize = 50;

/// The trailer `git cherry-pick -x` adds.
const TRAILER: &str = "(cherry picked from commit ";

/// How a target was matched to its sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// The `(cherry picked from commit X)` trailer named the source, and the
    /// patch-ids are equal.
    Trailer,
    /// Equal patch-ids.
    PatchId,
    /// The combined diff of a chain of commits has the target's patch-id.
    CombinedDiff,
}

impl How {
    /// For messages and JSON: `cherry-pick trailer`, `patch-id`, `combined diff`.
    pub fn as_str(self) -> &'static str {
        match self {
            How::Trailer => "cherry-pick trailer",
            How::PatchId => "patch-id",
            How::CombinedDiff => "combined diff",
        }
    }
}

/// One note to write: `target` gets a note derived from `sources`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remapped {
    pub target: ObjectId,
    /// Oldest first for a chain; the annotated ones among them for a copy.
    pub sources: Vec<ObjectId>,
    pub how: How,
    /// What was dropped while building the note (invalid regions), if anything.
    pub warnings: Vec<String>,
}

/// Sources that more than one candidate matches: nothing was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ambiguous {
    pub sources: Vec<ObjectId>,
    pub candidates: Vec<ObjectId>,
    pub how: How,
}

/// What [`cherry_pick`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CherryPick {
    /// The commit has a note already; nothing was done.
    AlreadyAnnotated,
    /// No annotated commit has its patch-id (or it has none: a merge, an empty
    /// commit).
    NoMatch,
    /// The note was copied (or, with `dry_run`, would be).
    Copied(Remapped),
}

/// Copies the note of the commit `commit` was cherry-picked from, if an
/// annotated commit with its patch-id exists (module docs). With `dry_run`
/// nothing is written.
pub fn cherry_pick(repo: &Repo, commit: ObjectId, dry_run: bool) -> Result<CherryPick, NotesError> {
    let notes = repo.notes(NOTES_REF)?;
    if notes.read(commit)?.is_some() {
        return Ok(CherryPick::AlreadyAnnotated);
    }
    let Some(&patch) = repo.patch_ids(&[commit])?.get(&commit) else {
        return Ok(CherryPick::NoMatch);
    };
    let info = repo.commit_info_by_id(commit)?;
    let mut cache = PatchIdCache::load(repo);
    // The trailer first: it names the source, so no search is needed.
    let named: Vec<ObjectId> = trailer_sources(&info.message)
        .into_iter()
        .filter(|id| *id != commit)
        .collect();
    let named = readable_notes(repo, &named)?.0;
    let named_ids: Vec<ObjectId> = named.keys().copied().collect();
    let ids = cache.patch_ids(repo, &named_ids)?;
    let by_trailer: Vec<ObjectId> = named_ids
        .iter()
        .copied()
        .filter(|id| ids.get(id) == Some(&patch))
        .collect();
    let (sources, how) = if by_trailer.is_empty() {
        let targets: Vec<ObjectId> = notes.list()?.into_iter().map(|e| e.target).collect();
        let mut unreachable = repo.unreachable_from(&targets, &[commit])?;
        unreachable.truncate(MAX_SOURCES);
        let ids = cache.patch_ids(repo, &unreachable)?;
        let same: Vec<ObjectId> = unreachable
            .into_iter()
            .filter(|id| ids.get(id) == Some(&patch))
            .collect();
        (same, How::PatchId)
    } else {
        (by_trailer, How::Trailer)
    };
    if !dry_run {
        cache.save(repo);
    }
    let (readable, _) = readable_notes(repo, &sources)?;
    if readable.is_empty() {
        return Ok(CherryPick::NoMatch);
    }
    let ordered: Vec<(ObjectId, Annotation)> = sources
        .iter()
        .filter_map(|id| readable.get(id).map(|a| (*id, a.clone())))
        .collect();
    let note = copied_note(repo, commit, &ordered, how, "cherry-picked")?;
    let remapped = Remapped {
        target: commit,
        sources: ordered.iter().map(|(id, _)| *id).collect(),
        how,
        warnings: note.1,
    };
    if !dry_run && !write_if_absent(repo, &note.0)? {
        return Ok(CherryPick::AlreadyAnnotated);
    }
    Ok(CherryPick::Copied(remapped))
}

/// True when `commit` looks like a cherry-pick: HEAD's reflog says it was
/// made by `git cherry-pick`, or its message has the `-x` trailer. The
/// post-commit path tries [`cherry_pick`] only then.
pub fn looks_cherry_picked(repo: &Repo, commit: ObjectId) -> Result<bool, NotesError> {
    if let Some(message) = repo.reflog_message("HEAD", commit, REFLOG_DEPTH)?
        && message.starts_with("cherry-pick")
    {
        return Ok(true);
    }
    let info = repo.commit_info_by_id(commit)?;
    Ok(!trailer_sources(&info.message).is_empty())
}

/// The commits `(cherry picked from commit X)` trailers name.
pub(crate) fn trailer_sources(message: &str) -> Vec<ObjectId> {
    message
        .lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix(TRAILER)?;
            rest.strip_suffix(')')?.trim().parse().ok()
        })
        .collect()
}

/// Options of [`remap`].
#[derive(Debug, Clone)]
pub struct RemapOptions {
    /// Plan only: write nothing (no note, no cache).
    pub dry_run: bool,
    /// What to call the ref in synthesis notes, e.g. `origin/HEAD`.
    pub onto_name: String,
}

/// What [`remap`] found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemapReport {
    /// Annotated commits not reachable from the ref.
    pub sources: usize,
    /// Commits on the ref without a note that were considered.
    pub candidates: usize,
    /// Notes copied (same patch-id).
    pub copied: Vec<Remapped>,
    /// Squash notes synthesized (a chain's combined diff).
    pub synthesized: Vec<Remapped>,
    /// Matches with more than one candidate: nothing written.
    pub ambiguous: Vec<Ambiguous>,
    /// Sources with no counterpart on the ref.
    pub unmatched: Vec<ObjectId>,
    /// Sources whose note could not be read (malformed or too large): left out.
    pub unreadable: Vec<ObjectId>,
    /// Targets that got a note from someone else meanwhile: not written.
    pub raced: Vec<ObjectId>,
}

impl RemapReport {
    /// The report as one JSON object (`ultragit remap --format json`).
    pub fn to_json(&self, onto_name: &str, onto: ObjectId, dry_run: bool) -> String {
        use serde_json::{Value, json};
        let ids = |ids: &[ObjectId]| -> Value { ids.iter().map(|id| id.to_hex()).collect() };
        let remapped = |list: &[Remapped]| -> Value {
            list.iter()
                .map(|r| {
                    json!({
                        "commit": r.target.to_hex(),
                        "sources": ids(&r.sources),
                        "matched_by": r.how.as_str(),
                        "warnings": r.warnings,
                    })
                })
                .collect()
        };
        let ambiguous: Value = self
            .ambiguous
            .iter()
            .map(|a| {
                json!({
                    "sources": ids(&a.sources),
                    "candidates": ids(&a.candidates),
                    "matched_by": a.how.as_str(),
                })
            })
            .collect();
        json!({
            "onto": onto_name,
            "onto_commit": onto.to_hex(),
            "dry_run": dry_run,
            "sources": self.sources,
            "candidates": self.candidates,
            "copied": remapped(&self.copied),
            "synthesized": remapped(&self.synthesized),
            "ambiguous": ambiguous,
            "unmatched": ids(&self.unmatched),
            "unreadable": ids(&self.unreadable),
            "raced": ids(&self.raced),
        })
        .to_string()
    }
}

/// Matches annotated commits not reachable from `onto` to commits on `onto`
/// without notes and writes the derived notes (module docs).
pub fn remap(
    repo: &Repo,
    onto: ObjectId,
    options: &RemapOptions,
) -> Result<RemapReport, NotesError> {
    let mut report = RemapReport::default();
    let notes = repo.notes(NOTES_REF)?;
    let targets: Vec<ObjectId> = notes.list()?.into_iter().map(|e| e.target).collect();
    let mut sources = repo.unreachable_from(&targets, &[onto])?;
    sources.truncate(MAX_SOURCES);
    report.sources = sources.len();
    if sources.is_empty() {
        return Ok(report);
    }
    let (annotations, unreadable) = readable_notes(repo, &sources)?;
    report.unreadable = unreadable;
    let sources: Vec<ObjectId> = sources
        .into_iter()
        .filter(|id| annotations.contains_key(id))
        .collect();
    if sources.is_empty() {
        return Ok(report);
    }

    let mut oldest = i64::MAX;
    for &id in &sources {
        oldest = oldest.min(repo.commit_info_by_id(id)?.committer.time.seconds);
    }
    let since = oldest.saturating_sub(CLOCK_SLACK);
    let on_ref = repo.commits_since(onto, since, MAX_CANDIDATES)?;
    let candidates = crate::unannotated(&notes, on_ref)?;
    report.candidates = candidates.len();

    let mut cache = PatchIdCache::load(repo);
    let source_ids = cache.patch_ids(repo, &sources)?;
    let candidate_ids = repo.patch_ids(&candidates)?;
    if !options.dry_run {
        cache.save(repo);
    }
    let mut by_patch: HashMap<PatchId, Vec<ObjectId>> = HashMap::new();
    for &id in &candidates {
        if let Some(patch) = candidate_ids.get(&id) {
            by_patch.entry(*patch).or_default().push(id);
        }
    }
    let known = Known {
        annotations: &annotations,
        by_patch: &by_patch,
    };
    let mut matching = Matching::default();
    matching.equal_patches(repo, &known, &sources, &source_ids, options, &mut report)?;
    matching.squashes(repo, &known, onto, &sources, options, &mut report)?;
    report.unmatched = sources
        .iter()
        .copied()
        .filter(|id| !matching.handled.contains(id))
        .collect();

    for (remapped, note) in matching.plan {
        if !options.dry_run && !write_if_absent(repo, &note)? {
            report.raced.push(remapped.target);
            continue;
        }
        match remapped.how {
            How::CombinedDiff => report.synthesized.push(remapped),
            How::PatchId | How::Trailer => report.copied.push(remapped),
        }
    }
    Ok(report)
}

/// What the matching of one remap looks things up in.
struct Known<'a> {
    /// The readable notes of the sources.
    annotations: &'a HashMap<ObjectId, Annotation>,
    /// The candidates (commits on the ref without notes) by patch-id.
    by_patch: &'a HashMap<PatchId, Vec<ObjectId>>,
}

/// The notes one remap will write, and which commits are settled.
#[derive(Default)]
struct Matching {
    plan: Vec<(Remapped, Annotation)>,
    /// Candidates a note is planned for.
    used: HashSet<ObjectId>,
    /// Sources matched, or found ambiguous.
    handled: HashSet<ObjectId>,
}

impl Matching {
    /// Rebase merges and cherry-picks: sources whose patch-id equals one
    /// candidate's get their notes copied to it (several sources of one
    /// patch-id are joined); several candidates are ambiguous.
    fn equal_patches(
        &mut self,
        repo: &Repo,
        known: &Known<'_>,
        sources: &[ObjectId],
        source_ids: &HashMap<ObjectId, PatchId>,
        options: &RemapOptions,
        report: &mut RemapReport,
    ) -> Result<(), NotesError> {
        let mut groups: BTreeMap<PatchId, Vec<ObjectId>> = BTreeMap::new();
        for id in sources {
            if let Some(patch) = source_ids.get(id) {
                groups.entry(*patch).or_default().push(*id);
            }
        }
        for (patch, group) in &groups {
            let Some(found) = known.by_patch.get(patch) else {
                continue;
            };
            self.handled.extend(group.iter().copied());
            if found.len() > 1 {
                report.ambiguous.push(Ambiguous {
                    sources: group.clone(),
                    candidates: found.clone(),
                    how: How::PatchId,
                });
                continue;
            }
            let target = found[0];
            let ordered: Vec<(ObjectId, Annotation)> = group
                .iter()
                .map(|id| (*id, known.annotations[id].clone()))
                .collect();
            let what = format!("rewritten onto {}", options.onto_name);
            let (note, warnings) = copied_note(repo, target, &ordered, How::PatchId, &what)?;
            self.used.insert(target);
            self.plan.push((
                Remapped {
                    target,
                    sources: group.clone(),
                    how: How::PatchId,
                    warnings,
                },
                note,
            ));
        }
        Ok(())
    }

    /// Squash merges: the combined diff of a chain of sources not matched yet
    /// equal to one candidate's diff gets a note synthesized from the chain's
    /// notes; several candidates are ambiguous.
    fn squashes(
        &mut self,
        repo: &Repo,
        known: &Known<'_>,
        onto: ObjectId,
        sources: &[ObjectId],
        options: &RemapOptions,
        report: &mut RemapReport,
    ) -> Result<(), NotesError> {
        let remaining: Vec<ObjectId> = sources
            .iter()
            .copied()
            .filter(|id| !self.handled.contains(id))
            .collect();
        let chains = chains(repo, onto, &remaining)?;
        let ranges: Vec<(ObjectId, ObjectId)> = chains.iter().map(|c| (c.base, c.tip)).collect();
        let chain_ids = repo.range_patch_ids(&ranges)?;
        for chain in &chains {
            let found: Vec<ObjectId> = chain_ids
                .get(&chain.tip)
                .and_then(|patch| known.by_patch.get(patch))
                .map(|ids| {
                    ids.iter()
                        .copied()
                        .filter(|id| !self.used.contains(id))
                        .collect()
                })
                .unwrap_or_default();
            let annotated: Vec<ObjectId> = chain
                .commits
                .iter()
                .copied()
                .filter(|id| known.annotations.contains_key(id))
                .collect();
            match found.as_slice() {
                [] => continue,
                [target] => {
                    let sources: Vec<(ObjectId, Option<Annotation>)> = chain
                        .commits
                        .iter()
                        .map(|id| (*id, known.annotations.get(id).cloned()))
                        .collect();
                    let (note, warnings) =
                        synthesize_squash(repo, *target, &sources, &options.onto_name)?;
                    self.used.insert(*target);
                    self.handled.extend(annotated.iter().copied());
                    self.plan.push((
                        Remapped {
                            target: *target,
                            sources: chain.commits.clone(),
                            how: How::CombinedDiff,
                            warnings,
                        },
                        note,
                    ));
                }
                _ => {
                    self.handled.extend(annotated.iter().copied());
                    report.ambiguous.push(Ambiguous {
                        sources: annotated,
                        candidates: found,
                        how: How::CombinedDiff,
                    });
                }
            }
        }
        Ok(())
    }
}

/// A branch that may have been squash-merged: the commits reachable from
/// `tip` and not from the ref, oldest first, and their merge base with it.
struct Chain {
    base: ObjectId,
    tip: ObjectId,
    commits: Vec<ObjectId>,
}

/// The chains ending at those of `sources` that no other source's chain
/// contains. A chain of one commit is left out: its combined diff is its own
/// patch, which was compared already.
fn chains(repo: &Repo, onto: ObjectId, sources: &[ObjectId]) -> Result<Vec<Chain>, NotesError> {
    let onto_hex = onto.to_hex();
    let mut walked: Vec<(ObjectId, Vec<ObjectId>)> = Vec::new();
    // Every commit below some chain's tip: a source among them is no tip.
    let mut below: HashSet<ObjectId> = HashSet::new();
    for &source in sources.iter().take(MAX_CHAIN_SOURCES) {
        let commits = repo.log_range(Some(&onto_hex), &source.to_hex(), MAX_CHAIN + 1)?;
        if commits.len() > MAX_CHAIN {
            continue;
        }
        below.extend(commits.iter().skip(1).copied());
        walked.push((source, commits));
    }
    let mut out = Vec::new();
    for (tip, commits) in &walked {
        if below.contains(tip) || commits.len() < 2 {
            continue;
        }
        let Some(base) = repo.merge_base(*tip, onto)? else {
            continue;
        };
        let mut commits = commits.clone();
        commits.reverse();
        out.push(Chain {
            base,
            tip: *tip,
            commits,
        });
    }
    Ok(out)
}

/// The squash note of `target` from the chain `sources` (oldest first; the
/// unannotated ones with `None`): the rewrite module's synthesis (regions
/// re-resolved at `target` through their anchors, provenance `squash`,
/// `derived_from` every commit of the chain), with `synthesis_notes` saying
/// where it came from.
fn synthesize_squash(
    repo: &Repo,
    target: ObjectId,
    sources: &[(ObjectId, Option<Annotation>)],
    onto_name: &str,
) -> Result<(Annotation, Vec<String>), NotesError> {
    let synthesis = crate::rewrite::synthesize(repo, target, sources)?;
    let Some(mut note) = synthesis.annotation else {
        return Err(NotesError::Invalid(format!(
            "no annotated commit in the chain squashed into {}",
            target.short()
        )));
    };
    let how = format!(
        "squash-merged onto {onto_name}: synthesized by `ultragit remap` from {} commits \
         (matched by their combined diff)",
        sources.len()
    );
    note.provenance.synthesis_notes = Some(match note.provenance.synthesis_notes.take() {
        Some(more) if !more.trim().is_empty() => format!("{how}; {more}"),
        _ => how,
    });
    let mut warnings = synthesis.warnings;
    warnings.extend(
        synthesis
            .dropped
            .iter()
            .map(|d| format!("a region did not survive the squash: {d}")),
    );
    warnings.extend(finish(repo, &mut note)?);
    Ok((note, warnings))
}

/// The note `target` gets from `sources` (one or more annotations of the
/// same change, joined), each source's regions re-resolved at `target` as a
/// rewrite carries them ([`carry_regions`]).
fn copied_note(
    repo: &Repo,
    target: ObjectId,
    sources: &[(ObjectId, Annotation)],
    how: How,
    what: &str,
) -> Result<(Annotation, Vec<String>), NotesError> {
    let Some(((first_id, first), rest)) = sources.split_first() else {
        return Err(NotesError::Invalid(format!(
            "no source note for {}",
            target.short()
        )));
    };
    // Each source's regions are re-resolved from its own commit, as a
    // rewrite carries them, then the copies are joined.
    let mut dropped = Vec::new();
    let mut carried = |id: ObjectId, source: &Annotation| {
        let mut copy = source.clone();
        let (regions, lost) = carry_regions(repo, id, target, &source.regions)?;
        copy.regions = regions;
        dropped.extend(lost);
        Ok::<_, NotesError>(copy)
    };
    let mut note = carried(*first_id, first)?;
    for (id, other) in rest {
        note = ultragit_schema::merge::merge(&note, &carried(*id, other)?);
    }
    note.commit = target.to_hex();
    let names: Vec<String> = sources.iter().map(|(id, _)| id.to_hex()).collect();
    note.provenance = Provenance {
        operation: ProvenanceOperation::Amend,
        derived_from: names.clone(),
        original_annotations_preserved: dropped.is_empty(),
        synthesis_notes: Some(format!(
            "{what}: note copied by ultragit from {} (matched by {})",
            names.join(", "),
            how.as_str()
        )),
    };
    let mut warnings: Vec<String> = dropped
        .iter()
        .map(|d| format!("a region did not survive the copy: {d}"))
        .collect();
    warnings.extend(finish(repo, &mut note)?);
    Ok((note, warnings))
}

/// Validates `note` against its commit and drops what is invalid there.
fn finish(repo: &Repo, note: &mut Annotation) -> Result<Vec<String>, NotesError> {
    let diff = repo.diff_commit(
        &note.commit,
        &DiffOptions {
            hunks: false,
            detect_renames: false,
            ..DiffOptions::default()
        },
    )?;
    let files: Vec<String> = diff.files.iter().map(|f| f.path().to_owned()).collect();
    let commit = note.commit.clone();
    let problems = note.strip_invalid(&ValidationContext {
        expected_commit: Some(&commit),
        commit_files: Some(&files),
    });
    Ok(problems
        .iter()
        .map(|p| format!("dropped an invalid part of the copied note: {p}"))
        .collect())
}

/// The notes of `ids` that parse, and the ids whose note does not (malformed
/// or too large). Ids without a note are in neither.
fn readable_notes(
    repo: &Repo,
    ids: &[ObjectId],
) -> Result<(HashMap<ObjectId, Annotation>, Vec<ObjectId>), NotesError> {
    let read = repo.notes(NOTES_REF)?.read_many(ids)?;
    let mut good = HashMap::new();
    let mut bad: Vec<ObjectId> = read.too_large.iter().map(|(id, _)| *id).collect();
    for (id, text) in read.found {
        match Annotation::from_json(&text) {
            Ok(annotation) => {
                good.insert(id, annotation);
            }
            Err(_) => bad.push(id),
        }
    }
    Ok((good, bad))
}

/// Writes `note` unless its commit got a note meanwhile; `false` then. "Only
/// if absent" is decided inside the notes ref's compare-and-swap
/// (`Notes::write_with`), so a note another writer stored is never replaced.
fn write_if_absent(repo: &Repo, note: &Annotation) -> Result<bool, NotesError> {
    let commit: ObjectId = note
        .commit
        .parse()
        .map_err(|_| NotesError::Invalid(format!("'{}' is not a commit id", note.commit)))?;
    // Never store what `read` could not parse.
    let text = note.to_json();
    Annotation::from_json(&text)
        .map_err(|e| NotesError::Invalid(format!("derived note does not parse: {e}")))?;
    let written = repo
        .notes(NOTES_REF)?
        .write_with(commit, |current| current.is_none().then(|| text.clone()))?;
    Ok(written.is_some())
}

/// Patch-ids of annotated commits, cached in `.git/ultragit/patch-ids`.
struct PatchIdCache {
    known: HashMap<ObjectId, Option<PatchId>>,
    dirty: bool,
}

impl PatchIdCache {
    /// The cache as stored; empty when missing, unreadable or too large (it is
    /// only a cache). Lines that do not parse are ignored.
    fn load(repo: &Repo) -> Self {
        let mut known = HashMap::new();
        let text = author::state(&repo.common_dir())
            .ok()
            .and_then(|dir| dir.read_optional(CACHE_FILE, CACHE_LIMIT).ok().flatten())
            .unwrap_or_default();
        for line in String::from_utf8_lossy(&text).lines() {
            let Some((commit, patch)) = line.split_once(' ') else {
                continue;
            };
            let Ok(commit) = commit.parse::<ObjectId>() else {
                continue;
            };
            let patch = match patch.trim() {
                "-" => None,
                hex => match hex.parse::<PatchId>() {
                    Ok(p) => Some(p),
                    Err(_) => continue,
                },
            };
            known.insert(commit, patch);
        }
        PatchIdCache {
            known,
            dirty: false,
        }
    }

    /// The patch-ids of `commits`, computing (in one batch) those not cached.
    fn patch_ids(
        &mut self,
        repo: &Repo,
        commits: &[ObjectId],
    ) -> Result<HashMap<ObjectId, PatchId>, NotesError> {
        let missing: Vec<ObjectId> = commits
            .iter()
            .copied()
            .filter(|id| !self.known.contains_key(id))
            .collect();
        if !missing.is_empty() {
            let computed = repo.patch_ids(&missing)?;
            for id in missing {
                // Only commits that exist are cached as having none.
                if computed.contains_key(&id) || repo.commit_info_by_id(id).is_ok() {
                    self.known.insert(id, computed.get(&id).copied());
                    self.dirty = true;
                }
            }
        }
        Ok(commits
            .iter()
            .filter_map(|id| self.known.get(id).copied().flatten().map(|p| (*id, p)))
            .collect())
    }

    /// Stores the cache (best effort: a cache that cannot be written is only
    /// computed again next time).
    fn save(&self, repo: &Repo) {
        if !self.dirty {
            return;
        }
        let mut entries: Vec<(&ObjectId, &Option<PatchId>)> = self.known.iter().collect();
        entries.sort();
        let mut text = String::with_capacity(entries.len() * 82 + CACHE_HEADER.len() + 1);
        text.push_str(CACHE_HEADER);
        text.push('\n');
        for (commit, patch) in entries {
            text.push_str(&commit.to_hex());
            text.push(' ');
            match patch {
                Some(p) => text.push_str(&p.to_hex()),
                None => text.push('-'),
            }
            text.push('\n');
        }
        if let Ok(dir) = author::state(&repo.common_dir()) {
            let _ = dir.write(CACHE_FILE, text.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailers_name_their_sources() {
        let a = "a".repeat(40);
        let message = format!(
            "Fix it\n\nBody.\n\n(cherry picked from commit {a})\n(cherry picked from commit nothex)\n"
        );
        assert_eq!(trailer_sources(&message), vec![a.parse().unwrap()]);
        assert!(trailer_sources("Fix it\n").is_empty());
    }
}
