//! `history`: every annotation that touched a file or one of its units,
//! newest first, across renames — the unit's "why" timeline (spec 003,
//! Feature 08).
//!
//! ```no_run
//! use ultragit_read::{Answer, Format, GitReadPipeline};
//! use ultragit_read::history::{HistoryQuery, history};
//!
//! let pipeline = GitReadPipeline::open(".")?;
//! let output = history(&pipeline, &HistoryQuery::file("src/wire.rs").with_anchor("encode"))?;
//! print!("{}", output.render(Format::Markdown));
//! # Ok::<(), ultragit_read::ReadError>(())
//! ```
//!
//! The commits are every annotated commit HEAD's history holds, on any parent
//! (a project that merges topic branches annotates commits that are never on
//! the first-parent chain), whose note has a region in the file under today's
//! name or a former one: found through the notes index, which knows which
//! annotated commits name which files and units, so nothing walks the file's
//! unannotated history (see `lineage`); their notes are read
//! in-process. With an anchor, only the regions of a unit the anchor names
//! (exactly or unqualified, as in [`crate::deps`]) count. Entries are newest
//! first by commit date. Each carries the commit, its date and author, the
//! region's intent, its constraints with those added and dropped since the
//! previous (older) entry of the same unit, its risk notes, and what the
//! note says it retires (`retires`: items of earlier notes that no longer
//! hold — a dropped constraint is only one the note did not restate).

use std::collections::HashMap;
use std::fmt::Write as _;

use gitctx::ObjectId;
use serde::{Deserialize, Serialize};
use ultragit_schema::{Annotation, RegionAnnotation};

use crate::deps::{Answer, count, day, resolve_units, short, warnings_markdown, warnings_pretty};
use crate::error::ReadError;
use crate::index::DepsIndex;
use crate::lineage;
use crate::pipeline::{GitReadPipeline, NO_NOTES_HINT, NOTES_REF};

/// The `$schema` of a [`HistoryOutput`].
pub const HISTORY_SCHEMA_V1: &str = "ultragit-history/v1";

/// What `history` is asked: a file at HEAD, optionally one unit of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryQuery {
    pub file: String,
    pub anchor: Option<String>,
}

impl HistoryQuery {
    pub fn file(file: impl Into<String>) -> HistoryQuery {
        HistoryQuery {
            file: file.into(),
            anchor: None,
        }
    }

    pub fn with_anchor(mut self, anchor: impl Into<String>) -> HistoryQuery {
        self.anchor = Some(anchor.into());
        self
    }
}

/// The answer of [`history`] (`ultragit-history/v1`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryOutput {
    #[serde(rename = "$schema")]
    pub schema: String,
    pub query: HistoryQuery,
    /// The units of today's outline the anchor resolved to; empty without an
    /// anchor or when it was matched as given.
    pub units: Vec<String>,
    /// The file's former names whose notes count (see `lineage`);
    /// omitted when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub former_names: Vec<String>,
    /// Newest commit first.
    pub entries: Vec<HistoryEntry>,
    /// Annotated commits the notes index lists for the file (or unit) under
    /// any of its names, whether HEAD's history holds them or not.
    pub commits_examined: u32,
    /// Those of them HEAD's history holds (on any parent), with a readable
    /// note: the commits `entries` come from.
    pub annotated_commits: u32,
    /// Annotated commits listed that HEAD's history does not hold (an
    /// unmerged branch, a commit rewritten away): left out.
    #[serde(default)]
    pub outside_history: u32,
    pub warnings: Vec<String>,
}

/// One annotated region of one commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryEntry {
    pub commit: String,
    /// The commit's committer date (RFC 3339).
    pub commit_date: String,
    /// The commit's author.
    pub author: String,
    /// The file's path at that commit.
    pub file: String,
    pub anchor: String,
    pub intent: String,
    /// Every constraint of the region, as written.
    pub constraints: Vec<String>,
    /// Constraints new since the previous (older) entry of the same unit
    /// (all of them for its first entry).
    pub constraints_added: Vec<String>,
    /// Constraints of the previous entry of the same unit that this one no
    /// longer has — only a difference between two notes, which need not
    /// restate what still holds; see `retires` for what the note says is no
    /// longer true.
    pub constraints_dropped: Vec<String>,
    pub risk_notes: Option<String>,
    /// What the note says this change makes no longer true: items of earlier
    /// notes on the unit it retires ([`RegionAnnotation::retires`]; `read`
    /// stops delivering them). Omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retires: Vec<String>,
}

/// Every annotation that touched `query`'s file or unit, newest first.
pub fn history(
    pipeline: &GitReadPipeline,
    query: &HistoryQuery,
) -> Result<HistoryOutput, ReadError> {
    let file = query.file.trim_start_matches("./").to_owned();
    let anchor = query
        .anchor
        .as_deref()
        .map(str::trim)
        .filter(|a| !a.is_empty());
    let mut warnings = Vec::new();
    let units = match anchor {
        Some(anchor) => resolve_units(pipeline, &file, anchor, &mut warnings)?,
        None => {
            crate::deps::file_at_head(pipeline, &file)?;
            Vec::new()
        }
    };
    let anchors: Vec<&str> = match (anchor, units.is_empty()) {
        (Some(anchor), true) => vec![anchor],
        _ => units.iter().map(String::as_str).collect(),
    };
    let repo = pipeline.repo();
    let head = repo.resolve_commit("HEAD")?;
    let index = DepsIndex::open(repo, NOTES_REF)?;
    let names = lineage::names_of(repo, &head.to_hex(), &index, &file)?;
    let found = lineage::in_history(repo, head, &index, &names, &anchors)?;
    let commits: Vec<ObjectId> = found.commits.iter().map(|a| a.commit).collect();
    let annotated = annotations(pipeline, &commits, &mut warnings)?;
    let mut entries = Vec::new();
    for commit in &commits {
        let Some(note) = annotated.get(commit) else {
            continue;
        };
        let info = repo.commit_info_by_id(*commit)?;
        for region in note.regions.iter().filter(|r| {
            names.contains(&r.file)
                && (anchors.is_empty()
                    || anchors
                        .iter()
                        .any(|n| crate::index::anchors_match(&r.ast_anchor.name, n)))
        }) {
            entries.push(entry(*commit, &info, region));
        }
    }
    mark_changes(&mut entries);
    if index.notes_commit().is_none() {
        warnings.push(NO_NOTES_HINT.to_owned());
    }
    let annotated_commits = commits.iter().filter(|c| annotated.contains_key(c)).count();
    Ok(HistoryOutput {
        schema: HISTORY_SCHEMA_V1.to_owned(),
        query: HistoryQuery {
            file,
            anchor: anchor.map(str::to_owned),
        },
        units,
        former_names: names[1..].to_vec(),
        entries,
        commits_examined: u32::try_from(found.listed).unwrap_or(u32::MAX),
        annotated_commits: u32::try_from(annotated_commits).unwrap_or(u32::MAX),
        outside_history: u32::try_from(found.listed - commits.len()).unwrap_or(u32::MAX),
        warnings,
    })
}

/// The parsed notes of `commits` (in-process); a malformed note is left out
/// with a warning.
pub(crate) fn annotations(
    pipeline: &GitReadPipeline,
    commits: &[ObjectId],
    warnings: &mut Vec<String>,
) -> Result<HashMap<ObjectId, Annotation>, ReadError> {
    let read = pipeline.repo().notes(NOTES_REF)?.read_many(commits)?;
    let pending = crate::pending::read(pipeline.repo(), commits)?;
    let mut out = HashMap::new();
    for (commit, text) in read.found {
        match Annotation::from_json(&text) {
            Ok(mut note) => {
                if let Some(corrections) = pending.get(&commit) {
                    crate::pending::join(&mut note, corrections);
                }
                out.insert(commit, note);
            }
            Err(_) => warnings.push(format!(
                "Skipping malformed annotation on commit {}",
                commit.to_hex()
            )),
        }
    }
    for (commit, bytes) in read.too_large {
        warnings.push(format!(
            "Skipping the annotation on commit {}: it is {bytes} bytes, over the limit of {} bytes",
            commit.to_hex(),
            gitctx::MAX_NOTE_BYTES
        ));
    }
    Ok(out)
}

fn entry(commit: ObjectId, info: &gitctx::CommitInfo, region: &RegionAnnotation) -> HistoryEntry {
    HistoryEntry {
        commit: commit.to_hex(),
        commit_date: info.committer.time.to_rfc3339(),
        author: info.author.name.clone(),
        file: region.file.clone(),
        anchor: region.ast_anchor.name.clone(),
        intent: region.intent.clone(),
        constraints: region.constraints.iter().map(|c| c.text.clone()).collect(),
        constraints_added: Vec::new(),
        constraints_dropped: Vec::new(),
        risk_notes: region.risk_notes.clone(),
        retires: region.retires.clone(),
    }
}

/// Fills in the constraints added and dropped, each entry against the next
/// older entry of the same unit (`entries` are newest first).
fn mark_changes(entries: &mut [HistoryEntry]) {
    let mut older: HashMap<String, Vec<String>> = HashMap::new();
    for entry in entries.iter_mut().rev() {
        let key = unit_key(&entry.anchor);
        let previous = older.get(&key).cloned().unwrap_or_default();
        entry.constraints_added = entry
            .constraints
            .iter()
            .filter(|c| !previous.contains(c))
            .cloned()
            .collect();
        entry.constraints_dropped = previous
            .iter()
            .filter(|c| !entry.constraints.contains(c))
            .cloned()
            .collect();
        older.insert(key, entry.constraints.clone());
    }
}

/// Entries of `Client::connect` and `connect` are one unit's.
pub(crate) fn unit_key(anchor: &str) -> String {
    anchor
        .rsplit([':', '.'])
        .next()
        .unwrap_or(anchor)
        .trim()
        .to_owned()
}

/// `3 annotated regions from 2 annotated commits in HEAD's history.`, saying
/// how many more annotated commits HEAD's history does not hold.
fn counts_line(output: &HistoryOutput) -> String {
    let mut line = format!(
        "{} from {} in HEAD's history",
        count(
            output.entries.len(),
            "annotated region",
            "annotated regions"
        ),
        count(
            output.annotated_commits as usize,
            "annotated commit",
            "annotated commits"
        ),
    );
    let outside = output.outside_history as usize;
    if outside > 0 {
        line.push_str(&format!(
            " ({} more not in it: an unmerged branch or a rewritten commit)",
            count(outside, "annotated commit", "annotated commits")
        ));
    }
    line.push('.');
    line
}

fn title(q: &HistoryQuery) -> String {
    match &q.anchor {
        Some(anchor) => format!("{} — {anchor}", q.file),
        None => q.file.clone(),
    }
}

impl Answer for HistoryOutput {
    fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn markdown(&self) -> String {
        let output = self;
        let mut out = String::new();
        let _ = writeln!(out, "# History of {}", title(&output.query));
        let _ = writeln!(out, "\n{}", counts_line(output));
        if !output.former_names.is_empty() {
            let _ = writeln!(
                out,
                "Also under its former {}: {}.",
                if output.former_names.len() == 1 {
                    "name"
                } else {
                    "names"
                },
                output.former_names.join(", ")
            );
        }
        for (i, e) in output.entries.iter().enumerate() {
            if i > 0 {
                out.push_str("\n---\n");
            }
            let _ = writeln!(
                out,
                "\n## {} — {} · {}",
                short(&e.commit),
                e.anchor,
                day(Some(&e.commit_date))
            );
            let _ = writeln!(out, "{} · {}", e.author, e.file);
            let _ = writeln!(out, "**Intent:** {}", e.intent);
            for (label, items) in [
                ("Constraints added", &e.constraints_added),
                ("Constraints dropped", &e.constraints_dropped),
                ("Retires", &e.retires),
            ] {
                if !items.is_empty() {
                    let _ = writeln!(out, "**{label}:**");
                    for item in items {
                        let _ = writeln!(out, "- {item}");
                    }
                }
            }
            if let Some(risk) = &e.risk_notes {
                let _ = writeln!(out, "**Risk:** {risk}");
            }
        }
        warnings_markdown(&mut out, &output.warnings);
        out
    }

    fn pretty(&self) -> String {
        let output = self;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "History of {}: {}",
            title(&output.query),
            count(output.entries.len(), "entry", "entries")
        );
        for e in &output.entries {
            let _ = writeln!(
                out,
                "\n  {} {}  {} {}  ({})",
                short(&e.commit),
                day(Some(&e.commit_date)),
                e.file,
                e.anchor,
                e.author
            );
            let _ = writeln!(out, "    intent:  {}", e.intent);
            for c in &e.constraints_added {
                let _ = writeln!(out, "    + {c}");
            }
            for c in &e.constraints_dropped {
                let _ = writeln!(out, "    - {c}");
            }
            for c in &e.retires {
                let _ = writeln!(out, "    retires: {c}");
            }
            if let Some(risk) = &e.risk_notes {
                let _ = writeln!(out, "    risk:    {risk}");
            }
        }
        warnings_pretty(&mut out, &output.warnings);
        out
    }
}
