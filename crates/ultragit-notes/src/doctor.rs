//! `ultragit doctor`: is this repository set up so that annotations are written,
//! survive rewrites, travel, and can be read? Each check is data — an id, a
//! status (ok, warn, fail), a one-line finding and the fix — so the binary only
//! prints them ([`Report::to_json`] is the stable JSON shape).
//!
//! The checks, in order (ids are stable):
//!
//! | id | what | status when wrong |
//! |---|---|---|
//! | `hooks.post-commit`, `hooks.post-rewrite`, `hooks.post-merge`, `hooks.post-checkout` (`hooks.pre-push` when sync is on) | the hook file exists in git's hooks directory, holds the `# >>> ultragit <hook> >>>` block, is executable, is not a link into the working tree, and the program its block runs exists and is executable; the block warms the read caches (`cache warm`, written by `init` in every block since the caches are carried forward) | fail (warn for a block without the warm-up, and for a `post-merge` or `post-checkout` hook that runs no block — those only make reads faster: rerun `ultragit init`) |
//! | `rewrite-config` | `notes.rewriteRef` covers `refs/notes/ultragit`; `notes.rewrite.amend`/`.rebase` not false. The rewrite mode (`notes.rewriteMode`, and [`REWRITE_MODE_ENV`] when the binary passes it) is reported, never required: it is the user's, one mode for every notes ref, and the `post-rewrite` hook rewrites our ref whatever it is; `ignore` is pointed out (older `init`s set it) | fail (warn for a mode git does not know) |
//! | `notes-ref` | `refs/notes/ultragit` exists | fail |
//! | `malformed-notes` | every note parses as `ultragit/v1` and is at most [`MAX_NOTE_BYTES`] | fail |
//! | `unreachable-notes` | no note sits on a commit that no ref reaches, unless a reachable note says it was carried over from it (`provenance.derived_from`, or a note git copied verbatim, whose `commit` still names the old commit) | warn (fix: `ultragit remap`) |
//! | `provider` | made by the caller ([`Inputs::provider`]; the writer's `ultragit_annotate::provider_check`): the provider configuration resolves (provider, model, base URL) and the key's variable is set; never a network call | fail (warn for ignored keys of the team file) |
//! | `sync` | with `ultragit.syncRemote` set: the remote exists and has the fetch refspec of the tracking ref; no fetch refspec force-writes the local notes ref | fail |
//! | `cache` | the size of `.git/ultragit/` and its caches (always safe to delete), and of the read pipeline's blame cache with how many of its entries lie outside the kept window (commits no read at HEAD or a branch tip can use, see `gitctx::blame_cache`); `--fix` prunes those; and of its outline cache (one entry per file read, bounded by itself) | warn past [`CACHE_WARN_BYTES`] |
//! | `commit-graph` | the repository's commit-graph has changed-path Bloom filters (`gitctx::commit_graph`), so `git blame` and `git log -- PATH` skip commits that do not touch the file; ok when `core.commitGraph` is false (the user's choice) or there are no commits | warn (fix: `git commit-graph write --reachable --changed-paths`) |
//! | `failures` | commits listed in `failed.log` that still have no note | warn |
//!
//! Sync that is not enabled is `ok` with a note, not a warning: a repository
//! used by one person, or without a remote, is a valid set-up.
//!
//! **`--fix`** ([`Options::fix`]) applies only the safe repairs: install or
//! repair (or bring up to date) a hook block (`setup::install_hook`, which keeps the hook's other
//! lines), set the rewrite configuration in `.git/config` (`notes.rewriteRef`,
//! `notes.rewrite.*`; never `notes.rewriteMode`), create the notes ref,
//! add the sync fetch refspec when `ultragit.syncRemote` is set, prune the
//! blame cache's entries outside the kept window (a cache), write a
//! commit-graph with changed-path Bloom filters (git replaces its graph
//! atomically; only history walks get faster). It never
//! removes a note, a hook line or a config value, and never edits a hook that
//! is a link. The repaired groups are checked again, so the report shows the
//! state after the repair; [`Report::fixed`] says what changed.
//!
//! **Cost:** notes are read in-process (one tree walk, batches of lookups);
//! reachability is one in-process walk from the annotated commits that stops
//! once everything left is reachable from a ref
//! ([`gitctx::Repo::unreachable_from_refs`]) — never a process per note.
//!
//! **Layout:** this file holds the report types, [`diagnose`] and the repairs;
//! each topic's checks are an `impl Doctor` in a submodule: `hooks`, `config`
//! (rewrite configuration), `notes`, `sync`, `state` (cache and
//! failures), `commit_graph`.
//!
//! **Trust:** hook files, `.git/config` and the user's config are trusted;
//! notes are untrusted data, only parsed and counted. Nothing here prints or
//! reads the environment: the binary passes the provider check and the value
//! of [`REWRITE_MODE_ENV`].

use std::path::Path;

use gitctx::{ObjectId, Repo};
use safe_io::Dir;
use serde::Serialize;

use crate::NOTES_REF;
use crate::error::NotesError;
use crate::setup::{self, HookChange};

mod commit_graph;
mod config;
mod hooks;
mod notes;
mod state;
mod sync;

/// How many commit ids a finding lists before "…".
pub const MAX_LISTED: usize = 5;

/// Past this size the caches under `.git/ultragit/` are a warning.
pub const CACHE_WARN_BYTES: u64 = 1024 * 1024 * 1024;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// Stable id, e.g. `hooks.post-commit`, `rewrite-config`.
    pub id: String,
    pub status: Status,
    /// One line: what was found.
    pub message: String,
    /// What to run or set to fix it; `None` when there is nothing to do.
    pub fix: Option<String>,
}

impl Check {
    fn new(id: impl Into<String>, status: Status, message: impl Into<String>) -> Check {
        Check {
            id: id.into(),
            status,
            message: message.into(),
            fix: None,
        }
    }

    pub fn ok(id: impl Into<String>, message: impl Into<String>) -> Check {
        Check::new(id, Status::Ok, message)
    }

    pub fn warn(id: impl Into<String>, message: impl Into<String>) -> Check {
        Check::new(id, Status::Warn, message)
    }

    pub fn fail(id: impl Into<String>, message: impl Into<String>) -> Check {
        Check::new(id, Status::Fail, message)
    }

    pub fn with_fix(mut self, fix: impl Into<String>) -> Check {
        self.fix = Some(fix.into());
        self
    }
}

/// Every check's outcome, in order, and what `--fix` changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub checks: Vec<Check>,
    /// One line per repair `--fix` made (or could not make).
    pub fixed: Vec<String>,
}

impl Report {
    /// True when no check failed (warnings are fine).
    pub fn ok(&self) -> bool {
        self.checks.iter().all(|c| c.status != Status::Fail)
    }

    /// Inserts `check` right after the check `id` (at the end when there is none).
    pub fn insert_after(&mut self, id: &str, check: Check) {
        let at = self
            .checks
            .iter()
            .position(|c| c.id == id)
            .map_or(self.checks.len(), |i| i + 1);
        self.checks.insert(at, check);
    }

    /// `{"checks":[{"id","status","message","fix"}…],"ok":bool,"fixed":[…]}`,
    /// indented; `fix` is `null` when there is nothing to do.
    pub fn to_json(&self) -> String {
        #[derive(Serialize)]
        struct Json<'a> {
            checks: &'a [Check],
            ok: bool,
            fixed: &'a [String],
        }
        let json = Json {
            checks: &self.checks,
            ok: self.ok(),
            fixed: &self.fixed,
        };
        let mut text = serde_json::to_string_pretty(&json).expect("the report serializes");
        text.push('\n');
        text
    }
}

/// The environment variable that overrides `notes.rewriteMode` for git; the
/// binary passes its value ([`Inputs::rewrite_mode_env`]).
pub const REWRITE_MODE_ENV: &str = "GIT_NOTES_REWRITE_MODE";

/// What the checks need from the binary.
pub struct Inputs<'a> {
    /// The `ultragit` executable a repaired hook runs.
    pub ultragit: &'a Path,
    /// The `provider` check, made by the writer's crate, which owns the
    /// provider configuration (`ultragit_annotate::provider_check`): this
    /// crate knows no model provider.
    pub provider: &'a dyn Fn(&Repo) -> Check,
    /// The value of [`REWRITE_MODE_ENV`] when it is set (git reads it too, and
    /// it wins over `notes.rewriteMode`).
    pub rewrite_mode_env: Option<&'a str>,
}

impl std::fmt::Debug for Inputs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inputs")
            .field("ultragit", &self.ultragit)
            .field("rewrite_mode_env", &self.rewrite_mode_env)
            .finish_non_exhaustive()
    }
}

/// Defaultable behaviour.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Apply the safe repairs (module docs).
    pub fix: bool,
}

/// Runs every check on `repo` (and, with [`Options::fix`], the safe repairs).
/// A check that cannot be made is a failed check saying why, never an error.
pub fn diagnose(repo: &Repo, inputs: &Inputs<'_>, options: &Options) -> Report {
    let doctor = Doctor { repo, inputs };
    let mut groups: Vec<(Group, Vec<Finding>)> =
        GROUPS.iter().map(|&g| (g, doctor.run(g))).collect();
    let mut fixed = Vec::new();
    if options.fix {
        for (group, findings) in &mut groups {
            let repairs: Vec<Repair> = findings
                .iter_mut()
                .filter_map(|f| f.repair.take())
                .collect();
            if repairs.is_empty() {
                continue;
            }
            for repair in &repairs {
                fixed.push(match doctor.apply(repair) {
                    Ok(done) => done,
                    Err(err) => format!("could not {}: {err}", repair.describe()),
                });
            }
            *findings = doctor.run(*group);
        }
    }
    Report {
        checks: groups
            .into_iter()
            .flat_map(|(_, findings)| findings.into_iter().map(|f| f.check))
            .collect(),
        fixed,
    }
}

/// Checks made together (they share what they read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    Hooks,
    Rewrite,
    Notes,
    Provider,
    Sync,
    Cache,
    CommitGraph,
    Failures,
}

const GROUPS: [Group; 8] = [
    Group::Hooks,
    Group::Rewrite,
    Group::Notes,
    Group::Provider,
    Group::Sync,
    Group::Cache,
    Group::CommitGraph,
    Group::Failures,
];

impl Group {
    /// The id a group's check gets when the group could not be checked at all.
    fn id(self) -> &'static str {
        match self {
            Group::Hooks => "hooks",
            Group::Rewrite => "rewrite-config",
            Group::Notes => "notes-ref",
            Group::Provider => "provider",
            Group::Sync => "sync",
            Group::Cache => "cache",
            Group::CommitGraph => "commit-graph",
            Group::Failures => "failures",
        }
    }
}

/// A check and the safe repair `--fix` may apply for it.
struct Finding {
    check: Check,
    repair: Option<Repair>,
}

impl From<Check> for Finding {
    fn from(check: Check) -> Self {
        Finding {
            check,
            repair: None,
        }
    }
}

/// A safe repair.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Repair {
    /// Install or rewrite the ultragit block of a hook.
    Hook { name: &'static str, line: String },
    /// Values for `.git/config`: `(key, value, multi-valued)`.
    Config(Vec<(String, String, bool)>),
    /// Create the notes ref.
    NotesRef,
    /// Remove the blame cache's entries outside the kept window.
    PruneBlameCache,
    /// Fold pending corrections into their notes.
    FoldCorrections,
    /// Write a commit-graph with changed-path Bloom filters.
    CommitGraph,
}

/// `key=value, …` of a config repair.
fn assignments(values: &[(String, String, bool)]) -> String {
    let pairs: Vec<String> = values.iter().map(|(k, v, _)| format!("{k}={v}")).collect();
    pairs.join(", ")
}

impl Repair {
    fn describe(&self) -> String {
        match self {
            Repair::Hook { name, .. } => format!("repair the {name} hook"),
            Repair::Config(values) => format!("set {}", assignments(values)),
            Repair::NotesRef => format!("create {NOTES_REF}"),
            Repair::PruneBlameCache => "prune the blame cache".to_owned(),
            Repair::FoldCorrections => "fold pending corrections into their notes".to_owned(),
            Repair::CommitGraph => "write a commit-graph".to_owned(),
        }
    }
}

struct Doctor<'a> {
    repo: &'a Repo,
    inputs: &'a Inputs<'a>,
}

impl Doctor<'_> {
    fn run(&self, group: Group) -> Vec<Finding> {
        let result = match group {
            Group::Hooks => self.hooks(),
            Group::Rewrite => self.rewrite().map(|f| vec![f]),
            Group::Notes => self.notes(),
            Group::Provider => Ok(vec![(self.inputs.provider)(self.repo).into()]),
            Group::Sync => self.sync_checks(),
            Group::Cache => self.cache().map(|f| vec![f]),
            Group::CommitGraph => self.commit_graph().map(|f| vec![f]),
            Group::Failures => self.failures().map(|c| vec![c.into()]),
        };
        result.unwrap_or_else(|err| {
            vec![Check::fail(group.id(), format!("could not be checked: {err}")).into()]
        })
    }

    fn apply(&self, repair: &Repair) -> Result<String, NotesError> {
        match repair {
            Repair::Hook { name, line } => {
                let hooks = self.repo.hooks_dir()?;
                std::fs::create_dir_all(&hooks).map_err(|e| NotesError::io(&hooks, e))?;
                let path = hooks.join(name);
                Ok(
                    match setup::install_hook(&Dir::open(&hooks)?, name, line)? {
                        HookChange::Created => {
                            format!("created the {name} hook {}", path.display())
                        }
                        HookChange::Added => format!(
                            "added the ultragit block to the {name} hook {} (its other lines are kept)",
                            path.display()
                        ),
                        HookChange::Updated => format!(
                            "rewrote the ultragit block of the {name} hook {}",
                            path.display()
                        ),
                        HookChange::NotShell { line } => format!(
                            "left the {name} hook {} alone: it is not a shell script; add this line to it by hand: {line}",
                            path.display()
                        ),
                    },
                )
            }
            Repair::Config(values) => {
                for (key, value, multi) in values {
                    if *multi {
                        self.repo.config_add_unique(key, value)?;
                    } else {
                        self.repo.config_set(key, value)?;
                    }
                }
                Ok(format!("set {} in .git/config", assignments(values)))
            }
            Repair::NotesRef => {
                self.repo.notes(NOTES_REF)?.ensure()?;
                Ok(format!("created {NOTES_REF}"))
            }
            Repair::PruneBlameCache => self.prune_blame_cache(),
            Repair::CommitGraph => self.write_commit_graph(),
            Repair::FoldCorrections => {
                let folded = crate::correct::fold_pending(self.repo)
                    .map_err(|e| NotesError::Invalid(e.to_string()))?;
                let mut text = format!(
                    "folded {} into {}",
                    plural(
                        folded.corrections,
                        "pending correction",
                        "pending corrections"
                    ),
                    plural(folded.notes, "note", "notes")
                );
                if !folded.kept.is_empty() {
                    text.push_str(&format!(
                        "; {} stay pending ({})",
                        plural(
                            folded.kept.len(),
                            "note's corrections",
                            "notes' corrections"
                        ),
                        folded.kept[0].1
                    ));
                }
                Ok(text)
            }
        }
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Up to [`MAX_LISTED`] short ids, then `…`.
fn listed<'a>(commits: impl Iterator<Item = &'a ObjectId>) -> String {
    let all: Vec<&ObjectId> = commits.collect();
    let mut text = all
        .iter()
        .take(MAX_LISTED)
        .map(|c| c.short())
        .collect::<Vec<_>>()
        .join(", ");
    if all.len() > MAX_LISTED {
        text.push_str(", …");
    }
    text
}

fn truncate(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_json_shape_and_ok() {
        let mut report = Report {
            checks: vec![
                Check::ok("a", "fine"),
                Check::warn("b", "hmm").with_fix("do b"),
            ],
            fixed: vec![],
        };
        assert!(report.ok());
        report.insert_after("a", Check::fail("a2", "broken"));
        assert_eq!(
            report
                .checks
                .iter()
                .map(|c| c.id.as_str())
                .collect::<Vec<_>>(),
            ["a", "a2", "b"]
        );
        assert!(!report.ok());
        let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(json["ok"], false);
        assert_eq!(json["checks"][0]["fix"], serde_json::Value::Null);
        assert_eq!(json["checks"][1]["status"], "fail");
        assert_eq!(json["checks"][2]["fix"], "do b");
        let mut keys: Vec<&String> = json["checks"][0].as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["fix", "id", "message", "status"]);
    }

    #[test]
    fn helpers() {
        assert_eq!(truncate("abcdef", 3), "abc…");
        assert_eq!(truncate(" ab ", 3), "ab");
        assert_eq!(plural(1, "note", "notes"), "1 note");
        let ids: Vec<ObjectId> = (0..7u8)
            .map(|i| format!("{:040x}", i).parse().unwrap())
            .collect();
        assert!(listed(ids.iter()).ends_with(", …"));
        assert_eq!(listed(ids[..2].iter()).matches(", ").count(), 1);
    }
}
