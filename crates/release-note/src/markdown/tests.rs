use super::*;
use crate::fixtures::{self, github, hex};
use crate::types::AnswerSection;

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
        range: fixtures::range(),
        commits: vec![
            commit("abc1234", "Add --json output to status (#12)", false),
            commit("9876543", "Merge pull request #12 from acme/json", true),
            commit("def5678", "Fix <crash> on [empty] config", false),
        ],
        more_commits: 1,
        submodules: fixtures::submodules(
            vec![commit("3333333", "Handle empty input", false)],
            2,
            None,
        ),
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

/// `answer` rendered for `ctx`, which must pass the document checks.
#[track_caller]
fn valid_render(answer: &Answer, ctx: &ReleaseContext) -> String {
    let rendered = render(answer, ctx);
    assert_eq!(validate_document(&rendered, ctx), Vec::<String>::new());
    rendered
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
    assert_eq!(valid_render(&answer(), &linked()), expected);
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
    assert_eq!(valid_render(&answer(), &unlinked()), expected);
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
    let rendered = valid_render(&answer(), &ctx);
    assert!(rendered.starts_with("### Features\n\n- Add"), "{rendered}");
    assert!(rendered.ends_with("/commit/3333333000000000000000000000000000000000))\n"));
    assert!(!rendered.contains(FULL_CHANGELOG), "{rendered}");
}

#[test]
fn an_empty_note_falls_back_to_notes() {
    let mut ctx = linked();
    ctx.touched_code = false;
    let empty = Answer {
        sections: Vec::new(),
    };
    assert_eq!(
        valid_render(&empty, &ctx),
        "### Notes\n\n- No operator-facing changes between v1.2.0 and v1.3.0.\n"
    );
    // With code touched, the changelog alone is the body.
    let ctx = unlinked();
    let rendered = render(&empty, &ctx);
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
        ["remove the repeated bullet 'add JSON  output.' (under `### Features` and `### Fixes`)"]
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
