//! A small history shaped like git/git's: topic branches merged with
//! `--no-ff`, a rename made on a branch of its own while another branch
//! changed the file, a function moved between files, an octopus merge, a
//! commit on main after it, and an annotated branch that was never merged —
//! with annotations only on topic commits, as a project that merges topic
//! branches has them ([`TestRepo::merge_shaped`]).
//!
//! ```text
//! main  C0 ─ C1 ─────── M1 ────────── M2 ── M3 ───── M4 ───────── M5 ── C2
//!         \            /   \         /     /   \     /  \        /|\      \
//! stats    T1 ─ T2 ─ T3     \  opts T4    /     \   / A  T6 ────┘ | \    wip T9 (never merged)
//!                            \           /       T5  B  T7 ───────┘  \
//! rename                      R ────────┘   (move)  C  T8 ────────────┘
//! ```
//!
//! - `src/diff.rs` holds `show_stats` (a long function), `builtin_diff` and
//!   `helper`; `src/util.rs` holds `parse_opts` and `old_helper`.
//! - T1 changes three lines in the middle of `show_stats` and is annotated
//!   with just those lines (a narrow region); T2 changes `builtin_diff`,
//!   declaring a dependency on `src/util.rs:parse_opts` and a cross-cutting
//!   concern over both; T3 changes `old_helper` in `src/util.rs`.
//! - T4 (branch `opts`) changes `parse_opts` in `src/util.rs` while R
//!   (branch `rename`, not annotated) renames `src/util.rs` to
//!   `src/opts.rs`; both are merged (M2, M3), so T4's note names a path
//!   that is gone at HEAD.
//! - T5 moves `old_helper` from `src/opts.rs` to the end of `src/diff.rs`.
//! - T6 inserts a line at the top of `show_stats` (T1's lines move down one),
//!   T7 changes `parse_opts` in `src/opts.rs` and depends on
//!   `src/diff.rs:builtin_diff`, T8 changes `helper`; the three branches
//!   are merged at once (M5, an octopus).
//! - C2 on main changes other lines of `show_stats`, unannotated; T9 on
//!   branch `wip` changes `show_stats` too and is annotated but never
//!   merged: HEAD (main, at C2) does not reach it.
//!
//! Every constraint is a unique token (`constraint-T1`, …), so a test can
//! tell which note an answer came from. The notes are written directly (no
//! model), as `ultragit/v1` documents.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::TestRepo;

/// The function bodies of one file, in order, and how they render.
#[derive(Debug, Clone)]
struct Module {
    functions: Vec<(String, Vec<String>)>,
}

impl Module {
    fn new(functions: &[(&str, usize)]) -> Module {
        Module {
            functions: functions
                .iter()
                .map(|(name, lines)| {
                    let body = (0..*lines)
                        .map(|i| format!("    x += {}; // {name} step {i}", i + 1))
                        .collect();
                    ((*name).to_owned(), body)
                })
                .collect(),
        }
    }

    /// The file's text: each function `pub fn name() -> u32 {`, `let mut x
    /// = 0;`, its body, `x`, `}`, then a blank line.
    fn render(&self) -> String {
        let mut out = String::new();
        for (name, body) in &self.functions {
            out.push_str(&format!("pub fn {name}() -> u32 {{\n    let mut x = 0;\n"));
            for line in body {
                out.push_str(line);
                out.push('\n');
            }
            out.push_str("    x\n}\n\n");
        }
        out
    }

    /// The file line of the first line of `name` (its `pub fn` line).
    fn start_of(&self, name: &str) -> u32 {
        let mut line = 1;
        for (function, body) in &self.functions {
            if function == name {
                return line;
            }
            line += body.len() as u32 + 5;
        }
        panic!("no function {name}")
    }

    /// The file lines of body lines `from..=to` of `name`.
    fn body_lines(&self, name: &str, from: usize, to: usize) -> (u32, u32) {
        let start = self.start_of(name) + 2;
        (start + from as u32, start + to as u32)
    }

    /// The whole of `name`, `pub fn` line to closing brace.
    fn lines_of(&self, name: &str) -> (u32, u32) {
        let start = self.start_of(name);
        let len = self.body(name).len() as u32;
        (start, start + len + 3)
    }

    fn body(&self, name: &str) -> &Vec<String> {
        &self
            .functions
            .iter()
            .find(|(n, _)| n == name)
            .expect("a function of the module")
            .1
    }

    fn body_mut(&mut self, name: &str) -> &mut Vec<String> {
        &mut self
            .functions
            .iter_mut()
            .find(|(n, _)| n == name)
            .expect("a function of the module")
            .1
    }

    /// Rewrites body lines `from..=to` of `name`, marked with `tag`.
    fn change(&mut self, name: &str, from: usize, to: usize, tag: &str) {
        for (i, line) in self.body_mut(name)[from..=to].iter_mut().enumerate() {
            *line = format!("    x *= {}; // {name} changed by {tag}", i + 2);
        }
    }

    fn remove(&mut self, name: &str) -> (String, Vec<String>) {
        let at = self
            .functions
            .iter()
            .position(|(n, _)| n == name)
            .expect("a function of the module");
        self.functions.remove(at)
    }
}

/// The repository of [`TestRepo::merge_shaped`] and the ids of its commits.
#[derive(Debug)]
pub struct MergeShaped {
    pub repo: TestRepo,
    /// Every commit of the drawing in the module docs by its name (`C0`,
    /// `T1`, `M5`, …).
    pub commits: BTreeMap<&'static str, String>,
}

impl MergeShaped {
    /// The id of the commit named `name` in the module's drawing.
    pub fn id(&self, name: &str) -> &str {
        self.commits
            .get(name)
            .unwrap_or_else(|| panic!("no commit {name}"))
    }

    /// The name of the commit `id`, for messages.
    pub fn name_of(&self, id: &str) -> &'static str {
        self.commits
            .iter()
            .find(|(_, c)| c.as_str() == id)
            .map_or("?", |(name, _)| name)
    }
}

/// A region of the fixture's notes: `lines` in the commit's own
/// coordinates, one constraint `constraint-<tag>`.
fn region(file: &str, name: &str, lines: (u32, u32), tag: &str) -> Value {
    json!({
        "file": file,
        "ast_anchor": {"type": "function", "name": name},
        "lines": {"start": lines.0, "end": lines.1},
        "intent": format!("intent-{tag}: why {name} changed"),
        "constraints": [{"text": format!("constraint-{tag}"), "source": "inferred"}],
        "risk_notes": format!("risk-{tag}"),
    })
}

/// The note of `commit` with `regions` and `concerns`.
fn note(commit: &str, tag: &str, regions: Vec<Value>, concerns: Vec<Value>) -> Value {
    json!({
        "$schema": "ultragit/v1",
        "commit": commit,
        "timestamp": "2024-06-01T00:00:00Z",
        "task": null,
        "summary": format!("summary-{tag}"),
        "context_level": "inferred",
        "regions": regions,
        "cross_cutting": concerns,
        "provenance": {"operation": "initial", "original_annotations_preserved": false}
    })
}

impl TestRepo {
    /// The merge-shaped history of the module docs ([`MergeShaped`]), on
    /// branch `main` at C2.
    pub fn merge_shaped() -> MergeShaped {
        let repo = TestRepo::new();
        let mut commits: BTreeMap<&'static str, String> = BTreeMap::new();
        let mut diff = Module::new(&[("show_stats", 24), ("builtin_diff", 8), ("helper", 4)]);
        let mut util = Module::new(&[("parse_opts", 8), ("old_helper", 5)]);
        let write = |path: &str, module: &Module| {
            repo.write(path, module.render());
            repo.stage(&[path]);
        };
        let annotate = |commit: &str, value: Value| {
            let git = gitctx::Repo::discover(repo.path()).expect("the test repository");
            git.notes("refs/notes/ultragit")
                .expect("the notes ref")
                .write(commit.parse().expect("a commit id"), &value.to_string())
                .expect("write a note");
        };
        let merge = |message: &str, branches: &[&str]| -> String {
            let mut args = vec!["merge", "--no-ff", "--quiet", "-m", message];
            args.extend_from_slice(branches);
            repo.git(&args);
            repo.rev_parse("HEAD")
        };

        write("src/diff.rs", &diff);
        write("src/util.rs", &util);
        commits.insert("C0", repo.commit("Start diff and util"));

        // Topic `stats`, forked from C0.
        repo.checkout_new("stats");
        diff.change("show_stats", 10, 12, "T1");
        write("src/diff.rs", &diff);
        let t1 = repo.commit("show_stats: count renames apart");
        let narrow = diff.body_lines("show_stats", 10, 12);
        annotate(
            &t1,
            note(
                &t1,
                "T1",
                vec![region("src/diff.rs", "show_stats", narrow, "T1")],
                vec![],
            ),
        );
        diff.change("builtin_diff", 2, 4, "T2");
        write("src/diff.rs", &diff);
        let t2 = repo.commit("builtin_diff: honour the parsed options");
        let mut builtin = region(
            "src/diff.rs",
            "builtin_diff",
            diff.lines_of("builtin_diff"),
            "T2",
        );
        builtin["semantic_dependencies"] = json!([{
            "file": "src/util.rs",
            "anchor": "parse_opts",
            "nature": "dependency-T2: reads the options parse_opts fills",
        }]);
        annotate(
            &t2,
            note(
                &t2,
                "T2",
                vec![builtin],
                vec![json!({
                    "description": "concern-T2: option names agree between parsing and diffing",
                    "regions": ["src/diff.rs:builtin_diff", "src/util.rs:parse_opts"],
                    "nature": "shared names",
                })],
            ),
        );
        util.change("old_helper", 1, 2, "T3");
        write("src/util.rs", &util);
        let t3 = repo.commit("old_helper: skip empty input");
        annotate(
            &t3,
            note(
                &t3,
                "T3",
                vec![region(
                    "src/util.rs",
                    "old_helper",
                    util.lines_of("old_helper"),
                    "T3",
                )],
                vec![],
            ),
        );
        commits.extend([("T1", t1), ("T2", t2), ("T3", t3)]);

        // Main moves on meanwhile (unannotated), then merges `stats`.
        repo.checkout("main");
        let mut main_diff = Module::new(&[("show_stats", 24), ("builtin_diff", 8), ("helper", 4)]);
        main_diff.change("helper", 0, 0, "C1");
        write("src/diff.rs", &main_diff);
        commits.insert("C1", repo.commit("helper: start from one"));
        diff.change("helper", 0, 0, "C1");
        commits.insert("M1", merge("Merge branch 'stats'", &["stats"]));

        // `opts` changes parse_opts under the old name; `rename` renames
        // the file; both merged.
        repo.checkout_new("opts");
        util.change("parse_opts", 3, 4, "T4");
        write("src/util.rs", &util);
        let t4 = repo.commit("parse_opts: accept --stat-width");
        annotate(
            &t4,
            note(
                &t4,
                "T4",
                vec![region(
                    "src/util.rs",
                    "parse_opts",
                    util.lines_of("parse_opts"),
                    "T4",
                )],
                vec![],
            ),
        );
        commits.insert("T4", t4);
        repo.checkout("main");
        repo.checkout_new("rename");
        repo.rename("src/util.rs", "src/opts.rs");
        commits.insert("R", repo.commit("Rename util.rs to opts.rs"));
        repo.checkout("main");
        commits.insert("M2", merge("Merge branch 'opts'", &["opts"]));
        commits.insert("M3", merge("Merge branch 'rename'", &["rename"]));

        // `move`: old_helper leaves opts.rs for the end of diff.rs.
        repo.checkout_new("move");
        let moved = util.remove("old_helper");
        diff.functions.push(moved);
        write("src/opts.rs", &util);
        write("src/diff.rs", &diff);
        let t5 = repo.commit("Move old_helper next to its callers");
        annotate(
            &t5,
            note(
                &t5,
                "T5",
                vec![region(
                    "src/diff.rs",
                    "old_helper",
                    diff.lines_of("old_helper"),
                    "T5",
                )],
                vec![],
            ),
        );
        commits.insert("T5", t5);
        repo.checkout("main");
        commits.insert("M4", merge("Merge branch 'move'", &["move"]));

        // Three topics from M4, merged at once.
        let base_diff = diff.clone();
        let base_util = util.clone();
        repo.checkout_new("topic-a");
        diff.body_mut("show_stats")
            .insert(0, "    x += 100; // show_stats line added by T6".to_owned());
        write("src/diff.rs", &diff);
        let t6 = repo.commit("show_stats: start from the header width");
        annotate(
            &t6,
            note(
                &t6,
                "T6",
                vec![region(
                    "src/diff.rs",
                    "show_stats",
                    diff.body_lines("show_stats", 0, 0),
                    "T6",
                )],
                vec![],
            ),
        );
        repo.checkout("main");
        repo.checkout_new("topic-b");
        let mut b_util = base_util.clone();
        b_util.change("parse_opts", 6, 6, "T7");
        write("src/opts.rs", &b_util);
        let t7 = repo.commit("parse_opts: reject negative widths");
        let mut parse = region(
            "src/opts.rs",
            "parse_opts",
            b_util.lines_of("parse_opts"),
            "T7",
        );
        parse["semantic_dependencies"] = json!([{
            "file": "src/diff.rs",
            "anchor": "builtin_diff",
            "nature": "dependency-T7: builtin_diff reads the width",
        }]);
        annotate(&t7, note(&t7, "T7", vec![parse], vec![]));
        repo.checkout("main");
        repo.checkout_new("topic-c");
        let mut c_diff = base_diff.clone();
        c_diff.change("helper", 2, 3, "T8");
        write("src/diff.rs", &c_diff);
        let t8 = repo.commit("helper: clamp the result");
        annotate(
            &t8,
            note(
                &t8,
                "T8",
                vec![region(
                    "src/diff.rs",
                    "helper",
                    c_diff.body_lines("helper", 2, 3),
                    "T8",
                )],
                vec![],
            ),
        );
        repo.checkout("main");
        commits.insert(
            "M5",
            merge(
                "Merge branches 'topic-a', 'topic-b' and 'topic-c'",
                &["topic-a", "topic-b", "topic-c"],
            ),
        );
        commits.extend([("T6", t6), ("T7", t7), ("T8", t8)]);
        diff.change("helper", 2, 3, "T8");
        util = b_util;

        // Main again, unannotated: other lines of show_stats.
        diff.change("show_stats", 18, 20, "C2");
        write("src/diff.rs", &diff);
        commits.insert("C2", repo.commit("show_stats: tidy the tail"));
        assert_eq!(
            repo.command()
                .args(["show", "HEAD:src/diff.rs"])
                .run()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .expect("show diff.rs"),
            diff.render(),
            "the model of src/diff.rs follows the merges"
        );
        assert_eq!(
            std::fs::read_to_string(repo.join("src/opts.rs")).expect("read opts.rs"),
            util.render(),
            "the model of src/opts.rs follows the merges"
        );

        // `wip`: annotated, never merged.
        repo.checkout_new("wip");
        diff.change("show_stats", 5, 5, "T9");
        write("src/diff.rs", &diff);
        let t9 = repo.commit("show_stats: experiment");
        annotate(
            &t9,
            note(
                &t9,
                "T9",
                vec![region(
                    "src/diff.rs",
                    "show_stats",
                    diff.body_lines("show_stats", 5, 5),
                    "T9",
                )],
                vec![],
            ),
        );
        commits.insert("T9", t9);
        repo.checkout("main");
        MergeShaped { repo, commits }
    }
}
