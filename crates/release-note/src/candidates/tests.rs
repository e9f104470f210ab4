use commit_text::{issue_references, pull_requests};
use git_agent_core::classify::Class;
use gitctx::ObjectId;

use super::*;
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

#[test]
fn features_and_fixes() {
    check_one(
        "feat(cli): add --json flag (#12)",
        "The output is a JSON object per line.",
        &["src/cli/args.rs"],
        (
            Features,
            true,
            High,
            "Add --json flag. The output is a JSON object per line",
        ),
    );
    check_one(
        "fix: handle empty input.",
        "",
        &["src/parse.rs"],
        (Fixes, true, High, "Handle empty input"),
    );
    check_one(
        "perf: cache lookups",
        "",
        &["src/db.rs"],
        (Performance, true, High, "Cache lookups"),
    );
    check_one(
        "revert: add caching",
        "",
        &["src/db.rs"],
        (Fixes, true, High, "Revert add caching"),
    );
    // A type the paths do not back is less sure.
    check_one(
        "feat: new generated bindings",
        "",
        &["Cargo.toml"],
        (Features, true, Medium, "New generated bindings"),
    );
    check_one(
        "fix: flaky test",
        "",
        &["tests/it/a.rs"],
        (Other, false, Medium, "Flaky test"),
    );
}

#[test]
fn security_fixes() {
    check_one(
        "fix: escape user names in HTML",
        "Prevents XSS in the profile page.",
        &["src/web.rs"],
        (
            Security,
            true,
            High,
            "Escape user names in HTML. Prevents XSS in the profile page",
        ),
    );
    check_one(
        "fix(deps): update openssl for CVE-2024-1234",
        "",
        &["Cargo.toml"],
        (Security, true, High, "Update openssl for CVE-2024-1234"),
    );
    check_one(
        "security: rotate default keys",
        "",
        &["src/keys.rs"],
        (Security, true, High, "Rotate default keys"),
    );
    check_one(
        "Fix SQL injection in search",
        "",
        &["src/search.rs"],
        (Security, true, Medium, "Fix SQL injection in search"),
    );
    assert!(reason_of("fix: sanitize", "vulnerable to injection", &["a.rs"]).contains("security"));
}

#[test]
fn breaking() {
    check_one(
        "feat(api)!: remove v1 endpoints",
        "",
        &["src/api/v1.rs"],
        (Breaking, true, High, "Remove v1 endpoints"),
    );
    check_one(
        "refactor: rename settings",
        "Some words.\n\nBREAKING CHANGE: `timeout` is now `timeout_ms`.",
        &["src/lib.rs"],
        (
            Breaking,
            true,
            High,
            "Rename settings. `timeout` is now `timeout_ms`",
        ),
    );
    check_one(
        "Drop Node 16",
        "BREAKING-CHANGE: Node 18 or later is required",
        &["src/index.js"],
        (
            Breaking,
            true,
            High,
            "Drop Node 16. Node 18 or later is required",
        ),
    );
    assert_eq!(
        reason_of("chore!: x", "", &["src/lib.rs"]),
        "breaking: `!` in the conventional header"
    );
}

#[test]
fn docs_internal_vs_user_facing() {
    check_one(
        "docs: explain the retry policy",
        "",
        &["README.md"],
        (Documentation, true, High, "Explain the retry policy"),
    );
    check_one(
        "docs: add install guide",
        "",
        &["docs/install.md", "docs/img/a.png"],
        (Documentation, true, High, "Add install guide"),
    );
    check_one(
        "docs: update contributing notes",
        "",
        &["CONTRIBUTING.md", "docs/adr/0001-x.md"],
        (Documentation, false, High, "Update contributing notes"),
    );
    check_one(
        "Document the upgrade path",
        "",
        &["UPGRADING.md"],
        (Documentation, true, Medium, "Document the upgrade path"),
    );
    check_one(
        "Tidy architecture notes",
        "",
        &["ARCHITECTURE.md"],
        (Documentation, false, Medium, "Tidy architecture notes"),
    );
    assert!(reason_of("docs: x", "", &["README.md"]).contains("README.md"));
}

#[test]
fn dependencies() {
    check_one(
        "build(deps): bump serde from 1.0.1 to 1.0.2",
        "",
        &["Cargo.toml", "src/lib.rs"],
        (Dependencies, true, High, "Bump serde from 1.0.1 to 1.0.2"),
    );
    check_one(
        "chore(deps-dev): bump jest",
        "",
        &["package.json"],
        (Dependencies, true, High, "Bump jest"),
    );
    check_one(
        "deps: update tokio",
        "",
        &["Cargo.toml"],
        (Dependencies, true, High, "Update tokio"),
    );
    check_one(
        "chore: refresh manifests",
        "",
        &["Cargo.toml", "crates/x/Cargo.toml"],
        (Dependencies, true, High, "Refresh manifests"),
    );
    check_one(
        "Refresh lock",
        "",
        &["go.mod"],
        (Dependencies, true, Medium, "Refresh lock"),
    );
    check_one(
        "Upgrade reqwest to 0.13",
        "",
        &["Cargo.toml", "src/http.rs"],
        (Dependencies, true, Medium, "Upgrade reqwest to 0.13"),
    );
}

#[test]
fn internal_changes() {
    check_one(
        "test: cover the parser",
        "",
        &["tests/parser.rs"],
        (Other, false, High, "Cover the parser"),
    );
    check_one(
        "ci: cache cargo",
        "",
        &[".github/workflows/ci.yml"],
        (Other, false, High, "Cache cargo"),
    );
    check_one(
        "refactor: split the parser",
        "",
        &["src/parse.rs"],
        (Other, false, Medium, "Split the parser"),
    );
    check_one(
        "refactor(cli): share flag parsing",
        "",
        &["src/cli/flags.rs", "src/lib.rs"],
        (Other, true, Medium, "Share flag parsing"),
    );
    assert_eq!(
        reason_of("refactor: x", "", &["src/cli/flags.rs", "proto/a.proto"]),
        "conventional `refactor` but touches api, cli: may change what operators see"
    );
    check_one(
        "chore: tune the helm chart",
        "",
        &["helm/values.yaml"],
        (Operations, true, Medium, "Tune the helm chart"),
    );
    check_one(
        "ops: raise the memory limit",
        "",
        &["deploy/app.yaml"],
        (Operations, true, High, "Raise the memory limit"),
    );
    check_one(
        "chore(release): 1.2.0",
        "",
        &["Cargo.toml", "CHANGELOG.md"],
        (Other, false, High, "1.2.0"),
    );
    check_one(
        "chore: release 1.2.0",
        "",
        &["Cargo.toml"],
        (Other, false, High, "Release 1.2.0"),
    );
}

#[test]
fn non_conventional_subjects() {
    let cases = [
        ("Fix crash on empty config", Fixes, true, Medium),
        ("Fixed the retry loop", Fixes, true, Medium),
        ("Resolve race in shutdown", Fixes, true, Medium),
        ("Add a health endpoint", Features, true, Medium),
        ("Support IPv6 listeners", Features, true, Medium),
        ("Allow empty names", Features, true, Medium),
        ("Implement retries", Features, true, Medium),
        ("Remove the legacy importer", Other, true, Medium),
        ("Deprecate --old", Other, true, Medium),
        ("Revert \"Add x\"", Fixes, true, Medium),
        ("Update handler to return 404", Other, true, Low),
        ("Speed things up", Other, true, Low),
        ("Release 1.2.0", Other, false, Medium),
        ("Bump version to 1.2.0", Other, false, Medium),
    ];
    for (subject, section, include, confidence) in cases {
        check_one(
            subject,
            "",
            &["src/server.rs"],
            (section, include, confidence, subject),
        );
    }
    check_one(
        "Add tests for the parser",
        "",
        &["tests/parser.rs"],
        (Other, false, Medium, "Add tests for the parser"),
    );
    check_one(
        "Tweak CI",
        "",
        &[".github/workflows/ci.yml", "Makefile"],
        (Other, false, Medium, "Tweak CI"),
    );
    check_one(
        "Set the default port",
        "",
        &["config/default.toml"],
        (Operations, true, Medium, "Set the default port"),
    );
    // A `component:` prefix (an unknown type) is a scope; the rest is read
    // as a subject.
    check_one(
        "ui: add dark mode",
        "",
        &["src/theme.rs"],
        (Features, true, Medium, "Add dark mode"),
    );
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
