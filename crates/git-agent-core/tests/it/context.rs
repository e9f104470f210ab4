//! The prepared context on real repositories: staged scenarios, amend, root
//! commits, detached HEAD, renames, binaries, submodules, lockfiles, generated
//! files and budgets.

use git_agent_core::classify::Class;
use git_agent_core::context::{self, Limits, Mode};
use git_agent_core::fit::Shown;
use git_agent_core::{Error, commit_msg};
use testkit::{TestRepo, assert_contains};

use crate::support::{moved_submodule, prepared, project, stage_retries, task_id_branch};

#[test]
fn staged_changes_are_the_scope_and_head_is_contrast() {
    let repo = project();
    stage_retries(&repo);
    repo.write("README.md", "# demo\n\nUnstaged edit.\n");
    repo.write("notes.txt", "untracked\n");
    let p = prepared(&repo, Mode::Staged);
    assert_eq!(p.mode, Mode::Staged);
    assert_eq!(p.branch.as_deref(), Some("main"));
    assert!(!p.unborn);
    assert_eq!(p.changes.path_names(), ["src/net.rs"]);
    assert_eq!(p.changes.paths[0].status, 'M');
    assert_eq!((p.changes.additions, p.changes.deletions), (6, 1));
    assert!(p.changes.diff.is_complete());
    assert!(p.changes.diff.text.contains("+    for _ in 0..3 {"));
    // README's edit is not staged: it is neither scope nor a partial stage.
    assert!(p.staged.partially_staged.is_empty());
    assert_eq!(p.staged.untracked, 1);
    let head = p.head.as_ref().unwrap();
    assert_eq!(head.brief.subject, "docs: document add");
    assert_eq!(head.paths[0].path, "src/lib.rs");
    assert_eq!(
        p.recent
            .iter()
            .map(|c| c.subject.as_str())
            .collect::<Vec<_>>(),
        ["docs: document add", "feat: initial crate"]
    );
    let text = context::render(&p);
    assert!(text.contains(
        "<staged_paths files=\"1\" additions=\"6\" deletions=\"1\">\nM +6 -1 src/net.rs\n"
    ));
    assert!(text.contains("1 untracked file(s) exist"));
    assert!(text.contains("<previous_head commit="));
}

#[test]
fn nothing_staged_is_an_error_before_any_model_call() {
    let repo = project();
    repo.write("README.md", "changed but not staged\n");
    let err = commit_msg::prepare(repo.path(), &Default::default()).unwrap_err();
    assert!(matches!(err, Error::NothingStaged), "{err:?}");
    assert!(err.to_string().contains("git add"));
}

#[test]
fn partially_staged_paths_are_noted() {
    let repo = project();
    repo.write("src/net.rs", "pub fn connect(_: &str) -> bool { true }\n")
        .stage(&["src/net.rs"]);
    repo.write("src/net.rs", "pub fn connect(_: &str) -> bool { false }\n");
    let p = prepared(&repo, Mode::Staged);
    assert_eq!(p.staged.partially_staged, ["src/net.rs"]);
    assert_contains(
        &context::render(&p),
        "also have unstaged changes, which are NOT part of this commit: src/net.rs",
    );
}

#[test]
fn the_root_commit_has_no_contrast_and_no_history() {
    let repo = TestRepo::new();
    repo.write("main.py", "print('hi')\n").stage(&["main.py"]);
    let p = prepared(&repo, Mode::Staged);
    assert!(p.unborn);
    assert!(p.head.is_none());
    assert!(p.recent.is_empty());
    assert_eq!(p.changes.paths[0].status, 'A');
    assert!(context::render(&p).contains("(no commits yet: this is the root commit)"));
    // Nothing to amend on an unborn branch.
    let err = commit_msg::prepare(
        repo.path(),
        &commit_msg::Options {
            amend: true,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(matches!(err, Error::NothingToAmend), "{err:?}");
}

#[test]
fn detached_head_works_and_says_so() {
    let repo = project();
    repo.checkout_detached("HEAD~1");
    repo.write("src/net.rs", "pub fn connect(_: &str) -> bool { true }\n")
        .stage(&["src/net.rs"]);
    let p = prepared(&repo, Mode::Staged);
    assert_eq!(p.branch, None);
    assert_eq!(
        p.head.as_ref().unwrap().brief.subject,
        "feat: initial crate"
    );
    assert!(context::render(&p).contains("Branch: (detached HEAD)"));
}

#[test]
fn renames_binaries_and_deletions_are_listed_with_their_kind() {
    let repo = project();
    repo.write("assets/logo.png", [0x89u8, b'P', b'N', b'G', 0, 0, 1, 2]);
    repo.commit_all("add logo");
    repo.rename("src/net.rs", "src/network.rs");
    repo.write("assets/logo.png", [0x89u8, b'P', b'N', b'G', 0, 9, 9, 9])
        .stage(&["assets/logo.png"]);
    repo.remove("README.md");
    repo.stage_all();
    let p = prepared(&repo, Mode::Staged);
    let rows: Vec<(char, &str, Option<&str>, &Class)> = p
        .changes
        .paths
        .iter()
        .map(|e| (e.status, e.path.as_str(), e.old_path.as_deref(), &e.class))
        .collect();
    assert_eq!(
        rows,
        [
            ('D', "README.md", None, &Class::Handwritten),
            ('M', "assets/logo.png", None, &Class::Binary),
            (
                'R',
                "src/network.rs",
                Some("src/net.rs"),
                &Class::Handwritten
            ),
        ]
    );
    let text = context::render(&p);
    assert!(text.contains("M binary assets/logo.png\n"), "{text}");
    assert_contains(&text, "R +0 -0 src/net.rs -> src/network.rs\n");
    // The deleted README's removed lines are in the diff.
    assert!(text.contains("-A demo crate."), "{text}");
}

#[test]
fn submodule_moves_carry_their_commit_summaries() {
    let (parent, _sub) =
        moved_submodule(&["Fix overflow in the parser", "Add streaming decode API"]);
    let p = prepared(&parent, Mode::Staged);
    assert_eq!(p.changes.paths[0].class, Class::Submodule);
    let moved = &p.changes.submodules[0];
    assert_eq!(moved.path, "vendor/lib");
    assert_eq!(
        moved.commits,
        ["Add streaming decode API", "Fix overflow in the parser"]
    );
    let text = context::render(&p);
    assert!(text.contains("  - Add streaming decode API\n"), "{text}");
    let request = crate::support::request(&parent, false);
    assert_eq!(request.checks.rules.submodules.len(), 1);
}

#[test]
fn a_submodule_that_is_not_checked_out_is_noted() {
    let sub = TestRepo::named("lib");
    let first = sub.commit_file("lib.txt", "1\n", "one");
    let second = sub.commit_file("lib.txt", "2\n", "two");
    let parent = TestRepo::new();
    parent.commit_file("app.txt", "app\n", "app");
    parent.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{first},ext/lib"),
    ]);
    parent.commit("Record ext/lib");
    parent.git(&[
        "update-index",
        "--cacheinfo",
        &format!("160000,{second},ext/lib"),
    ]);
    let p = prepared(&parent, Mode::Staged);
    let moved = &p.changes.submodules[0];
    assert!(moved.commits.is_empty());
    assert!(moved.note.as_deref().unwrap().contains("not checked out"));
}

fn package_lock(versions: &[(&str, &str)]) -> String {
    let mut packages =
        String::from("    \"\": {\n      \"name\": \"app\",\n      \"version\": \"1.0.0\"\n    }");
    for (name, version) in versions {
        packages.push_str(&format!(
            ",\n    \"node_modules/{name}\": {{\n      \"version\": \"{version}\",\n      \"resolved\": \"https://registry.npmjs.org/{name}/-/{name}-{version}.tgz\",\n      \"integrity\": \"sha512-{name}{version}\",\n      \"license\": \"MIT\"\n    }}"
        ));
    }
    format!(
        "{{\n  \"name\": \"app\",\n  \"lockfileVersion\": 3,\n  \"packages\": {{\n{packages}\n  }}\n}}\n"
    )
}

#[test]
fn a_lockfile_only_change_is_summarized_by_package() {
    let repo = TestRepo::new();
    repo.write(
        "package-lock.json",
        package_lock(&[("lodash", "4.17.20"), ("left-pad", "1.3.0")]),
    );
    repo.commit_all("chore: lock");
    repo.write(
        "package-lock.json",
        package_lock(&[
            ("lodash", "4.17.21"),
            ("left-pad", "1.3.0"),
            ("chalk", "5.3.0"),
        ]),
    )
    .stage(&["package-lock.json"]);
    let p = prepared(&repo, Mode::Staged);
    assert!(p.changes.lockfile_only());
    let lock = &p.changes.lockfiles[0];
    assert_eq!(lock.changed[0].name, "lodash");
    assert_eq!(lock.changed[0].old, ["4.17.20"]);
    assert_eq!(lock.changed[0].new, ["4.17.21"]);
    assert_eq!(lock.added[0].name, "chalk");
    let text = context::render(&p);
    assert!(text.contains("lodash 4.17.20 → 4.17.21"), "{text}");
    // Its raw diff is not in the diff section.
    assert!(!text.contains("+    \"node_modules/chalk\""), "{text}");
    assert!(text.contains("package-lock.json [lockfile"), "{text}");
    let request = crate::support::request(&repo, false);
    assert!(
        request
            .checks
            .lockfile_packages
            .contains(&"lodash".to_owned())
    );
    assert!(
        request
            .task
            .messages
            .last()
            .unwrap()
            .text()
            .contains("Every changed path is a lockfile")
    );
}

#[test]
fn generated_files_by_attribute_name_and_header_are_compacted() {
    let repo = project();
    repo.write(".gitattributes", "gen/** linguist-generated\n");
    repo.commit_all("attributes");
    let big: String = (0..400)
        .map(|i| format!("const X{i}: u32 = {i};\n"))
        .collect();
    repo.write("gen/table.rs", &big)
        .write("web/app.min.js", "var a=1;".repeat(50))
        .write(
            "api/user.rs",
            format!("// Code generated by protoc. DO NOT EDIT.\n{big}"),
        )
        .write("src/net.rs", "pub fn connect(_: &str) -> bool { true }\n");
    repo.stage_all();
    let p = prepared(&repo, Mode::Staged);
    let class = |path: &str| {
        p.changes
            .paths
            .iter()
            .find(|e| e.path == path)
            .unwrap()
            .class
            .clone()
    };
    assert_eq!(
        class("gen/table.rs"),
        Class::Generated("linguist-generated".into())
    );
    assert_eq!(class("web/app.min.js"), Class::Generated("*.min.js".into()));
    assert!(matches!(class("api/user.rs"), Class::Generated(r) if r.contains("DO NOT EDIT")));
    assert_eq!(class("src/net.rs"), Class::Handwritten);
    // The hand-written change is shown; the generated ones are listed with stats.
    assert_eq!(
        p.changes.diff.shown,
        [("src/net.rs".to_owned(), Shown::Whole)]
    );
    let text = context::render(&p);
    assert_contains(
        &text,
        "A +400 -0 gen/table.rs [generated: linguist-generated]",
    );
}

/// ~10,000 changed lines: a package-lock.json with ~70% and 20 hand-written files.
fn big_change(repo: &TestRepo) {
    let old: Vec<(String, String)> = (0..1200)
        .map(|i| (format!("pkg-{i:04}"), "1.0.0".to_owned()))
        .collect();
    let refs: Vec<(&str, &str)> = old.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    repo.write("package-lock.json", package_lock(&refs));
    for f in 0..20 {
        let body: String = (0..40)
            .map(|i| format!("export const v{i} = {i};\n"))
            .collect();
        repo.write(&format!("src/mod{f:02}.ts"), body);
    }
    repo.commit_all("base");
    let new: Vec<(String, String)> = (0..1200)
        .map(|i| {
            (
                format!("pkg-{i:04}"),
                if i % 2 == 0 { "1.0.1" } else { "1.0.0" }.to_owned(),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = new.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    repo.write("package-lock.json", package_lock(&refs));
    for f in 0..20 {
        let body: String = (0..150)
            .map(|i| {
                format!("export function f{f}_{i}(x: number): number {{ return x * {i} + {f}; }}\n")
            })
            .collect();
        repo.write(&format!("src/mod{f:02}.ts"), body);
    }
    repo.stage_all();
}

#[test]
fn a_lockfile_dominated_change_keeps_every_handwritten_file_visible() {
    let repo = TestRepo::new();
    big_change(&repo);
    let p = prepared(&repo, Mode::Staged);
    assert_eq!(p.changes.paths.len(), 21);
    assert!(p.changes.additions + p.changes.deletions > 5000);
    // Every hand-written file has diff text in the prepared context.
    assert_eq!(p.changes.diff.shown.len(), 20);
    for (path, shown) in &p.changes.diff.shown {
        assert!(*shown != Shown::Omitted, "{path} omitted");
    }
    let text = context::render(&p);
    for f in 0..20 {
        assert!(
            text.contains(&format!("+++ b/src/mod{f:02}.ts")),
            "mod{f:02} missing"
        );
    }
    assert!(
        text.len() <= Limits::default().context_bytes + 4096,
        "{}",
        text.len()
    );
    assert!(
        text.contains("600 changed"),
        "{}",
        &text[..2000.min(text.len())]
    );
}

#[test]
fn every_path_is_listed_even_when_its_diff_does_not_fit() {
    let repo = TestRepo::new();
    repo.commit_file("x.txt", "x\n", "base");
    for f in 0..300 {
        let body: String = (0..30).map(|i| format!("line {i} of file {f}\n")).collect();
        repo.write(&format!("d{}/f{f:03}.txt", f % 7), body);
    }
    repo.stage_all();
    let p = prepared(&repo, Mode::Staged);
    let text = context::render(&p);
    for f in 0..300 {
        assert!(
            text.contains(&format!("/f{f:03}.txt\n")) || text.contains(&format!("/f{f:03}.txt ")),
            "f{f:03} not listed"
        );
    }
    assert!(
        p.changes
            .diff
            .shown
            .iter()
            .any(|(_, s)| *s == Shown::Omitted)
    );
    assert!(text.contains("[diff text omitted for lack of room"));
}

#[test]
fn amend_context_is_the_final_result_against_the_first_parent() {
    let repo = project();
    repo.write("src/net.rs", "pub fn connect(_: &str) -> bool { true }\n");
    repo.commit_all("fix(net): accept every host\n\nConnect used to refuse empty hosts.");
    repo.write("src/lib.rs", "pub mod net;\n\n/// Adds two numbers.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n")
        .stage(&["src/lib.rs"]);
    let p = prepared(&repo, Mode::Amend);
    assert_eq!(p.mode, Mode::Amend);
    // Final = HEAD's own change plus the staged one, against HEAD~1.
    assert_eq!(p.changes.path_names(), ["src/lib.rs", "src/net.rs"]);
    assert_eq!(
        p.original_message().unwrap().lines().next(),
        Some("fix(net): accept every host")
    );
    assert_eq!(p.staged.paths.len(), 1);
    assert_eq!(p.staged.paths[0].path, "src/lib.rs");
    // HEAD against its parent, for diagnostics.
    let head = p.head.as_ref().unwrap();
    assert_eq!(head.paths[0].path, "src/net.rs");
    // Style commits start below the commit being amended.
    assert_eq!(p.recent[0].subject, "docs: document add");
    assert_eq!(p.target_paths(), ["src/lib.rs", "src/net.rs"]);
    let text = context::render(&p);
    assert!(text.contains("<original_message commit="));
    assert!(text.contains("<final_paths files=\"2\""));
    assert!(text.contains("<final_amended_diff"));
    assert!(text.contains("<staged_changes files=\"1\""));
    assert!(text.contains("<head_commit commit="));
}

#[test]
fn amending_a_root_commit_compares_against_the_empty_tree() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "a\n", "Add a");
    repo.write("b.txt", "b\n").stage(&["b.txt"]);
    let p = prepared(&repo, Mode::Amend);
    assert_eq!(p.changes.path_names(), ["a.txt", "b.txt"]);
    assert!(p.changes.paths.iter().all(|e| e.status == 'A'));
    assert!(p.recent.is_empty());
}

#[test]
fn amend_with_nothing_staged_rewords_the_head_commit() {
    let repo = project();
    let p = prepared(&repo, Mode::Amend);
    assert_eq!(p.changes.path_names(), ["src/lib.rs"]);
    assert!(p.staged.paths.is_empty());
}

#[test]
fn a_task_id_in_the_branch_is_offered_when_the_team_uses_them() {
    let repo = task_id_branch();
    let p = prepared(&repo, Mode::Staged);
    let task = p.task_id.as_ref().unwrap();
    assert_eq!(task.id, "PROJ-77");
    assert_eq!(task.suffix, " (PROJ-77)");
    // Without the convention in history, no task ID.
    let plain = TestRepo::new();
    plain.commit_file("a.txt", "1\n", "Add a");
    plain.checkout_new("feature/proj-77-retry");
    plain.write("a.txt", "3\n").stage(&["a.txt"]);
    assert!(prepared(&plain, Mode::Staged).task_id.is_none());
}

#[test]
fn guidance_follows_the_staged_paths() {
    let repo = project();
    repo.write("AGENTS.md", "Root rules.\n")
        .write("src/AGENTS.md", "Source rules.\n")
        .write("docs/AGENTS.md", "Docs rules.\n")
        .write("docs/CLAUDE.md", "Claude rules.\n");
    repo.commit_all("guidance");
    repo.write("src/net.rs", "pub fn connect(_: &str) -> bool { true }\n")
        .stage(&["src/net.rs"]);
    let request = crate::support::request(&repo, false);
    assert_eq!(request.guidance.paths(), ["AGENTS.md", "src/AGENTS.md"]);
    let developer: Vec<String> = request.task.messages.iter().map(|m| m.text()).collect();
    let guidance = developer
        .iter()
        .find(|t| t.starts_with("# AGENTS.md instructions for "))
        .expect("a guidance layer");
    assert_contains(
        guidance,
        "<PROJECT_DOC path=\"src/AGENTS.md\">\nSource rules.\n</PROJECT_DOC>",
    );
    assert!(!guidance.contains("Docs rules"));
    assert!(!guidance.contains("Claude rules"));

    // Amend: the final amended paths (HEAD's docs change plus the staged src one).
    repo.write("docs/guide.md", "guide\n");
    repo.commit_all("docs: add a guide");
    repo.write("src/net.rs", "pub fn connect(_: &str) -> bool { false }\n")
        .stage(&["src/net.rs"]);
    let request = crate::support::request(&repo, true);
    assert_eq!(
        request.guidance.paths(),
        ["AGENTS.md", "docs/AGENTS.md", "src/AGENTS.md"]
    );
}

#[test]
fn context_size_stays_within_the_limits_it_is_given() {
    let repo = TestRepo::new();
    big_change(&repo);
    let r = gitctx::Repo::discover(repo.path()).unwrap();
    let limits = Limits {
        context_bytes: 24 * 1024,
        ..Limits::default()
    };
    let p = context::prepare(&r, Mode::Staged, &limits).unwrap();
    let text = context::render(&p);
    assert!(text.len() <= 24 * 1024 + 4096, "{}", text.len());
    assert!(p.changes.focus.is_some() || p.changes.diff.is_complete());
}
