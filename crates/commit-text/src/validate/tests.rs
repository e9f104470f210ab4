use super::*;
use crate::shape::ShapeOptions;

#[track_caller]
fn check_validate(message: &str, rules: &Rules, expected: &[&str]) {
    assert_eq!(validate(message, rules), expected, "validate({message:?})");
}

fn amend(subject: &str, original: Option<&str>) -> Rules {
    Rules {
        amend_subject: Some(subject.to_owned()),
        amend_original: original.map(str::to_owned),
        ..Rules::default()
    }
}

fn submodule(path: &str, subjects: &[&str]) -> Rules {
    Rules {
        submodules: vec![SubmoduleRule {
            path: path.to_owned(),
            subjects: subjects.iter().map(|s| (*s).to_owned()).collect(),
        }],
        ..Rules::default()
    }
}

// --- validate ---

#[test]
fn valid_messages_have_no_problems() {
    let rules = Rules::default();
    check_validate("Fix parser crash", &rules, &[]);
    check_validate(
        "Fix parser crash\n\nThe parser now handles nulls.",
        &rules,
        &[],
    );
    check_validate("Fix parser crash\n", &rules, &[]);
}

#[test]
fn empty_message_is_one_problem() {
    check_validate("", &Rules::default(), &[EMPTY_MESSAGE]);
    check_validate("  \n\t\n", &amend("Fix x", None), &[EMPTY_MESSAGE]);
}

#[test]
fn code_fences_are_rejected() {
    check_validate(
        "Fix x\n\n```\ncode\n```",
        &Rules::default(),
        &["remove the code fences (```); reply with the plain commit message"],
    );
}

#[test]
fn subject_rules() {
    let rules = Rules::default();
    check_validate(
        "\nFix x",
        &rules,
        &["start the message with a one-line subject; the first line is blank"],
    );
    check_validate(&"a".repeat(72), &rules, &[]);
    check_validate(
        &"a".repeat(73),
        &rules,
        &["shorten the subject to at most 72 characters; it has 73"],
    );
    check_validate(&"é".repeat(72), &rules, &[]);
    check_validate(&format!("{} (ABC-123)", "a".repeat(72)), &rules, &[]);
    check_validate(
        &format!("{} [ABC-1]", "a".repeat(80)),
        &rules,
        &["shorten the subject to at most 72 characters; it has 80 not counting the task ID"],
    );
    check_validate(
        "Fix x\nbody",
        &rules,
        &["put one blank line between the subject and the body; line 2 must be blank"],
    );
    check_validate(
        "<environment_context>",
        &rules,
        &["write a subject that says in words what the change does; \
           '<environment_context>' has no words outside markup"],
    );
    check_validate(
        "</diff> 42 (ABC-1)",
        &rules,
        &["write a subject that says in words what the change does; \
           '</diff> 42' has no words outside markup"],
    );
    check_validate(
        "--- ...",
        &rules,
        &[
            "write a subject that says in words what the change does; '--- ...' has no words outside markup",
        ],
    );
    check_validate("Render <b> tags in <summary> blocks", &rules, &[]);
    check_validate("Bump serde to 1.0.200", &rules, &[]);
}

#[test]
fn commentary_is_rejected() {
    let rules = Rules::default();
    check_validate(
        "Fix x\n\nBody.\n\nHere is the commit message you asked for.\nLet me know if you want changes.",
        &rules,
        &[
            "remove the commentary 'Here is the commit message you asked for.'; reply with only the commit message",
            "remove the commentary 'Let me know if you want changes.'; reply with only the commit message",
        ],
    );
    check_validate(
        "Fix x\n\nI cannot run tests as an AI model.",
        &rules,
        &[
            "remove the commentary 'I cannot run tests as an AI model.'; reply with only the commit message",
        ],
    );
    for line in [
        "Here's why",
        "I've updated it",
        "I have changed it",
        "Hope this helps!",
        "This commit message follows the rules",
        "Explanation: see above",
        "**Note to reviewers:** be kind",
    ] {
        assert_eq!(
            validate(&format!("Fix x\n\n{line}"), &rules).len(),
            1,
            "{line:?} is commentary"
        );
    }
    for line in [
        "Hereafter, parse lazily.",
        "This commit fixes the parser.",
        "Explain the rule.",
    ] {
        check_validate(&format!("Fix x\n\n{line}"), &rules, &[]);
    }
}

#[test]
fn long_commentary_is_quoted_shortened() {
    let line = format!("Here is {}", "x ".repeat(30).trim_end());
    let problems = validate(&format!("Fix x\n\n{line}"), &Rules::default());
    let quoted = format!(
        "{}…",
        line.chars()
            .take(QUOTE_LIMIT)
            .collect::<String>()
            .trim_end()
    );
    assert_eq!(
        problems,
        [format!(
            "remove the commentary '{quoted}'; reply with only the commit message"
        )]
    );
}

#[test]
fn body_width_rules() {
    let rules = Rules::default();
    let long = "word ".repeat(15).trim_end().to_owned(); // 74 characters
    check_validate(
        &format!("Fix x\n\n{long}\nshort\n{long}"),
        &rules,
        &[
            "wrap the body at 72 characters; too long: line 3 (74 characters), line 5 (74 characters)",
        ],
    );
    check_validate(&format!("Fix x\n\n{}", "é".repeat(72)), &rules, &[]);
    let url = format!("https://example.com/{}", "a".repeat(80));
    for exempt in [
        format!("Run:\n\n    {long}"),
        format!("\t{long}"),
        format!("Signed-off-by: {long}"),
        url.clone(),
        format!("- {url}"),
        format!("12. {url}"),
        format!("- see\n  {url}"),
    ] {
        check_validate(&format!("Fix x\n\n{exempt}"), &rules, &[]);
    }
    check_validate(
        &format!("Fix x\n\nSee {url}"),
        &rules,
        &["wrap the body at 72 characters; too long: line 3 (104 characters)"],
    );
    // Code-ness belongs to the paragraph: an indented later line is not code.
    check_validate(
        &format!("Fix x\n\nText\n    {long}"),
        &rules,
        &["wrap the body at 72 characters; too long: line 4 (78 characters)"],
    );
}

const KEEP: &str = "keep the original subject exactly, character for character (even when it breaks the usual subject rules)";

#[test]
fn amend_keeps_the_original_subject() {
    let rules = amend("Fix parser crash (ABC-1)", None);
    check_validate("Fix parser crash (ABC-1)", &rules, &[]);
    // The task ID is put back afterwards.
    check_validate("Fix parser crash\n\nBody.", &rules, &[]);
    check_validate(
        "Fix parser crash in lexer",
        &rules,
        &[&format!("{KEEP}: 'Fix parser crash (ABC-1)'")],
    );
}

#[test]
fn amend_comparison_is_exact() {
    // Fixed: case, punctuation, spacing and the task ID's brackets used to be
    // allowed to change.
    let rules = amend("Fix parser crash (ABC-1)", None);
    for changed in [
        "fix parser crash (ABC-1)",
        "Fix  parser crash (ABC-1)",
        "Fix parser crash [ABC-1]",
        "fix  parser crash",
    ] {
        check_validate(
            changed,
            &rules,
            &[&format!("{KEEP}: 'Fix parser crash (ABC-1)'")],
        );
    }
}

#[test]
fn a_kept_subject_is_exempt_from_the_rules_it_cannot_satisfy() {
    // ripgrep-like subjects a real amend must keep: 76 characters, commentary
    // wording, a final period, a past tense.
    let merge = "Merge pull request #1234 from someone/branch-with-a-rather-long-name-here";
    assert!(merge.chars().count() > WIDTH);
    for original in [
        merge,
        "Here is the fix for the searcher's binary detection",
        "Fixed stuff.",
    ] {
        let rules = amend(original, None);
        check_validate(original, &rules, &[]);
        check_validate(&format!("{original}\n\nThe body."), &rules, &[]);
        // The rest of the message is still checked.
        check_validate(
            &format!("{original}\n\nHere is why."),
            &rules,
            &["remove the commentary 'Here is why.'; reply with only the commit message"],
        );
    }
    // A new subject gets no exemption.
    let problems = validate(merge, &Rules::default());
    assert!(
        problems[0].starts_with("shorten the subject"),
        "{problems:?}"
    );
}

#[test]
fn subjects_end_without_a_period_in_the_imperative() {
    let rules = Rules::default();
    const PERIOD: &str = "remove the period at the end of the subject";
    let mood = |word: &str| {
        format!(
            "write the subject in the imperative mood, as a command (\"Fix\", not \"Fixed\"); '{word}' is past tense"
        )
    };
    check_validate("Fixed stuff.", &rules, &[PERIOD, &mood("Fixed")]);
    check_validate("Fix parser crash.", &rules, &[PERIOD]);
    check_validate("Fix parser crash. (ABC-1)", &rules, &[PERIOD]);
    check_validate("Added a cache", &rules, &[&mood("Added")]);
    check_validate("printer: fixed a crash", &rules, &[&mood("fixed")]);
    check_validate("fix(api): made nulls valid", &rules, &[&mood("made")]);
    for fine in [
        "Fix parser crash",
        "Embed the schema",
        "Speed up the searcher",
        "Wait for it...",
        "printer: fix a crash",
        "Need a lock around the cache",
    ] {
        check_validate(fine, &rules, &[]);
    }
}

#[test]
fn amend_rejects_delta_phrasing() {
    let message = "Fix x\n\nAlso handle nulls. In addition, the previous\ncommit missed this amendment.\nAdditionally, as well as the previous fix.";
    let delta = "describe the final commit as one change, not as changes to the previous version";
    check_validate(
        message,
        &amend("Fix x", None),
        &[
            &format!("remove 'Also': {delta}"),
            &format!("remove 'this amendment': {delta}"),
            &format!("remove 'In addition': {delta}"),
            &format!("remove 'Additionally': {delta}"),
            &format!("remove 'as well as the previous': {delta}"),
            &format!("remove 'the previous commit': {delta}"),
        ],
    );
    check_validate(
        "Fix x\n\nThe alsoran is additionallyx.",
        &amend("Fix x", None),
        &[],
    );
    check_validate("Fix x\n\nAlso handle nulls.", &Rules::default(), &[]);
    check_validate("Also accept tabs", &amend("Also accept tabs", None), &[]);
}

#[test]
fn amend_allows_phrases_of_the_original_message() {
    let original = "Fix x\n\nAlso handle empty input.";
    check_validate(
        "Fix x\n\nAlso handle empty input and nulls.",
        &amend("Fix x", Some(original)),
        &[],
    );
    check_validate(
        "Fix x\n\nAlso handle nulls; additionally, trim.",
        &amend("Fix x", Some(original)),
        &[
            "remove 'additionally': describe the final commit as one change, not as changes to the previous version",
        ],
    );
}

#[test]
fn submodule_summaries_must_be_included() {
    let rules = submodule("vendor/lib", &["Fix overflow in parser.", "Add API"]);
    check_validate(
        "Update vendor/lib\n\nFix   overflow in\nparser, and more.",
        &rules,
        &[],
    );
    check_validate("Update vendor/lib\n\n- add api", &rules, &[]);
    check_validate(
        "Update vendor/lib",
        &rules,
        &["include the commit summaries of submodule 'vendor/lib', e.g. 'Fix overflow in parser.'"],
    );
    check_validate("Update vendor/lib", &submodule("vendor/lib", &[]), &[]);
}

#[test]
fn all_problems_come_in_a_stable_order() {
    let rules = Rules {
        amend_subject: Some("Fix x".to_owned()),
        amend_original: None,
        submodules: vec![SubmoduleRule {
            path: "sub".to_owned(),
            subjects: vec!["Bump sub".to_owned()],
        }],
    };
    let message = format!(
        "Here is {}\nalso ```\n{}",
        "y".repeat(70),
        "word ".repeat(15).trim_end()
    );
    check_validate(
        &message,
        &rules,
        &[
            "remove the code fences (```); reply with the plain commit message",
            "shorten the subject to at most 72 characters; it has 78",
            "put one blank line between the subject and the body; line 2 must be blank",
            &format!(
                "remove the commentary 'Here is {}…'; reply with only the commit message",
                "y".repeat(QUOTE_LIMIT - "Here is ".len())
            ),
            "wrap the body at 72 characters; too long: line 3 (74 characters)",
            &format!("{KEEP}: 'Fix x'"),
            "remove 'also': describe the final commit as one change, not as changes to the previous version",
            "include the commit summaries of submodule 'sub', e.g. 'Bump sub'",
        ],
    );
}

#[test]
fn shaped_model_answer_validates() {
    let raw = "<think>The diff adds caching.</think>\nSure! Here's a commit message:\n\n```\nAdd response cache to the HTTP client (ABC-7)\n\nCache GET responses in memory, keyed by URL, so repeated requests during one run do not hit the network again. Entries expire after the TTL from the Cache-Control header.\n\n- Add `Cache` with\nget/insert\n- Honour `no-store`\n\n🤖 Generated with [Claude Code](https://claude.com/claude-code)\n\nCo-Authored-By: Claude <noreply@anthropic.com>\n```";
    let shaped = crate::shape::shape(raw, &ShapeOptions::default(), &|_| false);
    assert_eq!(
        shaped,
        "Add response cache to the HTTP client (ABC-7)\n\n\
         Cache GET responses in memory, keyed by URL, so repeated requests during\n\
         one run do not hit the network again. Entries expire after the TTL from\n\
         the Cache-Control header.\n\n\
         - Add `Cache` with get/insert\n\
         - Honour `no-store`"
    );
    check_validate(&shaped, &Rules::default(), &[]);
}

#[test]
fn amended_subjects_compare_without_controls() {
    check_validate("Keep me\n\nBody.", &amend("Keep\x1b[0m me", None), &[]);
}

// --- squash rules ---

#[test]
fn squash_rules() {
    let subjects = vec![
        "wip".to_owned(),
        "Add retry loop".to_owned(),
        "Fix test".to_owned(),
        "Address review".to_owned(),
    ];
    assert!(
        squash_problems(
            "feat(net): retry connects\n\nRetries three times.",
            &subjects
        )
        .is_empty()
    );
    assert!(squash_problems("fix!: drop v1 API", &subjects).is_empty());
    // The subject's style is the style check's, not a squash rule.
    assert!(squash_problems("Retry connects", &subjects).is_empty());
    let p = squash_problems("feat: x\n\n## Summary\n\nThis PR adds retries.", &subjects);
    assert!(p.iter().any(|p| p.contains("pull-request prose")), "{p:?}");
    let p = squash_problems(
        "feat: x\n\n- Add retry loop\n- Fix test\n- Address review",
        &subjects,
    );
    assert!(p.iter().any(|p| p.contains("one by one")), "{p:?}");
    let p = squash_problems(
        "feat: x\n\n- 1a2b3c4 one\n- 2b3c4d5 two\n- 3c4d5e6 three",
        &subjects,
    );
    assert!(p.iter().any(|p| p.contains("one by one")), "{p:?}");
}
