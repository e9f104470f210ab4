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
        let mut history = History::new();
        history.start();
        history.stats_topic();
        history.merge_stats();
        history.opts_and_rename();
        history.move_topic();
        history.three_topics();
        history.tidy_main();
        history.wip_topic();
        MergeShaped {
            repo: history.repo,
            commits: history.commits,
        }
    }
}

/// [`TestRepo::merge_shaped`] under way: the repository, the commits named
/// so far, and the models of `src/diff.rs` and of `src/util.rs` (later
/// `src/opts.rs`) as `main` will have them. One method per stretch of the
/// drawing in the module docs, called in order.
struct History {
    repo: TestRepo,
    commits: BTreeMap<&'static str, String>,
    diff: Module,
    util: Module,
}

impl History {
    fn new() -> History {
        History {
            repo: TestRepo::new(),
            commits: BTreeMap::new(),
            diff: Module::new(&[("show_stats", 24), ("builtin_diff", 8), ("helper", 4)]),
            util: Module::new(&[("parse_opts", 8), ("old_helper", 5)]),
        }
    }

    /// Writes `module` to `path` and stages it.
    fn write(&self, path: &str, module: &Module) {
        self.repo.write(path, module.render());
        self.repo.stage(&[path]);
    }

    /// Writes `value` as the note of `commit`.
    fn annotate(&self, commit: &str, value: Value) {
        let git = gitctx::Repo::discover(self.repo.path()).expect("the test repository");
        git.notes("refs/notes/ultragit")
            .expect("the notes ref")
            .write(commit.parse().expect("a commit id"), &value.to_string())
            .expect("write a note");
    }

    /// Annotates `commit` with a note of one region, `lines` of `name` in
    /// `file`, and no concerns.
    fn annotate_region(&self, commit: &str, tag: &str, file: &str, name: &str, lines: (u32, u32)) {
        self.annotate(
            commit,
            note(commit, tag, vec![region(file, name, lines, tag)], vec![]),
        );
    }

    /// Merges `branches` into the current branch with `--no-ff`; returns
    /// the merge.
    fn merge(&self, message: &str, branches: &[&str]) -> String {
        let mut args = vec!["merge", "--no-ff", "--quiet", "-m", message];
        args.extend_from_slice(branches);
        self.repo.git(&args);
        self.repo.rev_parse("HEAD")
    }

    /// C0: both files.
    fn start(&mut self) {
        self.write("src/diff.rs", &self.diff);
        self.write("src/util.rs", &self.util);
        self.commits
            .insert("C0", self.repo.commit("Start diff and util"));
    }

    /// Topic `stats`, forked from C0: T1, T2, T3.
    fn stats_topic(&mut self) {
        let repo = &self.repo;
        repo.checkout_new("stats");
        self.diff.change("show_stats", 10, 12, "T1");
        self.write("src/diff.rs", &self.diff);
        let t1 = repo.commit("show_stats: count renames apart");
        let narrow = self.diff.body_lines("show_stats", 10, 12);
        self.annotate_region(&t1, "T1", "src/diff.rs", "show_stats", narrow);
        self.diff.change("builtin_diff", 2, 4, "T2");
        self.write("src/diff.rs", &self.diff);
        let t2 = repo.commit("builtin_diff: honour the parsed options");
        let mut builtin = region(
            "src/diff.rs",
            "builtin_diff",
            self.diff.lines_of("builtin_diff"),
            "T2",
        );
        builtin["semantic_dependencies"] = json!([{
            "file": "src/util.rs",
            "anchor": "parse_opts",
            "nature": "dependency-T2: reads the options parse_opts fills",
        }]);
        self.annotate(
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
        self.util.change("old_helper", 1, 2, "T3");
        self.write("src/util.rs", &self.util);
        let t3 = repo.commit("old_helper: skip empty input");
        let lines = self.util.lines_of("old_helper");
        self.annotate_region(&t3, "T3", "src/util.rs", "old_helper", lines);
        self.commits.extend([("T1", t1), ("T2", t2), ("T3", t3)]);
    }

    /// C1, M1.
    fn merge_stats(&mut self) {
        // Main moves on meanwhile (unannotated), then merges `stats`.
        self.repo.checkout("main");
        let mut main_diff = Module::new(&[("show_stats", 24), ("builtin_diff", 8), ("helper", 4)]);
        main_diff.change("helper", 0, 0, "C1");
        self.write("src/diff.rs", &main_diff);
        self.commits
            .insert("C1", self.repo.commit("helper: start from one"));
        self.diff.change("helper", 0, 0, "C1");
        let m1 = self.merge("Merge branch 'stats'", &["stats"]);
        self.commits.insert("M1", m1);
    }

    /// T4, R, M2, M3.
    fn opts_and_rename(&mut self) {
        // `opts` changes parse_opts under the old name; `rename` renames
        // the file; both merged.
        let repo = &self.repo;
        repo.checkout_new("opts");
        self.util.change("parse_opts", 3, 4, "T4");
        self.write("src/util.rs", &self.util);
        let t4 = repo.commit("parse_opts: accept --stat-width");
        let lines = self.util.lines_of("parse_opts");
        self.annotate_region(&t4, "T4", "src/util.rs", "parse_opts", lines);
        self.commits.insert("T4", t4);
        repo.checkout("main");
        repo.checkout_new("rename");
        repo.rename("src/util.rs", "src/opts.rs");
        self.commits
            .insert("R", repo.commit("Rename util.rs to opts.rs"));
        repo.checkout("main");
        let m2 = self.merge("Merge branch 'opts'", &["opts"]);
        self.commits.insert("M2", m2);
        let m3 = self.merge("Merge branch 'rename'", &["rename"]);
        self.commits.insert("M3", m3);
    }

    /// T5, M4.
    fn move_topic(&mut self) {
        // `move`: old_helper leaves opts.rs for the end of diff.rs.
        self.repo.checkout_new("move");
        let moved = self.util.remove("old_helper");
        self.diff.functions.push(moved);
        self.write("src/opts.rs", &self.util);
        self.write("src/diff.rs", &self.diff);
        let t5 = self.repo.commit("Move old_helper next to its callers");
        let lines = self.diff.lines_of("old_helper");
        self.annotate_region(&t5, "T5", "src/diff.rs", "old_helper", lines);
        self.commits.insert("T5", t5);
        self.repo.checkout("main");
        let m4 = self.merge("Merge branch 'move'", &["move"]);
        self.commits.insert("M4", m4);
    }

    /// T6, T7, T8 and the octopus M5.
    fn three_topics(&mut self) {
        // Three topics from M4, merged at once.
        let base_diff = self.diff.clone();
        let base_util = self.util.clone();
        let t6 = self.topic_a();
        let (t7, b_util) = self.topic_b(&base_util);
        let t8 = self.topic_c(&base_diff);
        let m5 = self.merge(
            "Merge branches 'topic-a', 'topic-b' and 'topic-c'",
            &["topic-a", "topic-b", "topic-c"],
        );
        self.commits.insert("M5", m5);
        self.commits.extend([("T6", t6), ("T7", t7), ("T8", t8)]);
        self.diff.change("helper", 2, 3, "T8");
        self.util = b_util;
    }

    /// T6 on `topic-a`: a line at the top of `show_stats`. Returns T6.
    fn topic_a(&mut self) -> String {
        self.repo.checkout_new("topic-a");
        self.diff
            .body_mut("show_stats")
            .insert(0, "    x += 100; // show_stats line added by T6".to_owned());
        self.write("src/diff.rs", &self.diff);
        let t6 = self.repo.commit("show_stats: start from the header width");
        let lines = self.diff.body_lines("show_stats", 0, 0);
        self.annotate_region(&t6, "T6", "src/diff.rs", "show_stats", lines);
        self.repo.checkout("main");
        t6
    }

    /// T7 on `topic-b`, from M4's `src/opts.rs` (`base_util`). Returns T7
    /// and the model of `src/opts.rs` after it.
    fn topic_b(&self, base_util: &Module) -> (String, Module) {
        self.repo.checkout_new("topic-b");
        let mut b_util = base_util.clone();
        b_util.change("parse_opts", 6, 6, "T7");
        self.write("src/opts.rs", &b_util);
        let t7 = self.repo.commit("parse_opts: reject negative widths");
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
        self.annotate(&t7, note(&t7, "T7", vec![parse], vec![]));
        self.repo.checkout("main");
        (t7, b_util)
    }

    /// T8 on `topic-c`, from M4's `src/diff.rs` (`base_diff`). Returns T8.
    fn topic_c(&self, base_diff: &Module) -> String {
        self.repo.checkout_new("topic-c");
        let mut c_diff = base_diff.clone();
        c_diff.change("helper", 2, 3, "T8");
        self.write("src/diff.rs", &c_diff);
        let t8 = self.repo.commit("helper: clamp the result");
        let lines = c_diff.body_lines("helper", 2, 3);
        self.annotate_region(&t8, "T8", "src/diff.rs", "helper", lines);
        self.repo.checkout("main");
        t8
    }

    /// C2, and a check that the models follow the merges.
    fn tidy_main(&mut self) {
        // Main again, unannotated: other lines of show_stats.
        self.diff.change("show_stats", 18, 20, "C2");
        self.write("src/diff.rs", &self.diff);
        self.commits
            .insert("C2", self.repo.commit("show_stats: tidy the tail"));
        assert_eq!(
            self.repo
                .command()
                .args(["show", "HEAD:src/diff.rs"])
                .run()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .expect("show diff.rs"),
            self.diff.render(),
            "the model of src/diff.rs follows the merges"
        );
        assert_eq!(
            std::fs::read_to_string(self.repo.join("src/opts.rs")).expect("read opts.rs"),
            self.util.render(),
            "the model of src/opts.rs follows the merges"
        );
    }

    /// T9 on `wip`, then back to `main`.
    fn wip_topic(&mut self) {
        // `wip`: annotated, never merged.
        self.repo.checkout_new("wip");
        self.diff.change("show_stats", 5, 5, "T9");
        self.write("src/diff.rs", &self.diff);
        let t9 = self.repo.commit("show_stats: experiment");
        let lines = self.diff.body_lines("show_stats", 5, 5);
        self.annotate_region(&t9, "T9", "src/diff.rs", "show_stats", lines);
        self.commits.insert("T9", t9);
        self.repo.checkout("main");
    }
}
