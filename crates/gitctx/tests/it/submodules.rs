//! `Repo::submodule_urls`: what a commit's `.gitmodules` declares, read by
//! git — including `.gitmodules` files written to mislead (includes, huge or
//! amplifying content, odd names, links, broken syntax).

use std::collections::BTreeMap;

use gitctx::Error;
use testkit::{TestRepo, assert_contains};

use crate::open;

/// A repository whose one commit has `.gitmodules` (and `extra` files) as given.
fn with_gitmodules(text: &str, extra: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".gitmodules", text);
    for (path, contents) in extra {
        repo.write(path, contents);
    }
    repo.commit_all("add .gitmodules");
    repo
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(path, url)| ((*path).to_owned(), (*url).to_owned()))
        .collect()
}

#[track_caller]
fn check(text: &str, expected: &[(&str, &str)]) {
    let repo = with_gitmodules(text, &[]);
    assert_eq!(open(&repo).submodule_urls("HEAD").unwrap(), map(expected));
}

#[track_caller]
fn assert_refused(repo: &TestRepo, reason: &str) {
    match open(repo).submodule_urls("HEAD") {
        Err(Error::InvalidInput { what, reason: got }) => {
            assert_eq!(what, ".gitmodules at HEAD");
            assert_contains(&got, reason);
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_submodule_added_by_git_is_read() {
    let sub = TestRepo::named("sub");
    sub.commit_file("lib.rs", "pub fn f() {}\n", "sub: first");
    let repo = TestRepo::new();
    repo.add_submodule("vendor/sub", &sub)
        .commit("add the submodule");
    let url = sub.path().to_string_lossy();
    assert_eq!(
        open(&repo).submodule_urls("HEAD").unwrap(),
        map(&[("vendor/sub", &url)])
    );
}

#[test]
fn paths_and_urls_in_either_order() {
    check(
        "[submodule \"lib\"]\n\tpath = vendor/lib\n\turl = ../lib.git\n[submodule \"x\"]\n\turl = https://example.com/x.git\n\tpath = x\n",
        &[
            ("vendor/lib", "../lib.git"),
            ("x", "https://example.com/x.git"),
        ],
    );
}

#[test]
fn git_syntax_means_what_it_means_to_git() {
    check(
        "# a comment\n\
         [submodule \"lib\"]\n\
         \tpath = vendor/lib ; trailing comment\n\
         \turl = \"../lib.git\"\n\
         [submodule \"x\"]\n\
         \tURL = https://example.com/x.git\n\
         \tPath = x\n\
         [submodule \"split\"]\n\
         \tpath = a long \\\n\
         path\n\
         \turl = u1\n\
         \turl = u2\n\
         [submodule \"no-url\"]\n\
         \tpath = alone\n",
        &[
            ("a long path", "u2"),
            ("vendor/lib", "../lib.git"),
            ("x", "https://example.com/x.git"),
        ],
    );
}

#[test]
fn odd_names_and_paths() {
    check(
        "[submodule \"we.ird \\\"name\\\"\"]\n\
         \tpath = dir with spaces/sub\n\
         \turl = ../w.git\n\
         [submodule \"a.path\"]\n\
         \tpath = dotted\n\
         \turl = ../d.git\n\
         [submodule \"ÜNI\"]\n\
         \tpath = ü\n\
         \turl = ../ü.git\n\
         [submodule]\n\
         \tpath = nameless\n\
         \turl = ../nameless.git\n",
        &[
            ("dir with spaces/sub", "../w.git"),
            ("dotted", "../d.git"),
            ("ü", "../ü.git"),
        ],
    );
}

#[test]
fn includes_are_never_followed() {
    let repo = with_gitmodules(
        "[include]\n\tpath = evil.cfg\n\
         [includeIf \"gitdir:/\"]\n\tpath = evil.cfg\n\
         [submodule \"good\"]\n\tpath = good\n\turl = ../good.git\n",
        &[(
            "evil.cfg",
            "[submodule \"evil\"]\n\tpath = good\n\turl = https://evil.example/x.git\n\
             [submodule \"more\"]\n\tpath = more\n\turl = https://evil.example/y.git\n",
        )],
    );
    assert_eq!(
        open(&repo).submodule_urls("HEAD").unwrap(),
        map(&[("good", "../good.git")])
    );
}

#[test]
fn oversized_and_amplifying_files_are_refused_before_git_runs() {
    let huge = format!(
        "[submodule \"a\"]\n\tpath = a\n\turl = {}\n",
        "x".repeat(1024 * 1024)
    );
    assert_refused(&with_gitmodules(&huge, &[]), "over the limit of 1048576");
    // 60 KB of header, repeated in front of each of 60,000 short keys, would
    // be about 3.6 GB of listing.
    let amplifying = format!(
        "[submodule \"{}\"]\n{}",
        "n".repeat(60_000),
        "\turl = x\n".repeat(60_000)
    );
    assert_refused(&with_gitmodules(&amplifying, &[]), "listing");
}

#[test]
fn a_file_git_cannot_read_is_refused() {
    let repo = with_gitmodules("[submodule \"a\"\n\tpath = a\n", &[]);
    assert_refused(&repo, "cannot read it as a config file");
}

#[test]
fn only_a_regular_file_declares_anything() {
    let repo = TestRepo::new();
    repo.write(
        "real.cfg",
        "[submodule \"a\"]\n\tpath = a\n\turl = ../a.git\n",
    );
    repo.commit_all("first");
    // git refuses to stage a symbolic link named .gitmodules, so build the
    // tree by hand: .gitmodules links to real.cfg.
    let target = repo
        .command()
        .args(["hash-object", "-w", "--stdin"])
        .stdin("real.cfg")
        .run()
        .unwrap();
    let target = String::from_utf8(target.stdout).unwrap();
    let real = repo.rev_parse("HEAD:real.cfg");
    let listing = format!(
        "120000 blob {}\t.gitmodules\n100644 blob {real}\treal.cfg\n",
        target.trim()
    );
    let tree = repo.command().arg("mktree").stdin(listing).run().unwrap();
    let tree = String::from_utf8(tree.stdout).unwrap();
    let commit = repo.git(&["commit-tree", tree.trim(), "-m", "linked"]);
    let urls = open(&repo).submodule_urls(commit.trim()).unwrap();
    assert!(urls.is_empty(), "{urls:?}");
    // A directory named .gitmodules declares nothing either.
    repo.write(
        ".gitmodules/x",
        "[submodule \"a\"]\n\tpath = a\n\turl = u\n",
    );
    repo.commit_all("a directory");
    assert!(open(&repo).submodule_urls("HEAD").unwrap().is_empty());
}

#[test]
fn no_or_an_empty_file_declares_nothing_and_an_unknown_revision_is_an_error() {
    let repo = TestRepo::new();
    repo.commit_file("README", "x\n", "first");
    assert!(open(&repo).submodule_urls("HEAD").unwrap().is_empty());
    let repo = with_gitmodules("", &[]);
    assert!(open(&repo).submodule_urls("HEAD").unwrap().is_empty());
    assert!(matches!(
        open(&repo).submodule_urls("no-such-rev"),
        Err(Error::RevNotFound { .. })
    ));
}
