//! The release body, built locally from a validated [`Answer`] ([`render`]), and
//! the checks a body must pass before it is used ([`validate_document`]).
//!
//! ```text
//! ### Features              one heading per non-empty section, in Section::ALL order
//!
//! - Text ([abc1234](…/commit/…), [#12](…/pull/12), [lib@3333333](<lib's repo>/commit/…))
//!
//! ### Full Changelog        when the range touched code
//!
//! - [abc1234](…) Subject    parent commits, newest first
//! - `vendor/lib`: 1111111…2222222 ([compare](…))
//!   - [3333333](…) Subject  the submodule's own commits
//!
//! **Full Changelog**: [v1.2.0...v1.3.0](…/compare/v1.2.0...v1.3.0)
//! ```
//!
//! - **Invariant:** a submodule's commits link with that submodule's own
//!   [`LinkHints`], never the parent repository's; without hints, ids are code
//!   spans rather than guessed links.
//! - **Invariant:** short ids are the first 7 digits of the full id found in the
//!   context, whatever prefix the model gave.

use commit_text::quote;

use crate::types::{
    Answer, AnswerItem, ItemRef, LinkHints, RefInfo, ReleaseCommit, ReleaseContext, Section,
    SubmoduleGroup,
};

/// The heading of the commit list.
const FULL_CHANGELOG: &str = "Full Changelog";
/// The heading of the fallback body.
const NOTES: &str = "Notes";
/// How many characters of a line a problem quotes.
const QUOTE_LIMIT: usize = 60;

/// Builds the release body.
///
/// Narrative sections come first, in [`Section::ALL`] order (a section the answer
/// gives twice is rendered once, items in answer order); then, when the range
/// touched code, `### Full Changelog`. With neither, a `### Notes` line says there
/// are no operator-facing changes. The body ends with one newline and has no
/// trailing spaces and no runs of blank lines.
pub(crate) fn render(answer: &Answer, ctx: &ReleaseContext) -> String {
    let mut blocks = Vec::new();
    for section in Section::ALL {
        let bullets: Vec<String> = answer
            .sections
            .iter()
            .filter(|s| s.section == section)
            .flat_map(|s| &s.items)
            .map(|item| bullet(item, ctx))
            .collect();
        if !bullets.is_empty() {
            blocks.push(format!("### {}\n\n{}", section.title(), bullets.join("\n")));
        }
    }
    if ctx.touched_code {
        blocks.push(full_changelog(ctx));
    }
    if blocks.is_empty() {
        blocks.push(format!(
            "### {NOTES}\n\n- No operator-facing changes between {} and {}.",
            escape_text(&ctx.range.base.name),
            escape_text(&ctx.range.release.name)
        ));
    }
    tidy(&blocks.join("\n\n"))
}

/// `- text (refs)`.
fn bullet(item: &AnswerItem, ctx: &ReleaseContext) -> String {
    let text = escape_text(&item.text);
    let mut refs: Vec<String> = Vec::new();
    for item_ref in &item.refs {
        let rendered = render_ref(item_ref, ctx);
        if !refs.contains(&rendered) {
            refs.push(rendered);
        }
    }
    if refs.is_empty() {
        format!("- {text}")
    } else {
        format!("- {text} ({})", refs.join(", "))
    }
}

fn render_ref(item_ref: &ItemRef, ctx: &ReleaseContext) -> String {
    match item_ref {
        ItemRef::Commit(id) => match find(&ctx.commits, id) {
            Some(commit) => commit_link(commit, ctx.links.as_ref()),
            None => code(&short_of(id)),
        },
        ItemRef::PullRequest(n) => match &ctx.links {
            Some(links) => format!("[#{n}]({})", links.pull_url(*n)),
            None => format!("#{n}"),
        },
        ItemRef::Issue(n) => match &ctx.links {
            Some(links) => format!("[#{n}]({})", links.issue_url(*n)),
            None => format!("#{n}"),
        },
        ItemRef::SubmoduleCommit { path, id } => {
            let group = ctx.submodules.iter().find(|g| g.path == *path);
            let found = group.and_then(|g| Some((g, find(&g.commits, id)?)));
            match found {
                Some((group, commit)) => {
                    let label = format!("{}@{}", group.path, commit.id.short());
                    match &group.links {
                        Some(links) => {
                            format!("[{label}]({})", links.commit_url(&commit.id.to_hex()))
                        }
                        None => code(&label),
                    }
                }
                None => code(&format!("{path}@{}", short_of(id))),
            }
        }
    }
}

/// The one listed commit whose full id starts with `id`.
fn find<'a>(commits: &'a [ReleaseCommit], id: &str) -> Option<&'a ReleaseCommit> {
    let id = id.trim().to_lowercase();
    if id.is_empty() {
        return None;
    }
    let mut matches = commits.iter().filter(|c| c.id.to_hex().starts_with(&id));
    let first = matches.next()?;
    matches.next().is_none().then_some(first)
}

/// An id the context does not know, shown as given (hex digits only, 7 at most).
fn short_of(id: &str) -> String {
    id.chars()
        .filter(char::is_ascii_hexdigit)
        .take(7)
        .collect::<String>()
        .to_lowercase()
}

/// `[abc1234](url)` with links of the commit's own repository, else `` `abc1234` ``.
fn commit_link(commit: &ReleaseCommit, links: Option<&LinkHints>) -> String {
    let short = commit.id.short();
    match links {
        Some(links) => format!("[{short}]({})", links.commit_url(&commit.id.to_hex())),
        None => code(&short),
    }
}

fn code(text: &str) -> String {
    format!("`{text}`")
}

/// `### Full Changelog`: parent commits, then each submodule group with its own
/// commits, then the compare link of the whole range.
fn full_changelog(ctx: &ReleaseContext) -> String {
    let mut lines = commit_lines("- ", &ctx.commits, ctx.links.as_ref());
    if ctx.more_commits > 0 {
        lines.push(format!(
            "- … and {} more {}",
            ctx.more_commits,
            if ctx.more_commits == 1 {
                "commit"
            } else {
                "commits"
            }
        ));
    }
    for group in &ctx.submodules {
        lines.push(group_line(group));
        lines.extend(commit_lines("  - ", &group.commits, group.links.as_ref()));
        if group.more > 0 {
            lines.push(format!("  - … and {} more", group.more));
        }
        if group.commits.is_empty()
            && let Some(note) = &group.note
        {
            lines.push(format!("  - ({})", escape_subject(note)));
        }
    }
    if lines.is_empty() {
        lines.push("- (no commits listed)".to_owned());
    }
    let mut block = format!("### {FULL_CHANGELOG}\n\n{}", lines.join("\n"));
    if let Some(links) = &ctx.links {
        let (base, release) = (&ctx.range.base, &ctx.range.release);
        if let Some(url) = links.compare_url(&compare_end(base), &compare_end(release)) {
            block.push_str(&format!(
                "\n\n**{FULL_CHANGELOG}**: [{}...{}]({url})",
                escape_subject(&base.name),
                escape_subject(&release.name)
            ));
        }
    }
    block
}

/// One changelog line per commit: `bullet`, the commit's link, its subject.
fn commit_lines(bullet: &str, commits: &[ReleaseCommit], links: Option<&LinkHints>) -> Vec<String> {
    commits
        .iter()
        .map(|commit| {
            format!(
                "{bullet}{}{}",
                commit_link(commit, links),
                subject_suffix(commit)
            )
        })
        .collect()
}

fn subject_suffix(commit: &ReleaseCommit) -> String {
    let subject = escape_subject(&commit.subject);
    if subject.is_empty() {
        String::new()
    } else {
        format!(" {subject}")
    }
}

/// ``- `path`: old…new ([compare](url))``, or the one end with `(added)` /
/// `(removed)`.
fn group_line(group: &SubmoduleGroup) -> String {
    let path = code(&group.path);
    match (&group.old, &group.new) {
        (Some(old), Some(new)) => {
            let compare = group
                .links
                .as_ref()
                .and_then(|links| links.compare_url(&old.to_hex(), &new.to_hex()))
                .map_or(String::new(), |url| format!(" ([compare]({url}))"));
            format!("- {path}: {}…{}{compare}", old.short(), new.short())
        }
        (None, Some(new)) => format!("- {path}: {} (added)", new.short()),
        (Some(old), None) => format!("- {path}: {} (removed)", old.short()),
        (None, None) => format!("- {path}"),
    }
}

/// What to compare on the host: the name the user gave when the host can know
/// it (a tag or branch), else the full commit id (`HEAD`, `main~3`, `v1^`…).
fn compare_end(end: &RefInfo) -> String {
    let name = end.name.trim();
    let plain = !name.is_empty()
        && !name.starts_with('-')
        && !name.eq_ignore_ascii_case("HEAD")
        && !name.contains("..")
        && !name
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "~^:?*[]\\@{}()<>#%".contains(c));
    if plain {
        name.to_owned()
    } else {
        end.commit.to_hex()
    }
}

/// Item text: whitespace (newlines included) collapsed to single spaces, `<` and
/// `>` escaped outside code spans so nothing renders as HTML.
fn escape_text(text: &str) -> String {
    escape(text, &[('<', "&lt;"), ('>', "&gt;")])
}

/// A commit subject or note: like [`escape_text`], and `[`/`]` escaped too so
/// nothing renders as a link.
fn escape_subject(text: &str) -> String {
    escape(
        text,
        &[('<', "&lt;"), ('>', "&gt;"), ('[', "\\["), (']', "\\]")],
    )
}

/// Collapses whitespace and replaces `table`'s characters, leaving code spans (a
/// run of backticks up to the next run of the same length) as they are: inside
/// them an entity or a backslash would show literally.
fn escape(text: &str, table: &[(char, &str)]) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '`' {
            let run = backtick_run(&chars, i);
            let closing = (i + run..chars.len()).find(|&j| {
                chars[j] == '`' && chars[j - 1] != '`' && backtick_run(&chars, j) == run
            });
            let end = match closing {
                Some(j) => j + run,
                None => i + run, // no closing run: the backticks are literal
            };
            out.extend(&chars[i..end]);
            i = end;
            continue;
        }
        match table.iter().find(|(c, _)| *c == chars[i]) {
            Some((_, replacement)) => out.push_str(replacement),
            None => out.push(chars[i]),
        }
        i += 1;
    }
    out
}

fn backtick_run(chars: &[char], start: usize) -> usize {
    chars[start..].iter().take_while(|&&c| c == '`').count()
}

/// Trailing spaces removed, no leading or repeated blank lines, one final newline.
fn tidy(text: &str) -> String {
    let mut out = String::new();
    let mut blank = false;
    for line in text.lines().map(str::trim_end) {
        if line.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if blank {
            out.push('\n');
            blank = false;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// A `### ` heading and the lines under it.
struct Block<'a> {
    title: &'a str,
    body: Vec<&'a str>,
}

/// Checks a rendered body; empty = valid.
///
/// The body starts with a `### ` heading with no text before it; headings are
/// unique and none is empty; no bullet text repeats across the narrative
/// sections (refs in a trailing parenthesis are ignored when comparing);
/// `### Full Changelog` is present exactly when the range touched code; every
/// link target (`](…)`) is an `https://` URL.
pub(crate) fn validate_document(markdown: &str, ctx: &ReleaseContext) -> Vec<String> {
    let mut problems = Vec::new();
    let mut before = Vec::new();
    let mut blocks: Vec<Block<'_>> = Vec::new();
    for line in markdown.lines() {
        if let Some(title) = line.strip_prefix("### ") {
            blocks.push(Block {
                title: title.trim(),
                body: Vec::new(),
            });
        } else if let Some(block) = blocks.last_mut() {
            block.body.push(line);
        } else if !line.trim().is_empty() {
            before.push(line);
        }
    }
    if blocks.is_empty() {
        problems.push("start the release note with a `### ` heading; it has none".to_owned());
    } else if let Some(first) = before.first() {
        problems.push(format!(
            "remove the text before the first `### ` heading: '{}'",
            quote(first, QUOTE_LIMIT)
        ));
    }
    check_headings(&blocks, &mut problems);
    check_bullets(&blocks, &mut problems);
    let has_changelog = blocks.iter().any(|b| b.title == FULL_CHANGELOG);
    if ctx.touched_code && !has_changelog {
        problems.push(format!(
            "add a `### {FULL_CHANGELOG}` section: the range touched code"
        ));
    } else if !ctx.touched_code && has_changelog {
        problems.push(format!(
            "remove the `### {FULL_CHANGELOG}` section: the range touched no code"
        ));
    }
    check_links(markdown, &mut problems);
    problems
}

/// Unique headings, each with a body.
fn check_headings(blocks: &[Block<'_>], problems: &mut Vec<String>) {
    for (i, block) in blocks.iter().enumerate() {
        let earlier = blocks[..i]
            .iter()
            .filter(|b| b.title.eq_ignore_ascii_case(block.title))
            .count();
        if earlier == 1 {
            problems.push(format!(
                "merge the repeated `### {}` headings into one",
                block.title
            ));
        }
    }
    for block in blocks {
        if block.body.iter().all(|line| line.trim().is_empty()) {
            problems.push(format!(
                "remove the empty `### {}` heading or give it bullets",
                block.title
            ));
        }
    }
}

/// No bullet text twice across the narrative sections.
fn check_bullets(blocks: &[Block<'_>], problems: &mut Vec<String>) {
    let mut seen: Vec<(String, &str)> = Vec::new(); // (normalized text, heading)
    for block in blocks.iter().filter(|b| b.title != FULL_CHANGELOG) {
        for line in &block.body {
            let Some(text) = line.strip_prefix("- ") else {
                continue;
            };
            let key = without_refs(text)
                .to_lowercase()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            if key.is_empty() {
                continue;
            }
            match seen.iter().find(|(k, _)| *k == key) {
                Some((_, first)) => problems.push(format!(
                    "remove the repeated bullet '{}' (under `### {first}` and `### {}`)",
                    quote(without_refs(text), QUOTE_LIMIT),
                    block.title
                )),
                None => seen.push((key, block.title)),
            }
        }
    }
}

/// A bullet's text without its trailing ` (refs)`.
fn without_refs(text: &str) -> &str {
    let text = text.trim_end();
    if !text.ends_with(')') {
        return text;
    }
    let mut depth = 0usize;
    for (i, c) in text.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return match text[..i].strip_suffix(' ') {
                        Some(rest) => rest.trim_end(),
                        None => text,
                    };
                }
            }
            _ => {}
        }
    }
    text
}

/// Every link target is an `https://` URL.
fn check_links(markdown: &str, problems: &mut Vec<String>) {
    let mut reported: Vec<&str> = Vec::new();
    for (at, _) in markdown.match_indices("](") {
        let rest = &markdown[at + 2..];
        let end = rest
            .find(|c: char| c == ')' || c.is_whitespace())
            .unwrap_or(rest.len());
        let target = &rest[..end];
        if !target.starts_with("https://") && !reported.contains(&target) {
            reported.push(target);
            problems.push(format!(
                "make the link target '{}' an https:// URL or remove the link",
                quote(target, QUOTE_LIMIT)
            ));
        }
    }
}

#[cfg(test)]
mod tests;
