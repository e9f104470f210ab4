use super::*;
use crate::fixtures::{self, github, oid};
use crate::types::{Candidate, Confidence};

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
        range: fixtures::range(),
        commits: vec![
            commit("abc1234", "Add --json output to status (#12)", &[12]),
            commit("def5678", "Fix crash on empty config", &[]),
        ],
        more_commits: 0,
        submodules: fixtures::submodules(
            vec![commit("3333333", "Handle empty input", &[])],
            0,
            Some(oid("5555555")),
        ),
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
    let reference = &strict["properties"]["sections"]["items"]["properties"]["items"]["items"]["properties"]
        ["refs"]["items"];
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

/// Where the problems of [`with_ref`]'s item are reported.
const ITEM_AT: &str = "$.sections[0].items[0] (\"Add JSON output.\")";

/// The problems of an answer whose one item carries `reference`.
fn with_ref(reference: Value) -> Vec<String> {
    problems(json!([{"text": "Add JSON output.", "refs": [reference]}]))
}

#[test]
fn commit_refs_must_name_one_commit_of_the_range() {
    assert_eq!(
        with_ref(json!({"kind": "commit", "id": "abc12"})),
        [format!(
            "{ITEM_AT}: ref commit 'abc12' is not a commit id; give at least 7 hex digits of one \
             of the range's commits; valid commit ids: abc1234, def5678"
        )]
    );
    assert_eq!(
        with_ref(json!({"kind": "commit", "id": "xyz1234"}))[0],
        format!(
            "{ITEM_AT}: ref commit 'xyz1234' is not a commit id; give at least 7 hex digits of one \
             of the range's commits; valid commit ids: abc1234, def5678"
        )
    );
    assert_eq!(
        with_ref(json!({"kind": "commit", "id": "fff0000"})),
        [format!(
            "{ITEM_AT}: ref commit 'fff0000' is not a commit of the range; valid commit ids: \
             abc1234, def5678"
        )]
    );
    assert_eq!(
        with_ref(json!({"kind": "commit", "id": "3333333"})),
        [format!(
            "{ITEM_AT}: ref commit '3333333' is not a commit of the range (it is a commit of \
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

const VALID: &str = "; pull requests the commits mention (kind pull_request): #12; issues they close (kind issue): none";

#[test]
fn ripgrep_refs_are_pull_requests_and_issues() {
    // Fixed: `PR #3192` and `Fixes #3202` were not recognised, and the
    // rejection said "valid pull requests: none".
    let mut ctx = context();
    ctx.commits.push(ReleaseCommit {
        pull_requests: commit_text::pull_requests("printer: fix a crash\n\nPR #3192"),
        issues: commit_text::issue_references("printer: fix a crash\n\nFixes #3202"),
        ..fixtures::commit("aaa1111", "printer: fix a crash")
    });
    let text = json!({"sections": [{"section": "fixes", "items": [{
        "text": "Fix a crash in the printer.",
        "refs": [{"kind": "pull_request", "id": "#3192"}, {"kind": "issue", "id": "3202"}]
    }]}]})
    .to_string();
    let answer = parse(&text, &ctx).expect("valid");
    assert_eq!(
        answer.sections[0].items[0].refs,
        [ItemRef::PullRequest(3192), ItemRef::Issue(3202)]
    );
    let at = "$.sections[0].items[0] (\"Fix a crash in the printer.\")";
    let valid = "; pull requests the commits mention (kind pull_request): #12, #3192; \
                 issues they close (kind issue): #3202";
    for (wrong, problem) in [
        (
            json!({"kind": "pull_request", "id": "#3202"}),
            format!(
                "{at}: ref pull_request '#3202' is not a pull request of the range's commits; \
                 they mention #3202 as a closed issue: use kind issue{valid}"
            ),
        ),
        (
            json!({"kind": "issue", "id": "#3192"}),
            format!(
                "{at}: ref issue '#3192' is not an issue of the range's commits; they mention \
                 #3192 as a pull request: use kind pull_request{valid}"
            ),
        ),
        (
            json!({"kind": "issue", "id": "#1"}),
            format!("{at}: ref issue '#1' is not mentioned by the range's commits{valid}"),
        ),
    ] {
        let text = json!({"sections": [{"section": "fixes", "items": [{
            "text": "Fix a crash in the printer.", "refs": [wrong]
        }]}]})
        .to_string();
        assert_eq!(parse(&text, &ctx).expect_err("invalid"), [problem]);
    }
}

#[test]
fn pull_request_refs_must_be_mentioned_by_the_range() {
    assert_eq!(
        with_ref(json!({"kind": "pull_request", "id": "#99"})),
        [format!(
            "{ITEM_AT}: ref pull_request '#99' is not mentioned by the range's commits{VALID}"
        )]
    );
    assert_eq!(
        with_ref(json!({"kind": "pull_request", "id": "PR-12"})),
        [format!(
            "{ITEM_AT}: ref pull_request 'PR-12' is not a pull request number; write it as 123 or \
             #123{VALID}"
        )]
    );
}

#[test]
fn submodule_commit_refs_must_name_a_group_and_one_of_its_commits() {
    assert_eq!(
        with_ref(json!({"kind": "submodule_commit", "id": "3333333", "submodule": null})),
        [format!(
            "{ITEM_AT}: ref submodule_commit '3333333' needs 'submodule', the path of its group; \
             valid submodules: vendor/lib, vendor/old"
        )]
    );
    assert_eq!(
        with_ref(json!({"kind": "submodule_commit", "id": "3333333", "submodule": "lib"})),
        [format!(
            "{ITEM_AT}: ref submodule_commit '3333333' names unknown submodule 'lib'; valid \
             submodules: vendor/lib, vendor/old"
        )]
    );
    assert_eq!(
        with_ref(json!({"kind": "submodule_commit", "id": "abc1234", "submodule": "vendor/lib"})),
        [format!(
            "{ITEM_AT}: ref submodule_commit 'abc1234' is not a listed commit of submodule \
             'vendor/lib' (it is a commit of the parent repository: use kind commit); valid \
             commit ids of submodule 'vendor/lib': 3333333"
        )]
    );
    assert_eq!(
        with_ref(json!({"kind": "submodule_commit", "id": "3333333", "submodule": "vendor/old"})),
        [format!(
            "{ITEM_AT}: ref submodule_commit '3333333' is not a listed commit of submodule \
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
                "{second}: ref pull_request '#7' is not mentioned by the range's commits{VALID}"
            ),
            format!(
                "{second} and $.sections[1].items[0] (\"Fix the crash\") tell the same \
                 change: keep one item and give it the refs of both"
            ),
        ],
        "{found:#?}"
    );
}
