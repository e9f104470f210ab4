//! The model's answer to the release-note task: its JSON Schema ([`schema`]) and
//! [`parse`], which checks an answer against the prepared [`ReleaseContext`].
//!
//! - **Invariant:** `parse` reports every problem it finds, in a stable order
//!   (item by item as the model wrote them, then duplicates, then emptiness), each
//!   worded as what to fix: the list goes back to the model in one repair request.
//! - **Invariant:** an [`Answer`] from `parse` has each section once, in
//!   [`Section::ALL`] order, none empty; its items are one line of plain text
//!   (no control characters, escape sequences or bidirectional overrides: the
//!   Markdown reaches terminals and GitHub) with at least one ref, and every ref resolves to exactly one commit, pull
//!   request or issue of the context.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::built_in;
use crate::prepare;
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
const KIND_ISSUE: &str = "issue";
const KIND_SUBMODULE_COMMIT: &str = "submodule_commit";

/// The clause that tells operators why to care in a fixed way.
const LOW_SIGNAL_ADVICE: &str = "state the change itself; add a second clause only for \
    non-obvious impact, required action, compatibility/risk, rollout scope or behaviour changes";

/// Markdown a bullet's text must not start with (the bullet is added locally).
static LEADING_MARKUP: LazyLock<Regex> = LazyLock::new(|| built_in(r"^(?:#+|[-*>]|\d+\.(?:\s|$))"));

/// Markdown links, autolinks and raw URLs.
static LINK: LazyLock<Regex> = LazyLock::new(|| {
    built_in(r"(?i)\[[^\]]*\]\([^)]*\)|<?\b(?:https?|ftp)://[^\s)>]+>?|\bwww\.[^\s)]+")
});

/// Lead-ins that introduce the release instead of stating a change.
static PREAMBLE: LazyLock<Regex> = LazyLock::new(|| {
    built_in(
        r"(?i)^(?:(?:in\s+|with\s+)?this\s+(?:release|version|update)|here\s+(?:is|are)|here['’]s)\b",
    )
});

/// Generic benefit clauses that add words, not information.
static LOW_SIGNAL: LazyLock<Regex> = LazyLock::new(|| {
    built_in(concat!(
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
});

/// The JSON Schema of the model's answer.
///
/// `submodule` is optional (only `submodule_commit` refs need it): for OpenAI's
/// strict mode [`llm::strict_schema`] makes it required and nullable, and
/// [`parse`] drops such `null`s before checking the schema. Length bounds are
/// enforced locally even where strict mode leaves them out.
pub(crate) fn schema() -> Value {
    let sections: Vec<&str> = Section::ALL.iter().map(|s| s.key()).collect();
    let reference = json!({
        "type": "object",
        "properties": {
            "kind": {
                "type": "string",
                "enum": [KIND_COMMIT, KIND_PULL_REQUEST, KIND_ISSUE, KIND_SUBMODULE_COMMIT],
                "description": "commit: a commit of the range; pull_request: a pull request its commits mention; issue: an issue its commits close (Fixes #123); submodule_commit: a commit of a submodule group."
            },
            "id": {
                "type": "string",
                "minLength": 1,
                "maxLength": 40,
                "description": "A commit's short id (at least 7 hex digits), or a pull request or issue number (123 or #123)."
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
                "description": "The commits, pull requests and issues the item describes (at least one)."
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
pub(crate) fn parse(text: &str, ctx: &ReleaseContext) -> Result<Answer, Vec<String>> {
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
    let mut resolver = RefResolver {
        ctx,
        place,
        problems,
    };
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for reference in refs {
        let resolved = match reference.kind.as_str() {
            KIND_COMMIT => resolver.commit(reference),
            KIND_PULL_REQUEST => resolver.number(reference, Numbered::PullRequest),
            KIND_ISSUE => resolver.number(reference, Numbered::Issue),
            KIND_SUBMODULE_COMMIT => resolver.submodule_commit(reference),
            other => {
                resolver.problems.push(format!(
                    "{place}: ref kind '{other}' is unknown; use {KIND_COMMIT}, {KIND_PULL_REQUEST}, {KIND_ISSUE} or {KIND_SUBMODULE_COMMIT}"
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

/// The ref kinds that cite a number.
#[derive(Debug, Clone, Copy)]
enum Numbered {
    PullRequest,
    Issue,
}

impl Numbered {
    /// What it is called in problems, its kind and the other kind.
    fn names(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Numbered::PullRequest => ("pull request", KIND_PULL_REQUEST, KIND_ISSUE),
            Numbered::Issue => ("issue", KIND_ISSUE, KIND_PULL_REQUEST),
        }
    }

    /// Its name with an article.
    fn a_name(self) -> &'static str {
        match self {
            Numbered::PullRequest => "a pull request",
            Numbered::Issue => "an issue",
        }
    }

    fn other_name(self) -> &'static str {
        match self {
            Numbered::PullRequest => "closed issue",
            Numbered::Issue => "pull request",
        }
    }

    fn item_ref(self, n: u64) -> ItemRef {
        match self {
            Numbered::PullRequest => ItemRef::PullRequest(n),
            Numbered::Issue => ItemRef::Issue(n),
        }
    }
}

/// Resolves the refs of the item at `place`, noting each ref that matches
/// nothing.
struct RefResolver<'a> {
    ctx: &'a ReleaseContext,
    place: &'a str,
    problems: &'a mut Vec<String>,
}

impl RefResolver<'_> {
    fn commit(&mut self, reference: &WireRef) -> Option<(String, ItemRef)> {
        let (ctx, place) = (self.ctx, self.place);
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
        self.problems.push(format!(
            "{problem}; valid commit ids: {}",
            listing(ctx.commits.iter().map(|c| c.id.short()))
        ));
        None
    }

    /// A pull request or issue ref: a number the range's messages mention
    /// as that kind. A problem lists every number recognised of both kinds.
    fn number(&mut self, reference: &WireRef, kind: Numbered) -> Option<(String, ItemRef)> {
        let (ctx, place) = (self.ctx, self.place);
        let (pulls, issues) = prepare::valid_numbers(ctx);
        let (known, other) = match kind {
            Numbered::PullRequest => (&pulls, &issues),
            Numbered::Issue => (&issues, &pulls),
        };
        let id = reference.id.trim();
        let digits = id.strip_prefix('#').unwrap_or(id);
        let number = digits
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| digits.parse::<u64>().ok())
            .flatten();
        let (name, this_kind, other_kind) = kind.names();
        let problem = match number {
            Some(n) if known.contains(&n) => {
                return Some((format!("{name} {n}"), kind.item_ref(n)));
            }
            Some(n) if other.contains(&n) => format!(
                "{place}: ref {this_kind} '#{n}' is not {} of the range's commits; they mention #{n} as a {}: use kind {other_kind}",
                kind.a_name(),
                kind.other_name()
            ),
            Some(n) => {
                format!("{place}: ref {this_kind} '#{n}' is not mentioned by the range's commits")
            }
            None => format!(
                "{place}: ref {this_kind} '{}' is not {} number; write it as 123 or #123",
                reference.id,
                kind.a_name()
            ),
        };
        let hashes = |numbers: &[u64]| listing(numbers.iter().map(|n| format!("#{n}")));
        self.problems.push(format!(
            "{problem}; pull requests the commits mention (kind {KIND_PULL_REQUEST}): {}; issues they close (kind {KIND_ISSUE}): {}",
            hashes(&pulls),
            hashes(&issues)
        ));
        None
    }

    fn submodule_commit(&mut self, reference: &WireRef) -> Option<(String, ItemRef)> {
        let (ctx, place) = (self.ctx, self.place);
        let groups = || listing(ctx.submodules.iter().map(|g| g.path.clone()));
        let Some(path) = reference.submodule.as_deref().map(str::trim) else {
            self.problems.push(format!(
                "{place}: ref submodule_commit '{}' needs 'submodule', the path of its group; valid submodules: {}",
                reference.id,
                groups()
            ));
            return None;
        };
        let Some(group) = ctx.submodules.iter().find(|g| g.path == path) else {
            self.problems.push(format!(
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
        self.problems.push(format!(
            "{problem}; valid commit ids of submodule '{path}': {}",
            group_ids(group)
        ));
        None
    }
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
mod tests;
