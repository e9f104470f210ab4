//! `ultragit_flag` and `ultragit_correct`: a coding agent that finds an
//! annotation wrong says so, the way `ultragit flag` and `ultragit correct` do
//! (`ultragit_notes::correct`; the correction is appended to the commit's
//! note, the original annotation is never rewritten, and `read` then shows the
//! correction and lowers a flagged region's confidence). The author recorded
//! is the server's git identity: `GIT_AUTHOR_NAME`/`GIT_AUTHOR_EMAIL` from the
//! environment the server was started with ([`crate::Server::with_identity_env`]),
//! else the repository's `user.name`/`user.email`.
//!
//! The text is the one line the CLI prints; the `structuredContent` is the
//! stored correction (`{"commit", "correction", "regions"}`). A correction the
//! library refuses (no note, no such region, a change that changes nothing, a
//! `set` on a list field) is a tool error with its message.

use gitctx::Repo;
use serde::Deserialize;
use tool_def::ToolDef;
use tool_def::schema::Schema;
use ultragit_notes::correct::{self, Change, CorrectError, Stored};
use ultragit_schema::correction::MAX_CORRECTION_TEXT;
use ultragit_schema::{CorrectionField, CorrectionKind, CorrectionTarget};

use crate::Scope;
use crate::tool::{Bounds, McpTool, ToolError, ToolOutput, repo_relative};

/// The longest commit, file or anchor accepted (bytes).
const MAX_NAME: usize = 4096;

/// The arguments of `ultragit_flag`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FlagArgs {
    /// The annotated commit (any revision: a full or abbreviated id, `HEAD~2`).
    pub(crate) commit: String,
    /// Only the regions of this file (relative to the repository root);
    /// without it, every region of the annotation.
    pub(crate) file: Option<String>,
    /// Only this unit of `file` (its anchor as the annotation names it, e.g.
    /// `Client::connect`).
    pub(crate) anchor: Option<String>,
    /// Why the annotation is doubtful.
    pub(crate) reason: String,
}

/// `ultragit_flag`.
pub(crate) const FLAG: McpTool<FlagArgs> = ToolDef {
    name: "ultragit_flag",
    description: "When code contradicts what ultragit_read says about \
            it, flag the annotation: the commit, optionally the file and the unit, and the \
            reason. The flag is appended to the commit's note (nothing is rewritten) and \
            travels with it; later reads show the flag and halve the region's confidence.",
    schema: flag_schema,
    run: |scope, args, ()| args.run(scope),
};

/// The arguments' schema of `ultragit_flag`.
fn flag_schema() -> Schema {
    Schema::object()
        .required(
            "commit",
            Schema::string().min_length(1).max_length(4096).description(
                "The annotated commit (any revision: a full or abbreviated id, \
                 `HEAD~2`).",
            ),
        )
        .optional(
            "file",
            Schema::string().min_length(1).max_length(4096).description(
                "Only the regions of this file (relative to the repository root); \
                 without it, every region of the annotation.",
            ),
        )
        .optional(
            "anchor",
            Schema::string().min_length(1).max_length(4096).description(
                "Only this unit of `file` (its anchor as the annotation names it, \
                 e.g. `Client::connect`).",
            ),
        )
        .required(
            "reason",
            Schema::string()
                .min_length(1)
                .max_length(4096)
                .description("Why the annotation is doubtful."),
        )
}

impl FlagArgs {
    /// Runs the tool on arguments that matched its schema.
    fn run(self, scope: &Scope) -> Result<ToolOutput, ToolError> {
        let tool = FLAG.name;
        bounded(tool, &self.commit, &self.reason, None)?;
        let file = self.file.map(|f| repo_relative(tool, &f)).transpose()?;
        if let Some(anchor) = &self.anchor {
            Bounds::of(tool).text("anchor", anchor, MAX_NAME)?;
        }
        let target = CorrectionTarget {
            file,
            anchor: self.anchor,
        };
        store(scope, |repo, author| {
            correct::flag(repo, &self.commit, target, &self.reason, author)
        })
    }
}

/// How `ultragit_correct` changes the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Operation {
    /// Replace a text field (`intent`, `reasoning`, `risk_notes`).
    Set,
    /// Add an entry to a list field (`constraints`, `tags`).
    Add,
    /// Remove an entry (its exact text) from a list field.
    Remove,
}

/// The fields a correction may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Field {
    /// What the unit is for (text).
    Intent,
    /// Why it is built this way (text).
    Reasoning,
    /// Its risks (text).
    RiskNotes,
    /// What must stay true (list).
    Constraints,
    /// Its tags (list).
    Tags,
}

/// The arguments of `ultragit_correct`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CorrectArgs {
    /// The annotated commit (any revision).
    pub(crate) commit: String,
    /// The region's file, relative to the repository root.
    pub(crate) file: String,
    /// The region's unit, as the annotation names it (e.g. `Client::connect`).
    pub(crate) anchor: String,
    /// The field to correct.
    pub(crate) field: Field,
    /// `set` for intent, reasoning and risk_notes; `add` or `remove` for
    /// constraints and tags.
    pub(crate) operation: Operation,
    /// The new text (`set`), the entry to add, or the exact entry to remove.
    pub(crate) value: String,
    /// Why the annotation was wrong.
    pub(crate) reason: String,
}

/// `ultragit_correct`.
pub(crate) const CORRECT: McpTool<CorrectArgs> = ToolDef {
    name: "ultragit_correct",
    description: "Correct what an annotation records about one unit: \
            set its intent, reasoning or risk_notes, or add or remove one of its constraints \
            or tags, with the reason. The correction is appended to the commit's note (the \
            original is never rewritten) and travels with it; later reads show the corrected \
            text, marked as corrected.",
    schema: correct_schema,
    run: |scope, args, ()| args.run(scope),
};

/// The arguments' schema of `ultragit_correct`.
fn correct_schema() -> Schema {
    Schema::object()
        .required(
            "commit",
            Schema::string()
                .min_length(1)
                .max_length(4096)
                .description("The annotated commit (any revision)."),
        )
        .required(
            "file",
            Schema::string()
                .min_length(1)
                .max_length(4096)
                .description("The region's file, relative to the repository root."),
        )
        .required(
            "anchor",
            Schema::string().min_length(1).max_length(4096).description(
                "The region's unit, as the annotation names it (e.g. \
                 `Client::connect`).",
            ),
        )
        .required(
            "field",
            Schema::string()
                .one_of(["intent", "reasoning", "risk_notes", "constraints", "tags"])
                .description("The field to correct."),
        )
        .required(
            "operation",
            Schema::string()
                .one_of(["set", "add", "remove"])
                .description(
                    "`set` for intent, reasoning and risk_notes; `add` or `remove` \
                     for constraints and tags.",
                ),
        )
        .required(
            "value",
            Schema::string().min_length(1).max_length(4096).description(
                "The new text (`set`), the entry to add, or the exact entry to \
                 remove.",
            ),
        )
        .required(
            "reason",
            Schema::string()
                .min_length(1)
                .max_length(4096)
                .description("Why the annotation was wrong."),
        )
}

impl CorrectArgs {
    /// Runs the tool on arguments that matched its schema.
    fn run(self, scope: &Scope) -> Result<ToolOutput, ToolError> {
        let tool = FLAG.name;
        bounded(tool, &self.commit, &self.reason, Some(&self.value))?;
        Bounds::of(tool).text("anchor", &self.anchor, MAX_NAME)?;
        let target = CorrectionTarget::unit(&repo_relative(tool, &self.file)?, &self.anchor);
        let field = match self.field {
            Field::Intent => CorrectionField::Intent,
            Field::Reasoning => CorrectionField::Reasoning,
            Field::RiskNotes => CorrectionField::RiskNotes,
            Field::Constraints => CorrectionField::Constraints,
            Field::Tags => CorrectionField::Tags,
        };
        let kind = match self.operation {
            Operation::Set => CorrectionKind::Set,
            Operation::Add => CorrectionKind::Add,
            Operation::Remove => CorrectionKind::Remove,
        };
        let change = Change {
            field,
            kind,
            value: self.value,
        };
        store(scope, |repo, author| {
            correct::correct(repo, &self.commit, target, &change, &self.reason, author)
        })
    }
}

/// The commit, the reason and the value within bounds.
fn bounded(tool: &str, commit: &str, reason: &str, value: Option<&str>) -> Result<(), ToolError> {
    let bounds = Bounds::of(tool);
    bounds.text("commit", commit, MAX_NAME)?;
    bounds.text("reason", reason, MAX_CORRECTION_TEXT)?;
    value.map_or(Ok(()), |v| bounds.text("value", v, MAX_CORRECTION_TEXT))
}

/// Opens the served repository, names the author and runs `write`; renders
/// what was stored.
fn store(
    scope: &Scope,
    write: impl FnOnce(&Repo, &str) -> Result<Stored, CorrectError>,
) -> Result<ToolOutput, ToolError> {
    let failed = |err: CorrectError| ToolError::new("correction", err.to_string());
    let repo =
        Repo::discover(&scope.root).map_err(|err| ToolError::new("repository", err.to_string()))?;
    let author = correct::git_identity(&repo, |name| scope.identity_env(name)).map_err(failed)?;
    let stored = write(&repo, &author).map_err(failed)?;
    let structured =
        serde_json::to_value(&stored).map_err(|err| ToolError::internal("correction", &err))?;
    let text = safe_io::term::sanitize(&stored.describe()).into_owned() + "\n";
    Ok(ToolOutput::new(text, structured))
}
