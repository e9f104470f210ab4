use commit_text::{issue_references, pull_requests};
use git_evidence::classify::Class;
use gitctx::ObjectId;

use super::*;
use crate::fixtures::grouped;
use crate::signals::{commit_signals, signal_of};

fn id(seed: &str) -> ObjectId {
    let byte = seed
        .bytes()
        .fold(7u8, |acc, b| acc.wrapping_mul(31).wrapping_add(b));
    ObjectId::from_bytes([byte; 20])
}

/// A commit whose paths take their signal from the path rules; a path
/// ending in `@` is a submodule.
fn commit(subject: &str, body: &str, paths: &[&str]) -> ReleaseCommit {
    let paths: Vec<ChangedPath> = paths
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let (path, class) = match path.strip_suffix('@') {
                Some(path) => (path, Class::Submodule),
                None => (*path, Class::Handwritten),
            };
            let n = u32::try_from(i).expect("few paths");
            ChangedPath {
                path: path.to_owned(),
                status: 'M',
                additions: 10 * (n + 1),
                deletions: n,
                binary: false,
                signal: signal_of(path, &class),
            }
        })
        .collect();
    let message = if body.is_empty() {
        subject.to_owned()
    } else {
        format!("{subject}\n\n{body}")
    };
    let id = id(&message);
    ReleaseCommit {
        id,
        short: id.short(),
        subject: subject.to_owned(),
        pull_requests: pull_requests(&message),
        issues: issue_references(&message),
        internal_bumps: Vec::new(),
        message,
        clamped: false,
        author: "A U Thor".to_owned(),
        date: "2025-01-02".to_owned(),
        merge: false,
        paths_total: paths.len(),
        additions: paths.iter().map(|p| p.additions).sum(),
        deletions: paths.iter().map(|p| p.deletions).sum(),
        excerpt: String::new(),
        signals: commit_signals(&paths),
        paths,
    }
}

type Expected<'a> = (Section, bool, Confidence, &'a str);

#[track_caller]
fn check(commits: &[ReleaseCommit], groups: &[SubmoduleGroup], expected: &[Expected<'_>]) {
    let got = candidates(commits, groups);
    let got: Vec<Expected<'_>> = got
        .iter()
        .map(|c| (c.section, c.include, c.confidence, c.draft.as_str()))
        .collect();
    assert_eq!(got, expected);
}

#[track_caller]
fn check_one(subject: &str, body: &str, paths: &[&str], expected: Expected<'_>) {
    check(&[commit(subject, body, paths)], &[], &[expected]);
}

#[track_caller]
fn reason_of(subject: &str, body: &str, paths: &[&str]) -> String {
    let mut all = candidates(&[commit(subject, body, paths)], &[]);
    assert_eq!(all.len(), 1);
    all.remove(0).reason
}

use Confidence::{High, Low, Medium};
use Section::*;

/// Single commits and how they are judged: groups of cases with what they are
/// `about`, each case `[subject, body, paths, section, include, confidence,
/// draft]` (the section and confidence as they serialize).
const ONE_COMMIT_CASES: &str = include_str!("one_commit_cases.json");

#[test]
fn each_commit_is_judged_as_its_case_says() {
    for (group, case) in grouped(ONE_COMMIT_CASES, "cases", 50) {
        let text = |i: usize| {
            case[i]
                .as_str()
                .unwrap_or_else(|| panic!("no text at {i}: {case}"))
        };
        let paths: Vec<&str> = case[2]
            .as_array()
            .expect("paths")
            .iter()
            .map(|p| p.as_str().expect("a path"))
            .collect();
        let section: Section = serde_json::from_value(case[3].clone()).expect("a section");
        let include = case[4].as_bool().expect("include");
        let confidence = match text(5) {
            "high" => High,
            "medium" => Medium,
            "low" => Low,
            other => panic!("no confidence {other}"),
        };
        let got = candidates(&[commit(text(0), text(1), &paths)], &[]);
        let got: Vec<Expected<'_>> = got
            .iter()
            .map(|c| (c.section, c.include, c.confidence, c.draft.as_str()))
            .collect();
        assert_eq!(
            got,
            [(section, include, confidence, text(6))],
            "{}: {case}",
            group["about"]
        );
    }
}

#[test]
fn reasons_name_the_rule_that_applied() {
    assert!(reason_of("fix: sanitize", "vulnerable to injection", &["a.rs"]).contains("security"));
    assert_eq!(
        reason_of("chore!: x", "", &["src/lib.rs"]),
        "breaking: `!` in the conventional header"
    );
    assert!(reason_of("docs: x", "", &["README.md"]).contains("README.md"));
    assert_eq!(
        reason_of("refactor: x", "", &["src/cli/flags.rs", "proto/a.proto"]),
        "conventional `refactor` but touches api, cli: may change what operators see"
    );
    // A `component:` prefix (an unknown type) is a scope; the rest is read
    // as a subject.
    assert_eq!(
        reason_of("ui: add dark mode", "", &["src/theme.rs"]),
        "component `ui`; first word `add`"
    );
    assert_eq!(reason_of("Fix: x", "", &["src/a.rs"]), "first word `Fix`");
}

#[test]
fn drafts() {
    #[track_caller]
    fn check_draft(subject: &str, body: &str, expected: &str) {
        let c = commit(subject, body, &["src/a.rs"]);
        assert_eq!(candidates(&[c], &[])[0].draft, expected, "{subject}");
    }
    check_draft("feat: émoji support", "", "Émoji support");
    check_draft(
        "fix: x (#1) (#2)",
        "Signed-off-by: A <a@b>\nhttps://example.com/issue/1",
        "X",
    );
    check_draft(
        "fix: x",
        "Fixes: #3\n\nThe real reason.",
        "X. The real reason",
    );
    check_draft(
        "fix: retry",
        "- retry on 503\n- and 502",
        "Retry. Retry on 503",
    );
    check_draft("fix: retry on 503", "retry on 503.", "Retry on 503");
    check_draft("fix: x", "Body\n[…]", "X. Body");
    let long = "word ".repeat(100);
    let c = commit("feat: long", &long, &["src/a.rs"]);
    let draft = &candidates(&[c], &[])[0].draft;
    assert!(draft.chars().count() <= MAX_DRAFT, "{draft}");
    assert!(draft.ends_with("word…"), "{draft}");
}

#[test]
fn refs_and_evidence() {
    let c = commit(
        "feat: x (#12)",
        "Also see (#7).",
        &["src/a.rs", "src/cli.rs", "tests/a.rs", "b", "c", "d"],
    );
    let got = candidates(std::slice::from_ref(&c), &[]);
    assert_eq!(
        got[0].refs,
        [
            ItemRef::Commit(c.short.clone()),
            ItemRef::PullRequest(7),
            ItemRef::PullRequest(12),
        ]
    );
    assert_eq!(
        got[0].evidence,
        [
            "signals: runtime, cli, tests",
            "+210 -15 in 6 files",
            "d (+60 -5)",
            "c (+50 -4)",
            "b (+40 -3)",
            "tests/a.rs (+30 -2)",
            "src/cli.rs (+20 -1)",
        ]
    );
}

#[test]
fn merges_are_skipped_and_order_is_by_section() {
    let mut merge = commit("Merge pull request #5 from a/b", "", &["src/a.rs"]);
    merge.merge = true;
    check(
        &[
            commit("docs: readme", "", &["README.md"]),
            commit("fix: one", "", &["src/a.rs"]),
            merge,
            commit("feat: two", "", &["src/b.rs"]),
            commit("fix: three", "", &["src/c.rs"]),
        ],
        &[],
        &[
            (Features, true, High, "Two"),
            (Fixes, true, High, "One"),
            (Fixes, true, High, "Three"),
            (Documentation, true, High, "Readme"),
        ],
    );
}

fn group(path: &str, commits: Vec<ReleaseCommit>, more: usize) -> SubmoduleGroup {
    SubmoduleGroup {
        path: path.to_owned(),
        old: Some(id("old")),
        new: Some(id("new")),
        commits,
        more,
        note: None,
        links: None,
    }
}

#[test]
fn submodule_groups() {
    let moved = commit("Update lib", "", &["vendor/lib@"]);
    let subs: Vec<ReleaseCommit> = (1..=7)
        .map(|i| commit(&format!("fix: bug {i}"), "", &["src/a.rs"]))
        .collect();
    let (old, new) = (id("old").short(), id("new").short());
    let got = candidates(&[moved], &[group("vendor/lib", subs.clone(), 3)]);
    assert_eq!(
        got.len(),
        1,
        "the parent commit has no candidate of its own"
    );
    let c = &got[0];
    assert_eq!(
        (c.section, c.include, c.confidence),
        (Dependencies, true, Medium)
    );
    assert_eq!(
        c.draft,
        format!(
            "`vendor/lib` moves from {old} to {new}: fix: bug 1; fix: bug 2; fix: bug 3; \
             fix: bug 4; fix: bug 5; and 5 more"
        )
    );
    assert_eq!(c.refs.len(), 7);
    assert_eq!(
        c.refs[0],
        ItemRef::SubmoduleCommit {
            path: "vendor/lib".to_owned(),
            id: subs[0].short.clone(),
        }
    );
    assert_eq!(c.reason, "vendored submodule moved over 10 commits");

    // Not vendored: Other; refs capped at ten.
    let many: Vec<ReleaseCommit> = (1..=12)
        .map(|i| commit(&format!("change {i}"), "", &["src/a.rs"]))
        .collect();
    let got = candidates(&[], &[group("engine", many, 0)]);
    assert_eq!(got[0].section, Other);
    assert_eq!(got[0].refs.len(), 10);

    // Without commits: Low, the note says why, refs are the parent commits.
    let mut bare = group("libs/core", Vec::new(), 0);
    bare.note = Some("not checked out".to_owned());
    let parent = commit("Update core", "", &["libs/core@"]);
    check(
        std::slice::from_ref(&parent),
        std::slice::from_ref(&bare),
        &[(
            Other,
            true,
            Low,
            &format!("`libs/core` moves from {old} to {new} (not checked out)"),
        )],
    );
    let got = candidates(std::slice::from_ref(&parent), std::slice::from_ref(&bare));
    assert_eq!(got[0].refs, [ItemRef::Commit(parent.short.clone())]);

    // Moved back: nothing at all.
    let mut back = group("libs/core", Vec::new(), 0);
    back.new = back.old;
    check(std::slice::from_ref(&parent), &[back], &[]);

    // Added: no old commit.
    let mut added = group("third_party/zlib", Vec::new(), 0);
    added.old = None;
    check(
        &[],
        &[added],
        &[(
            Dependencies,
            true,
            Low,
            &format!("`third_party/zlib` is added at {new}"),
        )],
    );

    // A submodule-only commit no group covers is judged like any commit.
    check(
        &[commit("Update other", "", &["other@"])],
        &[],
        &[(Other, true, Low, "Update other")],
    );
}

// --- a ripgrep-like workspace (issue 18, item 6) ---

#[test]
fn component_subjects_are_read_with_the_component_as_scope() {
    // Fixed: `printer: fix …` was an "unknown conventional type".
    let paths = &["crates/printer/src/lib.rs"];
    check_one(
        "printer: fix a crash on empty lines",
        "",
        paths,
        (Fixes, true, Medium, "Fix a crash on empty lines"),
    );
    assert_eq!(
        reason_of("printer: fix a crash on empty lines", "", paths),
        "component `printer`; first word `fix`"
    );
    // Components Conventional Commits cannot parse: paths, capitals, lists.
    assert_eq!(
        reason_of("ignore/types: add zig", "", &["crates/ignore/src/types.rs"]),
        "component `ignore/types`; first word `add`"
    );
    assert_eq!(
        reason_of("grep-cli, grep-printer: remove dead code", "", paths),
        "component `grep-cli, grep-printer`; first word `remove`"
    );
}

#[test]
fn internal_version_bumps_are_grouped_into_one_candidate() {
    let bump = |subject: &str, bumps: &[&str]| ReleaseCommit {
        internal_bumps: bumps.iter().map(|b| (*b).to_owned()).collect(),
        ..commit(subject, "", &["crates/searcher/Cargo.toml", "Cargo.lock"])
    };
    let commits = [
        commit("printer: fix a crash", "", &["crates/printer/src/lib.rs"]),
        bump(
            "deps: bump grep-searcher to 0.1.14",
            &["grep-searcher 0.1.14"],
        ),
        bump(
            "deps: bump grep-printer to 0.2.2",
            &["grep-printer 0.2.2", "grep-searcher 0.1.14"],
        ),
        commit("deps: bump memchr to 2.7.4", "", &["Cargo.lock"]),
    ];
    check(
        &commits,
        &[],
        &[
            (Fixes, true, Medium, "Fix a crash"),
            (Dependencies, true, High, "Bump memchr to 2.7.4"),
            (
                Other,
                false,
                High,
                "Bump internal crate versions: grep-printer 0.2.2, grep-searcher 0.1.14",
            ),
        ],
    );
    let grouped = candidates(&commits, &[]).pop().expect("the group");
    assert_eq!(
        grouped.refs,
        [
            ItemRef::Commit(commits[1].short.clone()),
            ItemRef::Commit(commits[2].short.clone()),
        ]
    );
    assert!(
        grouped.reason.starts_with("2 commits only bumping"),
        "{}",
        grouped.reason
    );
}

#[test]
fn packaging_only_commits_are_left_out_unless_they_are_the_point() {
    let tap = commit(
        "pkg/brew: update tap to 14.1.0",
        "",
        &["pkg/brew/ripgrep-bin.rb"],
    );
    let fix = commit("printer: fix a crash", "", &["crates/printer/src/lib.rs"]);
    check(
        &[fix, tap.clone()],
        &[],
        &[
            (Fixes, true, Medium, "Fix a crash"),
            (Other, false, High, "Update tap to 14.1.0"),
        ],
    );
    let spec = commit(
        "Update the RPM spec",
        "",
        &["dist/rg.spec", "debian/control"],
    );
    check(
        &[tap, spec],
        &[],
        &[
            (Other, true, Medium, "Update tap to 14.1.0"),
            (Other, true, Medium, "Update the RPM spec"),
        ],
    );
    for (path, packaging) in [
        ("PKGBUILD", true),
        ("snap/snapcraft.yaml", true),
        ("Formula/rg.rb", true),
        ("choco/rg.nuspec", true),
        ("src/pkg.rs", false),
        ("crates/printer/src/lib.rs", false),
        (".spec", false),
        ("web/app.spec.ts", false),
    ] {
        assert_eq!(is_packaging(path), packaging, "{path}");
    }
}

#[test]
fn drafts_keep_the_text_of_markdown_links() {
    let c = commit(
        "searcher: add [mmap](https://docs.rs/memmap2) support",
        "See [the guide][guide] and [docs](https://x.io \"title\") for details.",
        &["crates/searcher/src/lib.rs"],
    );
    assert_eq!(
        candidates(&[c], &[])[0].draft,
        "Add mmap support. See the guide and docs for details"
    );
}
