//! Tags, semver tags, origin/HEAD, config and gitlinks.

use gitctx::Version;
use testkit::TestRepo;

use crate::open;

#[test]
fn lists_tags_with_their_commits() {
    let repo = TestRepo::new();
    let a = repo.commit_file("a.txt", "1\n", "one");
    repo.tag("light");
    repo.tag_annotated("heavy", &a, "annotated");
    let tree = repo.rev_parse("HEAD^{tree}");
    repo.git(&["tag", "tree-tag", &tree]);
    let tags = open(&repo).tags().unwrap();
    let view: Vec<(&str, bool)> = tags
        .iter()
        .map(|t| (t.name.as_str(), t.annotated))
        .collect();
    assert_eq!(
        view,
        [("heavy", true), ("light", false)],
        "a tag of a tree is skipped"
    );
    assert!(tags.iter().all(|t| t.commit.to_hex() == a));
}

#[test]
fn latest_reachable_semver_tag() {
    let repo = TestRepo::new();
    let r = open(&repo);
    repo.commit_file("a.txt", "1\n", "one");
    assert_eq!(r.latest_semver_tag("HEAD").unwrap(), None);
    repo.tag("v1.0.0");
    repo.commit_file("a.txt", "2\n", "two");
    repo.tag("1.2.0");
    repo.tag("v1.10.0-rc1");
    repo.tag("not-a-version");
    let two = repo.rev_parse("HEAD");
    // A higher version on a branch not reachable from main is ignored.
    repo.checkout_new("other");
    repo.commit_file("b.txt", "x\n", "elsewhere");
    repo.tag("v9.0.0");
    repo.checkout("main");
    repo.commit_file("a.txt", "3\n", "three");

    let latest = r.latest_semver_tag("HEAD").unwrap().unwrap();
    assert_eq!(latest.tag.name, "1.2.0");
    assert_eq!(latest.tag.commit.to_hex(), two);
    assert_eq!(latest.version, Version::parse_tag("1.2.0").unwrap());
    assert_eq!(
        latest
            .version
            .bump(gitctx::Bump::Patch)
            .unwrap()
            .to_string(),
        "1.2.1"
    );
    assert_eq!(
        r.latest_semver_tag("other").unwrap().unwrap().tag.name,
        "v9.0.0"
    );
    assert_eq!(
        r.latest_semver_tag("HEAD~2").unwrap().unwrap().tag.name,
        "v1.0.0"
    );

    // With both spellings of one version, the v-prefixed tag wins.
    repo.tag("v1.2.0");
    assert_eq!(
        r.latest_semver_tag("HEAD").unwrap().unwrap().tag.name,
        "v1.2.0"
    );
}

#[test]
fn origin_head() {
    let repo = TestRepo::new();
    let base = repo.commit_file("a.txt", "1\n", "one");
    let r = open(&repo);
    assert_eq!(r.origin_head().unwrap(), None);
    repo.set_origin_head("trunk", &base);
    let head = r.origin_head().unwrap().unwrap();
    assert_eq!(head.refname, "refs/remotes/origin/trunk");
    assert_eq!(head.shorthand, "origin/trunk");
    assert_eq!(head.commit.to_hex(), base);
    // A dangling origin/HEAD (its branch deleted) counts as unset.
    repo.git(&["update-ref", "-d", "refs/remotes/origin/trunk"]);
    assert_eq!(r.origin_head().unwrap(), None);
}

#[test]
fn config_get_and_set() {
    let repo = TestRepo::new();
    let r = open(&repo);
    assert_eq!(r.config_get("ultragit.depsScanLimit").unwrap(), None);
    r.config_set("ultragit.depsScanLimit", "250").unwrap();
    r.config_set("ultragit.enabled", "yes").unwrap();
    assert_eq!(
        r.config_get("ultragit.depsscanlimit").unwrap().as_deref(),
        Some("250")
    );
    assert_eq!(
        r.config_get_i64("ultragit.depsScanLimit").unwrap(),
        Some(250)
    );
    assert_eq!(r.config_get_bool("ultragit.enabled").unwrap(), Some(true));
    // git sees what we wrote, in the repository's own config.
    let shown = repo
        .command()
        .args(["config", "--local", "--get", "ultragit.depsScanLimit"])
        .run_text()
        .unwrap();
    assert_eq!(shown.trim(), "250");
    repo.git(&[
        "config",
        "--local",
        "notes.rewriteRef",
        "refs/notes/ultragit",
    ]);
    assert_eq!(
        r.config_get("notes.rewriteRef").unwrap().as_deref(),
        Some("refs/notes/ultragit")
    );
    assert!(r.config_unset("ultragit.enabled").unwrap());
    assert!(!r.config_unset("ultragit.enabled").unwrap());
    assert!(
        r.config_get_i64("notes.rewriteRef").is_err(),
        "not an integer"
    );
    assert!(r.config_set("no-section", "x").is_err());
}

#[test]
fn submodule_gitlinks() {
    let sub = TestRepo::named("sub");
    let pinned = sub.commit_file("lib.txt", "1\n", "one");
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "a\n", "init");
    let r = open(&repo);
    assert!(r.gitlinks("HEAD").unwrap().is_empty());
    repo.add_submodule("vendor/lib", &sub);
    repo.commit("add submodule");
    let links = r.gitlinks("HEAD").unwrap();
    assert_eq!(links.len(), 1);
    assert_eq!(links[0].path, "vendor/lib");
    assert_eq!(links[0].commit.to_hex(), pinned);
    let opened = r.open_submodule("vendor/lib").unwrap().unwrap();
    assert_eq!(opened.resolve_commit("HEAD").unwrap().to_hex(), pinned);
    assert!(r.open_submodule("a.txt").unwrap().is_none());
}

#[test]
fn multi_valued_config_is_appended_once() {
    let repo = TestRepo::new();
    let r = open(&repo);
    repo.git(&["config", "--add", "notes.rewriteRef", "refs/notes/commits"]);
    assert!(
        r.config_add_unique("notes.rewriteRef", "refs/notes/ultragit")
            .unwrap()
    );
    assert!(
        !r.config_add_unique("notes.rewriteRef", "refs/notes/ultragit")
            .unwrap()
    );
    let values = repo
        .command()
        .args(["config", "--local", "--get-all", "notes.rewriteRef"])
        .run_text()
        .unwrap();
    assert_eq!(values, "refs/notes/commits\nrefs/notes/ultragit\n");
}

#[test]
fn hooks_dir_honours_core_hooks_path() {
    let repo = TestRepo::new();
    let r = open(&repo);
    assert_eq!(r.hooks_dir().unwrap(), repo.join(".git/hooks"));
    repo.git(&["config", "core.hooksPath", ".githooks"]);
    assert_eq!(r.hooks_dir().unwrap(), repo.join(".githooks"));
}
