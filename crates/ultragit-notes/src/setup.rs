//! `ultragit init`: the notes ref, `.git/ultragit/`, the hooks ([`HOOKS`]:
//! `post-commit`, `post-rewrite`, `post-merge`, `post-checkout`), notes
//! rewriting on amend and rebase, the default `[ultragit]` configuration, and
//! a commit-graph with changed-path Bloom filters.
//!
//! **Warm caches after every move of HEAD.** Each hook block ends by starting
//! `ultragit cache warm --background` detached ([`warm_line`]: `&`, stdin from
//! `/dev/null`, output to `/dev/null`), which carries the read pipeline's blame
//! and outline caches forward to the new HEAD, so the next read is warm; the
//! hook does not wait for it, it never fails the user's command, and it never
//! reads the hook's stdin. After a commit (`post-commit`, after `ultragit
//! annotate --async`); after an amend or a rebase, `git pull --rebase`
//! included (`post-rewrite`, after `ultragit rewritten`); after a merge or a
//! `git pull` (`post-merge`, except for a squash merge, `$1` = 1, which moves
//! no HEAD); after a branch checkout that moved HEAD (`post-checkout` with
//! `$3` = 1 and `$1` != `$2`; a file checkout, `git checkout -- FILE`, starts
//! none). A burst of checkouts does not pile up warm-ups: `cache warm
//! --background` skips when another one holds its lock (see the binary's
//! `cache` module).
//!
//! **Invariant:** an existing hook is kept. The ultragit lines are inserted as a
//! marked block (`# >>> ultragit <hook> >>>` … `# <<< ultragit <hook> <<<`,
//! [`hook_markers`]) right after its `#!` line (so a hook that ends with `exit`
//! still runs them), and running `init` again replaces the block instead of
//! adding a second one. A hook in another language than a POSIX shell is not
//! edited; the report says what to add by hand. A hook that is a symbolic link
//! is never written through. The blocks leave the hook's exit status to the
//! lines after them (`post-checkout`'s becomes `git checkout`'s).
//!
//! **Notes rewriting.** `notes.rewriteRef` names `refs/notes/ultragit`, so git
//! copies a note to the commit that amends or rebases it, and
//! `notes.rewrite.amend`/`.rebase` are on. The `post-rewrite` hook then writes
//! the final notes itself (`ultragit rewritten`, see [`crate::rewrite`]),
//! whatever git made of the copies. The hook block saves git's stdin and hands
//! it on to the lines after it, so an existing hook that reads it still gets it.
//!
//! **`notes.rewriteMode` is the user's.** Git has one rewrite mode for every
//! notes ref it rewrites (`notes.rewriteMode`, overridden by the environment's
//! `GIT_NOTES_REWRITE_MODE`; there is no per-ref mode), so setting it for our
//! ref would change how a squash treats the user's own `refs/notes/commits`
//! too. `init` never sets it, and the hook copes with every mode. A
//! `notes.rewriteMode=ignore` an older `init` wrote is left alone — nothing
//! tells it apart from one the user chose — and `doctor` points it out.
//!
//! **Commit-graph.** A fresh clone has none, and the one `git gc` writes by
//! default has no changed-path Bloom filters, so `git blame` and `git log --
//! PATH` (what a cold read runs) open every commit's trees. `init` writes one
//! with them (`git commit-graph write --reachable --changed-paths`, see
//! [`gitctx::commit_graph`]) unless the repository has one already, the user
//! turned commit-graphs off (`core.commitGraph=false`, trusted config, left as
//! it is) or asked not to ([`InitOptions::no_commit_graph`]). No config is set
//! to keep the filters: git's later writes (`git gc`, `git maintenance`, `git
//! commit-graph write` without the flag) keep the filters of the graph they
//! replace. A failed write does not fail `init`: it is reported.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gitctx::Repo;
use safe_io::Dir;

use crate::author::state;
use crate::error::NotesError;

/// First line of the `post-commit` hook block (`hook_markers("post-commit").0`).
pub const HOOK_BEGIN: &str = "# >>> ultragit post-commit >>>";

/// The first and last lines of the ultragit block in the hook `name`.
pub fn hook_markers(name: &str) -> (String, String) {
    (
        format!("# >>> ultragit {name} >>>"),
        format!("# <<< ultragit {name} <<<"),
    )
}

/// One hook `init` installs. One table ([`HOOKS`]) for `init`, its report
/// and `doctor`, so the four cannot drift apart.
#[derive(Debug, Clone, Copy)]
pub struct HookSpec {
    /// The hook's file name in git's hooks directory.
    pub name: &'static str,
    /// The comment line under the begin marker: what the block is for.
    purpose: &'static str,
    /// The block's shell lines, for the `ultragit` binary given.
    lines: fn(&Path) -> String,
    /// After what the block warms the read caches ("a commit"), for the
    /// findings on a block that does not.
    pub warms_after: &'static str,
    /// What the block is there for, as in "add these lines to it so …", for
    /// a hook that is not a shell script.
    pub so_that: &'static str,
    /// The hook only makes reads faster (`post-merge`, `post-checkout`):
    /// without it nothing is lost but the speed of the first read after a
    /// pull or a checkout, so `doctor` warns rather than fails.
    pub speed_only: bool,
}

impl HookSpec {
    /// The block's shell lines, running `ultragit`.
    pub fn lines(&self, ultragit: &Path) -> String {
        (self.lines)(ultragit)
    }
}

/// The hooks `init` installs, in the order it reports them.
pub const HOOKS: [HookSpec; 4] = [
    HookSpec {
        name: "post-commit",
        purpose: "Annotates each new commit and warms the blame cache, in the background",
        lines: hook_line,
        warms_after: "a commit",
        so_that: "each commit is annotated",
        speed_only: false,
    },
    HookSpec {
        name: "post-rewrite",
        purpose: "Carries annotations through amend, rebase, squash and fixup, then warms the read caches in the background",
        lines: rewrite_hook_line,
        warms_after: "an amend or a rebase (git pull --rebase too)",
        so_that: "amend and rebase keep the notes",
        speed_only: false,
    },
    HookSpec {
        name: "post-merge",
        purpose: "Warms the read caches after a merge or a pull, in the background (not after a squash merge, which moves no HEAD)",
        lines: merge_hook_line,
        warms_after: "a merge or a git pull",
        so_that: "a merge or a pull warms the read caches",
        speed_only: true,
    },
    HookSpec {
        name: "post-checkout",
        purpose: "Warms the read caches after a branch checkout that moved HEAD, in the background",
        lines: checkout_hook_line,
        warms_after: "a branch checkout",
        so_that: "a branch checkout warms the read caches",
        speed_only: true,
    },
];

/// The entry of [`HOOKS`] for the hook `name`.
pub fn hook_spec(name: &str) -> Option<&'static HookSpec> {
    HOOKS.iter().find(|spec| spec.name == name)
}

/// The comment line under the begin marker: what the block is for.
fn hook_purpose(name: &str) -> &'static str {
    match (name, hook_spec(name)) {
        (_, Some(spec)) => spec.purpose,
        ("pre-push", None) => "Syncs annotations with the remote; never fails the push",
        _ => "Added",
    }
}

/// Config written by `init` when the key is not set yet.
pub(crate) const DEFAULT_CONFIG: &[(&str, &str)] = &[
    ("ultragit.maxDiffLines", "2000"),
    ("ultragit.maxAgentTurns", "20"),
    ("ultragit.maxTokensPerResponse", "4096"),
    ("ultragit.recentAnnotationsLimit", "5"),
    ("ultragit.chunkSize", "5"),
    ("ultragit.depsScanLimit", "500"),
    ("ultragit.defaultMaxRegions", "20"),
    ("ultragit.recencyHalfLife", "180"),
];

/// What happened to the hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookChange {
    /// A new hook file.
    Created,
    /// The block was added to an existing hook.
    Added,
    /// The block was already there and is now up to date.
    Updated,
    /// The existing hook is not a shell script: add `line` to it by hand.
    NotShell { line: String },
}

/// A hook `init` installed (or could not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledHook {
    /// Its name, one of [`HOOKS`].
    pub name: &'static str,
    pub path: PathBuf,
    pub change: HookChange,
}

/// What `init` did about the commit-graph (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitGraphChange {
    /// Written with changed-path Bloom filters, in `elapsed`.
    Written { elapsed: Duration },
    /// The repository has one with changed-path Bloom filters already.
    AlreadyThere,
    /// Nothing to graph: the repository has no commits yet.
    NoCommits,
    /// `core.commitGraph` is false: git would not read one, so none is written.
    Disabled,
    /// Not asked for ([`InitOptions::no_commit_graph`]).
    Skipped,
    /// `git commit-graph write` failed (its error, for the report); the rest
    /// of `init` is done.
    Failed { reason: String },
}

/// What `init` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitReport {
    pub notes_ref_created: bool,
    /// Every hook of [`HOOKS`], in that order.
    pub hooks: Vec<InstalledHook>,
    /// Config keys written (those not set before).
    pub config_written: Vec<String>,
    pub commit_graph: CommitGraphChange,
}

impl InitReport {
    /// The hook `name` (one of [`HOOKS`]).
    pub fn hook(&self, name: &str) -> Option<&InstalledHook> {
        self.hooks.iter().find(|hook| hook.name == name)
    }
}

/// Defaultable behaviour of [`init`].
#[derive(Debug, Clone, Copy, Default)]
pub struct InitOptions {
    /// Leave the commit-graph alone (`ultragit init --no-commit-graph`).
    pub no_commit_graph: bool,
}

/// The line that starts the cache warm-up: detached by the shell (`&`), with
/// no terminal, no stdin (so it never takes input meant for the rest of the
/// hook) and no pipe to git held open, so the hook returns at once; the
/// warm-up's own failures never reach the user's command.
pub fn warm_line(ultragit: &Path) -> String {
    format!(
        "{} cache warm --background </dev/null >/dev/null 2>&1 &",
        shell_quote(&ultragit.to_string_lossy())
    )
}

/// The shell lines the `post-commit` hook runs: annotate the new commit in the
/// background, and carry the caches forward to it ([`warm_line`]); it never
/// fails the hook.
pub(crate) fn hook_line(ultragit: &Path) -> String {
    format!(
        "{} annotate --async >/dev/null 2>&1 || true\n{}",
        shell_quote(&ultragit.to_string_lossy()),
        warm_line(ultragit)
    )
}

/// The shell lines the `post-rewrite` hook runs: `ultragit rewritten amend|rebase`
/// on git's `old new` lines, never failing the user's command, then the
/// warm-up ([`warm_line`]; an amend or a rebase moved HEAD). Git's stdin is
/// saved first and handed on to whatever follows the block.
pub(crate) fn rewrite_hook_line(ultragit: &Path) -> String {
    format!(
        "ultragit_rewritten=$(cat)\n\
         printf '%s\\n' \"$ultragit_rewritten\" | {} rewritten \"$1\" >/dev/null 2>&1 || true\n\
         {}\n\
         exec <<ULTRAGIT_REWRITTEN\n\
         $ultragit_rewritten\n\
         ULTRAGIT_REWRITTEN",
        shell_quote(&ultragit.to_string_lossy()),
        warm_line(ultragit)
    )
}

/// The shell lines the `post-merge` hook runs: the warm-up, unless the merge
/// was a squash (`$1` = 1), which leaves HEAD where it was.
pub(crate) fn merge_hook_line(ultragit: &Path) -> String {
    format!("if [ \"$1\" != 1 ]; then\n  {}\nfi", warm_line(ultragit))
}

/// The shell lines the `post-checkout` hook runs: the warm-up after a branch
/// checkout (`$3` = 1) that moved HEAD (`$1` != `$2`); a file checkout, or a
/// switch to a branch at the same commit, starts none.
pub(crate) fn checkout_hook_line(ultragit: &Path) -> String {
    format!(
        "if [ \"$3\" = 1 ] && [ \"$1\" != \"$2\" ]; then\n  {}\nfi",
        warm_line(ultragit)
    )
}

/// The notes rewriting `init` configures (`notes.rewriteRef` is added to;
/// `notes.rewriteMode` is left to the user, see the module docs).
pub const REWRITE_CONFIG: &[(&str, &str)] = &[
    ("notes.rewrite.amend", "true"),
    ("notes.rewrite.rebase", "true"),
];

pub(crate) fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,".contains(c))
    {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Sets `repo` up for ultragit; `ultragit` is the binary the hooks should run.
pub fn init(repo: &Repo, ultragit: &Path, options: &InitOptions) -> Result<InitReport, NotesError> {
    let notes_ref_created = repo.notes(crate::NOTES_REF)?.ensure()?;
    state(&repo.common_dir())?;

    // The hooks directory is git's answer (`core.hooksPath` is the user's own
    // config); the hook file in it is never written through a link.
    let hooks_path = repo.hooks_dir()?;
    fs::create_dir_all(&hooks_path).map_err(|e| NotesError::io(&hooks_path, e))?;
    let hooks_dir = Dir::open(&hooks_path)?;
    let mut hooks = Vec::with_capacity(HOOKS.len());
    for spec in &HOOKS {
        hooks.push(InstalledHook {
            name: spec.name,
            path: hooks_path.join(spec.name),
            change: install_hook(&hooks_dir, spec.name, &spec.lines(ultragit))?,
        });
    }

    repo.config_add_unique("notes.rewriteRef", crate::NOTES_REF)?;
    for (key, value) in REWRITE_CONFIG {
        repo.config_set(key, value)?;
    }
    let mut config_written = Vec::new();
    for (key, value) in DEFAULT_CONFIG {
        if repo.config_get(key)?.is_none() {
            repo.config_set(key, value)?;
            config_written.push((*key).to_owned());
        }
    }
    let commit_graph = if options.no_commit_graph {
        CommitGraphChange::Skipped
    } else {
        ensure_commit_graph(repo)
    };
    Ok(InitReport {
        notes_ref_created,
        hooks,
        config_written,
        commit_graph,
    })
}

/// Writes a commit-graph with changed-path Bloom filters unless there is one
/// or git would not read it (module docs). Never an error: what happened.
pub fn ensure_commit_graph(repo: &Repo) -> CommitGraphChange {
    if repo.commit_graph().has_changed_paths() {
        return CommitGraphChange::AlreadyThere;
    }
    match repo.commit_graph_enabled() {
        Ok(true) => {}
        Ok(false) => return CommitGraphChange::Disabled,
        Err(err) => {
            return CommitGraphChange::Failed {
                reason: err.to_string(),
            };
        }
    }
    let started = Instant::now();
    if let Err(err) = repo.write_commit_graph() {
        return CommitGraphChange::Failed {
            reason: err.to_string(),
        };
    }
    let elapsed = started.elapsed();
    if repo.commit_graph().has_changed_paths() {
        CommitGraphChange::Written { elapsed }
    } else {
        // git writes nothing when no commit is reachable.
        CommitGraphChange::NoCommits
    }
}

/// The largest existing hook read.
const HOOK_LIMIT: u64 = 1024 * 1024;

/// Whether the hook `name` in `hooks_dir` holds an ultragit block (both
/// markers). A missing or unreadable hook holds none.
pub fn hook_installed(hooks_dir: &Path, name: &str) -> bool {
    let (begin, end) = hook_markers(name);
    Dir::open(hooks_dir)
        .and_then(|dir| dir.read_optional(name, HOOK_LIMIT))
        .ok()
        .flatten()
        .is_some_and(|bytes| {
            let text = String::from_utf8_lossy(&bytes);
            text.contains(&begin) && text.contains(&end)
        })
}

/// Writes or updates the hook block in the hook `name` of `hooks`. A hook that
/// is a symbolic link is not followed: the error says so.
pub(crate) fn install_hook(hooks: &Dir, name: &str, line: &str) -> Result<HookChange, NotesError> {
    let (begin, end) = hook_markers(name);
    let block = format!(
        "{begin}\n# {} (ultragit init).\n{line}\n{end}\n",
        hook_purpose(name)
    );
    let existing = hooks
        .read_optional(name, HOOK_LIMIT)?
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
    let (text, change) = match existing {
        None => (format!("#!/bin/sh\n{block}"), HookChange::Created),
        Some(text) => {
            if let (Some(start), Some(stop)) = (text.find(&begin), text.find(&end))
                && start < stop
            {
                let after = stop + end.len();
                let after = after + usize::from(text[after..].starts_with('\n'));
                (
                    format!("{}{block}{}", &text[..start], &text[after..]),
                    HookChange::Updated,
                )
            } else {
                let first = text.lines().next().unwrap_or("");
                if first.starts_with("#!") && !is_posix_shell(first) {
                    return Ok(HookChange::NotShell {
                        line: line.to_owned(),
                    });
                }
                let (head, rest) = match text.find('\n') {
                    Some(i) if first.starts_with("#!") => (&text[..=i], &text[i + 1..]),
                    _ => ("#!/bin/sh\n", text.as_str()),
                };
                (format!("{head}{block}{rest}"), HookChange::Added)
            }
        }
    };
    hooks.write(name, text.as_bytes())?;
    make_executable(hooks, name)?;
    Ok(change)
}

pub(crate) fn is_posix_shell(shebang: &str) -> bool {
    let words: Vec<&str> = shebang
        .trim_start_matches("#!")
        .split_whitespace()
        .collect();
    let program = match words.as_slice() {
        [env, name, ..] if env.ends_with("/env") => *name,
        [path, ..] => path.rsplit('/').next().unwrap_or(path),
        [] => return false,
    };
    matches!(program, "sh" | "bash" | "dash" | "zsh" | "ksh" | "ash")
}

/// Adds the execute bits to the hook just written (through its open file, not
/// its path).
fn make_executable(hooks: &Dir, name: &str) -> Result<(), NotesError> {
    use std::os::unix::fs::PermissionsExt;
    let path = hooks.path().join(name);
    let file = hooks.open_file(name)?;
    let mut permissions = file
        .metadata()
        .map_err(|e| NotesError::io(&path, e))?
        .permissions();
    permissions.set_mode(permissions.mode() | 0o755);
    file.set_permissions(permissions)
        .map_err(|e| NotesError::io(&path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(
            shell_quote("/usr/local/bin/ultragit"),
            "/usr/local/bin/ultragit"
        );
        assert_eq!(
            shell_quote("/opt/my tools/ultragit"),
            "'/opt/my tools/ultragit'"
        );
        assert_eq!(shell_quote("/it's/ultragit"), "'/it'\\''s/ultragit'");
    }

    #[test]
    fn markers() {
        let (begin, end) = hook_markers("post-commit");
        assert_eq!(begin, HOOK_BEGIN);
        assert_eq!(end, "# <<< ultragit post-commit <<<");
        assert_eq!(hook_markers("pre-push").0, "# >>> ultragit pre-push >>>");
    }

    #[test]
    fn every_block_warms_the_caches_detached() {
        let exe = Path::new("/opt/my tools/ultragit");
        let warm = "'/opt/my tools/ultragit' cache warm --background </dev/null >/dev/null 2>&1 &";
        assert_eq!(warm_line(exe), warm);
        for spec in &HOOKS {
            let lines = spec.lines(exe);
            assert_eq!(lines.matches(warm).count(), 1, "{}: {lines}", spec.name);
            assert!(
                hook_purpose(spec.name).contains("in the background"),
                "{}",
                spec.name
            );
        }
        assert_eq!(
            merge_hook_line(exe),
            format!("if [ \"$1\" != 1 ]; then\n  {warm}\nfi")
        );
        assert_eq!(
            checkout_hook_line(exe),
            format!("if [ \"$3\" = 1 ] && [ \"$1\" != \"$2\" ]; then\n  {warm}\nfi")
        );
        // The warm-up starts after `rewritten`, before stdin is handed on.
        let rewrite = rewrite_hook_line(exe);
        let rewritten = rewrite.find(" rewritten ").unwrap();
        let started = rewrite.find(warm).unwrap();
        let handed_on = rewrite.find("exec <<ULTRAGIT_REWRITTEN").unwrap();
        assert!(rewritten < started && started < handed_on, "{rewrite}");
        assert_eq!(
            hook_purpose("pre-push"),
            "Syncs annotations with the remote; never fails the push"
        );
    }

    #[test]
    fn shells() {
        assert!(is_posix_shell("#!/bin/sh"));
        assert!(is_posix_shell("#!/usr/bin/env bash"));
        assert!(!is_posix_shell("#!/usr/bin/env python3"));
        assert!(!is_posix_shell("#!/usr/bin/perl -w"));
    }
}
