//! Nothing outside the root is ever read.

use std::path::Path;

use guidance::{Family, FamilyChoice};
use tempfile::TempDir;

use crate::{resolve, write_files};

/// An outer directory with guidance of both families, and an empty
/// repository root inside it.
fn nested() -> (TempDir, std::path::PathBuf) {
    nested_with(&[])
}

/// [`nested`], with `files` written under the repository root.
fn nested_with(files: &[(&str, &str)]) -> (TempDir, std::path::PathBuf) {
    let outer = tempfile::tempdir().unwrap();
    write_files(
        outer.path(),
        &[
            ("AGENTS.md", "OUTSIDE agents\n"),
            ("CLAUDE.md", "OUTSIDE claude\n"),
            ("elsewhere/AGENTS.md", "OUTSIDE elsewhere\n"),
            ("repo/src/lib.rs", ""),
        ],
    );
    let root = outer.path().join("repo");
    write_files(&root, files);
    (outer, root)
}

fn assert_nothing_outside(root: &Path, targets: &[&str]) {
    for choice in [
        FamilyChoice::Auto,
        FamilyChoice::Agents,
        FamilyChoice::Claude,
    ] {
        let found = resolve(root, targets, choice);
        assert!(
            found.is_empty(),
            "{targets:?} with {choice}: {:?}",
            found.sources
        );
    }
}

#[test]
fn dot_dot_and_absolute_targets_never_leave_the_root() {
    let (outer, root) = nested();
    let outside = outer.path().join("elsewhere/file.rs");
    let outside = outside.to_str().unwrap();
    let targets = [
        "..",
        "../",
        "../elsewhere/file.rs",
        "src/../../elsewhere/file.rs",
        "src/..",
        "/",
        outside,
        "/elsewhere/file.rs",
    ];
    for target in targets {
        assert_nothing_outside(&root, &[target]);
        let found = resolve(&root, &[target], FamilyChoice::Auto);
        assert_eq!(found.target, root, "{target:?} is treated as the root");
    }
    assert_nothing_outside(&root, &targets);
}

#[test]
fn rejected_targets_still_see_the_root_guidance() {
    let (_outer, root) = nested_with(&[("CLAUDE.md", "inside\n"), ("src/CLAUDE.md", "src\n")]);
    let found = resolve(&root, &["../elsewhere/x", "src/lib.rs"], FamilyChoice::Auto);
    assert_eq!(found.family, Some(Family::Claude));
    assert_eq!(found.paths(), ["CLAUDE.md", "src/CLAUDE.md"]);
    assert_eq!(found.target, root);
}

#[test]
fn git_directory_targets_are_treated_as_the_root() {
    let (_outer, root) = nested_with(&[
        ("AGENTS.md", "inside\n"),
        (".git/AGENTS.md", "GIT DIR\n"),
        (".git/refs/AGENTS.md", "GIT DIR\n"),
        ("sub/.git/AGENTS.md", "GIT DIR\n"),
    ]);
    for target in [
        ".git",
        ".git/refs/heads/main",
        "sub/.git/HEAD",
        "./.GIT/refs",
    ] {
        let found = resolve(&root, &[target], FamilyChoice::Auto);
        assert_eq!(found.paths(), ["AGENTS.md"], "{target:?}");
        assert_eq!(found.target, root);
    }
}

#[cfg(unix)]
mod symlinks {
    use std::os::unix::fs::symlink;

    use guidance::{Family, FamilyChoice};

    use super::{nested, nested_with};
    use crate::{resolve, write_files};

    #[test]
    fn symlinked_candidate_escaping_the_root_is_ignored() {
        let (outer, root) = nested();
        symlink(outer.path().join("AGENTS.md"), root.join("AGENTS.md")).unwrap();
        symlink("../../CLAUDE.md", root.join("src/CLAUDE.md")).unwrap();
        let found = resolve(&root, &["src/lib.rs"], FamilyChoice::Auto);
        assert!(found.is_empty(), "{:?}", found.sources);
    }

    #[test]
    fn symlink_escaping_falls_back_to_the_next_candidate() {
        let (outer, root) = nested();
        symlink(
            outer.path().join("AGENTS.md"),
            root.join("AGENTS.override.md"),
        )
        .unwrap();
        write_files(&root, &[("AGENTS.md", "inside\n")]);
        let found = resolve(&root, &[], FamilyChoice::Auto);
        assert_eq!(found.paths(), ["AGENTS.md"]);
        assert_eq!(found.sources[0].text, "inside\n");
    }

    #[test]
    fn symlinked_candidate_inside_the_root_counts() {
        let (_outer, root) = nested_with(&[("docs/agents.txt", "shared rules\n")]);
        symlink("docs/agents.txt", root.join("AGENTS.md")).unwrap();
        let found = resolve(&root, &[], FamilyChoice::Auto);
        assert_eq!(found.family, Some(Family::Agents));
        assert_eq!(found.paths(), ["AGENTS.md"]);
        assert_eq!(found.sources[0].text, "shared rules\n");
    }

    #[test]
    fn dangling_or_directory_symlinks_do_not_count() {
        let (_outer, root) = nested();
        symlink("missing.md", root.join("AGENTS.override.md")).unwrap();
        symlink("src", root.join("AGENTS.md")).unwrap();
        write_files(&root, &[("CLAUDE.md", "claude\n")]);
        let found = resolve(&root, &[], FamilyChoice::Auto);
        assert_eq!(found.family, Some(Family::Claude));
    }

    #[test]
    fn symlinked_directories_are_not_walked_into() {
        let (outer, root) = nested();
        symlink(outer.path().join("elsewhere"), root.join("link")).unwrap();
        symlink(outer.path(), root.join("up")).unwrap();
        for target in [
            "link/file.rs",
            "link",
            "link/",
            "up/elsewhere/x",
            "up/repo/x",
        ] {
            let found = resolve(&root, &[target], FamilyChoice::Auto);
            assert!(found.is_empty(), "{target:?}: {:?}", found.sources);
        }
    }

    #[test]
    fn a_root_reached_through_a_symlink_works() {
        let (outer, root) = nested_with(&[("AGENTS.md", "inside\n"), ("docs/x.md", "shared\n")]);
        symlink("../docs/x.md", root.join("src/AGENTS.md")).unwrap();
        let alias = outer.path().join("alias");
        symlink(&root, &alias).unwrap();
        let found = resolve(&alias, &["src/lib.rs"], FamilyChoice::Auto);
        assert_eq!(found.paths(), ["AGENTS.md", "src/AGENTS.md"]);
        // The heading keeps the path the caller gave.
        assert_eq!(found.target, alias.join("src"));
    }
}
