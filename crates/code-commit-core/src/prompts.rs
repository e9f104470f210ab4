//! The system-prompts module of spec 001: the four system prompts and the two
//! prompt layouts built from them.
//!
//! Initial query: project structure, code modification instructions, initial
//! query system prompts; then the query and the codebase. Repair query: project
//! structure, code modification instructions, repair query system prompts; then
//! why the previous response was rejected (when it was), the output of the
//! last `build.sh` run (when one ran), the query, the codebase, and the latest
//! replacement of each file (`--- FILE REPLACEMENT [path] ---` /
//! `--- FILE REMOVED [path] ---`). A rejected response changes nothing on disk,
//! so the last build's output still describes the files as they are.
//!
//! The system prompts travel as the request's system text, in that order; the
//! rest is the user message, in that order.

use std::fmt::Write as _;

/// How the project is laid out and what is off limits.
pub(crate) const PROJECT_STRUCTURE: &str = "\
# Project structure

You are editing a software project in its working directory. The project is a git repository; the person supervising you reviews every change you make with `git status` and `git diff` before accepting it.

- `build.sh` at the top of the project builds and tests it. Your change is done when `build.sh` exits with status 0.
- `agent-config/` holds this tool's own files (the query, the code rollup, logs, configuration). It is off limits.
- The codebase you are shown is a rollup of the project's files, made before your change.
- These files are protected and can never be changed, created or removed by you: `.gitignore` (any of them), `Cargo.lock`, `build.sh`, `codeRollup.sh`, `LLMInstructions.md`, any `UserSpecification.md`, anything in `.git/`, `agent-config/` or `target/`, and anything `.gitignore` rules ignore. A response that touches any of them is rejected as a whole and nothing from it is applied.
- Paths are relative to the top of the project, with `/` separators, no `..`, no absolute paths.";

/// The `^^^` syntax, precisely.
pub(crate) const CODE_MODIFICATION_INSTRUCTIONS: &str = "\
# How to change files

You change files by writing blocks. Each block replaces ONE file with the COMPLETE new content you give, or creates it if it does not exist:

^^^src/path/to/file.rs
<the whole new content of the file, every line, exactly as it should be on disk>
^^^end

To remove a file, write its path and then `^^^delete` on the very next line:

^^^src/old_module.rs
^^^delete

Rules:
- `^^^`, `^^^end` and `^^^delete` start at the beginning of their own line. The path follows `^^^` directly, on the same line.
- Every block is closed by `^^^end` before the next block starts.
- The content is the whole file. Never abbreviate: no `...`, no `// rest of file unchanged`, no `// existing code`. Anything you leave out is deleted.
- Do not wrap the content in markdown code fences (```); if you use fences, put them outside the `^^^` lines. (Only markdown files may contain fences as content.)
- One block per file per response; never write and delete the same file.
- To create an empty file, write `^^^path` followed directly by `^^^end`.
- Files you do not mention stay as they are. Text outside blocks is ignored; keep explanations short.
- A response without any block changes nothing and counts as a failed attempt.";

/// The task of the first request.
pub(crate) const INITIAL_QUERY: &str = "\
# Task

Below are the query — what the person wants changed — and the codebase. Make the change the query asks for, completely and correctly, so that `build.sh` passes. Reply with the blocks of every file you create, change or remove.";

/// The task of a repair request.
pub(crate) const REPAIR_QUERY: &str = "\
# Task: repair

Your previous change did not pass: below is why your previous response was rejected (when it was) and the output of the last `build.sh` run (when one ran), then the original query, the codebase as it was BEFORE any of your changes, and the latest version of every file you have replaced or removed so far (these are on disk now). Fix the problem so that `build.sh` passes while still doing what the query asks. Reply with complete blocks for the files you change now; files you do not mention keep their current content.";

/// A prompt: the system text and the user message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prompt {
    pub system: String,
    pub user: String,
}

impl Prompt {
    /// The whole prompt as one text, in order (what the logs keep).
    pub(crate) fn text(&self) -> String {
        format!("{}\n\n{}", self.system, self.user)
    }
}

/// The latest state of a file the model changed: its content, or removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Replacement {
    pub path: String,
    /// `None`: the file was removed.
    pub content: Option<String>,
}

fn system(task: &str) -> String {
    format!("{PROJECT_STRUCTURE}\n\n{CODE_MODIFICATION_INSTRUCTIONS}\n\n{task}")
}

/// The first request.
pub(crate) fn initial(query: &str, codebase: &str) -> Prompt {
    let mut user = String::new();
    let _ = write!(
        user,
        "# Query\n\n{}\n\n# Codebase\n\n{}",
        query.trim_end(),
        codebase.trim_end()
    );
    user.push('\n');
    Prompt {
        system: system(INITIAL_QUERY),
        user,
    }
}

/// What a repair prompt asks the model to repair: why its previous response
/// was rejected, and the last build's output (bounded), each when there is one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Failure {
    /// Why the previous response was rejected (nothing from it was applied).
    pub rejected: Vec<String>,
    /// The output of the last `build.sh` run, and the attempt it built.
    pub build: Option<(u32, String)>,
}

/// A repair request: `failure` says what went wrong; `replacements` the latest
/// state of each changed file, one entry per path.
pub(crate) fn repair(
    failure: &Failure,
    query: &str,
    codebase: &str,
    replacements: &[Replacement],
) -> Prompt {
    let mut user = String::new();
    if !failure.rejected.is_empty() {
        user.push_str(
            "# Rejected response\n\nYour previous response was rejected and NOTHING from it was applied (the files are as listed under File replacements):\n",
        );
        for reason in &failure.rejected {
            let _ = writeln!(user, "- {reason}");
        }
        user.push('\n');
    }
    user.push_str("# build.sh output\n\n");
    match &failure.build {
        Some((attempt, output)) if !failure.rejected.is_empty() => {
            let _ = writeln!(
                user,
                "(from the build of attempt {attempt}; the files have not changed since)"
            );
            user.push_str(output.trim_end());
        }
        Some((_, output)) => user.push_str(output.trim_end()),
        None => user.push_str("(build.sh has not run yet: no response has been applied)"),
    }
    let _ = write!(
        user,
        "\n\n# Query\n\n{}\n\n# Codebase\n\n{}\n\n# File replacements\n\n",
        query.trim_end(),
        codebase.trim_end()
    );
    if replacements.is_empty() {
        user.push_str("(none: no file has been changed yet)\n");
    }
    for r in replacements {
        match &r.content {
            Some(content) => {
                let _ = writeln!(user, "--- FILE REPLACEMENT [{}] ---", r.path);
                user.push_str(content);
                if !content.ends_with('\n') && !content.is_empty() {
                    user.push('\n');
                }
            }
            None => {
                let _ = writeln!(user, "--- FILE REMOVED [{}] ---", r.path);
            }
        }
    }
    Prompt {
        system: system(REPAIR_QUERY),
        user,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initial_layout_is_in_the_spec_order() {
        let p = initial("Add a flag", "=== src/main.rs ===\nfn main() {}\n");
        let s = p.text();
        let order = [
            "# Project structure",
            "# How to change files",
            "# Task\n",
            "# Query\n\nAdd a flag",
            "# Codebase\n\n=== src/main.rs",
        ];
        let mut at = 0;
        for part in order {
            let found = s[at..]
                .find(part)
                .unwrap_or_else(|| panic!("{part} out of order"));
            at += found;
        }
    }

    #[test]
    fn repair_layout_lists_replacements_and_removals() {
        let p = repair(
            &Failure {
                rejected: Vec::new(),
                build: Some((1, "exit status 1\nerror[E0425]".to_owned())),
            },
            "Add a flag",
            "codebase",
            &[
                Replacement {
                    path: "src/a.rs".into(),
                    content: Some("fn a() {}".into()),
                },
                Replacement {
                    path: "src/b.rs".into(),
                    content: None,
                },
            ],
        );
        assert!(p.system.ends_with(REPAIR_QUERY));
        assert!(
            p.user
                .starts_with("# build.sh output\n\nexit status 1\nerror[E0425]\n\n# Query")
        );
        assert!(p.user.ends_with(
            "# File replacements\n\n--- FILE REPLACEMENT [src/a.rs] ---\nfn a() {}\n--- FILE REMOVED [src/b.rs] ---\n"
        ));
    }

    #[test]
    fn a_rejection_keeps_the_last_build_output() {
        let p = repair(
            &Failure {
                rejected: vec!["no blocks".to_owned()],
                build: Some((2, "build.sh exited with status 1\nerror: x".to_owned())),
            },
            "q",
            "c",
            &[],
        );
        assert!(p.user.starts_with(
            "# Rejected response\n\nYour previous response was rejected and NOTHING from it was applied (the files are as listed under File replacements):\n- no blocks\n\n# build.sh output\n\n(from the build of attempt 2; the files have not changed since)\nbuild.sh exited with status 1\nerror: x\n\n# Query\n\nq"
        ));
        let p = repair(
            &Failure {
                rejected: vec!["no blocks".to_owned()],
                build: None,
            },
            "q",
            "c",
            &[],
        );
        assert!(p.user.contains(
            "- no blocks\n\n# build.sh output\n\n(build.sh has not run yet: no response has been applied)\n\n# Query"
        ));
    }
}
