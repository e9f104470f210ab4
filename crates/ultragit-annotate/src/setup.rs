//! `ultragit init`: the notes ref, `.git/ultragit/`, the `post-commit` and
//! `post-rewrite` hooks, notes rewriting on amend and rebase, and the default
//! `[ultragit]` configuration.
//!
//! The `post-commit` block runs `ultragit annotate --async`, then starts
//! `ultragit cache warm --background` detached (`&`): the read pipeline's
//! blame cache is carried forward to the new commit in the background, so
//! the next read is warm; the hook does not wait for it.
//!
//! **Invariant:** an existing hook is kept. The ultragit lines are inserted as a
//! marked block (`# >>> ultragit <hook> >>>` … `# <<< ultragit <hook> <<<`,
//! [`hook_markers`]) right after its `#!` line (so a hook that ends with `exit`
//! still runs them), and running `init` again replaces the block instead of
//! adding a second one. A hook in another language than a POSIX shell is not
//! edited; the report says what to add by hand.
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

use std::fs;
use std::path::{Path, PathBuf};

use gitctx::Repo;
use safe_io::Dir;

use crate::author::state;
use crate::error::AnnotateError;

/// First line of the `post-commit` hook block (`hook_markers("post-commit").0`).
pub const HOOK_BEGIN: &str = "# >>> ultragit post-commit >>>";

/// The first and last lines of the ultragit block in the hook `name`.
pub fn hook_markers(name: &str) -> (String, String) {
    (
        format!("# >>> ultragit {name} >>>"),
        format!("# <<< ultragit {name} <<<"),
    )
}

/// The comment line under the begin marker: what the block is for.
fn hook_purpose(name: &str) -> &'static str {
    match name {
        "post-commit" => "Annotates each new commit and warms the blame cache, in the background",
        "post-rewrite" => "Carries annotations through amend, rebase, squash and fixup",
        "pre-push" => "Syncs annotations with the remote; never fails the push",
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

/// What `init` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitReport {
    pub notes_ref_created: bool,
    /// The `post-commit` hook.
    pub hook_path: PathBuf,
    pub hook: HookChange,
    /// The `post-rewrite` hook.
    pub rewrite_hook_path: PathBuf,
    pub rewrite_hook: HookChange,
    /// Config keys written (those not set before).
    pub config_written: Vec<String>,
}

/// The shell lines the hook runs: annotate the new commit in the background,
/// and carry the blame cache forward to it (`ultragit cache warm`), detached
/// by the shell (`&`, no terminal, no pipe to git held open) so the hook
/// returns at once; it never fails the hook.
pub(crate) fn hook_line(ultragit: &Path) -> String {
    let exe = shell_quote(&ultragit.to_string_lossy());
    format!(
        "{exe} annotate --async >/dev/null 2>&1 || true
         {exe} cache warm --background </dev/null >/dev/null 2>&1 &"
    )
}

/// The shell lines the `post-rewrite` hook runs: `ultragit rewritten amend|rebase`
/// on git's `old new` lines, never failing the user's command. Git's stdin is
/// saved first and handed on to whatever follows the block.
pub(crate) fn rewrite_hook_line(ultragit: &Path) -> String {
    format!(
        "ultragit_rewritten=$(cat)\n\
         printf '%s\\n' \"$ultragit_rewritten\" | {} rewritten \"$1\" >/dev/null 2>&1 || true\n\
         exec <<ULTRAGIT_REWRITTEN\n\
         $ultragit_rewritten\n\
         ULTRAGIT_REWRITTEN",
        shell_quote(&ultragit.to_string_lossy())
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

/// Sets `repo` up for ultragit; `ultragit` is the binary the hook should run.
pub fn init(repo: &Repo, ultragit: &Path) -> Result<InitReport, AnnotateError> {
    let notes_ref_created = repo.notes(crate::NOTES_REF)?.ensure()?;
    state(&repo.common_dir())?;

    // The hooks directory is git's answer (`core.hooksPath` is the user's own
    // config); the hook file in it is never written through a link.
    let hooks = repo.hooks_dir()?;
    fs::create_dir_all(&hooks).map_err(|e| AnnotateError::io(&hooks, e))?;
    let hooks_dir = Dir::open(&hooks)?;
    let hook_path = hooks.join("post-commit");
    let hook = install_hook(&hooks_dir, "post-commit", &hook_line(ultragit))?;
    let rewrite_hook_path = hooks.join("post-rewrite");
    let rewrite_hook = install_hook(&hooks_dir, "post-rewrite", &rewrite_hook_line(ultragit))?;

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
    Ok(InitReport {
        notes_ref_created,
        hook_path,
        hook,
        rewrite_hook_path,
        rewrite_hook,
        config_written,
    })
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
pub(crate) fn install_hook(
    hooks: &Dir,
    name: &str,
    line: &str,
) -> Result<HookChange, AnnotateError> {
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

fn is_posix_shell(shebang: &str) -> bool {
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
fn make_executable(hooks: &Dir, name: &str) -> Result<(), AnnotateError> {
    use std::os::unix::fs::PermissionsExt;
    let path = hooks.path().join(name);
    let file = hooks.open_file(name)?;
    let mut permissions = file
        .metadata()
        .map_err(|e| AnnotateError::io(&path, e))?
        .permissions();
    permissions.set_mode(permissions.mode() | 0o755);
    file.set_permissions(permissions)
        .map_err(|e| AnnotateError::io(&path, e))
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
    fn shells() {
        assert!(is_posix_shell("#!/bin/sh"));
        assert!(is_posix_shell("#!/usr/bin/env bash"));
        assert!(!is_posix_shell("#!/usr/bin/env python3"));
        assert!(!is_posix_shell("#!/usr/bin/perl -w"));
    }
}
