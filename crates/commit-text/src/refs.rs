//! References a message makes: a task ID at the end of its subject
//! (`ABC-123`, `#123`), the pull or merge requests it names and the issues it
//! closes.

use std::sync::LazyLock;

use regex::Regex;

use crate::built_in;

/// A task reference at the end of a subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskId {
    /// The reference itself: `ABC-123` or `#123`.
    pub id: String,
    /// The suffix as written, with its leading whitespace and brackets, e.g.
    /// `" (ABC-123)"`.
    pub suffix: String,
}

/// A task ID: Jira-style `ABC-123` (a project key of two or more uppercase
/// letters, digits or `_`, starting with a letter, as Jira requires) or a
/// GitHub `#123`.
const TASK_ID: &str = r"[A-Z][A-Z0-9_]+-[0-9]+|#[0-9]+";

/// A task ID at the end of a subject, after whitespace, bare or in `()` or
/// `[]`. Groups 1 to 3 hold the ID for each form.
static TASK_SUFFIX: LazyLock<Regex> = LazyLock::new(|| {
    built_in(&format!(
        r"\s+(?:\(({TASK_ID})\)|\[({TASK_ID})\]|({TASK_ID}))$"
    ))
});

/// A whole word that is a task ID.
static TASK_WORD: LazyLock<Regex> = LazyLock::new(|| built_in(&format!(r"^(?:{TASK_ID})$")));

/// Prefixes of standards and algorithms written like Jira keys (`UTF-8`,
/// `SHA-256`), which are never task IDs.
const NOT_TASK_KEYS: [&str; 20] = [
    "AES", "ANSI", "ARM", "CP", "CRC", "ECMA", "GPT", "HTTP", "IEC", "IEEE", "ISO", "MD", "PEP",
    "RFC", "RSA", "SHA", "TLS", "UCS", "UTF", "X",
];

/// Whether `id` (already in task-ID form) is a real task ID rather than a
/// standard such as `UTF-8`.
fn is_task_id(id: &str) -> bool {
    match id.split_once('-') {
        Some((key, _)) => !NOT_TASK_KEYS.contains(&key),
        None => true,
    }
}

/// The task ID at the end of `subject`, if any.
///
/// Recognized: `ABC-123` (Jira-style: a project key of at least two uppercase
/// letters, digits or `_` starting with a letter, a dash, digits) or `#123`
/// (GitHub), bare or in `( )` or `[ ]`, separated from the text before it by
/// whitespace and last on the line (trailing whitespace aside): "Add x
/// (ABC-123)", "Add x [PROJ-9]", "Bump deps (#412)", "Add x ABC-12". Keys
/// of standards and algorithms (`UTF-8`, `SHA-256`, `ISO-9001`, `RFC-2119`,
/// ...) are not task IDs, in any form. A subject that is only an ID has no
/// suffix.
pub fn task_id_suffix(subject: &str) -> Option<TaskId> {
    let subject = subject.trim_end();
    let found = TASK_SUFFIX.captures(subject)?;
    let whole = found.get(0)?;
    if whole.start() == 0 {
        return None;
    }
    let id = (1..=3).find_map(|group| found.get(group))?.as_str();
    is_task_id(id).then(|| TaskId {
        id: id.to_owned(),
        suffix: whole.as_str().to_owned(),
    })
}

/// Whether `subject` mentions a task ID anywhere, in any form (`ABC-1: fix`,
/// `fix #12 crash`, `fix (ABC-1)`).
fn has_task_id(subject: &str) -> bool {
    subject.split_whitespace().any(|word| {
        let word =
            word.trim_matches(|c: char| matches!(c, '(' | ')' | '[' | ']' | ':' | ',' | '.' | ';'));
        TASK_WORD.is_match(word) && is_task_id(word)
    })
}

/// Appends `task.suffix` to the subject of `message` when the subject has no
/// task ID anywhere; otherwise, or when the subject is blank, returns
/// `message` unchanged. The body is never touched. A suffix without leading
/// whitespace gets one space.
pub fn ensure_task_id(message: &str, task: &TaskId) -> String {
    let (first, rest) = match message.split_once('\n') {
        Some((first, rest)) => (first, Some(rest)),
        None => (message, None),
    };
    if first.trim().is_empty() || has_task_id(first) {
        return message.to_owned();
    }
    let mut out = first.trim_end().to_owned();
    if !task.suffix.starts_with(char::is_whitespace) {
        out.push(' ');
    }
    out.push_str(&task.suffix);
    if let Some(rest) = rest {
        out.push('\n');
        out.push_str(rest);
    }
    out
}

/// A pull or merge request reference; one of groups 1 to 6 holds its number.
static PULL_REQUEST: LazyLock<Regex> = LazyLock::new(|| {
    built_in(concat!(
        r"\(#(\d+)\)",
        r"|Merge pull request #(\d+)",
        r"|\(pull request #(\d+)\)",
        r"|See merge request [\w./-]+!(\d+)",
        r"|(?i:\bPR\s*#(\d+))",
        r"|(?m:(?:^|[\s(\[,])!(\d+)\b)",
    ))
});

/// An issue a message closes; group 1 holds its number.
static ISSUE: LazyLock<Regex> =
    LazyLock::new(|| built_in(r"(?i)\b(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?)\s*:?\s*#(\d+)\b"));

/// The numbers of the first matching group of each match of `pattern` in
/// `message`, sorted and unique, zero left out.
fn numbers(pattern: &Regex, message: &str) -> Vec<u64> {
    let mut numbers: Vec<u64> = pattern
        .captures_iter(message)
        .filter_map(|caps| caps.iter().skip(1).flatten().next())
        .filter_map(|m| m.as_str().parse().ok())
        .filter(|&n| n > 0)
        .collect();
    numbers.sort_unstable();
    numbers.dedup();
    numbers
}

/// The pull (or merge) request numbers a message mentions, sorted and unique:
/// `(#123)` anywhere, `Merge pull request #123`, `PR #123` (any case, `PR#123`
/// too), Bitbucket's `(pull request #123)`, GitLab's `See merge request
/// group/repo!45` and a bare `!45` (at the start of a line or after a space,
/// `(`, `[` or `,`).
pub fn pull_requests(message: &str) -> Vec<u64> {
    numbers(&PULL_REQUEST, message)
}

/// The issue numbers a message says it closes, sorted and unique: `Fixes
/// #123`, `Closes #123`, `Resolves #123` and their other forms (`fix`,
/// `fixed`, `close`, `closed`, `resolve`, `resolved`), any case, with an
/// optional colon (`Fixes: #123`).
pub fn issue_references(message: &str) -> Vec<u64> {
    numbers(&ISSUE, message)
}

#[cfg(test)]
mod tests;
