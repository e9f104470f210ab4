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
pub fn render(answer: &Answer, ctx: &ReleaseContext) -> String {
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
    let mut lines = Vec::new();
    for commit in &ctx.commits {
        lines.push(format!(
            "- {}{}",
            commit_link(commit, ctx.links.as_ref()),
            subject_suffix(commit)
        ));
    }
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
        for commit in &group.commits {
            lines.push(format!(
                "  - {}{}",
                commit_link(commit, group.links.as_ref()),
                subject_suffix(commit)
            ));
        }
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
pub fn validate_document(markdown: &str, ctx: &ReleaseContext) -> Vec<String> {
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
            quote(first)
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
                    quote(without_refs(text)),
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
                quote(target)
            ));
        }
    }
}

fn quote(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= QUOTE_LIMIT {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(QUOTE_LIMIT).collect();
        format!("{}…", cut.trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{self, end, github, hex, oid};
    use crate::types::{AnswerSection, Range};

    /// A parent linked to `acme/app` with three commits (a merge among them) and
    /// one more unlisted; a submodule linked to ANOTHER repository, `acme/lib`;
    /// a removed submodule without links or commits.
    fn commit(prefix: &str, subject: &str, merge: bool) -> ReleaseCommit {
        ReleaseCommit {
            merge,
            ..fixtures::commit(prefix, subject)
        }
    }

    fn linked() -> ReleaseContext {
        ReleaseContext {
            range: Range {
                base: end("v1.2.0", "0a0a0a0"),
                release: end("v1.3.0", "abc1234"),
                version: Some("1.3.0".to_owned()),
                bump: None,
            },
            commits: vec![
                commit("abc1234", "Add --json output to status (#12)", false),
                commit("9876543", "Merge pull request #12 from acme/json", true),
                commit("def5678", "Fix <crash> on [empty] config", false),
            ],
            more_commits: 1,
            submodules: vec![
                SubmoduleGroup {
                    path: "vendor/lib".to_owned(),
                    old: Some(oid("1111111")),
                    new: Some(oid("2222222")),
                    commits: vec![commit("3333333", "Handle empty input", false)],
                    more: 2,
                    note: None,
                    links: Some(github("acme/lib")),
                },
                SubmoduleGroup {
                    path: "vendor/old".to_owned(),
                    old: Some(oid("4444444")),
                    new: None,
                    commits: Vec::new(),
                    more: 0,
                    note: Some("not checked out".to_owned()),
                    links: None,
                },
            ],
            candidates: Vec::new(),
            links: Some(github("acme/app")),
            touched_code: true,
        }
    }

    /// The same range without any known host.
    fn unlinked() -> ReleaseContext {
        let mut ctx = linked();
        ctx.links = None;
        for group in &mut ctx.submodules {
            group.links = None;
        }
        ctx
    }

    fn answer() -> Answer {
        Answer {
            sections: vec![
                AnswerSection {
                    section: Section::Fixes,
                    items: vec![AnswerItem {
                        text: "Fix a crash on an empty config.".to_owned(),
                        refs: vec![
                            ItemRef::Commit("def5678".to_owned()),
                            ItemRef::SubmoduleCommit {
                                path: "vendor/lib".to_owned(),
                                id: "33333330".to_owned(),
                            },
                        ],
                    }],
                },
                AnswerSection {
                    section: Section::Features,
                    items: vec![AnswerItem {
                        text: "Add `--json` output to `status`\nfor <scripts>.".to_owned(),
                        // A longer prefix than the short id.
                        refs: vec![
                            ItemRef::Commit("abc1234000".to_owned()),
                            ItemRef::PullRequest(12),
                        ],
                    }],
                },
            ],
        }
    }

    #[test]
    fn renders_a_linked_context() {
        let app = "https://github.com/acme/app";
        let lib = "https://github.com/acme/lib";
        let expected = format!(
            "### Features

- Add `--json` output to `status` for &lt;scripts&gt;. ([abc1234]({app}/commit/{abc}), [#12]({app}/pull/12))

### Fixes

- Fix a crash on an empty config. ([def5678]({app}/commit/{def}), [vendor/lib@3333333]({lib}/commit/{c3}))

### Full Changelog

- [abc1234]({app}/commit/{abc}) Add --json output to status (#12)
- [9876543]({app}/commit/{merge}) Merge pull request #12 from acme/json
- [def5678]({app}/commit/{def}) Fix &lt;crash&gt; on \\[empty\\] config
- … and 1 more commit
- `vendor/lib`: 1111111…2222222 ([compare]({lib}/compare/{c1}...{c2}))
  - [3333333]({lib}/commit/{c3}) Handle empty input
  - … and 2 more
- `vendor/old`: 4444444 (removed)
  - (not checked out)

**Full Changelog**: [v1.2.0...v1.3.0]({app}/compare/v1.2.0...v1.3.0)
",
            abc = hex("abc1234"),
            def = hex("def5678"),
            merge = hex("9876543"),
            c1 = hex("1111111"),
            c2 = hex("2222222"),
            c3 = hex("3333333"),
        );
        let ctx = linked();
        let rendered = render(&answer(), &ctx);
        assert_eq!(rendered, expected);
        assert_eq!(validate_document(&rendered, &ctx), Vec::<String>::new());
    }

    #[test]
    fn renders_an_unlinked_context() {
        let expected = "### Features

- Add `--json` output to `status` for &lt;scripts&gt;. (`abc1234`, #12)

### Fixes

- Fix a crash on an empty config. (`def5678`, `vendor/lib@3333333`)

### Full Changelog

- `abc1234` Add --json output to status (#12)
- `9876543` Merge pull request #12 from acme/json
- `def5678` Fix &lt;crash&gt; on \\[empty\\] config
- … and 1 more commit
- `vendor/lib`: 1111111…2222222
  - `3333333` Handle empty input
  - … and 2 more
- `vendor/old`: 4444444 (removed)
  - (not checked out)
";
        let ctx = unlinked();
        let rendered = render(&answer(), &ctx);
        assert_eq!(rendered, expected);
        assert_eq!(validate_document(&rendered, &ctx), Vec::<String>::new());
    }

    #[test]
    fn submodule_commits_never_link_to_the_parent() {
        // The parent is linked, the submodule is not: its commits stay code spans.
        let mut ctx = linked();
        ctx.submodules[0].links = None;
        let rendered = render(&answer(), &ctx);
        assert!(rendered.contains("`vendor/lib@3333333`"), "{rendered}");
        assert!(
            rendered.contains("  - `3333333` Handle empty input"),
            "{rendered}"
        );
        assert!(
            rendered.contains("- `vendor/lib`: 1111111…2222222\n"),
            "{rendered}"
        );
        assert!(!rendered.contains(&hex("3333333")), "{rendered}");
        assert!(!rendered.contains(&hex("1111111")), "{rendered}");
    }

    #[test]
    fn without_code_changes_only_the_narrative_is_rendered() {
        let mut ctx = linked();
        ctx.touched_code = false;
        let rendered = render(&answer(), &ctx);
        assert!(rendered.starts_with("### Features\n\n- Add"), "{rendered}");
        assert!(rendered.ends_with("/commit/3333333000000000000000000000000000000000))\n"));
        assert!(!rendered.contains(FULL_CHANGELOG), "{rendered}");
        assert_eq!(validate_document(&rendered, &ctx), Vec::<String>::new());
    }

    #[test]
    fn an_empty_note_falls_back_to_notes() {
        let mut ctx = linked();
        ctx.touched_code = false;
        let rendered = render(
            &Answer {
                sections: Vec::new(),
            },
            &ctx,
        );
        assert_eq!(
            rendered,
            "### Notes\n\n- No operator-facing changes between v1.2.0 and v1.3.0.\n"
        );
        assert_eq!(validate_document(&rendered, &ctx), Vec::<String>::new());
        // With code touched, the changelog alone is the body.
        let ctx = unlinked();
        let rendered = render(
            &Answer {
                sections: Vec::new(),
            },
            &ctx,
        );
        assert!(
            rendered.starts_with("### Full Changelog\n\n- `abc1234`"),
            "{rendered}"
        );
    }

    #[test]
    fn submodule_ends_and_compare_links() {
        let mut ctx = linked();
        ctx.submodules[0].old = None;
        ctx.submodules[0].commits.clear();
        ctx.submodules[0].more = 0;
        ctx.submodules[0].note = Some("added".to_owned());
        ctx.range.release.name = "HEAD".to_owned();
        let rendered = render(
            &Answer {
                sections: Vec::new(),
            },
            &ctx,
        );
        assert!(
            rendered.contains("- `vendor/lib`: 2222222 (added)\n  - (added)\n"),
            "{rendered}"
        );
        // `HEAD` means nothing to the host: the release end is its commit.
        assert!(
            rendered.ends_with(&format!(
                "**Full Changelog**: [v1.2.0...HEAD](https://github.com/acme/app/compare/v1.2.0...{})\n",
                hex("abc1234")
            )),
            "{rendered}"
        );
    }

    #[test]
    fn escaping_leaves_code_spans_alone() {
        for (text, expected) in [
            ("Accept `Vec<u8>` in <b>", "Accept `Vec<u8>` in &lt;b&gt;"),
            ("Use ``a ` <b>`` here", "Use ``a ` <b>`` here"),
            ("An ` unmatched <tick>", "An ` unmatched &lt;tick&gt;"),
            ("  two\n lines\t", "two lines"),
        ] {
            assert_eq!(escape_text(text), expected, "{text}");
        }
        assert_eq!(escape_subject("Link [x](y) `[z]`"), "Link \\[x\\](y) `[z]`");
    }

    fn problems(markdown: &str, touched_code: bool) -> Vec<String> {
        let mut ctx = linked();
        ctx.touched_code = touched_code;
        validate_document(markdown, &ctx)
    }

    #[test]
    fn documents_must_start_with_a_heading() {
        assert_eq!(
            problems("Here are the notes.\n\n### Fixes\n\n- Fix it.\n", false),
            ["remove the text before the first `### ` heading: 'Here are the notes.'"]
        );
        assert_eq!(
            problems("- Fix it.\n", false),
            ["start the release note with a `### ` heading; it has none"]
        );
        assert_eq!(
            problems("## Fixes\n\n- Fix it.\n", false),
            ["start the release note with a `### ` heading; it has none"]
        );
    }

    #[test]
    fn headings_are_unique_and_not_empty() {
        assert_eq!(
            problems(
                "### Fixes\n\n- Fix a.\n\n### Fixes\n\n- Fix b.\n\n### Features\n\n",
                false
            ),
            [
                "merge the repeated `### Fixes` headings into one",
                "remove the empty `### Features` heading or give it bullets",
            ]
        );
    }

    #[test]
    fn narrative_bullets_do_not_repeat() {
        let markdown = "### Features\n\n- Add JSON output. (`abc1234`)\n\n### Fixes\n\n\
                        - add JSON  output. (`def5678`, #12)\n\n### Full Changelog\n\n\
                        - `abc1234` Add JSON output.\n";
        assert_eq!(
            problems(markdown, true),
            [
                "remove the repeated bullet 'add JSON  output.' (under `### Features` and `### Fixes`)"
            ]
        );
        // Parentheses inside the text are not the refs.
        assert_eq!(without_refs("Fix (a) crash (`abc1234`)"), "Fix (a) crash");
        assert_eq!(without_refs("Fix it (f(x)) now"), "Fix it (f(x)) now");
    }

    #[test]
    fn the_full_changelog_follows_code_changes() {
        assert_eq!(
            problems("### Fixes\n\n- Fix it.\n", true),
            ["add a `### Full Changelog` section: the range touched code"]
        );
        assert_eq!(
            problems(
                "### Fixes\n\n- Fix it.\n\n### Full Changelog\n\n- `abc1234` Fix\n",
                false
            ),
            ["remove the `### Full Changelog` section: the range touched no code"]
        );
    }

    #[test]
    fn links_must_be_https() {
        assert_eq!(
            problems(
                "### Fixes\n\n- Fix it. ([abc1234](http://example.com/c), [#1](/pull/1), \
                 [#2](http://example.com/c))\n",
                false
            ),
            [
                "make the link target 'http://example.com/c' an https:// URL or remove the link",
                "make the link target '/pull/1' an https:// URL or remove the link",
            ]
        );
    }
}
