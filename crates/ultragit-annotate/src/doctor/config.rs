//! The rewrite configuration check: `notes.rewriteRef`, `notes.rewriteMode`
//! and `notes.rewrite.*` as git reads them.

use super::{Check, Doctor, Finding, Repair};
use crate::NOTES_REF;
use crate::error::AnnotateError;

impl Doctor<'_> {
    pub(super) fn rewrite(&self) -> Result<Finding, AnnotateError> {
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
    pub(super) fn config_all(&self, key: &str) -> Result<Vec<String>, AnnotateError> {
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
