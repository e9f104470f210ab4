//! `deps`: the annotated regions whose `semantic_dependencies` point at one
//! unit (spec 003, Feature 08), answered from the reverse dependency index
//! ([`DepsIndex`]), never by scanning notes.
//!
//! ```no_run
//! use ultragit_read::{Answer, Format, GitReadPipeline};
//! use ultragit_read::deps::{DepsQuery, deps};
//!
//! let pipeline = GitReadPipeline::open(".")?;
//! let output = deps(&pipeline, &DepsQuery::new("src/wire.rs", "encode"))?;
//! print!("{}", output.render(Format::Markdown));
//! # Ok::<(), ultragit_read::ReadError>(())
//! ```
//!
//! The anchor is resolved in today's outline when the file has a grammar
//! (`encode` finds `wire::encode`); a unit that no longer exists, or a file
//! without a grammar, is matched by the anchor as given (with a warning for the
//! former), so what depended on a removed unit can still be listed. A
//! dependency matches a unit exactly or unqualified (`Type::method` and
//! `method`). Each dependent region (file, anchor, nature, target) is listed
//! once, from the newest annotated commit that declares it, with how many
//! annotated commits declare it; a region's dependency on its own unit is left
//! out.
//!
//! **Renames.** A dependency names its target by the path the file had when
//! the note was written. Dependencies recorded under the file's former names
//! count too (`DepsIndex::former_names`): the target paths no file has at
//! HEAD that git's rename detection chains to the file by the renames any
//! commit of HEAD's history made among them, on every branch (one `git log`,
//! see `lineage`). That history is read only when the index names a
//! target path no file has at HEAD, so a repository whose dependencies all
//! name today's files pays nothing for it. A dependency found under a former name carries it
//! ([`Dependent::former_path`]). A name another file has at HEAD is that
//! file's: dependencies under it are never moved to the renamed one.
//!
//! Output: markdown (for models), versioned JSON (`ultragit-deps/v1`) and
//! pretty text; note text is untrusted, so markdown and pretty escape control
//! characters.

use std::collections::HashMap;
use std::fmt::Write as _;

use chrono::DateTime;
use gitctx::ObjectId;
use outline::{MatchKind, OutlineError};
use serde::{Deserialize, Serialize};
use ultragit_schema::Annotation;

use crate::error::ReadError;
use crate::index::{DepsIndex, IndexUpdate};
use crate::pipeline::{GitReadPipeline, NOTES_REF};
use crate::query::Format;

/// The `$schema` of a [`DepsOutput`].
pub const DEPS_SCHEMA_V1: &str = "ultragit-deps/v1";

/// What `deps` is asked: one unit of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DepsQuery {
    /// Repository-relative path of a file at HEAD.
    pub file: String,
    /// The unit: `encode`, `Client::connect`, …
    pub anchor: String,
}

impl DepsQuery {
    pub fn new(file: impl Into<String>, anchor: impl Into<String>) -> DepsQuery {
        DepsQuery {
            file: file.into(),
            anchor: anchor.into(),
        }
    }
}

/// The answer of [`deps`] (`ultragit-deps/v1`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DepsOutput {
    #[serde(rename = "$schema")]
    pub schema: String,
    pub query: DepsQuery,
    /// The units of today's outline the anchor resolved to (qualified names);
    /// empty when it was matched as given.
    pub units: Vec<String>,
    /// The dependent regions, newest annotated commit first.
    pub dependents: Vec<Dependent>,
    pub stats: DepsStats,
    pub warnings: Vec<String>,
}

/// One annotated region that depends on the unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dependent {
    /// The dependent region's file and anchor.
    pub file: String,
    pub anchor: String,
    /// What the dependency is, as the annotation says.
    pub nature: String,
    /// The anchor the dependency names (as written in the note).
    pub target_anchor: String,
    /// The newest annotated commit that declares it.
    pub commit: String,
    /// That commit's committer date (RFC 3339), when the commit is here.
    pub commit_date: Option<String>,
    /// The dependent region's intent in that annotation.
    pub intent: Option<String>,
    /// How many annotated commits declare this dependency.
    pub declarations: u32,
    /// The path the newest declaration names, when it is a former name of the
    /// file (the note was written before a rename); absent when it names the
    /// file as it is called today.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub former_path: Option<String>,
}

/// How the answer was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DepsStats {
    /// Annotated commits the index covers.
    pub annotated_commits: u32,
    /// `fresh`, `incremental`, `cold` or `no_notes`: how the index got up to
    /// date with the notes ref.
    pub index: String,
}

/// The annotated regions that depend on `query`'s unit.
pub fn deps(pipeline: &GitReadPipeline, query: &DepsQuery) -> Result<DepsOutput, ReadError> {
    let file = query.file.trim_start_matches("./");
    let anchor = query.anchor.trim();
    if anchor.is_empty() {
        return Err(ReadError::InvalidArgument("The anchor is empty".to_owned()));
    }
    let repo = pipeline.repo();
    let mut warnings = Vec::new();
    let units = resolve_units(pipeline, file, anchor, &mut warnings)?;
    let index = DepsIndex::open(repo, NOTES_REF)?;
    let former = index.former_names(repo, file, |gone| {
        let gone: Vec<String> = gone.iter().map(|g| (*g).to_owned()).collect();
        let head = repo.resolve_commit("HEAD")?.to_hex();
        Ok(
            crate::lineage::former_names(repo, &head, &[file.to_owned()], &gone)?
                .remove(file)
                .unwrap_or_default(),
        )
    })?;
    let names: Vec<&str> = if units.is_empty() {
        vec![anchor]
    } else {
        units.iter().map(String::as_str).collect()
    };
    // Newest first already: the first of each key is its newest declaration.
    let mut dependents: Vec<Dependent> = Vec::new();
    let mut commits: Vec<ObjectId> = Vec::new();
    let mut position: HashMap<(String, String, String, String), usize> = HashMap::new();
    let mut found = index.dependents(file, None);
    for name in &former {
        found.extend(index.dependents(name, None));
    }
    if !former.is_empty() {
        // Newest first across the names, as `dependents` orders each.
        found.sort_by_key(|d| std::cmp::Reverse((d.commit_time, d.commit)));
    }
    for dep in found {
        let ours = names
            .iter()
            .any(|name| crate::index::anchors_match(dep.target_anchor, name));
        let own_file = dep.source_file == file || former.iter().any(|f| f == dep.source_file);
        let own_unit = own_file
            && names
                .iter()
                .any(|name| outline::match_name(name, dep.source_anchor) == Some(MatchKind::Exact));
        if !ours || own_unit {
            continue;
        }
        let key = (
            dep.source_file.to_owned(),
            dep.source_anchor.to_owned(),
            dep.nature.to_owned(),
            dep.target_anchor.to_owned(),
        );
        if let Some(&at) = position.get(&key) {
            dependents[at].declarations += 1;
            continue;
        }
        position.insert(key, dependents.len());
        commits.push(dep.commit);
        dependents.push(Dependent {
            file: dep.source_file.to_owned(),
            anchor: dep.source_anchor.to_owned(),
            nature: dep.nature.to_owned(),
            target_anchor: dep.target_anchor.to_owned(),
            commit: dep.commit.to_hex(),
            commit_date: dep
                .commit_time
                .and_then(|t| DateTime::from_timestamp(t, 0))
                .map(|t| t.to_rfc3339()),
            intent: None,
            declarations: 1,
            former_path: (dep.target_file != file).then(|| dep.target_file.to_owned()),
        });
    }
    add_intents(pipeline, &commits, &mut dependents)?;
    if index.update() == IndexUpdate::NoNotes {
        warnings.push(crate::pipeline::NO_NOTES_HINT.to_owned());
    }
    Ok(DepsOutput {
        schema: DEPS_SCHEMA_V1.to_owned(),
        query: DepsQuery::new(file, anchor),
        units,
        dependents,
        stats: DepsStats {
            annotated_commits: u32::try_from(index.annotated_commits()).unwrap_or(u32::MAX),
            index: update_name(index.update()).to_owned(),
        },
        warnings,
    })
}

/// The qualified names `anchor` resolves to in today's outline of `file`;
/// empty (match the anchor as given) without a grammar or when no unit has
/// the name any more (with a warning).
pub(crate) fn resolve_units(
    pipeline: &GitReadPipeline,
    file: &str,
    anchor: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<String>, ReadError> {
    let bytes = file_at_head(pipeline, file)?;
    let units = match outline::outline(file, &String::from_utf8_lossy(&bytes)) {
        Ok(units) => units,
        Err(OutlineError::NoGrammar { .. }) => return Ok(Vec::new()),
        Err(err) => {
            warnings.push(format!(
                "Could not outline {file} ({err}); matching '{anchor}' as given"
            ));
            return Ok(Vec::new());
        }
    };
    match outline::resolve_anchor(&units, anchor) {
        // A fuzzy match would list what depends on another unit.
        Ok(resolution) if !matches!(resolution.match_kind, MatchKind::Fuzzy { .. }) => {
            Ok(resolution
                .units
                .iter()
                .map(|u| u.qualified_name.clone())
                .collect())
        }
        _ => {
            warnings.push(format!(
                "{file}: no unit matches '{anchor}' today; dependencies naming it are listed"
            ));
            Ok(Vec::new())
        }
    }
}

/// The contents of `file` at HEAD, or [`ReadError::FileNotFound`].
pub(crate) fn file_at_head(pipeline: &GitReadPipeline, file: &str) -> Result<Vec<u8>, ReadError> {
    match pipeline.repo().file_at_opt("HEAD", file) {
        Ok(Some(bytes)) => Ok(bytes),
        _ => Err(ReadError::FileNotFound {
            path: file.to_owned(),
        }),
    }
}

/// Fills in each dependent's intent from its commit's note (read in-process).
fn add_intents(
    pipeline: &GitReadPipeline,
    commits: &[ObjectId],
    dependents: &mut [Dependent],
) -> Result<(), ReadError> {
    let mut wanted = commits.to_vec();
    wanted.sort();
    wanted.dedup();
    let read = pipeline.repo().notes(NOTES_REF)?.read_many(&wanted)?;
    let notes: HashMap<String, Annotation> = read
        .found
        .into_iter()
        .filter_map(|(id, text)| Some((id.to_hex(), Annotation::from_json(&text).ok()?)))
        .collect();
    for dependent in dependents {
        dependent.intent = notes.get(&dependent.commit).and_then(|note| {
            note.regions
                .iter()
                .find(|r| r.file == dependent.file && r.ast_anchor.name == dependent.anchor)
                .map(|r| r.intent.clone())
        });
    }
    Ok(())
}

fn update_name(update: IndexUpdate) -> &'static str {
    match update {
        IndexUpdate::Fresh => "fresh",
        IndexUpdate::Incremental { .. } => "incremental",
        IndexUpdate::Cold { .. } => "cold",
        IndexUpdate::NoNotes => "no_notes",
    }
}

/// One line of JSON and a newline.
fn json_line<T: Serialize + ?Sized>(value: &T) -> String {
    let mut text = serde_json::to_string(value).unwrap_or_else(|_| "{}".to_owned());
    text.push('\n');
    text
}

/// `text` with every control character a terminal would act on escaped: note
/// text is untrusted ([`safe_io::term::sanitize`]).
pub(crate) fn terminal_safe(text: String) -> String {
    match safe_io::term::sanitize(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(clean) => clean,
    }
}

/// `abc1234` of a commit id.
pub(crate) fn short(sha: &str) -> &str {
    &sha[..sha.len().min(7)]
}

/// `2024-01-31` of an RFC 3339 time, `?` without one.
pub(crate) fn day(time: Option<&str>) -> &str {
    time.and_then(|t| t.get(..10)).unwrap_or("?")
}

/// `1 annotated region`, `2 annotated regions`.
pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The warnings, as `read` shows them in markdown.
pub(crate) fn warnings_markdown(out: &mut String, warnings: &[String]) {
    for warning in warnings {
        let _ = writeln!(out, "\n> **Warning:** {warning}");
    }
}

/// Pretty text's warnings, one line each.
pub(crate) fn warnings_pretty(out: &mut String, warnings: &[String]) {
    for warning in warnings {
        let _ = writeln!(out, "warning: {warning}");
    }
}

/// An answer of `deps`, `history` or `summary` ([`DepsOutput`],
/// [`crate::history::HistoryOutput`], [`crate::summary::SummaryOutput`]): what
/// the binary and the MCP server render.
pub trait Answer: Serialize {
    /// Markdown for models, as written (see [`Answer::render`]).
    fn markdown(&self) -> String;
    /// Plain text for people, as written (see [`Answer::render`]).
    fn pretty(&self) -> String;
    /// What the answer warns about (also in its renderings).
    fn warnings(&self) -> &[String];

    /// The answer in `format`: one line of JSON, or markdown or pretty text
    /// with every control character a terminal would act on escaped (note
    /// text is untrusted).
    fn render(&self, format: Format) -> String {
        match format {
            Format::Json => json_line(self),
            Format::Markdown => terminal_safe(self.markdown()),
            Format::Pretty => terminal_safe(self.pretty()),
        }
    }
}

impl Answer for DepsOutput {
    fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn markdown(&self) -> String {
        let output = self;
        let mut out = String::new();
        let q = &output.query;
        let _ = writeln!(out, "# Dependencies on {} — {}", q.file, q.anchor);
        if !output.units.is_empty() && output.units != [q.anchor.clone()] {
            let _ = writeln!(out, "\nResolved to `{}`.", output.units.join("`, `"));
        }
        let _ = writeln!(
            out,
            "\n{} on it ({} indexed).",
            count(
                output.dependents.len(),
                "annotated region depends",
                "annotated regions depend"
            ),
            count(
                output.stats.annotated_commits as usize,
                "annotated commit",
                "annotated commits"
            )
        );
        for (i, d) in output.dependents.iter().enumerate() {
            if i > 0 {
                out.push_str("\n---\n");
            }
            let _ = writeln!(out, "\n## {} — {}", d.file, d.anchor);
            let _ = writeln!(
                out,
                "{} · {}{}",
                short(&d.commit),
                day(d.commit_date.as_deref()),
                if d.declarations > 1 {
                    format!(" · declared in {} annotations", d.declarations)
                } else {
                    String::new()
                }
            );
            let _ = writeln!(out, "**Nature:** {}", d.nature);
            if let Some(intent) = &d.intent {
                let _ = writeln!(out, "**Intent:** {intent}");
            }
            let _ = writeln!(
                out,
                "**Depends on:** `{}`{}",
                d.target_anchor,
                d.former_path
                    .as_ref()
                    .map_or(String::new(), |p| format!(" (as `{p}`, before a rename)"))
            );
        }
        warnings_markdown(&mut out, &output.warnings);
        out
    }

    fn pretty(&self) -> String {
        let output = self;
        let mut out = String::new();
        let q = &output.query;
        let _ = writeln!(
            out,
            "Dependencies on {} {}: {}",
            q.file,
            q.anchor,
            count(output.dependents.len(), "region", "regions")
        );
        for d in &output.dependents {
            let when = format!("{} {}", short(&d.commit), day(d.commit_date.as_deref()));
            let _ = writeln!(out, "\n  {} {}  ({when})", d.file, d.anchor);
            let _ = writeln!(out, "    nature:  {}", d.nature);
            if let Some(intent) = &d.intent {
                let _ = writeln!(out, "    intent:  {intent}");
            }
            let _ = writeln!(
                out,
                "    target:  {}{}",
                d.target_anchor,
                d.former_path
                    .as_ref()
                    .map_or(String::new(), |p| format!(" (as {p}, before a rename)"))
            );
            if d.declarations > 1 {
                let _ = writeln!(out, "    declared in {} annotations", d.declarations);
            }
        }
        warnings_pretty(&mut out, &output.warnings);
        out
    }
}
