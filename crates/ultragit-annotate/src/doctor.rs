//! `ultragit doctor`: is this repository set up so that annotations are written,
//! survive rewrites, travel, and can be read? Each check is data — an id, a
//! status (ok, warn, fail), a one-line finding and the fix — so the binary only
//! prints them ([`Report::to_json`] is the stable JSON shape).
//!
//! The checks, in order (ids are stable):
//!
//! | id | what | status when wrong |
//! |---|---|---|
//! | `hooks.post-commit`, `hooks.post-rewrite` (`hooks.pre-push` when sync is on) | the hook file exists in git's hooks directory, holds the `# >>> ultragit <hook> >>>` block, is executable, is not a link into the working tree, and the program its block runs exists and is executable | fail |
//! | `rewrite-config` | `notes.rewriteRef` covers `refs/notes/ultragit`; `notes.rewriteMode` is `ignore` or `overwrite` (unset means git's `concatenate`, which glues two JSON notes into one unreadable note); `notes.rewrite.amend`/`.rebase` not false | fail |
//! | `notes-ref` | `refs/notes/ultragit` exists | fail |
//! | `malformed-notes` | every note parses as `ultragit/v1` and is at most [`MAX_NOTE_BYTES`] | fail |
//! | `unreachable-notes` | no note sits on a commit that no ref reaches, unless a reachable note says it was carried over from it (`provenance.derived_from`, or a note git copied verbatim, whose `commit` still names the old commit) | warn (fix: `ultragit remap`) |
//! | `provider` | the provider configuration resolves (provider, model, base URL) and the key's variable is set; never a network call | fail (warn for ignored keys of the team file) |
//! | `sync` | with `ultragit.syncRemote` set: the remote exists and has the fetch refspec of the tracking ref; no fetch refspec force-writes the local notes ref | fail |
//! | `cache` | the size of `.git/ultragit/` and its caches (always safe to delete) | warn past [`CACHE_WARN_BYTES`] |
//! | `failures` | commits listed in `failed.log` that still have no note | warn |
//!
//! Sync that is not enabled is `ok` with a note, not a warning: a repository
//! used by one person, or without a remote, is a valid set-up.
//!
//! **`--fix`** ([`Options::fix`]) applies only the safe repairs: install or
//! repair a hook block (`setup::install_hook`, which keeps the hook's other
//! lines), set the rewrite configuration in `.git/config`, create the notes ref,
//! add the sync fetch refspec when `ultragit.syncRemote` is set. It never
//! removes a note, a hook line or a config value, and never edits a hook that
//! is a link. The repaired groups are checked again, so the report shows the
//! state after the repair; [`Report::fixed`] says what changed.
//!
//! **Cost:** notes are read in-process (one tree walk, batches of lookups);
//! reachability is one `git rev-list --all` whose output is streamed and
//! stopped as soon as every annotated commit was seen — never a process per
//! note.
//!
//! **Trust:** hook files, `.git/config` and the user's config are trusted;
//! notes are untrusted data, only parsed and counted. Nothing here prints or
//! reads the environment: the binary passes whether the key's variable is set.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead as _, BufReader, Read as _};
use std::path::Path;
use std::process::Stdio;

use gitctx::{MAX_NOTE_BYTES, ObjectId, Repo};
use safe_io::Dir;
use safe_io::fs::FileKind;
use serde::Serialize;
use ultragit_schema::Annotation;

use crate::config::{ProviderFlags, Settings};
use crate::error::AnnotateError;
use crate::setup::{self, HookChange};
use crate::{NOTES_REF, author};

/// How many commit ids a finding lists before "…".
pub const MAX_LISTED: usize = 5;

/// Past this size the caches under `.git/ultragit/` are a warning.
pub const CACHE_WARN_BYTES: u64 = 1024 * 1024 * 1024;

/// The git config key that names the remote notes are synced with.
pub const SYNC_REMOTE_KEY: &str = "ultragit.syncRemote";

/// The largest hook file read.
const HOOK_LIMIT: u64 = 1024 * 1024;

/// The most of `failed.log` read.
const FAILED_LOG_LIMIT: u64 = 16 * 1024 * 1024;

/// Notes parsed per batch (one notes-tree lookup each).
const NOTE_BATCH: usize = 256;

/// The fetch refspec that brings `remote`'s notes into its tracking ref.
pub fn sync_refspec(remote: &str) -> String {
    format!("+{NOTES_REF}:refs/notes/remotes/{remote}/ultragit")
}

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

/// What the checks need from the binary.
pub struct Inputs<'a> {
    /// The `ultragit` executable a repaired hook runs.
    pub ultragit: &'a Path,
    /// Whether the environment variable of that name is set and not empty (the
    /// key itself never reaches the library).
    pub key_is_set: &'a dyn Fn(&str) -> bool,
}

impl std::fmt::Debug for Inputs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inputs")
            .field("ultragit", &self.ultragit)
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
    Failures,
}

const GROUPS: [Group; 7] = [
    Group::Hooks,
    Group::Rewrite,
    Group::Notes,
    Group::Provider,
    Group::Sync,
    Group::Cache,
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
}

impl Repair {
    fn describe(&self) -> String {
        match self {
            Repair::Hook { name, .. } => format!("repair the {name} hook"),
            Repair::Config(values) => format!(
                "set {}",
                values
                    .iter()
                    .map(|(k, v, _)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Repair::NotesRef => format!("create {NOTES_REF}"),
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
            Group::Provider => Ok(vec![self.provider().into()]),
            Group::Sync => self.sync().map(|f| vec![f]),
            Group::Cache => self.cache().map(|c| vec![c.into()]),
            Group::Failures => self.failures().map(|c| vec![c.into()]),
        };
        result.unwrap_or_else(|err| {
            vec![Check::fail(group.id(), format!("could not be checked: {err}")).into()]
        })
    }

    fn apply(&self, repair: &Repair) -> Result<String, AnnotateError> {
        match repair {
            Repair::Hook { name, line } => {
                let hooks = self.repo.hooks_dir()?;
                std::fs::create_dir_all(&hooks).map_err(|e| AnnotateError::io(&hooks, e))?;
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
                Ok(format!(
                    "set {} in .git/config",
                    values
                        .iter()
                        .map(|(k, v, _)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            }
            Repair::NotesRef => {
                self.repo.notes(NOTES_REF)?.ensure()?;
                Ok(format!("created {NOTES_REF}"))
            }
        }
    }

    // ----- hooks -----

    fn hooks(&self) -> Result<Vec<Finding>, AnnotateError> {
        let hooks = self.repo.hooks_dir()?;
        let exe = self.inputs.ultragit;
        let mut out = vec![
            self.hook(&hooks, "post-commit", Some(setup::hook_line(exe))),
            self.hook(&hooks, "post-rewrite", Some(setup::rewrite_hook_line(exe))),
        ];
        if let Ok(Some(remote)) = self.sync_remote() {
            // Its line is `ultragit sync`'s to choose: repaired by `sync --enable`.
            let mut finding = self.hook(&hooks, "pre-push", None);
            if finding.check.status != Status::Ok {
                finding.check.fix = Some(format!("ultragit sync --enable {remote}"));
            }
            out.push(finding);
        }
        Ok(out)
    }

    /// One hook; `line` is what a repair installs (`None`: not repaired here).
    fn hook(&self, hooks: &Path, name: &'static str, line: Option<String>) -> Finding {
        let id = format!("hooks.{name}");
        let path = hooks.join(name);
        match self.inspect_hook(hooks, name) {
            Ok(HookState::Healthy { program }) => Check::ok(
                id,
                match program {
                    Some(program) => format!("{} runs {program}", path.display()),
                    None => format!("{} holds the ultragit block", path.display()),
                },
            )
            .into(),
            Ok(HookState::Broken {
                problem,
                repairable,
            }) => {
                let repair = line
                    .filter(|_| repairable)
                    .map(|line| Repair::Hook { name, line });
                let fix = if repair.is_some() {
                    "ultragit doctor --fix (or ultragit init)".to_owned()
                } else if repairable {
                    String::new()
                } else {
                    format!(
                        "edit {} by hand: it needs the ultragit block between `{}` and `{}`",
                        path.display(),
                        setup::hook_markers(name).0,
                        setup::hook_markers(name).1
                    )
                };
                let check = Check::fail(id, format!("{}: {problem}", path.display()));
                Finding {
                    check: if fix.is_empty() {
                        check
                    } else {
                        check.with_fix(fix)
                    },
                    repair,
                }
            }
            Err(err) => {
                Check::fail(id, format!("{}: could not be read: {err}", path.display())).into()
            }
        }
    }

    fn inspect_hook(&self, hooks: &Path, name: &str) -> Result<HookState, AnnotateError> {
        let broken = |problem: &str, repairable: bool| {
            Ok(HookState::Broken {
                problem: problem.to_owned(),
                repairable,
            })
        };
        let dir = match Dir::open(hooks) {
            Ok(dir) => dir,
            Err(err) if err.is_not_found() => return broken("does not exist", true),
            Err(err) => return Err(err.into()),
        };
        let (text, mode, repairable) = match dir.kind(name)? {
            None => return broken("does not exist", true),
            Some(FileKind::File) => {
                let text = dir.read(name, HOOK_LIMIT)?;
                let file = dir.open_file(name)?;
                let meta = file
                    .metadata()
                    .map_err(|e| AnnotateError::io(&hooks.join(name), e))?;
                (text, unix_mode(&meta), true)
            }
            Some(FileKind::Symlink) => {
                // The hooks directory is the user's; a link out of the
                // repository (shared dotfiles) is theirs too and is read. A link
                // into the working tree runs what the repository says.
                let Ok(target) = std::fs::canonicalize(hooks.join(name)) else {
                    return broken("is a link to nothing", false);
                };
                if self.in_work_tree(&target) {
                    return broken(
                        &format!(
                            "is a link into the working tree ({}): a commit could change what it runs",
                            target.display()
                        ),
                        false,
                    );
                }
                let text = safe_io::fs::read_regular(&target, HOOK_LIMIT)?;
                let meta = std::fs::metadata(&target).map_err(|e| AnnotateError::io(&target, e))?;
                (text, unix_mode(&meta), false)
            }
            Some(kind) => return broken(&format!("is {}, not a file", kind.describe()), false),
        };
        let text = String::from_utf8_lossy(&text);
        let (begin, end) = setup::hook_markers(name);
        let Some(block) = block_of(&text, &begin, &end) else {
            return broken("has no ultragit block", repairable);
        };
        if mode & 0o100 == 0 {
            return broken("is not executable, so git does not run it", repairable);
        }
        let program = block_program(block);
        if let Some(program) = &program
            && program.starts_with('/')
        {
            let usable = std::fs::metadata(program)
                .map(|meta| meta.is_file() && unix_mode(&meta) & 0o111 != 0)
                .unwrap_or(false);
            if !usable {
                return broken(
                    &format!("its block runs {program}, which is not an executable file"),
                    repairable,
                );
            }
        }
        Ok(HookState::Healthy { program })
    }

    /// True when `path` is inside the working tree but not inside a git directory.
    fn in_work_tree(&self, path: &Path) -> bool {
        let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let root = canonical(self.repo.root());
        let git_dirs = [
            canonical(self.repo.git_dir()),
            canonical(&self.repo.common_dir()),
        ];
        path.starts_with(&root) && !git_dirs.iter().any(|g| path.starts_with(g))
    }

    // ----- rewrite configuration -----

    fn rewrite(&self) -> Result<Finding, AnnotateError> {
        let id = "rewrite-config";
        let mut problems = Vec::new();
        let mut values: Vec<(String, String, bool)> = Vec::new();

        let refs = self.config_all("notes.rewriteRef")?;
        if !refs.iter().any(|pattern| glob_match(pattern, NOTES_REF)) {
            problems.push(if refs.is_empty() {
                "notes.rewriteRef is not set, so amend and rebase leave annotations behind"
                    .to_owned()
            } else {
                format!(
                    "notes.rewriteRef ({}) does not cover {NOTES_REF}",
                    refs.join(", ")
                )
            });
            values.push(("notes.rewriteRef".to_owned(), NOTES_REF.to_owned(), true));
        }
        match self.repo.config_get("notes.rewriteMode")?.as_deref() {
            Some("ignore" | "overwrite") => {}
            other => {
                problems.push(match other {
                    None => "notes.rewriteMode is not set: git's default, concatenate, glues two JSON notes into one unreadable note on squash".to_owned(),
                    Some(mode @ ("concatenate" | "cat_sort_uniq")) => format!(
                        "notes.rewriteMode={mode} glues two JSON notes into one unreadable note on squash"
                    ),
                    Some(mode) => format!("notes.rewriteMode={mode} is not a mode git knows"),
                });
                values.push(("notes.rewriteMode".to_owned(), "ignore".to_owned(), false));
            }
        }
        for key in ["notes.rewrite.amend", "notes.rewrite.rebase"] {
            match self.repo.config_get_bool(key) {
                Ok(Some(false)) => problems.push(format!("{key}=false")),
                Ok(_) => continue,
                Err(err) => problems.push(format!("{key}: {err}")),
            }
            values.push((key.to_owned(), "true".to_owned(), false));
        }
        if problems.is_empty() {
            return Ok(Check::ok(
                id,
                format!("notes rewriting carries {NOTES_REF} along and never concatenates notes"),
            )
            .into());
        }
        let fix = values
            .iter()
            .map(|(key, value, multi)| {
                if *multi {
                    format!("git config --add {key} {value}")
                } else {
                    format!("git config {key} {value}")
                }
            })
            .collect::<Vec<_>>()
            .join(" && ");
        Ok(Finding {
            check: Check::fail(id, problems.join("; ")).with_fix(fix),
            repair: Some(Repair::Config(values)),
        })
    }

    /// Every value of a multi-valued key as git reads it (empty when unset).
    fn config_all(&self, key: &str) -> Result<Vec<String>, AnnotateError> {
        let command = self.repo.git().args(["config", "--get-all", key]);
        let output = command.run_unchecked()?;
        match output.status.code() {
            Some(0) => Ok(String::from_utf8_lossy(&output.stdout)
                .lines()
                .map(str::to_owned)
                .collect()),
            // Exit 1: the key is not set.
            Some(1) => Ok(Vec::new()),
            _ => Err(command.failure(&output).into()),
        }
    }

    // ----- notes -----

    fn notes(&self) -> Result<Vec<Finding>, AnnotateError> {
        let notes = self.repo.notes(NOTES_REF)?;
        if notes.tip()?.is_none() {
            return Ok(vec![
                Finding {
                    check: Check::fail(
                        "notes-ref",
                        format!("{NOTES_REF} does not exist (ultragit init creates it)"),
                    )
                    .with_fix("ultragit doctor --fix (or ultragit init)"),
                    repair: Some(Repair::NotesRef),
                },
                Check::ok("malformed-notes", "no notes yet").into(),
                Check::ok("unreachable-notes", "no notes yet").into(),
            ]);
        }
        let entries = notes.list()?;
        let targets: Vec<ObjectId> = entries.iter().map(|e| e.target).collect();
        let scan = scan_notes(self.repo, &targets)?;
        let unreachable = unreachable(self.repo, &targets)?;
        Ok(vec![
            Check::ok(
                "notes-ref",
                format!("{NOTES_REF}: {}", plural(entries.len(), "note", "notes")),
            )
            .into(),
            malformed_check(&scan).into(),
            unreachable_check(&scan, &unreachable).into(),
        ])
    }

    // ----- provider -----

    fn provider(&self) -> Check {
        let id = "provider";
        let settings = match Settings::load(self.repo, &ProviderFlags::default()) {
            Ok(settings) => settings,
            Err(err) => {
                return Check::fail(id, format!("the provider configuration does not resolve: {err}"))
                    .with_fix("correct the value named above (git config ultragit.provider, ultragit.model, ultragit.baseUrl, ultragit.apiKeyEnv)");
            }
        };
        let provider = &settings.provider;
        let mut config = llm::ProviderConfig::new(provider.kind, provider.model.trim());
        config.base_url = provider
            .base_url
            .as_deref()
            .map(str::trim)
            .filter(|url| !url.is_empty())
            .map(str::to_owned);
        // Built without a key: nothing is sent, this only checks the settings.
        if let Err(err) = llm::build_provider(config) {
            return Check::fail(id, format!("the provider cannot be set up: {err}")).with_fix(
                "git config ultragit.provider, ultragit.model or ultragit.baseUrl (see `ultragit annotate --help`)",
            );
        }
        let described = format!(
            "{} {} at {}",
            provider.kind.as_str(),
            provider.model,
            provider
                .base_url
                .as_deref()
                .unwrap_or("the API's default URL"),
        );
        let key = match &provider.api_key_env {
            None => "no key (ultragit.apiKeyEnv=none)".to_owned(),
            Some(variable) if (self.inputs.key_is_set)(variable) => format!("key from ${variable}"),
            Some(variable) => {
                return Check::fail(
                    id,
                    format!("{described}: the key's variable {variable} is not set, so every annotation fails"),
                )
                .with_fix(format!(
                    "export {variable}=… (or git config ultragit.apiKeyEnv NAME; `none` for a server without keys)"
                ));
            }
        };
        if !settings.warnings.is_empty() {
            return Check::warn(
                id,
                format!("{described}, {key}; {}", settings.warnings.join("; ")),
            )
            .with_fix(format!(
                "remove those keys from {} and set them with git config",
                crate::config::CONFIG_FILE
            ));
        }
        Check::ok(id, format!("{described}, {key}"))
    }

    // ----- sync -----

    /// `ultragit.syncRemote`, when set (blank counts as unset).
    fn sync_remote(&self) -> Result<Option<String>, AnnotateError> {
        Ok(self
            .repo
            .config_get(SYNC_REMOTE_KEY)?
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty()))
    }

    fn sync(&self) -> Result<Finding, AnnotateError> {
        let id = "sync";
        // A forced refspec whose destination is the local notes ref replaces
        // local notes with the remote's on every fetch.
        let mut clobbering = Vec::new();
        for (key, spec) in self.fetch_refspecs()? {
            if let Some(dst) = spec.split_once(':').map(|(_, dst)| dst)
                && spec.starts_with('+')
                && glob_match(dst, NOTES_REF)
            {
                clobbering.push(format!("git config --fixed-value --unset {key} '{spec}'"));
            }
        }
        if !clobbering.is_empty() {
            return Ok(Check::fail(
                id,
                format!("a forced fetch refspec writes {NOTES_REF} directly: every fetch replaces local notes with the remote's"),
            )
            .with_fix(format!(
                "{} (then `ultragit init --sync`, which fetches into a tracking ref and merges)",
                clobbering.join(" && ")
            ))
            .into());
        }
        let Some(remote) = self.sync_remote()? else {
            return Ok(Check::ok(
                id,
                "not enabled: notes stay in this clone (`ultragit init --sync` shares them through a remote)",
            )
            .into());
        };
        if remote.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Ok(Check::fail(
                id,
                format!("{SYNC_REMOTE_KEY}='{remote}' is not a remote name"),
            )
            .with_fix(format!("git config {SYNC_REMOTE_KEY} <remote>"))
            .into());
        }
        if self
            .repo
            .config_get(&format!("remote.{remote}.url"))?
            .is_none()
        {
            return Ok(Check::fail(
                id,
                format!("{SYNC_REMOTE_KEY}={remote}, but there is no remote '{remote}'"),
            )
            .with_fix(format!(
                "git remote add {remote} <url> (or git config {SYNC_REMOTE_KEY} <an existing remote>)"
            ))
            .into());
        }
        let key = format!("remote.{remote}.fetch");
        let spec = sync_refspec(&remote);
        if !self.config_all(&key)?.contains(&spec) {
            return Ok(Finding {
                check: Check::fail(
                    id,
                    format!("remote '{remote}' has no fetch refspec for notes, so sync never sees teammates' notes"),
                )
                .with_fix(format!("git config --add {key} '{spec}'")),
                repair: Some(Repair::Config(vec![(key, spec, true)])),
            });
        }
        Ok(Check::ok(id, format!("notes sync with '{remote}' ({spec})")).into())
    }

    /// Every `remote.*.fetch` value, with its key.
    fn fetch_refspecs(&self) -> Result<Vec<(String, String)>, AnnotateError> {
        let command = self
            .repo
            .git()
            .args(["config", "--get-regexp", r"^remote\..*\.fetch$"]);
        let output = command.run_unchecked()?;
        match output.status.code() {
            Some(0) => Ok(String::from_utf8_lossy(&output.stdout)
                .lines()
                .filter_map(|line| line.split_once(' '))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect()),
            Some(1) => Ok(Vec::new()),
            _ => Err(command.failure(&output).into()),
        }
    }

    // ----- caches and failures -----

    fn cache(&self) -> Result<Check, AnnotateError> {
        let id = "cache";
        let state = author::state_dir(&self.repo.common_dir());
        let Some(dir) = Dir::open(self.repo.common_dir())?.open_dir_optional(author::STATE_DIR)?
        else {
            return Ok(Check::ok(
                id,
                format!("{} does not exist yet", state.display()),
            ));
        };
        let total = tree_size(&dir, 0)?;
        let cache = match dir.open_dir_optional("cache")? {
            Some(cache) => tree_size(&cache, 0)?,
            None => 0,
        };
        let message = format!(
            "{} uses {} ({} of it caches, always safe to delete)",
            state.display(),
            human_bytes(total),
            human_bytes(cache)
        );
        if cache > CACHE_WARN_BYTES {
            return Ok(Check::warn(id, message)
                .with_fix(format!("rm -rf {}", state.join("cache").display())));
        }
        Ok(Check::ok(id, message))
    }

    fn failures(&self) -> Result<Check, AnnotateError> {
        let id = "failures";
        let Some(dir) = Dir::open(self.repo.common_dir())?.open_dir_optional(author::STATE_DIR)?
        else {
            return Ok(Check::ok(id, "no failed annotations recorded"));
        };
        if dir.kind("failed.log")?.is_none() {
            return Ok(Check::ok(id, "no failed annotations recorded"));
        }
        // `{time} {sha} {reason}` per line; the newest last.
        let file = dir.open_file("failed.log")?;
        let log = dir.path().join("failed.log");
        let mut order: Vec<ObjectId> = Vec::new();
        let mut reasons: HashMap<ObjectId, String> = HashMap::new();
        let mut lines = 0usize;
        for line in BufReader::new(file.take(FAILED_LOG_LIMIT)).split(b'\n') {
            let line = line.map_err(|e| AnnotateError::io(&log, e))?;
            let line = String::from_utf8_lossy(&line);
            let mut words = line.splitn(3, ' ');
            let (Some(_time), Some(sha)) = (words.next(), words.next()) else {
                continue;
            };
            let Ok(commit) = sha.parse::<ObjectId>() else {
                continue;
            };
            lines += 1;
            if reasons
                .insert(commit, words.next().unwrap_or("").to_owned())
                .is_none()
            {
                order.push(commit);
            } else {
                order.retain(|c| *c != commit);
                order.push(commit);
            }
        }
        // A failure is resolved once the commit has a note, or is gone.
        let annotated: HashSet<ObjectId> = self
            .repo
            .notes(NOTES_REF)?
            .read_many(&order)?
            .found
            .into_iter()
            .map(|(c, _)| c)
            .collect();
        let open: Vec<ObjectId> = order
            .into_iter()
            .filter(|c| !annotated.contains(c) && self.repo.commit_info_by_id(*c).is_ok())
            .collect();
        let Some(newest) = open.last() else {
            return Ok(Check::ok(
                id,
                format!(
                    "{}: {}, every one since annotated",
                    log.display(),
                    plural(lines, "entry", "entries")
                ),
            ));
        };
        let reason = reasons.get(newest).map(String::as_str).unwrap_or("");
        Ok(Check::warn(
            id,
            format!(
                "{} still without a note after a failed annotation: {} (newest: {}: {})",
                plural(open.len(), "commit", "commits"),
                listed(open.iter().rev()),
                newest.short(),
                truncate(reason, 200)
            ),
        )
        .with_fix(format!(
            "ultragit annotate --commit {} (the reasons are in {})",
            newest.to_hex(),
            log.display()
        )))
    }
}

enum HookState {
    Healthy { program: Option<String> },
    Broken { problem: String, repairable: bool },
}

#[cfg(unix)]
fn unix_mode(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    meta.permissions().mode()
}

#[cfg(not(unix))]
fn unix_mode(_meta: &std::fs::Metadata) -> u32 {
    0o755
}

/// The text between the hook block's markers, if the block is there.
fn block_of<'t>(text: &'t str, begin: &str, end: &str) -> Option<&'t str> {
    let start = text.find(begin)? + begin.len();
    let stop = text[start..].find(end)? + start;
    Some(&text[start..stop])
}

/// The program the block runs: the first word, on a line that is not a
/// comment, that is an absolute path (`/usr/local/bin/ultragit`, or quoted when
/// it has spaces). `None` when the block runs a program found on `PATH`.
fn block_program(block: &str) -> Option<String> {
    block
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .flat_map(shell_words)
        .find(|word| word.starts_with('/'))
}

/// A line split into words as a POSIX shell would for simple cases: single
/// quotes, double quotes and backslashes are removed; nothing is expanded.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    w.push(c);
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => w.extend(chars.next()),
                        c => w.push(c),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            c if c.is_whitespace() => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// git's ref globs as `notes.rewriteRef` and refspecs use them: `*` matches
/// any run of characters.
fn glob_match(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

/// What parsing every note found.
#[derive(Debug, Default)]
struct NoteScan {
    /// Notes that are not `ultragit/v1` documents, with the reason.
    malformed: Vec<(ObjectId, String)>,
    /// Notes over [`MAX_NOTE_BYTES`], with their size.
    too_large: Vec<(ObjectId, u64)>,
    /// For each readable note, the commits it says it was carried over from.
    sources: HashMap<ObjectId, Vec<String>>,
}

/// Parses every note, in batches (one notes-tree read per batch).
fn scan_notes(repo: &Repo, targets: &[ObjectId]) -> Result<NoteScan, AnnotateError> {
    let notes = repo.notes(NOTES_REF)?;
    let mut scan = NoteScan::default();
    for batch in targets.chunks(NOTE_BATCH) {
        let read = notes.read_many(batch)?;
        scan.too_large.extend(read.too_large);
        for (target, text) in read.found {
            match Annotation::from_json(&text) {
                Ok(annotation) => {
                    let mut from = annotation.provenance.derived_from;
                    // git's own rewrite copies a note verbatim: it still names
                    // the commit it was written for.
                    if !annotation.commit.eq_ignore_ascii_case(&target.to_hex()) {
                        from.push(annotation.commit);
                    }
                    if !from.is_empty() {
                        scan.sources.insert(target, from);
                    }
                }
                Err(err) => scan.malformed.push((target, err.reason().to_owned())),
            }
        }
    }
    Ok(scan)
}

fn malformed_check(scan: &NoteScan) -> Check {
    let id = "malformed-notes";
    if scan.malformed.is_empty() && scan.too_large.is_empty() {
        return Check::ok(id, "every note is a readable ultragit/v1 annotation");
    }
    let mut parts = Vec::new();
    let mut fix_for = None;
    if let Some((first, reason)) = scan.malformed.first() {
        parts.push(format!(
            "{} `ultragit read` skips: {} (first: {})",
            plural(scan.malformed.len(), "malformed note", "malformed notes"),
            listed(scan.malformed.iter().map(|(c, _)| c)),
            truncate(reason, 160)
        ));
        fix_for = Some(*first);
    }
    if let Some((first, _)) = scan.too_large.first() {
        parts.push(format!(
            "{} over {} MiB, never loaded: {}",
            plural(scan.too_large.len(), "note", "notes"),
            MAX_NOTE_BYTES / (1024 * 1024),
            listed(scan.too_large.iter().map(|(c, _)| c))
        ));
        fix_for.get_or_insert(*first);
    }
    let first = fix_for.expect("one of the lists is not empty");
    Check::fail(id, parts.join("; ")).with_fix(format!(
        "look with `ultragit show {}`; annotate again with `ultragit annotate --commit {}` (doctor never deletes a note)",
        first.to_hex(),
        first.to_hex()
    ))
}

fn unreachable_check(scan: &NoteScan, unreachable: &[ObjectId]) -> Check {
    let id = "unreachable-notes";
    // Sources named by notes on reachable commits were carried over.
    let unreachable_set: HashSet<&ObjectId> = unreachable.iter().collect();
    let carried: HashSet<ObjectId> = scan
        .sources
        .iter()
        .filter(|(target, _)| !unreachable_set.contains(target))
        .flat_map(|(_, from)| from.iter().filter_map(|s| s.parse::<ObjectId>().ok()))
        .collect();
    let (superseded, orphaned): (Vec<ObjectId>, Vec<ObjectId>) =
        unreachable.iter().partition(|c| carried.contains(c));
    let leftover = if superseded.is_empty() {
        String::new()
    } else {
        format!(
            " ({} on rewritten commits whose annotation was carried over)",
            plural(superseded.len(), "note", "notes")
        )
    };
    if orphaned.is_empty() {
        return Check::ok(
            id,
            format!("every annotated commit is reachable from a ref{leftover}"),
        );
    }
    Check::warn(
        id,
        format!(
            "{} on commits no branch, tag or remote reaches (rebased, cherry-picked or squash-merged elsewhere?): {}{leftover}",
            plural(orphaned.len(), "note", "notes"),
            listed(orphaned.iter())
        ),
    )
    .with_fix("ultragit remap (copies them to the rewritten commits on the main branch)")
}

/// The targets no ref reaches (or that are not in the repository). One
/// `git rev-list --all`, read as a stream and stopped once every target was seen.
fn unreachable(repo: &Repo, targets: &[ObjectId]) -> Result<Vec<ObjectId>, AnnotateError> {
    let mut pending: HashSet<ObjectId> = targets.iter().copied().collect();
    if pending.is_empty() {
        return Ok(Vec::new());
    }
    let command = repo.git().args(["rev-list", "--all"]);
    let mut child = command
        .to_command()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|source| gitctx::Error::Spawn { source })?;
    let stdout = child.stdout.take().expect("stdout was configured as piped");
    let mut stopped_early = false;
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| AnnotateError::io(Path::new("git rev-list --all"), e))?;
        if let Ok(commit) = line.trim().parse::<ObjectId>() {
            pending.remove(&commit);
            if pending.is_empty() {
                stopped_early = true;
                break;
            }
        }
    }
    if stopped_early {
        let _ = child.kill();
    }
    let status = child
        .wait()
        .map_err(|e| AnnotateError::io(Path::new("git rev-list --all"), e))?;
    if !stopped_early && !status.success() {
        return Err(AnnotateError::Invalid(format!(
            "`git rev-list --all` failed ({status})"
        )));
    }
    let mut out: Vec<ObjectId> = pending.into_iter().collect();
    out.sort();
    Ok(out)
}

/// Bytes in the files below `dir` (links are not followed; at most 16 levels).
fn tree_size(dir: &Dir, depth: usize) -> Result<u64, AnnotateError> {
    if depth > 16 {
        return Ok(0);
    }
    let mut total = 0;
    for (name, kind) in dir.entries()? {
        match kind {
            FileKind::File => {
                let file = dir.open_file(&name)?;
                total += file
                    .metadata()
                    .map_err(|e| AnnotateError::io(&dir.path().join(&name), e))?
                    .len();
            }
            FileKind::Dir => total += tree_size(&dir.open_dir(&name)?, depth + 1)?,
            _ => {}
        }
    }
    Ok(total)
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

fn human_bytes(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    const GIB: u64 = 1024 * MIB;
    match bytes {
        b if b >= GIB => format!("{:.1} GiB", b as f64 / GIB as f64),
        b if b >= MIB => format!("{:.1} MiB", b as f64 / MIB as f64),
        b if b >= KIB => format!("{:.1} KiB", b as f64 / KIB as f64),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("refs/notes/ultragit", NOTES_REF));
        assert!(glob_match("refs/notes/*", NOTES_REF));
        assert!(glob_match("*", NOTES_REF));
        assert!(glob_match("refs/*/ultra*", NOTES_REF));
        assert!(!glob_match("refs/notes/commits", NOTES_REF));
        assert!(!glob_match("refs/heads/*", NOTES_REF));
        assert!(!glob_match("refs/notes/ultragit*x", NOTES_REF));
    }

    #[test]
    fn block_and_program() {
        let text = "#!/bin/sh\necho hi\n# >>> ultragit post-commit >>>\n# Annotates.\n'/opt/my tools/ultragit' annotate --async || true\n# <<< ultragit post-commit <<<\n";
        let (b, e) = setup::hook_markers("post-commit");
        let block = block_of(text, &b, &e).unwrap();
        assert_eq!(
            block_program(block).as_deref(),
            Some("/opt/my tools/ultragit")
        );
        assert_eq!(
            block_program("\n/usr/bin/ultragit rewritten \"$1\"\n").as_deref(),
            Some("/usr/bin/ultragit")
        );
        assert_eq!(block_program("\n# only a comment\n"), None);
        assert_eq!(block_program("\nultragit annotate --async\n"), None);
        let rewrite = setup::rewrite_hook_line(Path::new("/opt/my tools/ultragit"));
        assert_eq!(
            block_program(&rewrite).as_deref(),
            Some("/opt/my tools/ultragit")
        );
        assert_eq!(
            shell_words(r#"a 'b c' "d \"e\"" f\ g"#),
            ["a", "b c", "d \"e\"", "f g"]
        );
        assert!(
            block_of(
                text,
                "# >>> ultragit pre-push >>>",
                "# <<< ultragit pre-push <<<"
            )
            .is_none()
        );
        // A begin marker without its end is no block.
        assert!(block_of("# >>> ultragit post-commit >>>\nx\n", &b, &e).is_none());
    }

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
        assert_eq!(human_bytes(512), "512 bytes");
        assert_eq!(human_bytes(3 * 1024 * 1024 / 2), "1.5 MiB");
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
