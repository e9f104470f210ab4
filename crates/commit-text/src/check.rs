//! One model answer checked against everything a message task asks of it:
//! bounded, [`shape`]d, [`validate`]d, plus the rules of the task at hand
//! (lockfile packages, squash rules).

use crate::refs::TaskId;
use crate::shape::{ShapeOptions, shape};
use crate::style::SubjectStyle;
use crate::validate::{Rules, squash_problems, style_problem, validate};

/// The longest answer shaped at all: 64 KiB, about twice what git-agent's
/// default output cap (8,192 tokens, at about 4 bytes a token) comes to,
/// thinking block included; a commit message is a few hundred bytes. A longer
/// answer comes from a server that ignored the token limit, or from a cap
/// raised far past what a message needs; it is refused whole (one problem,
/// sent back in the repair request) instead of being shaped, so no amount of
/// model text costs more than a bounded amount of work.
pub(crate) const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// What a generated commit message (or squash message) is shaped and checked
/// against.
#[derive(Debug, Clone, Default)]
pub struct Checks {
    pub rules: Rules,
    pub shape_options: ShapeOptions,
    /// The task-ID suffix the final message must keep, if any.
    pub task_id: Option<TaskId>,
    /// Package names a lockfile-only message must mention one of.
    pub lockfile_packages: Vec<String>,
    /// Squash-message rules (`pr-message`): no pull-request prose, no
    /// commit-by-commit changelog of these subjects.
    pub squash: Option<Vec<String>>,
    /// The subject style the prompt asked for ([`SubjectStyle::instruction`]),
    /// which the subject must then follow; `None` checks no style.
    pub style: Option<SubjectStyle>,
}

/// Shapes and validates one answer: `Ok(shaped)` or the problems.
pub fn check(checks: &Checks, raw: &str) -> Result<String, Vec<String>> {
    if raw.len() > MAX_ANSWER_BYTES {
        return Err(vec![format!(
            "the answer is {} bytes long, far more than a commit message; reply with the \
             message alone: a subject line and a short body",
            raw.len()
        )]);
    }
    // The kept amend subject is the subject as it is, however it reads.
    let kept = |line: &str| checks.rules.keeps_subject(line);
    let shaped = shape(raw, &checks.shape_options, &kept);
    let mut problems = validate(&shaped, &checks.rules);
    if let Some(problem) = lockfile_problem(&shaped, &checks.lockfile_packages) {
        problems.push(problem);
    }
    if let Some(problem) = checks
        .style
        .as_ref()
        .and_then(|style| style_problem(&shaped, style, &checks.rules))
    {
        problems.push(problem);
    }
    if let Some(subjects) = &checks.squash {
        problems.extend(squash_problems(&shaped, subjects));
    }
    if problems.is_empty() {
        Ok(shaped)
    } else {
        Err(problems)
    }
}

/// A lockfile-only message must name at least one package it changes.
fn lockfile_problem(message: &str, packages: &[String]) -> Option<String> {
    if packages.is_empty() {
        return None;
    }
    let lower = message.to_lowercase();
    if packages.iter().any(|p| lower.contains(&p.to_lowercase())) {
        return None;
    }
    let examples: Vec<&str> = packages.iter().take(3).map(String::as_str).collect();
    Some(format!(
        "this change only touches lockfiles: name the packages it bumps, e.g. {}",
        examples.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::style::Style;

    #[test]
    fn lockfile_only_messages_name_a_package() {
        let packages = vec!["serde".to_owned(), "tokio".to_owned()];
        assert!(lockfile_problem("Bump serde to 1.0.210", &packages).is_none());
        let problem = lockfile_problem("Update dependencies", &packages).unwrap();
        assert!(problem.contains("serde, tokio"), "{problem}");
        assert!(lockfile_problem("anything", &[]).is_none());
    }

    #[test]
    fn answers_over_the_limit_are_one_problem_without_shaping() {
        let raw = format!("Fix x\n\n{}", "word ".repeat(MAX_ANSWER_BYTES / 4));
        let problems = check(&Checks::default(), &raw).unwrap_err();
        assert_eq!(problems.len(), 1);
        assert!(problems[0].contains("bytes long"), "{problems:?}");
        assert_eq!(
            check(&Checks::default(), "Fix x\n\nBody."),
            Ok("Fix x\n\nBody.".to_owned())
        );
    }

    #[test]
    fn a_kept_subject_survives_shaping_exactly() {
        // Fixed: an amend could never keep a subject that reads like a lead-in
        // or is quoted: shaping removed or unquoted it before the exact
        // comparison.
        for original in [
            "Here is the fix for the searcher's binary detection:",
            "\"Quoted\" subject",
            "\"printer: fix empty lines\"",
        ] {
            let checks = Checks {
                rules: Rules {
                    amend_subject: Some(original.to_owned()),
                    ..Rules::default()
                },
                ..Checks::default()
            };
            assert_eq!(check(&checks, original), Ok(original.to_owned()));
            let answer = format!("Sure, here is the message:\n\n{original}\n\nThe body.");
            assert_eq!(
                check(&checks, &answer),
                Ok(format!("{original}\n\nThe body."))
            );
        }
    }

    #[test]
    fn style_checks_enforce_the_style_asked_for() {
        let checks = Checks {
            squash: Some(Vec::new()),
            style: Some(SubjectStyle::of(Style::Conventional)),
            ..Checks::default()
        };
        let problems = check(&checks, "Retry connects").unwrap_err();
        assert!(problems[0].contains("Conventional Commits"), "{problems:?}");
        assert!(check(&checks, "feat: retry connects").is_ok());
        assert!(check(&checks, "feat: retry connects (NET-1)").is_ok());
        // A repository writing `component: subject` gets what it asked for.
        let checks = Checks {
            style: Some(SubjectStyle::of(Style::Component)),
            ..checks
        };
        assert!(check(&checks, "net: retry connects").is_ok());
        let problems = check(&checks, "feat: retry connects").unwrap_err();
        assert!(problems[0].contains("`feat`"), "{problems:?}");
        // A kept amend subject is exempt.
        let checks = Checks {
            rules: Rules {
                amend_subject: Some("Retry connects".to_owned()),
                ..Rules::default()
            },
            ..checks
        };
        assert!(check(&checks, "Retry connects").is_ok());
    }
}
