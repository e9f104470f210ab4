//! `summary`: a rollup of what the annotations say about a file, unit by unit,
//! or about every annotated file of a directory — within a token budget
//! (spec 003, Feature 08).
//!
//! ```no_run
//! use ultragit_read::{Answer, Format, GitReadPipeline};
//! use ultragit_read::summary::{SummaryQuery, summary};
//!
//! let pipeline = GitReadPipeline::open(".")?;
//! let output = summary(&pipeline, &SummaryQuery::path("src/"), Format::Markdown)?;
//! print!("{}", output.render(Format::Markdown));
//! # Ok::<(), ultragit_read::ReadError>(())
//! ```
//!
//! Per unit (regions grouped by anchor, `Client::connect` and `connect`
//! together): the latest intent and its commit, the constraints of every
//! annotation (author constraints first, newest first, each text once), the
//! distinct risk notes, and how many annotations touched it. A file's
//! annotations are those of the annotated commits HEAD's history holds, on
//! any parent, whose notes have regions in it under today's name or a former
//! one — found through the notes index, as `history` finds them (see
//! `lineage`): one walk and at most one `git log` for any number
//! of files; notes read in-process. A directory lists its tracked files that
//! have annotations (at most 2,000 files are looked at). With `max_tokens`, the units
//! with the fewest annotations are left out first until the rendering in the
//! chosen format fits (bytes / 4, as `read` estimates), and `trimmed` says how
//! many were.

use std::collections::HashMap;
use std::fmt::Write as _;

use gitctx::ObjectId;
use serde::{Deserialize, Serialize};
use ultragit_schema::{Annotation, ConstraintSource};

use crate::deps::{Answer, count, day, short, warnings_markdown, warnings_pretty};
use crate::error::ReadError;
use crate::history::annotations;
use crate::index::{Annotating, DepsIndex};
use crate::lineage;
use crate::pipeline::{GitReadPipeline, NOTES_REF};
use crate::query::Format;

/// The `$schema` of a [`SummaryOutput`].
pub const SUMMARY_SCHEMA_V1: &str = "ultragit-summary/v1";

/// The most files of a directory summarized.
pub(crate) const MAX_FILES: usize = 2_000;

/// What `summary` is asked: a file or a directory, and a budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryQuery {
    /// A file at HEAD, or a directory with tracked files (`.` or `` for all).
    pub path: String,
    pub max_tokens: Option<u32>,
}

impl SummaryQuery {
    pub fn path(path: impl Into<String>) -> SummaryQuery {
        SummaryQuery {
            path: path.into(),
            max_tokens: None,
        }
    }

    /// The same query within `max_tokens`. Part of the published API (as
    /// [`crate::ReadQuery`]'s builders are); our callers set the field.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> SummaryQuery {
        self.max_tokens = Some(max_tokens);
        self
    }
}

/// The answer of [`summary`] (`ultragit-summary/v1`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryOutput {
    #[serde(rename = "$schema")]
    pub schema: String,
    pub query: SummaryQuery,
    /// `file` or `directory`.
    pub kind: String,
    /// The files with annotations, by path.
    pub files: Vec<FileSummary>,
    /// Set when units were left out to fit `max_tokens`.
    pub trimmed: Option<SummaryTrim>,
    pub warnings: Vec<String>,
}

/// One file's rollup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSummary {
    pub file: String,
    /// Annotated commits in the file's history.
    pub annotations: u32,
    /// Its units, most annotated first.
    pub units: Vec<UnitSummary>,
}

/// One unit's rollup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitSummary {
    /// The anchor as the newest annotation names it.
    pub anchor: String,
    pub latest_intent: String,
    pub latest_commit: String,
    /// The latest commit's committer date (RFC 3339).
    pub latest_date: String,
    /// Author constraints first, then inferred ones; newest first, each once.
    pub constraints: Vec<SummaryConstraint>,
    pub risk_notes: Vec<String>,
    /// Annotated regions of this unit, over all commits.
    pub annotations: u32,
}

impl UnitSummary {
    /// `2 annotations`, the short latest commit and its day.
    fn stamp(&self) -> (String, &str, &str) {
        (
            count(self.annotations as usize, "annotation", "annotations"),
            short(&self.latest_commit),
            day(Some(&self.latest_date)),
        )
    }
}

/// A constraint and who stated it (`author` or `inferred`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryConstraint {
    pub text: String,
    pub source: String,
}

/// What trimming to the budget left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryTrim {
    pub units_left_out: u32,
    pub files_left_out: u32,
    pub max_tokens: u32,
}

/// The rollup of `query.path`; `format` is the rendering the budget applies
/// to.
pub fn summary(
    pipeline: &GitReadPipeline,
    query: &SummaryQuery,
    format: Format,
) -> Result<SummaryOutput, ReadError> {
    let path = query.path.trim_start_matches("./").trim_end_matches('/');
    let repo = pipeline.repo();
    let mut warnings = Vec::new();
    let is_file = !path.is_empty() && crate::deps::file_at_head(pipeline, path).is_ok();
    let files: Vec<String> = if is_file {
        vec![path.to_owned()]
    } else {
        let dir = if path == "." { "" } else { path };
        let mut tracked = repo.tracked_under(dir)?;
        if tracked.is_empty() {
            return Err(ReadError::FileNotFound {
                path: query.path.clone(),
            });
        }
        if tracked.len() > MAX_FILES {
            warnings.push(format!(
                "{} files under {}; only the first {MAX_FILES} are summarized",
                tracked.len(),
                query.path
            ));
            tracked.truncate(MAX_FILES);
        }
        tracked
    };
    let notes = FileNotes::gather(pipeline, path, is_file, &files, &mut warnings)?;
    let mut summaries = Vec::new();
    for file in &files {
        let summary = file_summary(pipeline, file, &notes)?;
        if is_file || summary.annotations > 0 {
            summaries.push(summary);
        }
    }
    let mut output = SummaryOutput {
        schema: SUMMARY_SCHEMA_V1.to_owned(),
        query: SummaryQuery {
            path: path.to_owned(),
            max_tokens: query.max_tokens,
        },
        kind: if is_file { "file" } else { "directory" }.to_owned(),
        files: summaries,
        trimmed: None,
        warnings,
    };
    if let Some(budget) = query.max_tokens {
        trim(&mut output, budget, format);
    }
    Ok(output)
}

/// The annotated commits of the files summarized that HEAD's history holds,
/// with their notes: one notes index, at most one `git log` for former names
/// and one walk for the history, whatever the number of files.
struct FileNotes {
    /// For each file with annotations: its names (today's first) and its
    /// annotated commits, newest first.
    files: HashMap<String, (Vec<String>, Vec<ObjectId>)>,
    notes: HashMap<ObjectId, Annotation>,
}

impl FileNotes {
    fn gather(
        pipeline: &GitReadPipeline,
        path: &str,
        is_file: bool,
        files: &[String],
        warnings: &mut Vec<String>,
    ) -> Result<FileNotes, ReadError> {
        let repo = pipeline.repo();
        let head = repo.resolve_commit("HEAD")?;
        let index = DepsIndex::open(repo, NOTES_REF)?;
        let region_files = index.region_files();
        let gone = lineage::gone_at(repo, &head.to_hex(), &region_files)?;
        // Where renames may end: the file, the directory, or (for the whole
        // repository) its top-level entries.
        let targets: Vec<String> = if is_file || !path.is_empty() && path != "." {
            vec![path.to_owned()]
        } else {
            let mut tops: Vec<String> = files
                .iter()
                .map(|f| f.split('/').next().unwrap_or(f).to_owned())
                .collect();
            tops.sort();
            tops.dedup();
            tops
        };
        let mut former = lineage::former_names(repo, &head.to_hex(), &targets, &gone)?;
        let annotated: std::collections::HashSet<&str> = region_files.iter().copied().collect();
        let mut listed: Vec<Annotating<'_>> = Vec::new();
        let mut names_of: HashMap<String, Vec<String>> = HashMap::new();
        for file in files {
            let mut names = vec![file.clone()];
            names.extend(former.remove(file).unwrap_or_default());
            if !names.iter().any(|n| annotated.contains(n.as_str())) {
                continue;
            }
            let wanted: Vec<&str> = names.iter().map(String::as_str).collect();
            listed.extend(index.annotating(&wanted, &[]));
            names_of.insert(file.clone(), names);
        }
        listed.sort_by_key(|a| a.commit);
        listed.dedup_by_key(|a| a.commit);
        let reached: std::collections::HashSet<ObjectId> = lineage::reached(repo, head, listed)?
            .into_iter()
            .map(|a| a.commit)
            .collect();
        let mut out = HashMap::new();
        for (file, names) in names_of {
            let wanted: Vec<&str> = names.iter().map(String::as_str).collect();
            let commits: Vec<ObjectId> = index
                .annotating(&wanted, &[])
                .into_iter()
                .map(|a| a.commit)
                .filter(|c| reached.contains(c))
                .collect();
            out.insert(file, (names, commits));
        }
        let ids: Vec<ObjectId> = reached.into_iter().collect();
        let notes = annotations(pipeline, &ids, warnings)?;
        Ok(FileNotes { files: out, notes })
    }
}

fn file_summary(
    pipeline: &GitReadPipeline,
    file: &str,
    notes: &FileNotes,
) -> Result<FileSummary, ReadError> {
    let mut units: Vec<UnitSummary> = Vec::new();
    let mut by_key: HashMap<String, usize> = HashMap::new();
    let mut annotated = 0;
    let (names, commits) = match notes.files.get(file) {
        Some((names, commits)) => (names.as_slice(), commits.as_slice()),
        None => (&[][..], &[][..]),
    };
    // Newest first: the first region of a unit is its latest.
    for commit in commits {
        let Some(note) = notes.notes.get(commit) else {
            continue;
        };
        annotated += 1;
        let date = pipeline
            .repo()
            .commit_info_by_id(*commit)?
            .committer
            .time
            .to_rfc3339();
        for region in note.regions.iter().filter(|r| names.contains(&r.file)) {
            let key = crate::history::unit_key(&region.ast_anchor.name);
            let at = *by_key.entry(key).or_insert_with(|| {
                units.push(UnitSummary {
                    anchor: region.ast_anchor.name.clone(),
                    latest_intent: region.intent.clone(),
                    latest_commit: commit.to_hex(),
                    latest_date: date.clone(),
                    constraints: Vec::new(),
                    risk_notes: Vec::new(),
                    annotations: 0,
                });
                units.len() - 1
            });
            let unit = &mut units[at];
            unit.annotations += 1;
            for c in &region.constraints {
                if !unit.constraints.iter().any(|k| k.text == c.text) {
                    unit.constraints.push(SummaryConstraint {
                        text: c.text.clone(),
                        source: c.source.as_str().to_owned(),
                    });
                }
            }
            if let Some(risk) = &region.risk_notes
                && !unit.risk_notes.contains(risk)
            {
                unit.risk_notes.push(risk.clone());
            }
        }
    }
    let author = ConstraintSource::Author.as_str();
    for unit in &mut units {
        // Stable: newest first within each source.
        unit.constraints.sort_by_key(|c| c.source != author);
    }
    units.sort_by(|a, b| {
        b.annotations
            .cmp(&a.annotations)
            .then(a.anchor.cmp(&b.anchor))
    });
    Ok(FileSummary {
        file: file.to_owned(),
        annotations: annotated,
        units,
    })
}

/// Leaves out the least annotated units (then files left empty) until the
/// rendering fits `budget` tokens; keeps as many as fit (binary search).
fn trim(output: &mut SummaryOutput, budget: u32, format: Format) {
    let fits = |o: &SummaryOutput| o.render(format).len().div_ceil(4) <= budget as usize;
    if fits(output) {
        return;
    }
    // Every unit, most annotated first: (annotations, file index, unit index).
    let mut ranked: Vec<(u32, usize, usize)> = output
        .files
        .iter()
        .enumerate()
        .flat_map(|(f, file)| {
            file.units
                .iter()
                .enumerate()
                .map(move |(u, unit)| (unit.annotations, f, u))
        })
        .collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then((a.1, a.2).cmp(&(b.1, b.2))));
    let total_units = ranked.len();
    let total_files = output.files.len();
    let keep = |n: usize| -> SummaryOutput {
        let mut kept = output.clone();
        let wanted: std::collections::HashSet<(usize, usize)> =
            ranked.iter().take(n).map(|&(_, f, u)| (f, u)).collect();
        for (f, file) in kept.files.iter_mut().enumerate() {
            let mut u = 0;
            file.units.retain(|_| {
                u += 1;
                wanted.contains(&(f, u - 1))
            });
        }
        kept.files.retain(|file| !file.units.is_empty());
        kept.trimmed = Some(SummaryTrim {
            units_left_out: u32::try_from(total_units - n).unwrap_or(u32::MAX),
            files_left_out: u32::try_from(total_files - kept.files.len()).unwrap_or(u32::MAX),
            max_tokens: budget,
        });
        kept
    };
    let (mut low, mut high) = (0, total_units);
    while low < high {
        let mid = (low + high).div_ceil(2);
        if fits(&keep(mid)) {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    let mut kept = keep(low);
    if !fits(&kept) {
        kept.warnings.push(format!(
            "Even without any unit the summary exceeds --max-tokens {budget}"
        ));
    }
    *output = kept;
}

impl Answer for SummaryOutput {
    fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn markdown(&self) -> String {
        let mut out = format!("# Summary of {}\n", display_path(&self.query.path));
        for file in &self.files {
            let commits = count(
                file.annotations as usize,
                "annotated commit",
                "annotated commits",
            );
            let _ = writeln!(out, "\n## {} ({commits})", file.file);
            for unit in &file.units {
                let (n, commit, date) = unit.stamp();
                let _ = writeln!(out, "\n### {} — {n} · {commit} · {date}", unit.anchor);
                let _ = writeln!(out, "**Intent:** {}", unit.latest_intent);
                if !unit.constraints.is_empty() {
                    out.push_str("**Constraints:**\n");
                    for c in &unit.constraints {
                        let _ = writeln!(out, "- {} ({})", c.text, c.source);
                    }
                }
                for risk in &unit.risk_notes {
                    let _ = writeln!(out, "**Risk:** {risk}");
                }
            }
        }
        if self.files.is_empty() {
            out.push_str("\nNo annotations.\n");
        }
        if let Some(t) = &self.trimmed {
            let _ = writeln!(
                out,
                "\n> Trimmed to {} tokens: {} and {} left out.",
                t.max_tokens,
                count(t.units_left_out as usize, "unit", "units"),
                count(t.files_left_out as usize, "file", "files")
            );
        }
        warnings_markdown(&mut out, &self.warnings);
        out
    }

    fn pretty(&self) -> String {
        let mut out = format!("Summary of {}\n", display_path(&self.query.path));
        for file in &self.files {
            let _ = writeln!(
                out,
                "\n{}  ({} annotated commits)",
                file.file, file.annotations
            );
            for unit in &file.units {
                let (n, commit, date) = unit.stamp();
                let _ = writeln!(out, "  {}  ({n}, latest {commit} {date})", unit.anchor);
                let _ = writeln!(out, "    intent:  {}", unit.latest_intent);
                for c in &unit.constraints {
                    let _ = writeln!(out, "    - {} ({})", c.text, c.source);
                }
                for risk in &unit.risk_notes {
                    let _ = writeln!(out, "    risk:    {risk}");
                }
            }
        }
        if let Some(t) = &self.trimmed {
            let _ = writeln!(
                out,
                "\ntrimmed to {} tokens: {} units and {} files left out",
                t.max_tokens, t.units_left_out, t.files_left_out
            );
        }
        warnings_pretty(&mut out, &self.warnings);
        out
    }
}

fn display_path(path: &str) -> &str {
    if path.is_empty() { "." } else { path }
}
