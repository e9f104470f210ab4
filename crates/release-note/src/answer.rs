//! The model's answer to the release-note task: its JSON Schema ([`schema`]) and
//! [`parse`], which checks an answer against the prepared [`ReleaseContext`].
//!
//! - **Invariant:** `parse` reports every problem it finds, in a stable order
//!   (item by item as the model wrote them, then duplicates, then emptiness), each
//!   worded as what to fix: the list goes back to the model in one repair request.
//! - **Invariant:** an [`Answer`] from `parse` has each section once, in
//!   [`Section::ALL`] order, none empty; its items are one line of plain text
//!   (no control characters, escape sequences or bidirectional overrides: the
//!   Markdown reaches terminals and GitHub) with at least one ref, and every ref resolves to exactly one commit or pull request
//!   of the context.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::types::{
    Answer, AnswerItem, AnswerSection, ItemRef, ReleaseCommit, ReleaseContext, Section,
    SubmoduleGroup,
};

/// Most items one section may hold.
const MAX_ITEMS: usize = 25;
/// Most refs one item may carry.
const MAX_REFS: usize = 12;
/// Longest item text, in characters.
const MAX_TEXT: usize = 400;
/// Longest submodule path a ref may name, in characters.
const MAX_PATH: usize = 500;
/// Fewest hex digits a commit ref needs.
const MIN_ID: usize = 7;
/// How many valid choices a problem lists.
const MAX_LISTED: usize = 10;
/// How many characters of an item's text a problem quotes.
const QUOTE_LIMIT: usize = 48;

const KIND_COMMIT: &str = "commit";
const KIND_PULL_REQUEST: &str = "pull_request";
const KIND_SUBMODULE_COMMIT: &str = "submodule_commit";

/// The clause that tells operators why to care in a fixed way.
const LOW_SIGNAL_ADVICE: &str = "state the change itself; add a second clause only for \
    non-obvious impact, required action, compatibility/risk, rollout scope or behaviour changes";

/// Markdown a bullet's text must not start with (the bullet is added locally).
static LEADING_MARKUP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:#+|[-*>]|\d+\.(?:\s|$))").expect("the leading markup pattern is valid")
});

/// Markdown links, autolinks and raw URLs.
static LINK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\[[^\]]*\]\([^)]*\)|<?\b(?:https?|ftp)://[^\s)>]+>?|\bwww\.[^\s)]+")
        .expect("the link pattern is valid")
});

/// Lead-ins that introduce the release instead of stating a change.
static PREAMBLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^(?:(?:in\s+|with\s+)?this\s+(?:release|version|update)|here\s+(?:is|are)|here['’]s)\b",
    )
    .expect("the preamble pattern is valid")
});

/// Generic benefit clauses that add words, not information.
static LOW_SIGNAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i),?\s*\benabling\s+(?:operators|users|developers|administrators|admins|teams|customers|people|you)\s+to\b",
        r"|,\s*reducing\s+(?:\w+\s+)?(?:errors|mistakes|friction|confusion)\b",
        r"|,?\s*\bmaking\s+it\s+easier\s+to\b",
        r"|,?\s*\bimproving\s+the\s+overall\b",
        r"|,?\s*\bensuring\s+(?:a\s+|an\s+)?(?:smoother|seamless|better|more\s+reliable)\b",
        r"|,?\s*\bproviding\s+(?:a\s+|an\s+)?better\b",
        r"|\bfor\s+(?:a\s+)?better\s+(?:user|developer)\s+experience\b",
        r"|\bfor\s+(?:improved|better)\s+maintainability\b",
        r"|,?\s*\bstreamlining\b",
    ))
    .expect("the low-signal pattern is valid")
});

/// The JSON Schema of the model's answer.
///
/// `submodule` is optional (only `submodule_commit` refs need it): for OpenAI's
/// strict mode [`llm::strict_schema`] makes it required and nullable, and
/// [`parse`] drops such `null`s before checking the schema. Length bounds are
/// enforced locally even where strict mode leaves them out.
pub fn schema() -> Value {
    let sections: Vec<&str> = Section::ALL.iter().map(|s| s.key()).collect();
    let reference = json!({
        "type": "object",
        "properties": {
            "kind": {
                "type": "string",
                "enum": [KIND_COMMIT, KIND_PULL_REQUEST, KIND_SUBMODULE_COMMIT],
                "description": "commit: a commit of the range; pull_request: a pull request its commits mention; submodule_commit: a commit of a submodule group."
            },
            "id": {
                "type": "string",
                "minLength": 1,
                "maxLength": 40,
                "description": "A commit's short id (at least 7 hex digits), or a pull request number (123 or #123)."
            },
            "submodule": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_PATH,
                "description": "The submodule group's path; only for kind submodule_commit."
            }
        },
        "required": ["kind", "id"],
        "additionalProperties": false
    });
    let item = json!({
        "type": "object",
        "properties": {
            "text": {
                "type": "string",
                "maxLength": MAX_TEXT,
                "description": "One line of plain text stating the change: no Markdown bullet or heading, no links (they are added from refs)."
            },
            "refs": {
                "type": "array",
                "maxItems": MAX_REFS,
                "items": reference,
                "description": "The commits and pull requests the item describes (at least one)."
            }
        },
        "required": ["text", "refs"],
        "additionalProperties": false
    });
    json!({
        "type": "object",
        "properties": {
            "sections": {
                "type": "array",
                "maxItems": Section::ALL.len(),
                "items": {
                    "type": "object",
                    "properties": {
                        "section": {"type": "string", "enum": sections},
                        "items": {"type": "array", "maxItems": MAX_ITEMS, "items": item}
                    },
                    "required": ["section", "items"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["sections"],
        "additionalProperties": false
    })
}

#[derive(Deserialize)]
struct WireAnswer {
    sections: Vec<WireSection>,
}

#[derive(Deserialize)]
struct WireSection {
    section: String,
    items: Vec<WireItem>,
}

#[derive(Deserialize)]
struct WireItem {
    text: String,
    refs: Vec<WireRef>,
}

#[derive(Deserialize)]
struct WireRef {
    kind: String,
    id: String,
    #[serde(default)]
    submodule: Option<String>,
}

/// Parses and validates an answer against the context: `Ok(Answer)` or every
/// problem found.
///
/// Sections given twice are merged; the result lists sections in
/// [`Section::ALL`] order and leaves empty ones out. Item texts are trimmed; refs
/// keep the model's commit ids (lowercased) and drop repeats of the same target.
pub fn parse(text: &str, ctx: &ReleaseContext) -> Result<Answer, Vec<String>> {
    let value = agent::extract_json(text).map_err(|e| {
        vec![format!(
            "{e}: reply with one JSON object matching the schema"
        )]
    })?;
    let schema = schema();
    let value = agent::schema::drop_null_optionals(&value, &schema);
    agent::schema::validate(&value, &schema)
        .map_err(|e| vec![format!("fix the JSON shape: {e}")])?;
    let wire: WireAnswer =
        serde_json::from_value(value).map_err(|e| vec![format!("fix the JSON shape: {e}")])?;

    let mut problems = Vec::new();
    let mut merged: Vec<Vec<AnswerItem>> = vec![Vec::new(); Section::ALL.len()];
    let mut written: Vec<(String, String)> = Vec::new(); // (place, normalized text)
    for (i, wire_section) in wire.sections.iter().enumerate() {
        let Some(slot) = Section::ALL
            .iter()
            .position(|s| s.key() == wire_section.section)
        else {
            problems.push(format!(
                "$.sections[{i}].section: '{}' is not a section; use one of: {}",
                wire_section.section,
                keys().join(", ")
            ));
            continue;
        };
        for (j, item) in wire_section.items.iter().enumerate() {
            let text = item.text.trim();
            let place = place(i, j, text);
            check_text(text, &place, &mut problems);
            let refs = resolve_refs(&item.refs, ctx, &place, &mut problems);
            written.push((place, normalize(text)));
            merged[slot].push(AnswerItem {
                text: text.to_owned(),
                refs,
            });
        }
    }
    check_duplicates(&written, &mut problems);
    let recommended = ctx.candidates.iter().filter(|c| c.include).count();
    if written.is_empty() && recommended > 0 {
        problems.push(format!(
            "the answer has no items, but the context recommends {recommended} {} \
             (include: true): write an item for each of them",
            plural(recommended, "candidate", "candidates")
        ));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let sections = Section::ALL
        .into_iter()
        .zip(merged)
        .filter(|(_, items)| !items.is_empty())
        .map(|(section, items)| AnswerSection { section, items })
        .collect();
    Ok(Answer { sections })
}

fn keys() -> Vec<&'static str> {
    Section::ALL.iter().map(|s| s.key()).collect()
}

/// Where an item is, for problems: its JSON path and the start of its text.
fn place(section: usize, item: usize, text: &str) -> String {
    let path = format!("$.sections[{section}].items[{item}]");
    if text.is_empty() {
        return path;
    }
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let quoted = if one_line.chars().count() <= QUOTE_LIMIT {
        one_line
    } else {
        let cut: String = one_line.chars().take(QUOTE_LIMIT).collect();
        format!("{}…", cut.trim_end())
    };
    format!("{path} (\"{quoted}\")")
}

/// One line of plain text that states a change.
fn check_text(text: &str, place: &str, problems: &mut Vec<String>) {
    if text.is_empty() {
        problems.push(format!("{place}: write the item's text; it is empty"));
        return;
    }
    if text.contains(['\n', '\r']) {
        problems.push(format!(
            "{place}: put the text on one line; it contains a line break"
        ));
    }
    if text.chars().any(|c| {
        (c.is_control() && !matches!(c, '\n' | '\r'))
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }) {
        problems.push(format!(
            "{place}: remove the control characters (escapes, bidirectional overrides); write plain text"
        ));
    }
    if let Some(mark) = LEADING_MARKUP.find(text) {
        problems.push(format!(
            "{place}: remove the leading '{}'; write plain text (bullets and headings are added locally)",
            mark.as_str().trim()
        ));
    }
    let links: Vec<&str> = LINK.find_iter(text).map(|m| m.as_str()).collect();
    if !links.is_empty() {
        problems.push(format!(
            "{place}: remove {} '{}'; links to commits and pull requests are added locally from refs",
            plural(links.len(), "the link", "the links"),
            links.join("', '")
        ));
    }
    if let Some(lead) = PREAMBLE.find(text) {
        problems.push(format!(
            "{place}: drop the preamble '{}'; state the change itself",
            lead.as_str()
        ));
    }
    let clauses: Vec<&str> = LOW_SIGNAL
        .find_iter(text)
        .map(|m| m.as_str().trim())
        .collect();
    if !clauses.is_empty() {
        problems.push(format!(
            "{place}: remove the generic {} '{}'; {LOW_SIGNAL_ADVICE}",
            plural(clauses.len(), "clause", "clauses"),
            clauses.join("', '")
        ));
    }
}

/// Lowercase, punctuation removed, whitespace collapsed.
fn normalize(text: &str) -> String {
    let kept: String = text
        .chars()
        .filter(|c| c.is_alphanumeric() || c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    kept.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Equal, or one a prefix of the other covering at least 90% of it.
fn same_narrative(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.is_empty() || !long.starts_with(short) {
        return false;
    }
    short.chars().count() * 10 >= long.chars().count() * 9
}

/// Names each item that repeats an earlier one, once, with the first it repeats.
fn check_duplicates(written: &[(String, String)], problems: &mut Vec<String>) {
    for (j, (later, text)) in written.iter().enumerate() {
        if let Some((earlier, _)) = written[..j]
            .iter()
            .find(|(_, other)| same_narrative(other, text))
        {
            problems.push(format!(
                "{earlier} and {later} tell the same change: keep one item and give it the refs of both"
            ));
        }
    }
}

/// Resolves an item's refs, reporting the ones that match nothing; a second ref
/// to the same target is dropped.
fn resolve_refs(
    refs: &[WireRef],
    ctx: &ReleaseContext,
    place: &str,
    problems: &mut Vec<String>,
) -> Vec<ItemRef> {
    if refs.is_empty() {
        problems.push(format!(
            "{place}: add at least one ref (a commit, pull request or submodule commit the item describes)"
        ));
    }
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for reference in refs {
        let resolved = match reference.kind.as_str() {
            KIND_COMMIT => resolve_commit(reference, ctx, place, problems),
            KIND_PULL_REQUEST => resolve_pull_request(reference, ctx, place, problems),
            KIND_SUBMODULE_COMMIT => resolve_submodule_commit(reference, ctx, place, problems),
            other => {
                problems.push(format!(
                    "{place}: ref kind '{other}' is unknown; use {KIND_COMMIT}, {KIND_PULL_REQUEST} or {KIND_SUBMODULE_COMMIT}"
                ));
                None
            }
        };
        if let Some((key, item_ref)) = resolved
            && seen.insert(key)
        {
            out.push(item_ref);
        }
    }
    out
}

fn resolve_commit(
    reference: &WireRef,
    ctx: &ReleaseContext,
    place: &str,
    problems: &mut Vec<String>,
) -> Option<(String, ItemRef)> {
    let id = reference.id.trim().to_lowercase();
    let problem = match lookup(&id, &ctx.commits) {
        Lookup::Found(commit) => {
            return Some((format!("commit {}", commit.id), ItemRef::Commit(id)));
        }
        Lookup::Malformed => format!(
            "{place}: ref commit '{}' is not a commit id; give at least {MIN_ID} hex digits of one of the range's commits",
            reference.id
        ),
        Lookup::Ambiguous(matches) => ambiguous(place, KIND_COMMIT, &reference.id, &matches),
        Lookup::Missing => {
            let owner = ctx
                .submodules
                .iter()
                .find(|group| matches!(lookup(&id, &group.commits), Lookup::Found(_)));
            let hint = owner.map_or(String::new(), |group| {
                format!(
                    " (it is a commit of submodule '{0}': use kind {KIND_SUBMODULE_COMMIT} with submodule '{0}')",
                    group.path
                )
            });
            format!(
                "{place}: ref commit '{}' is not a commit of the range{hint}",
                reference.id
            )
        }
    };
    problems.push(format!(
        "{problem}; valid commit ids: {}",
        listing(ctx.commits.iter().map(|c| c.id.short()))
    ));
    None
}

fn resolve_pull_request(
    reference: &WireRef,
    ctx: &ReleaseContext,
    place: &str,
    problems: &mut Vec<String>,
) -> Option<(String, ItemRef)> {
    let mut known: Vec<u64> = Vec::new();
    for number in ctx.commits.iter().flat_map(|c| &c.pull_requests) {
        if !known.contains(number) {
            known.push(*number);
        }
    }
    let id = reference.id.trim();
    let digits = id.strip_prefix('#').unwrap_or(id);
    let number = digits
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| digits.parse::<u64>().ok())
        .flatten();
    let problem = match number {
        Some(n) if known.contains(&n) => {
            return Some((format!("pull request {n}"), ItemRef::PullRequest(n)));
        }
        Some(n) => {
            format!("{place}: ref pull_request '#{n}' is not mentioned by the range's commits")
        }
        None => format!(
            "{place}: ref pull_request '{}' is not a pull request number; write it as 123 or #123",
            reference.id
        ),
    };
    problems.push(format!(
        "{problem}; valid pull requests: {}",
        listing(known.iter().map(|n| format!("#{n}")))
    ));
    None
}

fn resolve_submodule_commit(
    reference: &WireRef,
    ctx: &ReleaseContext,
    place: &str,
    problems: &mut Vec<String>,
) -> Option<(String, ItemRef)> {
    let groups = || listing(ctx.submodules.iter().map(|g| g.path.clone()));
    let Some(path) = reference.submodule.as_deref().map(str::trim) else {
        problems.push(format!(
            "{place}: ref submodule_commit '{}' needs 'submodule', the path of its group; valid submodules: {}",
            reference.id,
            groups()
        ));
        return None;
    };
    let Some(group) = ctx.submodules.iter().find(|g| g.path == path) else {
        problems.push(format!(
            "{place}: ref submodule_commit '{}' names unknown submodule '{path}'; valid submodules: {}",
            reference.id,
            groups()
        ));
        return None;
    };
    let id = reference.id.trim().to_lowercase();
    let problem = match lookup(&id, &group.commits) {
        Lookup::Found(commit) => {
            let key = format!("submodule {path} commit {}", commit.id);
            let item_ref = ItemRef::SubmoduleCommit {
                path: group.path.clone(),
                id,
            };
            return Some((key, item_ref));
        }
        Lookup::Malformed => format!(
            "{place}: ref submodule_commit '{}' is not a commit id; give at least {MIN_ID} hex digits of one of the submodule's commits",
            reference.id
        ),
        Lookup::Ambiguous(matches) => {
            ambiguous(place, KIND_SUBMODULE_COMMIT, &reference.id, &matches)
        }
        Lookup::Missing => {
            let hint = if matches!(lookup(&id, &ctx.commits), Lookup::Found(_)) {
                format!(" (it is a commit of the parent repository: use kind {KIND_COMMIT})")
            } else {
                String::new()
            };
            format!(
                "{place}: ref submodule_commit '{}' is not a listed commit of submodule '{path}'{hint}",
                reference.id
            )
        }
    };
    problems.push(format!(
        "{problem}; valid commit ids of submodule '{path}': {}",
        group_ids(group)
    ));
    None
}

fn group_ids(group: &SubmoduleGroup) -> String {
    listing(group.commits.iter().map(|c| c.id.short()))
}

/// How an id given by the model matches the listed commits.
enum Lookup<'a> {
    /// Not hex, or shorter than [`MIN_ID`], or longer than a full id.
    Malformed,
    Found(&'a ReleaseCommit),
    Ambiguous(Vec<&'a ReleaseCommit>),
    Missing,
}

/// Finds the one commit whose full hex id starts with `id` (lowercase).
fn lookup<'a>(id: &str, commits: &'a [ReleaseCommit]) -> Lookup<'a> {
    if id.len() < MIN_ID || id.len() > 40 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Lookup::Malformed;
    }
    let matches: Vec<&ReleaseCommit> = commits
        .iter()
        .filter(|c| c.id.to_hex().starts_with(id))
        .collect();
    match matches.as_slice() {
        [] => Lookup::Missing,
        [one] => Lookup::Found(one),
        _ => Lookup::Ambiguous(matches),
    }
}

fn ambiguous(place: &str, kind: &str, id: &str, matches: &[&ReleaseCommit]) -> String {
    let longer: Vec<String> = matches
        .iter()
        .map(|c| c.id.to_hex().chars().take(12).collect())
        .collect();
    format!(
        "{place}: ref {kind} '{id}' matches {} commits ({}); give more digits",
        matches.len(),
        longer.join(", ")
    )
}

/// At most [`MAX_LISTED`] choices, then how many more there are.
fn listing(choices: impl Iterator<Item = String>) -> String {
    let all: Vec<String> = choices.collect();
    if all.is_empty() {
        return "none".to_owned();
    }
    let shown = all[..all.len().min(MAX_LISTED)].join(", ");
    match all.len().saturating_sub(MAX_LISTED) {
        0 => shown,
        rest => format!("{shown}, … and {rest} more"),
    }
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{self, end, github, oid};
    use crate::types::{Candidate, Confidence, Range, SubmoduleGroup};

    /// A GitHub-linked parent with two commits, a submodule linked to another
    /// GitHub repository, and an unlinked submodule without commits.
    fn commit(prefix: &str, subject: &str, pull_requests: &[u64]) -> ReleaseCommit {
        ReleaseCommit {
            pull_requests: pull_requests.to_vec(),
            ..fixtures::commit(prefix, subject)
        }
    }

    fn context() -> ReleaseContext {
        ReleaseContext {
            range: Range {
                base: end("v1.2.0", "0a0a0a0"),
                release: end("v1.3.0", "abc1234"),
                version: Some("1.3.0".to_owned()),
                bump: None,
            },
            commits: vec![
                commit("abc1234", "Add --json output to status (#12)", &[12]),
                commit("def5678", "Fix crash on empty config", &[]),
            ],
            more_commits: 0,
            submodules: vec![
                SubmoduleGroup {
                    path: "vendor/lib".to_owned(),
                    old: Some(oid("1111111")),
                    new: Some(oid("2222222")),
                    commits: vec![commit("3333333", "Handle empty input", &[])],
                    more: 0,
                    note: None,
                    links: Some(github("acme/lib")),
                },
                SubmoduleGroup {
                    path: "vendor/old".to_owned(),
                    old: Some(oid("4444444")),
                    new: Some(oid("5555555")),
                    commits: Vec::new(),
                    more: 0,
                    note: Some("not checked out".to_owned()),
                    links: None,
                },
            ],
            candidates: vec![Candidate {
                section: Section::Features,
                draft: "Add --json output to status".to_owned(),
                confidence: Confidence::High,
                include: true,
                reason: "runtime change".to_owned(),
                refs: vec![ItemRef::Commit("abc1234".to_owned())],
                evidence: Vec::new(),
            }],
            links: Some(github("acme/app")),
            touched_code: true,
        }
    }

    /// The problems of an answer with one `features` section holding `items`.
    fn problems(items: Value) -> Vec<String> {
        problems_in(items, &context())
    }

    fn problems_in(items: Value, ctx: &ReleaseContext) -> Vec<String> {
        let text = json!({"sections": [{"section": "features", "items": items}]}).to_string();
        parse(&text, ctx).expect_err("the answer has problems")
    }

    fn item(text: &str) -> Value {
        json!({"text": text, "refs": [{"kind": "commit", "id": "abc1234"}]})
    }

    /// Asserts there is exactly one problem and that it contains `fragment`.
    fn check_one(items: Value, fragment: &str) {
        let found = problems(items);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            found[0].contains(fragment),
            "{:?} should mention {fragment:?}",
            found[0]
        );
    }

    fn valid_answer() -> Value {
        json!({"sections": [
            {"section": "fixes", "items": [{
                "text": "  Fix a crash when the config file is empty.  ",
                "refs": [
                    {"kind": "commit", "id": "DEF5678", "submodule": null},
                    {"kind": "commit", "id": "def56780"}
                ]
            }]},
            {"section": "features", "items": [{
                "text": "Add `--json` output to `status`.",
                "refs": [
                    {"kind": "commit", "id": "abc1234"},
                    {"kind": "pull_request", "id": "#12", "submodule": null}
                ]
            }]},
            {"section": "fixes", "items": [{
                "text": "Handle empty input in the vendored parser.",
                "refs": [{"kind": "submodule_commit", "id": "3333333", "submodule": "vendor/lib"}]
            }]},
            {"section": "other", "items": []}
        ]})
    }

    #[test]
    fn a_valid_answer_parses_merged_and_ordered() {
        let answer = parse(&valid_answer().to_string(), &context()).expect("valid");
        let expected = Answer {
            sections: vec![
                AnswerSection {
                    section: Section::Features,
                    items: vec![AnswerItem {
                        text: "Add `--json` output to `status`.".to_owned(),
                        refs: vec![
                            ItemRef::Commit("abc1234".to_owned()),
                            ItemRef::PullRequest(12),
                        ],
                    }],
                },
                AnswerSection {
                    section: Section::Fixes,
                    items: vec![
                        AnswerItem {
                            text: "Fix a crash when the config file is empty.".to_owned(),
                            // The longer prefix of the same commit is a repeat.
                            refs: vec![ItemRef::Commit("def5678".to_owned())],
                        },
                        AnswerItem {
                            text: "Handle empty input in the vendored parser.".to_owned(),
                            refs: vec![ItemRef::SubmoduleCommit {
                                path: "vendor/lib".to_owned(),
                                id: "3333333".to_owned(),
                            }],
                        },
                    ],
                },
            ],
        };
        assert_eq!(answer, expected);
    }

    #[test]
    fn json_is_found_in_fences_and_pull_requests_take_both_forms() {
        let text = format!(
            "```json\n{}\n```",
            json!({"sections": [{"section": "features", "items": [{
                "text": "Add JSON output.",
                "refs": [{"kind": "pull_request", "id": "12"}]
            }]}]})
        );
        let answer = parse(&text, &context()).expect("valid");
        assert_eq!(answer.sections[0].items[0].refs, [ItemRef::PullRequest(12)]);
    }

    #[test]
    fn the_schema_accepts_the_valid_answer_once_nulls_are_dropped() {
        let schema = schema();
        let answer = valid_answer();
        // Strict mode sends `null` for the optional `submodule`; the local schema
        // only accepts it once such nulls are dropped, which `parse` does.
        let err = agent::schema::validate(&answer, &schema).expect_err("null is not a string");
        assert!(
            err.contains("submodule: expected string, got null"),
            "{err}"
        );
        let cleaned = agent::schema::drop_null_optionals(&answer, &schema);
        assert!(!cleaned.to_string().contains("null"));
        assert_eq!(agent::schema::validate(&cleaned, &schema), Ok(()));
        assert!(agent::schema::strictness_problems(&schema).is_empty());
    }

    #[test]
    fn the_strict_schema_makes_submodule_required_and_nullable() {
        let strict = llm::strict_schema(&schema());
        let reference = &strict["properties"]["sections"]["items"]["properties"]["items"]["items"]
            ["properties"]["refs"]["items"];
        let mut required: Vec<&str> = reference["required"]
            .as_array()
            .expect("a required list")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        required.sort_unstable();
        assert_eq!(required, ["id", "kind", "submodule"]);
        assert_eq!(
            reference["properties"]["submodule"]["type"],
            json!(["string", "null"])
        );
        assert_eq!(reference["additionalProperties"], json!(false));
        // What a strict-mode model sends is valid against the strict schema, and
        // parses.
        let sent = json!({"sections": [{"section": "features", "items": [{
            "text": "Add JSON output.",
            "refs": [
                {"kind": "commit", "id": "abc1234", "submodule": null},
                {"kind": "submodule_commit", "id": "3333333", "submodule": "vendor/lib"}
            ]
        }]}]});
        assert_eq!(agent::schema::validate(&sent, &strict), Ok(()));
        assert!(parse(&sent.to_string(), &context()).is_ok());
    }

    #[test]
    fn answers_that_are_not_json_or_break_the_schema_are_one_problem() {
        let found = parse("Sure! Here are the notes.", &context()).expect_err("not JSON");
        assert_eq!(
            found,
            ["the answer is not valid JSON: reply with one JSON object matching the schema"]
        );
        let text = json!({"sections": [{"section": "misc", "items": []}]}).to_string();
        let found = parse(&text, &context()).expect_err("unknown section");
        assert_eq!(found.len(), 1);
        assert!(
            found[0].starts_with("fix the JSON shape: $.sections[0].section: must be one of"),
            "{found:?}"
        );
        let text = json!({"sections": [{"section": "fixes", "items": [
            {"text": "Fix it.", "refs": [], "note": "x"}
        ]}]})
        .to_string();
        let found = parse(&text, &context()).expect_err("unknown field");
        assert!(found[0].contains("unknown field 'note'"), "{found:?}");
    }

    #[test]
    fn item_text_must_be_one_plain_line() {
        assert_eq!(
            problems(json!([item("   ")])),
            ["$.sections[0].items[0]: write the item's text; it is empty"]
        );
        assert_eq!(
            problems(json!([item("Add JSON output.\nAlso docs.")])),
            [
                "$.sections[0].items[0] (\"Add JSON output. Also docs.\"): put the text on one \
                 line; it contains a line break"
            ]
        );
        for (text, mark) in [
            ("## Add JSON output", "##"),
            ("- Add JSON output", "-"),
            ("* Add JSON output", "*"),
            ("**Add** JSON output", "*"),
            ("> Add JSON output", ">"),
            ("1. Add JSON output", "1."),
        ] {
            check_one(json!([item(text)]), &format!("remove the leading '{mark}'"));
        }
        // A version number is not a list marker.
        assert!(parse_one("2.0 configs load faster.").is_ok());
        for text in [
            "Add \u{1b}[2JJSON output.",
            "Add JSON\u{7} output.",
            "Add \u{202e}tuptuo NOSJ.",
        ] {
            check_one(json!([item(text)]), "remove the control characters");
        }
    }

    fn parse_one(text: &str) -> Result<Answer, Vec<String>> {
        let answer = json!({"sections": [{"section": "features", "items": [item(text)]}]});
        parse(&answer.to_string(), &context())
    }

    #[test]
    fn links_and_urls_are_rejected() {
        check_one(
            json!([item(
                "Add JSON output ([#12](https://github.com/acme/app/pull/12))."
            )]),
            "remove the link '[#12](https://github.com/acme/app/pull/12)'; links to commits \
             and pull requests are added locally from refs",
        );
        check_one(
            json!([item(
                "See https://example.com/a and www.example.org for details."
            )]),
            "remove the links 'https://example.com/a', 'www.example.org'",
        );
    }

    #[test]
    fn preambles_are_rejected() {
        for (text, lead) in [
            ("This release adds JSON output.", "This release"),
            ("Here is the list of changes.", "Here is"),
            ("In this release, status prints JSON.", "In this release"),
        ] {
            check_one(
                json!([item(text)]),
                &format!("drop the preamble '{lead}'; state the change itself"),
            );
        }
    }

    #[test]
    fn generic_benefit_clauses_are_rejected() {
        for (text, phrase) in [
            (
                "Add JSON output, enabling operators to script checks.",
                ", enabling operators to",
            ),
            (
                "Add JSON output enabling users to parse it.",
                "enabling users to",
            ),
            (
                "Validate config keys, reducing editing errors.",
                ", reducing editing errors",
            ),
            (
                "Add JSON output, making it easier to script.",
                ", making it easier to",
            ),
            (
                "Cache lookups, improving the overall speed.",
                ", improving the overall",
            ),
            (
                "Retry uploads, ensuring a smoother rollout.",
                ", ensuring a smoother",
            ),
            (
                "Rename flags, providing a better CLI.",
                ", providing a better",
            ),
            (
                "Reword errors for a better user experience.",
                "for a better user experience",
            ),
            (
                "Split the parser for improved maintainability.",
                "for improved maintainability",
            ),
            ("Merge two commands, streamlining setup.", ", streamlining"),
        ] {
            let found = problems(json!([item(text)]));
            assert_eq!(found.len(), 1, "{text}: {found:?}");
            assert!(
                found[0].contains(&format!("remove the generic clause '{phrase}'")),
                "{found:?}"
            );
            assert!(found[0].ends_with(LOW_SIGNAL_ADVICE), "{found:?}");
        }
        check_one(
            json!([item(
                "Add JSON output, enabling users to script it, streamlining CI."
            )]),
            "remove the generic clauses ', enabling users to', ', streamlining'",
        );
        // Concrete effects are fine.
        assert!(parse_one("Cache lookups, reducing startup time by 40%.").is_ok());
    }

    #[test]
    fn duplicate_narratives_name_both_items() {
        let found = problems(json!([
            item("Add JSON output to status."),
            item("add json output, to status"),
        ]));
        assert_eq!(
            found,
            [
                "$.sections[0].items[0] (\"Add JSON output to status.\") and \
                 $.sections[0].items[1] (\"add json output, to status\") tell the same change: \
                 keep one item and give it the refs of both"
            ]
        );
        // A prefix covering at least 90% of the longer text, across sections.
        let text = json!({"sections": [
            {"section": "features", "items": [item("Add JSON output to the status command")]},
            {"section": "fixes", "items": [item("Add JSON output to the status command now")]}
        ]})
        .to_string();
        let found = parse(&text, &context()).expect_err("near duplicate");
        assert_eq!(found.len(), 1);
        assert!(found[0].starts_with("$.sections[0].items[0]"), "{found:?}");
        assert!(found[0].contains("and $.sections[1].items[0]"), "{found:?}");
        // A shorter prefix is a different item.
        assert!(
            parse(
                &json!({"sections": [{"section": "features", "items": [
                    item("Add JSON output"),
                    item("Add JSON output to the status and log commands"),
                ]}]})
                .to_string(),
                &context()
            )
            .is_ok()
        );
    }

    #[test]
    fn every_item_needs_a_ref() {
        check_one(
            json!([{"text": "Add JSON output.", "refs": []}]),
            "(\"Add JSON output.\"): add at least one ref",
        );
    }

    fn with_ref(reference: Value) -> Vec<String> {
        problems(json!([{"text": "Add JSON output.", "refs": [reference]}]))
    }

    #[test]
    fn commit_refs_must_name_one_commit_of_the_range() {
        let at = "$.sections[0].items[0] (\"Add JSON output.\")";
        assert_eq!(
            with_ref(json!({"kind": "commit", "id": "abc12"})),
            [format!(
                "{at}: ref commit 'abc12' is not a commit id; give at least 7 hex digits of one \
                 of the range's commits; valid commit ids: abc1234, def5678"
            )]
        );
        assert_eq!(
            with_ref(json!({"kind": "commit", "id": "xyz1234"}))[0],
            format!(
                "{at}: ref commit 'xyz1234' is not a commit id; give at least 7 hex digits of one \
                 of the range's commits; valid commit ids: abc1234, def5678"
            )
        );
        assert_eq!(
            with_ref(json!({"kind": "commit", "id": "fff0000"})),
            [format!(
                "{at}: ref commit 'fff0000' is not a commit of the range; valid commit ids: \
                 abc1234, def5678"
            )]
        );
        assert_eq!(
            with_ref(json!({"kind": "commit", "id": "3333333"})),
            [format!(
                "{at}: ref commit '3333333' is not a commit of the range (it is a commit of \
                 submodule 'vendor/lib': use kind submodule_commit with submodule 'vendor/lib'); \
                 valid commit ids: abc1234, def5678"
            )]
        );
        let mut ctx = context();
        ctx.commits.push(commit("def56789", "Another", &[]));
        let found = problems_in(
            json!([{"text": "Fix it.", "refs": [{"kind": "commit", "id": "def5678"}]}]),
            &ctx,
        );
        assert_eq!(found.len(), 1);
        assert!(
            found[0].contains(
                "ref commit 'def5678' matches 2 commits (def567800000, def567890000); give more digits"
            ),
            "{found:?}"
        );
    }

    #[test]
    fn listed_choices_are_capped() {
        let mut ctx = context();
        ctx.commits = (0..12)
            .map(|i| commit(&format!("{i:x}aaaaaa"), "Change", &[]))
            .collect();
        let found = problems_in(
            json!([{"text": "Fix it.", "refs": [{"kind": "commit", "id": "fff0000"}]}]),
            &ctx,
        );
        assert!(
            found[0].ends_with(
                "valid commit ids: 0aaaaaa, 1aaaaaa, 2aaaaaa, 3aaaaaa, 4aaaaaa, 5aaaaaa, \
                 6aaaaaa, 7aaaaaa, 8aaaaaa, 9aaaaaa, … and 2 more"
            ),
            "{found:?}"
        );
    }

    #[test]
    fn pull_request_refs_must_be_mentioned_by_the_range() {
        let at = "$.sections[0].items[0] (\"Add JSON output.\")";
        assert_eq!(
            with_ref(json!({"kind": "pull_request", "id": "#99"})),
            [format!(
                "{at}: ref pull_request '#99' is not mentioned by the range's commits; valid pull \
                 requests: #12"
            )]
        );
        assert_eq!(
            with_ref(json!({"kind": "pull_request", "id": "PR-12"})),
            [format!(
                "{at}: ref pull_request 'PR-12' is not a pull request number; write it as 123 or \
                 #123; valid pull requests: #12"
            )]
        );
    }

    #[test]
    fn submodule_commit_refs_must_name_a_group_and_one_of_its_commits() {
        let at = "$.sections[0].items[0] (\"Add JSON output.\")";
        assert_eq!(
            with_ref(json!({"kind": "submodule_commit", "id": "3333333", "submodule": null})),
            [format!(
                "{at}: ref submodule_commit '3333333' needs 'submodule', the path of its group; \
                 valid submodules: vendor/lib, vendor/old"
            )]
        );
        assert_eq!(
            with_ref(json!({"kind": "submodule_commit", "id": "3333333", "submodule": "lib"})),
            [format!(
                "{at}: ref submodule_commit '3333333' names unknown submodule 'lib'; valid \
                 submodules: vendor/lib, vendor/old"
            )]
        );
        assert_eq!(
            with_ref(
                json!({"kind": "submodule_commit", "id": "abc1234", "submodule": "vendor/lib"})
            ),
            [format!(
                "{at}: ref submodule_commit 'abc1234' is not a listed commit of submodule \
                 'vendor/lib' (it is a commit of the parent repository: use kind commit); valid \
                 commit ids of submodule 'vendor/lib': 3333333"
            )]
        );
        assert_eq!(
            with_ref(
                json!({"kind": "submodule_commit", "id": "3333333", "submodule": "vendor/old"})
            ),
            [format!(
                "{at}: ref submodule_commit '3333333' is not a listed commit of submodule \
                 'vendor/old'; valid commit ids of submodule 'vendor/old': none"
            )]
        );
    }

    #[test]
    fn an_empty_answer_is_a_problem_only_when_candidates_are_recommended() {
        let empty = json!({"sections": []}).to_string();
        assert_eq!(
            parse(&empty, &context()).expect_err("a candidate is recommended"),
            [
                "the answer has no items, but the context recommends 1 candidate (include: \
                 true): write an item for each of them"
            ]
        );
        let mut ctx = context();
        ctx.candidates[0].include = false;
        assert_eq!(
            parse(&empty, &ctx),
            Ok(Answer {
                sections: Vec::new()
            })
        );
    }

    #[test]
    fn every_problem_is_reported_in_item_order() {
        let text = json!({"sections": [
            {"section": "fixes", "items": [
                {"text": "This release fixes https://x.io", "refs": []},
                {"text": "Fix the crash.", "refs": [{"kind": "pull_request", "id": "7"}]}
            ]},
            {"section": "features", "items": [
                {"text": "Fix the crash", "refs": [{"kind": "commit", "id": "abc1234"}]}
            ]}
        ]})
        .to_string();
        let found = parse(&text, &context()).expect_err("several problems");
        let first = "$.sections[0].items[0] (\"This release fixes https://x.io\")";
        let second = "$.sections[0].items[1] (\"Fix the crash.\")";
        assert_eq!(
            found,
            [
                format!(
                    "{first}: remove the link 'https://x.io'; links to commits and pull requests \
                     are added locally from refs"
                ),
                format!("{first}: drop the preamble 'This release'; state the change itself"),
                format!(
                    "{first}: add at least one ref (a commit, pull request or submodule commit \
                     the item describes)"
                ),
                format!(
                    "{second}: ref pull_request '#7' is not mentioned by the range's commits; \
                     valid pull requests: #12"
                ),
                format!(
                    "{second} and $.sections[1].items[0] (\"Fix the crash\") tell the same \
                     change: keep one item and give it the refs of both"
                ),
            ],
            "{found:#?}"
        );
    }
}
