//! Family selection and scope discovery.

use guidance::{Family, FamilyChoice, GuidanceError, Options};

use crate::{check, repo, resolve, write_files};

const AUTO: FamilyChoice = FamilyChoice::Auto;
const AGENTS: Option<Family> = Some(Family::Agents);
const CLAUDE: Option<Family> = Some(Family::Claude);

const THREE_LEVELS: &[&str] = &[
    "AGENTS.md",
    "frontend/AGENTS.md",
    "frontend/admin/AGENTS.md",
    "frontend/admin/page.tsx",
    "backend/api.rs",
];

/// `target`, in `frontend/admin/` of [`THREE_LEVELS`], sees the guidance of
/// every level, root first.
fn sees_all_three_levels(target: &str) {
    let found = check(
        THREE_LEVELS,
        &[target],
        AUTO,
        AGENTS,
        &[
            "AGENTS.md",
            "frontend/AGENTS.md",
            "frontend/admin/AGENTS.md",
        ],
    );
    assert!(found.target.ends_with("frontend/admin"));
}

#[test]
fn override_beats_agents_md_in_the_same_directory() {
    check(
        &["AGENTS.override.md", "AGENTS.md", "src/lib.rs"],
        &["src/lib.rs"],
        AUTO,
        AGENTS,
        &["AGENTS.override.md"],
    );
    check(
        &["AGENTS.md", "src/AGENTS.override.md", "src/AGENTS.md"],
        &["src/lib.rs"],
        AUTO,
        AGENTS,
        &["AGENTS.md", "src/AGENTS.override.md"],
    );
}

#[test]
fn scoped_root_to_leaf_order_over_three_levels() {
    sees_all_three_levels("frontend/admin/page.tsx");
    // A sibling branch sees only the root.
    check(
        THREE_LEVELS,
        &["backend/api.rs"],
        AUTO,
        AGENTS,
        &["AGENTS.md"],
    );
    // A file in the middle level does not see the deeper one.
    check(
        THREE_LEVELS,
        &["frontend/index.tsx"],
        AUTO,
        AGENTS,
        &["AGENTS.md", "frontend/AGENTS.md"],
    );
}

#[test]
fn directories_without_guidance_are_skipped() {
    check(
        &["AGENTS.md", "a/b/c/AGENTS.md"],
        &["a/b/c/d/e.txt"],
        AUTO,
        AGENTS,
        &["AGENTS.md", "a/b/c/AGENTS.md"],
    );
    // Guidance only below the root.
    check(&["a/AGENTS.md"], &["a/x"], AUTO, AGENTS, &["a/AGENTS.md"]);
}

#[test]
fn several_targets_are_deduplicated_root_first_in_target_order() {
    let files = &[
        "AGENTS.md",
        "web/AGENTS.md",
        "web/admin/AGENTS.md",
        "api/AGENTS.md",
        "docs/CLAUDE.md",
    ];
    check(
        files,
        &[
            "web/admin/a.ts",
            "api/b.rs",
            "web/c.ts",
            "api/d.rs",
            "docs/e.md",
        ],
        AUTO,
        AGENTS,
        &[
            "AGENTS.md",
            "web/AGENTS.md",
            "web/admin/AGENTS.md",
            "api/AGENTS.md",
        ],
    );
    check(
        files,
        &["api/b.rs", "web/admin/a.ts"],
        AUTO,
        AGENTS,
        &[
            "AGENTS.md",
            "api/AGENTS.md",
            "web/AGENTS.md",
            "web/admin/AGENTS.md",
        ],
    );
    // A shallow target first, then a deeper one under it: parents still
    // come before children.
    check(
        files,
        &["web/c.ts", "web/admin/a.ts", "web/c.ts"],
        AUTO,
        AGENTS,
        &["AGENTS.md", "web/AGENTS.md", "web/admin/AGENTS.md"],
    );
}

#[test]
fn many_targets_in_the_same_directories() {
    let root = repo(&[("AGENTS.md", "root\n"), ("src/AGENTS.md", "src\n")]);
    let targets: Vec<String> = (0..1000)
        .map(|i| format!("src/m{}/file{i}.rs", i % 10))
        .chain((0..1000).map(|i| format!("src/file{i}.rs")))
        .collect();
    let found = guidance::resolve(root.path(), &targets, AUTO, &Options::default()).unwrap();
    assert_eq!(found.paths(), ["AGENTS.md", "src/AGENTS.md"]);
    assert_eq!(found.target, root.path().join("src"));
}

#[test]
fn families_are_never_mixed() {
    check(
        &["AGENTS.md", "frontend/CLAUDE.md"],
        &["frontend/app.tsx"],
        AUTO,
        AGENTS,
        &["AGENTS.md"],
    );
    // AGENTS-family on any target's chain wins for all targets.
    check(
        &["CLAUDE.md", "web/CLAUDE.md", "api/AGENTS.md"],
        &["web/a.ts", "api/b.rs"],
        AUTO,
        AGENTS,
        &["api/AGENTS.md"],
    );
    // ...but only on the chains: an AGENTS.md elsewhere in the tree does not count.
    check(
        &["CLAUDE.md", "web/CLAUDE.md", "api/AGENTS.md"],
        &["web/a.ts"],
        AUTO,
        CLAUDE,
        &["CLAUDE.md", "web/CLAUDE.md"],
    );
}

#[test]
fn claude_fallback() {
    check(
        &[
            "CLAUDE.md",
            "frontend/CLAUDE.md",
            "frontend/admin/CLAUDE.md",
        ],
        &["frontend/admin/page.tsx"],
        AUTO,
        CLAUDE,
        &[
            "CLAUDE.md",
            "frontend/CLAUDE.md",
            "frontend/admin/CLAUDE.md",
        ],
    );
}

#[test]
fn no_guidance() {
    let found = check(
        &["README.md", "src/lib.rs"],
        &["src/lib.rs"],
        AUTO,
        None,
        &[],
    );
    assert_eq!(found.render(), None);
    check(&[], &[], AUTO, None, &[]);
}

#[test]
fn forced_family_choices() {
    let files = &["AGENTS.md", "CLAUDE.md", "src/CLAUDE.md", "src/AGENTS.md"];
    check(
        files,
        &["src/x"],
        FamilyChoice::Claude,
        CLAUDE,
        &["CLAUDE.md", "src/CLAUDE.md"],
    );
    check(
        files,
        &["src/x"],
        FamilyChoice::Agents,
        AGENTS,
        &["AGENTS.md", "src/AGENTS.md"],
    );
    check(files, &["src/x"], FamilyChoice::None, None, &[]);
    // Forcing a family that has no files gives nothing, not the other family.
    check(&["CLAUDE.md"], &["x"], FamilyChoice::Agents, None, &[]);
    check(&["AGENTS.md"], &["x"], FamilyChoice::Claude, None, &[]);
}

#[test]
fn deleted_file_target_uses_its_parent_chain() {
    sees_all_three_levels("frontend/admin/deleted.tsx");
    // A file in a deleted directory: the chain stops where the tree does,
    // the heading still names the target's directory.
    let root = repo(&[("AGENTS.md", "root\n"), ("old/AGENTS.md", "old\n")]);
    let found = resolve(root.path(), &["old/gone/deeper/file.rs"], AUTO);
    assert_eq!(found.paths(), ["AGENTS.md", "old/AGENTS.md"]);
    assert_eq!(found.target, root.path().join("old/gone/deeper"));
}

#[test]
fn directory_target_is_its_own_directory() {
    let root = repo(&[
        ("AGENTS.md", "root\n"),
        ("frontend/AGENTS.md", "frontend\n"),
        ("frontend/admin/AGENTS.md", "admin\n"),
    ]);
    for target in ["frontend/admin", "frontend/admin/", "./frontend//admin"] {
        let found = resolve(root.path(), &[target], AUTO);
        assert_eq!(
            found.paths(),
            [
                "AGENTS.md",
                "frontend/AGENTS.md",
                "frontend/admin/AGENTS.md"
            ],
            "{target:?}"
        );
        assert_eq!(found.target, root.path().join("frontend/admin"));
    }
    let found = resolve(root.path(), &["frontend"], AUTO);
    assert_eq!(found.paths(), ["AGENTS.md", "frontend/AGENTS.md"]);
}

#[test]
fn no_targets_means_the_root_alone() {
    let root = repo(&[("AGENTS.md", "root\n"), ("src/AGENTS.md", "src\n")]);
    for targets in [&[][..], &[""], &["."], &["", "./"]] {
        let found = resolve(root.path(), targets, AUTO);
        assert_eq!(found.paths(), ["AGENTS.md"], "{targets:?}");
        assert_eq!(found.target, root.path());
    }
}

#[test]
fn heading_target_is_the_deepest_common_directory() {
    let root = repo(&[("AGENTS.md", "root\n"), ("web/admin/x.ts", "")]);
    let target = |targets: &[&str]| resolve(root.path(), targets, AUTO).target;
    assert_eq!(
        target(&["web/admin/x.ts", "web/admin/y.ts"]),
        root.path().join("web/admin")
    );
    assert_eq!(
        target(&["web/admin/x.ts", "web/b.ts"]),
        root.path().join("web")
    );
    assert_eq!(target(&["web/admin", "web/b.ts"]), root.path().join("web"));
    assert_eq!(target(&["web/a.ts", "api/b.rs"]), root.path());
    assert_eq!(target(&["web/a.ts", "README.md"]), root.path());
    // A rejected target counts as the root.
    assert_eq!(target(&["web/a.ts", "../x"]), root.path());
}

#[test]
fn empty_and_whitespace_files_do_not_count() {
    let root = repo(&[
        ("AGENTS.override.md", ""),
        ("AGENTS.md", "root agents\n"),
        ("src/AGENTS.md", " \n\t\r\n"),
    ]);
    let found = resolve(root.path(), &["src/x"], AUTO);
    assert_eq!(found.paths(), ["AGENTS.md"]);
    // An AGENTS-family file that does not count does not select the family.
    let root = repo(&[("AGENTS.md", "\n\n"), ("CLAUDE.md", "claude\n")]);
    let found = resolve(root.path(), &[], AUTO);
    assert_eq!(found.family, CLAUDE);
    assert_eq!(found.paths(), ["CLAUDE.md"]);
}

#[test]
fn a_directory_named_like_a_candidate_does_not_count() {
    let root = repo(&[
        ("AGENTS.override.md/inner.txt", "x"),
        ("AGENTS.md", "real\n"),
    ]);
    let found = resolve(root.path(), &[], AUTO);
    assert_eq!(found.paths(), ["AGENTS.md"]);
}

#[cfg(target_os = "linux")]
#[test]
fn names_are_matched_exactly() {
    check(
        &["agents.md", "Agents.md", "claude.md", "src/CLAUDE.md"],
        &["src/x"],
        AUTO,
        CLAUDE,
        &["src/CLAUDE.md"],
    );
}

#[test]
fn non_utf8_text_is_decoded_lossily() {
    let root = repo(&[]);
    std::fs::write(root.path().join("AGENTS.md"), b"caf\xe9 ok\n").unwrap();
    let found = resolve(root.path(), &[], AUTO);
    assert_eq!(found.sources[0].text, "caf\u{fffd} ok\n");
    assert!(!found.sources[0].truncated);
}

#[test]
fn byte_order_mark_is_dropped() {
    let root = repo(&[("AGENTS.md", "\u{feff}rules\n")]);
    let found = resolve(root.path(), &[], AUTO);
    assert_eq!(found.sources[0].text, "rules\n");
}

#[test]
fn bad_roots_are_errors() {
    let dir = repo(&[("file.txt", "x")]);
    let missing = dir.path().join("missing");
    let err = guidance::resolve(&missing, &[], AUTO, &Options::default()).unwrap_err();
    assert!(matches!(&err, GuidanceError::Root { path, .. } if *path == missing));
    assert!(err.to_string().starts_with("cannot read repository root "));

    let file = dir.path().join("file.txt");
    let err = guidance::resolve(&file, &[], AUTO, &Options::default()).unwrap_err();
    assert!(matches!(&err, GuidanceError::NotADirectory { path } if *path == file));

    let err = guidance::resolve("".as_ref(), &[], AUTO, &Options::default()).unwrap_err();
    assert!(matches!(err, GuidanceError::Root { .. }));
}

#[test]
fn root_given_with_dot_components_is_cleaned_in_the_heading() {
    let root = repo(&[("AGENTS.md", "root\n")]);
    write_files(root.path(), &[("src/lib.rs", "")]);
    let found = resolve(&root.path().join("."), &["src/lib.rs"], AUTO);
    assert_eq!(found.target, root.path().join("src"));
}
