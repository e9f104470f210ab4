//! The rewrite configuration check: `notes.rewriteRef` and `notes.rewrite.*`
//! as git reads them, and the rewrite mode reported as it is.
//!
//! `notes.rewriteMode` (and the environment's `GIT_NOTES_REWRITE_MODE`, which
//! overrides it) is one mode for every notes ref git rewrites, so it is the
//! user's: the `post-rewrite` hook rewrites `refs/notes/ultragit` whatever it
//! is ([`crate::rewrite`]). The check names it and never fails on it; a value
//! git does not know is a warning (git then reports an error on each rewrite,
//! and a squash keeps one note of each ref, as git 2.47 does), and
//! `ignore` is pointed out, since older versions of `ultragit init` set it
//! and it makes a squash keep only the first of the user's own notes.

use super::{Check, Doctor, Finding, REWRITE_MODE_ENV, Repair};
use crate::NOTES_REF;
use crate::error::NotesError;

/// The modes git knows (case does not matter to git).
const MODES: [&str; 4] = ["concatenate", "cat_sort_uniq", "overwrite", "ignore"];

impl Doctor<'_> {
    pub(super) fn rewrite(&self) -> Result<Finding, NotesError> {
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
        for key in ["notes.rewrite.amend", "notes.rewrite.rebase"] {
            match self.repo.config_get_bool(key) {
                Ok(Some(false)) => problems.push(format!("{key}=false")),
                Ok(_) => continue,
                Err(err) => problems.push(format!("{key}: {err}")),
            }
            values.push((key.to_owned(), "true".to_owned(), false));
        }
        let mode = RewriteMode {
            config: self.repo.config_get("notes.rewriteMode")?,
            env: self.inputs.rewrite_mode_env.map(str::to_owned),
        };
        let unknown = mode.unknown();
        let mut fixes: Vec<String> = values
            .iter()
            .map(|(key, value, multi)| {
                if *multi {
                    format!("git config --add {key} {value}")
                } else {
                    format!("git config {key} {value}")
                }
            })
            .collect();
        if problems.is_empty() && unknown.is_empty() {
            return Ok(Check::ok(
                id,
                format!(
                    "notes rewriting carries {NOTES_REF} along; {}; the post-rewrite hook \
                     rewrites {NOTES_REF} whatever the mode{}",
                    mode.describe(),
                    mode.ignore_note()
                ),
            )
            .into());
        }
        for (what, fix) in unknown {
            problems.push(what);
            fixes.push(fix);
        }
        let check = if values.is_empty() {
            // Only an unknown mode: the hook still writes ours.
            Check::warn(
                id,
                format!(
                    "{}: git reports an error on each amend and rebase, and a squash keeps one \
                     note of each ref (the post-rewrite hook still rewrites {NOTES_REF})",
                    problems.join("; ")
                ),
            )
        } else {
            Check::fail(id, problems.join("; "))
        };
        Ok(Finding {
            check: check.with_fix(fixes.join(" && ")),
            repair: (!values.is_empty()).then_some(Repair::Config(values)),
        })
    }

    /// Every value of a multi-valued key as git reads it (empty when unset).
    pub(super) fn config_all(&self, key: &str) -> Result<Vec<String>, NotesError> {
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
}

/// The rewrite mode git uses: `notes.rewriteMode`, overridden by
/// [`REWRITE_MODE_ENV`] when that is set.
struct RewriteMode {
    config: Option<String>,
    env: Option<String>,
}

impl RewriteMode {
    fn known(mode: &str) -> bool {
        MODES.iter().any(|m| m.eq_ignore_ascii_case(mode))
    }

    /// One line: the mode and where it comes from.
    fn describe(&self) -> String {
        let config = match &self.config {
            None => "notes.rewriteMode is not set (git's default: concatenate)".to_owned(),
            Some(mode) => format!("notes.rewriteMode={mode}"),
        };
        match &self.env {
            None => config,
            Some(env) => format!("{config}, {REWRITE_MODE_ENV}={env} overrides it here"),
        }
    }

    /// A note on `ignore` set in the config (an older `init` set it; git uses
    /// it for the user's own notes refs too).
    fn ignore_note(&self) -> &'static str {
        match &self.config {
            Some(mode) if mode.eq_ignore_ascii_case("ignore") => {
                " (older versions of `ultragit init` set ignore; it applies to every notes ref \
                 git rewrites, so a squash keeps only the first of your own notes: \
                 `git config --unset notes.rewriteMode` unless you chose it)"
            }
            _ => "",
        }
    }

    /// The values git does not know, each with its fix.
    fn unknown(&self) -> Vec<(String, String)> {
        let mut unknown = Vec::new();
        if let Some(mode) = self.config.as_deref().filter(|m| !Self::known(m)) {
            unknown.push((
                format!("notes.rewriteMode={mode} is not a mode git knows"),
                format!(
                    "git config --unset notes.rewriteMode (or set one of {})",
                    MODES.join(", ")
                ),
            ));
        }
        if let Some(mode) = self.env.as_deref().filter(|m| !Self::known(m)) {
            unknown.push((
                format!("{REWRITE_MODE_ENV}='{mode}' is not a mode git knows"),
                format!("unset {REWRITE_MODE_ENV}"),
            ));
        }
        unknown
    }
}

/// git's ref globs as `notes.rewriteRef` and refspecs use them: `*` matches
/// any run of characters.
pub(super) fn glob_match(pattern: &str, text: &str) -> bool {
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
}
