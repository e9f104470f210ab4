//! `release-note` on a ripgrep-like workspace: `component: subject` messages,
//! `PR #N` and `Fixes #N` references, internal crate version bumps, a
//! Homebrew tap update and Markdown links in messages.

use release_note::{ItemRef, ReleaseContext};
use serde_json::json;
use testkit::{Reply, TestRepo, assert_contains};

use crate::release::{chat, evidence, explicit, prepared, request, run};

/// `crates/<dir>/Cargo.toml` of crate `name` at `version`, depending on
/// grep-searcher `searcher` by path when given.
fn manifest(name: &str, version: &str, searcher: Option<&str>) -> String {
    let mut text = format!(
        "[package]\nname = \"{name}\"\nversion = \"{version}\"\nedition = \"2021\"\n\n[dependencies]\nmemchr = \"2.7.1\"\n"
    );
    if let Some(searcher) = searcher {
        text.push_str(&format!(
            "grep-searcher = {{ version = \"{searcher}\", path = \"../searcher\" }}\n"
        ));
    }
    text
}

/// Cargo.lock with the two workspace crates and memchr from crates.io.
fn lock(printer: &str, searcher: &str, memchr: &str) -> String {
    format!(
        "version = 3\n\n[[package]]\nname = \"grep-printer\"\nversion = \"{printer}\"\ndependencies = [\n \"grep-searcher\",\n]\n\n[[package]]\nname = \"grep-searcher\"\nversion = \"{searcher}\"\ndependencies = [\n \"memchr\",\n]\n\n[[package]]\nname = \"memchr\"\nversion = \"{memchr}\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"0000\"\n"
    )
}

/// 14.0.0, then ripgrep-like commits up to HEAD.
fn workspace() -> TestRepo {
    let repo = TestRepo::new();
    repo.git(&[
        "remote",
        "add",
        "origin",
        "https://github.com/BurntSushi/ripgrep.git",
    ]);
    repo.write(
        "crates/searcher/Cargo.toml",
        manifest("grep-searcher", "0.1.13", None),
    )
    .write("crates/searcher/src/lib.rs", "pub fn search() {}\n")
    .write(
        "crates/printer/Cargo.toml",
        manifest("grep-printer", "0.2.1", Some("0.1.13")),
    )
    .write("crates/printer/src/lib.rs", "pub fn print() {}\n")
    .write("Cargo.lock", lock("0.2.1", "0.1.13", "2.7.1"))
    .write(
        "pkg/brew/ripgrep-bin.rb",
        "class RipgrepBin < Formula\n  version '14.0.0'\nend\n",
    );
    repo.commit_all("Initial workspace");
    repo.tag("14.0.0");
    repo.write(
        "crates/printer/src/lib.rs",
        "pub fn print() { let _empty = true; }\n",
    );
    repo.commit_all("printer: fix a crash on empty lines\n\nPR #3192");
    repo.write(
        "crates/searcher/src/lib.rs",
        "pub fn search() { let _glob = 1; }\n",
    );
    repo.commit_all("searcher: fix a glob that never matched\n\nFixes #3202");
    repo.write(
        "crates/searcher/src/lib.rs",
        "pub fn search() { let _mmap = 1; }\n",
    );
    repo.commit_all(
        "searcher: add [mmap](https://docs.rs/memmap2) support\n\nSee [the guide](https://x.io/guide) for details.",
    );
    // Internal bumps: the crate's own version, the path dependency on it,
    // the lockfile.
    repo.write(
        "crates/searcher/Cargo.toml",
        manifest("grep-searcher", "0.1.14", None),
    )
    .write(
        "crates/printer/Cargo.toml",
        manifest("grep-printer", "0.2.1", Some("0.1.14")),
    )
    .write("Cargo.lock", lock("0.2.1", "0.1.14", "2.7.1"));
    repo.commit_all("deps: bump grep-searcher to 0.1.14");
    repo.write(
        "crates/printer/Cargo.toml",
        manifest("grep-printer", "0.2.2", Some("0.1.14")),
    )
    .write("Cargo.lock", lock("0.2.2", "0.1.14", "2.7.1"));
    repo.commit_all("deps: bump grep-printer to 0.2.2");
    // An external dependency: not internal.
    repo.write("Cargo.lock", lock("0.2.2", "0.1.14", "2.7.4"));
    repo.commit_all("deps: bump memchr to 2.7.4");
    repo.write(
        "pkg/brew/ripgrep-bin.rb",
        "class RipgrepBin < Formula\n  version '14.1.0'\nend\n",
    );
    repo.commit_all("pkg/brew: update tap to 14.1.0");
    repo
}

fn commit<'a>(ctx: &'a ReleaseContext, subject: &str) -> &'a release_note::ReleaseCommit {
    ctx.commits
        .iter()
        .find(|c| c.subject == subject)
        .unwrap_or_else(|| panic!("no commit '{subject}'"))
}

/// The refs of the candidate whose draft starts with `draft`.
fn refs_of<'a>(ctx: &'a ReleaseContext, draft: &str) -> &'a [ItemRef] {
    &ctx.candidates
        .iter()
        .find(|c| c.draft.starts_with(draft))
        .unwrap_or_else(|| panic!("no candidate '{draft}' in {:#?}", ctx.candidates))
        .refs
}

#[test]
fn pull_request_and_issue_references_of_real_messages_are_recognised() {
    // Fixed: `PR #3192` and `Fixes #3202` were not recognised, so "valid
    // pull requests: none" rejected an answer citing them.
    let repo = workspace();
    let ctx = prepared(&repo, &explicit("14.0.0", "HEAD"));
    let printer = commit(&ctx, "printer: fix a crash on empty lines");
    assert_eq!(printer.pull_requests, [3192]);
    let searcher = commit(&ctx, "searcher: fix a glob that never matched");
    assert_eq!(
        (searcher.pull_requests.len(), &searcher.issues[..]),
        (0, &[3202][..])
    );
    assert!(refs_of(&ctx, "Fix a crash on empty lines").contains(&ItemRef::PullRequest(3192)));
    assert!(refs_of(&ctx, "Fix a glob that never matched").contains(&ItemRef::Issue(3202)));
    let req = request(&repo, explicit("14.0.0", "HEAD"));
    assert_contains(
        &evidence(&req),
        "Pull requests the commits mention (refs of kind pull_request): #3192. Issues they close (refs of kind issue): #3202.",
    );

    let answer = |kind: &str| {
        json!({"sections": [{"section": "fixes", "items": [
            {"text": "Fix a crash on empty lines.", "refs": [{"kind": "pull_request", "id": "#3192"}]},
            {"text": "Fix a glob that never matched.", "refs": [{"kind": kind, "id": "#3202"}]}
        ]}]})
        .to_string()
    };
    let (server, provider) = chat(vec![
        Reply::text(&answer("pull_request")),
        Reply::text(&answer("issue")),
    ]);
    let note = run(&req, provider.as_ref()).unwrap();
    assert!(note.repaired);
    assert_contains(
        &server.requests()[1].raw_text(),
        "they mention #3202 as a closed issue: use kind issue; pull requests the commits mention (kind pull_request): #3192; issues they close (kind issue): #3202",
    );
    assert_contains(
        &note.markdown,
        "https://github.com/BurntSushi/ripgrep/pull/3192",
    );
    assert_contains(
        &note.markdown,
        "https://github.com/BurntSushi/ripgrep/issues/3202",
    );
}

#[test]
fn workspace_candidates_are_grouped_dropped_and_read_as_components() {
    let repo = workspace();
    let ctx = prepared(&repo, &explicit("14.0.0", "HEAD"));
    assert_eq!(
        commit(&ctx, "deps: bump grep-searcher to 0.1.14").internal_bumps,
        ["grep-searcher 0.1.14"]
    );
    assert_eq!(
        commit(&ctx, "deps: bump grep-printer to 0.2.2").internal_bumps,
        ["grep-printer 0.2.2"]
    );
    assert!(
        commit(&ctx, "deps: bump memchr to 2.7.4")
            .internal_bumps
            .is_empty()
    );
    let got: Vec<(&str, bool, &str)> = ctx
        .candidates
        .iter()
        .map(|c| (c.draft.as_str(), c.include, c.reason.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "Add mmap support. See the guide for details",
                true,
                "component `searcher`; first word `add`"
            ),
            (
                "Fix a glob that never matched",
                true,
                "component `searcher`; first word `fix`"
            ),
            (
                "Fix a crash on empty lines",
                true,
                "component `printer`; first word `fix`"
            ),
            (
                "Bump memchr to 2.7.4",
                true,
                "conventional `deps`: dependency update"
            ),
            (
                "Update tap to 14.1.0",
                false,
                "packaging-only change (package manifests or a package tap): not what this release is about"
            ),
            (
                "Bump internal crate versions: grep-printer 0.2.2, grep-searcher 0.1.14",
                false,
                "2 commits only bumping versions of the workspace's own crates, grouped: release bookkeeping"
            ),
        ],
        "{:#?}",
        ctx.candidates
    );
}
