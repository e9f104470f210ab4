//! Validation: the problems of a shaped message, each an imperative sentence
//! for the model, all sent back in one repair request.
//!
//! [`validate`] holds the rules every commit message follows (subject, width,
//! commentary, mood, amend and submodule rules); [`squash_problems`] adds
//! those of a squash-merge message (no pull-request prose, no commit-by-commit
//! list); [`style_problem`] those of the repository's subject style.

use std::sync::LazyLock;

use regex::Regex;

use crate::WIDTH;
use crate::built_in;
use crate::message::subject;
use crate::reflow::{UNBREAKABLE, is_code_indented};
use crate::refs::task_id_suffix;
use crate::shape::strip_controls;
use crate::style::{Prefix, SubjectStyle, past_tense};
use crate::trailer::is_trailer_line;

/// Extra rules for validating a message, from the task at hand
/// ([`Checks::rules`](crate::Checks::rules)).
#[derive(Debug, Clone, Default)]
pub struct Rules {
    /// When amending: the subject of the commit being amended, which the new
    /// message must keep.
    pub amend_subject: Option<String>,
    /// When amending: the whole original message. Delta phrasing ("also",
    /// "in addition") that already occurs in it, or in the original subject,
    /// is allowed.
    pub amend_original: Option<String>,
    /// Submodules whose new commits the message must mention.
    pub submodules: Vec<SubmoduleRule>,
}

/// A submodule whose pointer the commit moves.
#[derive(Debug, Clone)]
pub struct SubmoduleRule {
    /// The submodule's path in the superproject.
    pub path: String,
    /// Subjects of the submodule commits the pointer move brings in; the
    /// message must contain at least one of them. Empty means no requirement.
    pub subjects: Vec<String>,
}

/// The problem reported for an empty message.
const EMPTY_MESSAGE: &str = "the message is empty; reply with a commit message";

/// Checks a shaped message and returns its problems as imperative sentences
/// for the model, in a stable order; empty means the message is valid.
///
/// Checked, in this order: the message is not empty; no code fences; the
/// subject exists, fits in [`WIDTH`] characters (a task-ID suffix such as
/// ` (ABC-123)` does not count), has a word outside markup tags (a bare
/// `<environment_context>` echoed from the prompt is not a subject), does not
/// end with a period, does not start (after a type or component prefix) with
/// a past tense ("Fixed", "Added": [`past_tense`]) and is followed by a blank
/// line when there is a body; no commentary lines ("Here is…", "Let me
/// know…", "as an AI"); body lines fit in [`WIDTH`] unless they are code,
/// trailers or a single word too long to wrap; when amending
/// ([`Rules::amend_subject`]), the original subject is kept exactly and the
/// message is not phrased as a delta ("also", "the previous commit") unless
/// the original message already was; and each submodule rule's summaries are
/// mentioned.
///
/// A kept amend subject ([`Rules::keeps_subject`]) is exempt from the rules
/// of a subject's form (length, words, period, mood, commentary): it is the
/// commit's existing subject, which the message must not change.
pub(crate) fn validate(message: &str, rules: &Rules) -> Vec<String> {
    if message.trim().is_empty() {
        return vec![EMPTY_MESSAGE.to_owned()];
    }
    let lines: Vec<&str> = message.lines().collect();
    let mut problems = Vec::new();
    if message.contains("```") {
        problems
            .push("remove the code fences (```); reply with the plain commit message".to_owned());
    }
    let kept = rules.keeps_subject(subject(message));
    check_subject(&lines, kept, &mut problems);
    // A kept subject may read like commentary ("Here is the fix for …").
    check_commentary(&lines[usize::from(kept)..], &mut problems);
    check_body_width(&lines, &mut problems);
    if let Some(original) = &rules.amend_subject {
        check_amend(
            message,
            rules,
            original,
            rules.amend_original.as_deref(),
            &mut problems,
        );
    }
    check_submodules(message, &rules.submodules, &mut problems);
    problems
}

/// The subject exists and is separated from the body by a blank line; unless
/// it is the `kept` amend subject, it fits, has words, has no final period and
/// is not in the past tense.
fn check_subject(lines: &[&str], kept: bool, problems: &mut Vec<String>) {
    let first = lines.first().copied().unwrap_or("");
    if first.trim().is_empty() {
        problems
            .push("start the message with a one-line subject; the first line is blank".to_owned());
        return;
    }
    if !kept {
        check_subject_form(first, problems);
    }
    if lines.get(1).is_some_and(|second| !second.trim().is_empty()) {
        problems.push(
            "put one blank line between the subject and the body; line 2 must be blank".to_owned(),
        );
    }
}

/// The rules of a new subject's form: length, words, final period, mood.
fn check_subject_form(first: &str, problems: &mut Vec<String>) {
    let task = task_id_suffix(first);
    let counted = match &task {
        Some(task) => first
            .trim_end()
            .strip_suffix(task.suffix.as_str())
            .unwrap_or(first),
        None => first,
    };
    let counted = counted.trim_end();
    let length = counted.chars().count();
    if length > WIDTH {
        let not_counting = if task.is_some() {
            " not counting the task ID"
        } else {
            ""
        };
        problems.push(format!(
            "shorten the subject to at most {WIDTH} characters; it has {length}{not_counting}"
        ));
    }
    if !has_words(counted) {
        problems.push(format!(
            "write a subject that says in words what the change does; '{}' has no words outside markup",
            quote(counted, QUOTE_LIMIT)
        ));
        return;
    }
    if counted.ends_with('.') && !counted.ends_with("..") {
        problems.push("remove the period at the end of the subject".to_owned());
    }
    let prefix = Prefix::of(counted);
    let word = prefix
        .description(counted)
        .split_whitespace()
        .next()
        .unwrap_or("");
    if past_tense(word) {
        problems.push(format!(
            "write the subject in the imperative mood, as a command (\"Fix\", not \"Fixed\"); '{}' is past tense",
            word.trim_matches(|c: char| !c.is_alphanumeric())
        ));
    }
}

/// A markup tag such as `<environment_context>` or `</diff>`: prompt
/// structure a model sometimes echoes instead of answering.
static MARKUP_TAG: LazyLock<Regex> =
    LazyLock::new(|| built_in(r"</?[A-Za-z_][\w.:-]*(?:\s[^<>]*)?/?>"));

/// Whether `subject` has a letter outside markup tags.
fn has_words(subject: &str) -> bool {
    MARKUP_TAG
        .replace_all(subject, " ")
        .chars()
        .any(char::is_alphabetic)
}

/// Lines that talk to the reader instead of describing the change.
static COMMENTARY_START: LazyLock<Regex> = LazyLock::new(|| {
    built_in(
        r"(?i)^(?:(?:here\s+is|here['’]s|i['’]ve|i\s+have|let\s+me\s+know|hope\s+this|this\s+commit\s+message|note\s+to\s+(?:the\s+)?reviewers?)\b|explanation\s*:)",
    )
});

/// "As an AI" anywhere in a line.
static AS_AN_AI: LazyLock<Regex> = LazyLock::new(|| built_in(r"(?i)\bas\s+an\s+ai\b"));

/// How many characters of an offending line a problem quotes.
const QUOTE_LIMIT: usize = 60;

/// `text`, trimmed and cut to `max_chars` characters (marked with `…`), for
/// quoting in a problem.
pub fn quote(text: &str, max_chars: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max_chars {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max_chars).collect();
        format!("{}…", cut.trim_end())
    }
}

/// No commentary lines anywhere in the message.
fn check_commentary(lines: &[&str], problems: &mut Vec<String>) {
    for line in lines {
        let core = line.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '*' | '_'));
        if COMMENTARY_START.is_match(core) || AS_AN_AI.is_match(core) {
            problems.push(format!(
                "remove the commentary '{}'; reply with only the commit message",
                quote(line, QUOTE_LIMIT)
            ));
        }
    }
}

/// Body lines fit in [`WIDTH`], except code, trailers and unbreakable lines.
fn check_body_width(lines: &[&str], problems: &mut Vec<String>) {
    let mut too_long = Vec::new();
    let mut paragraph_starts = true;
    let mut in_code = false;
    for (index, line) in lines.iter().enumerate().skip(1) {
        if line.trim().is_empty() {
            paragraph_starts = true;
            continue;
        }
        if paragraph_starts {
            in_code = is_code_indented(line);
            paragraph_starts = false;
        }
        let length = line.chars().count();
        if length > WIDTH && !in_code && !is_trailer_line(line) && !UNBREAKABLE.is_match(line) {
            too_long.push(format!("line {} ({length} characters)", index + 1));
        }
    }
    if !too_long.is_empty() {
        let more = too_long.len().saturating_sub(MAX_LISTED_LINES);
        too_long.truncate(MAX_LISTED_LINES);
        let mut list = too_long.join(", ");
        if more > 0 {
            list.push_str(&format!(" and {more} more"));
        }
        problems.push(format!(
            "wrap the body at {WIDTH} characters; too long: {list}"
        ));
    }
}

/// How many too-long lines one problem names.
const MAX_LISTED_LINES: usize = 10;

/// Phrases that describe an amended commit as a change on top of the
/// previous version, with the words that name them in problems.
static DELTA_PHRASES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"also",
        r"this\s+amend(?:ment)?",
        r"in\s+addition",
        r"additionally",
        r"as\s+well\s+as\s+the\s+previous",
        r"the\s+previous\s+commit",
    ]
    .iter()
    .map(|phrase| built_in(&format!(r"(?i)\b{phrase}\b")))
    .collect()
});

/// `text` with every run of whitespace replaced by one space, trimmed.
fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<&str>>().join(" ")
}

impl Rules {
    /// Whether `subject` is the kept amend subject: exactly the original
    /// (trailing whitespace and control characters aside, which a shaped
    /// message never has), or the original without its task-ID suffix, which
    /// is put back afterwards. No case, punctuation or spacing change is
    /// allowed. `false` when not amending.
    pub(crate) fn keeps_subject(&self, subject: &str) -> bool {
        let Some(original) = &self.amend_subject else {
            return false;
        };
        let original = strip_controls(original);
        let original = original.trim();
        let subject = subject.trim_end();
        if subject == original {
            return true;
        }
        task_id_suffix(original).is_some_and(|task| {
            original
                .strip_suffix(task.suffix.as_str())
                .is_some_and(|bare| subject == bare.trim_end())
        })
    }
}

/// The amended message keeps the subject and describes the final commit.
fn check_amend(
    message: &str,
    rules: &Rules,
    original_subject: &str,
    original_message: Option<&str>,
    problems: &mut Vec<String>,
) {
    if !rules.keeps_subject(subject(message)) {
        problems.push(format!(
            "keep the original subject exactly, character for character (even when it breaks the usual subject rules): '{}'",
            original_subject.trim()
        ));
    }
    for phrase in DELTA_PHRASES.iter() {
        let Some(found) = phrase.find(message) else {
            continue;
        };
        // The kept subject may itself contain a phrase ("Also accept tabs").
        let original = [Some(original_subject), original_message];
        if original
            .into_iter()
            .flatten()
            .any(|text| phrase.is_match(text))
        {
            continue;
        }
        problems.push(format!(
            "remove '{}': describe the final commit as one change, not as changes to the previous version",
            collapse_whitespace(found.as_str())
        ));
    }
}

/// Each submodule's new commits are mentioned by at least one summary.
fn check_submodules(message: &str, submodules: &[SubmoduleRule], problems: &mut Vec<String>) {
    let haystack = collapse_whitespace(message).to_lowercase();
    for rule in submodules {
        let Some(example) = rule.subjects.first() else {
            continue;
        };
        let mentioned = rule.subjects.iter().any(|summary| {
            let needle = collapse_whitespace(summary)
                .to_lowercase()
                .trim_end_matches(|c: char| c.is_ascii_punctuation())
                .to_owned();
            haystack.contains(&needle)
        });
        if !mentioned {
            problems.push(format!(
                "include the commit summaries of submodule '{}', e.g. '{}'",
                rule.path,
                example.trim()
            ));
        }
    }
}

/// Pull-request prose: headings, "This PR …", check boxes, template section
/// names.
static PR_PROSE: LazyLock<Regex> = LazyLock::new(|| {
    built_in(
        r"(?i)^\s*(#{1,6}\s|this (pr|pull request|merge request)\b|in this (pr|pull request)\b|- \[[ x]\]|(summary|test plan|testing|how to test|checklist|reviewers?|screenshots)\s*:?\s*$)",
    )
});

/// A line that starts with a commit id, maybe as a list item.
static SHORT_SHA_LINE: LazyLock<Regex> =
    LazyLock::new(|| built_in(r"^\s*(?:[-*]\s+)?[0-9a-f]{7,40}\b"));

/// A line reduced for comparison with commit subjects: no list marker, no
/// trailing period, lowercase.
fn normalized(text: &str) -> String {
    text.trim()
        .trim_start_matches(['-', '*'])
        .trim()
        .trim_end_matches('.')
        .to_lowercase()
}

/// The subject follows `style`, unless it is the kept amend subject.
pub(crate) fn style_problem(message: &str, style: &SubjectStyle, rules: &Rules) -> Option<String> {
    let subject = subject(message);
    if rules.keeps_subject(subject) {
        return None;
    }
    let task = task_id_suffix(subject);
    let subject = task
        .as_ref()
        .and_then(|task| subject.trim_end().strip_suffix(task.suffix.as_str()))
        .unwrap_or(subject);
    style.problem(subject)
}

/// The squash rules: no pull-request prose, no commit-by-commit changelog
/// (three or more body lines that are `branch_subjects` or start with commit
/// ids).
pub(crate) fn squash_problems(message: &str, branch_subjects: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    let body: Vec<&str> = message.lines().skip(1).collect();
    if let Some(line) = body.iter().find(|l| PR_PROSE.is_match(l)) {
        problems.push(format!(
            "remove pull-request prose such as '{}': write a commit message, not a pull request description",
            line.trim()
        ));
    }
    let subjects: Vec<String> = branch_subjects.iter().map(|s| normalized(s)).collect();
    let listed = body
        .iter()
        .filter(|l| {
            let n = normalized(l);
            (!n.is_empty() && subjects.contains(&n)) || SHORT_SHA_LINE.is_match(l)
        })
        .count();
    if listed >= 3 {
        problems.push(
            "do not list the branch's commits one by one: describe the combined change as one commit".to_owned(),
        );
    }
    problems
}

#[cfg(test)]
mod tests;
