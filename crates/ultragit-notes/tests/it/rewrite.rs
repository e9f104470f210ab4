//! Notes carried through rewrites on real repositories: the squash synthesis,
//! the per-commit rules of `rewrite::apply_one`, and squashes made by
//! `git rebase -i` under each `notes.rewriteMode`.

use std::path::Path;

use crate::support::{id, open, read_note as read, write_note as write};
use testkit::{TestRepo, assert_contains};
use ultragit_notes::NOTES_REF;
use ultragit_notes::rewrite::{
    Action, Applied, Rewrite, RewriteKind, apply_one, parse_input, synthesize,
};
use ultragit_notes::setup::{InitOptions, init};
use ultragit_schema::{
    Annotation, AstAnchor, Constraint, ConstraintSource, ContextLevel, CrossCuttingConcern,
    LineRange, ProvenanceOperation, RegionAnnotation,
};

const LIB_A: &str = "\
pub fn alpha() -> u32 {
    1
}

pub fn gamma() -> u32 {
    3
}
";

/// B adds `beta` above `alpha`, so `alpha` moves down by four lines.
const LIB_B: &str = "\
pub fn beta() -> u32 {
    2
}

pub fn alpha() -> u32 {
    1
}

pub fn gamma() -> u32 {
    3
}
";

/// The squashed result: C (unannotated) removed `gamma`.
const LIB_X: &str = "\
pub fn beta() -> u32 {
    2
}

pub fn alpha() -> u32 {
    1
}
";

fn region(file: &str, kind: &str, name: &str, lines: (u32, u32), intent: &str) -> RegionAnnotation {
    RegionAnnotation::new(
        file,
        AstAnchor::new(kind, name),
        LineRange::new(lines.0, lines.1),
        intent,
    )
}

fn note(commit: &str, regions: Vec<RegionAnnotation>) -> Annotation {
    let mut note = Annotation::new(
        commit,
        "2024-01-01T00:00:00Z",
        format!("Summary of {}.", &commit[..7]),
        ContextLevel::Inferred,
    );
    note.regions = regions;
    note
}

/// `old` rewritten as `new`.
fn one_to_one(old: &str, new: &str) -> Rewrite {
    Rewrite {
        new: id(new),
        olds: vec![id(old)],
    }
}

#[test]
fn squash_synthesis_keeps_every_surviving_region_at_its_new_lines() {
    let repo = TestRepo::new();
    repo.commit_file("README", "base\n", "Base");
    let base = repo.rev_parse("HEAD");
    repo.write("docs.txt", "one\ntwo\nthree\n")
        .stage(&["docs.txt"]);
    let a = repo.commit_file("src/lib.rs", LIB_A, "Add alpha and gamma");
    let b = repo.commit_file("src/lib.rs", LIB_B, "Add beta");
    repo.write("docs.txt", "zero\none\ntwo\nthree\n")
        .stage(&["docs.txt"]);
    let c = repo.commit_file("src/lib.rs", LIB_X, "Drop gamma, document zero");
    repo.git(&["reset", "--quiet", "--soft", &base]);
    let x = repo.commit("Squashed");

    let mut alpha = region("src/lib.rs", "function", "alpha", (1, 3), "Returns one.");
    alpha
        .constraints
        .push(Constraint::new("Always 1.", ConstraintSource::Author));
    let gamma = region("src/lib.rs", "function", "gamma", (5, 7), "Returns three.");
    let docs = region("docs.txt", "config", "two", (2, 2), "The second line.");
    let mut note_a = note(&a, vec![alpha.clone(), gamma, docs]);
    note_a.context_level = ContextLevel::Enhanced;
    note_a.task = Some("Numbers".into());
    note_a.cross_cutting.push(CrossCuttingConcern {
        description: "alpha and beta agree".into(),
        regions: vec!["src/lib.rs:alpha".into(), "src/lib.rs:beta".into()],
        nature: "shared constant".into(),
    });
    let beta = region("src/lib.rs", "function", "beta", (1, 3), "Returns two.");
    // B also restates alpha (at B's lines): the same region appears once.
    let alpha_at_b = region("src/lib.rs", "function", "alpha", (5, 7), "Returns one.");
    let note_b = note(&b, vec![beta, alpha_at_b]);
    write(&repo, &note_a);
    write(&repo, &note_b);

    let repository = open(&repo);
    let sources = vec![
        (id(&a), Some(note_a.clone())),
        (id(&b), Some(note_b)),
        (id(&c), None),
    ];
    let synthesis = synthesize(&repository, id(&x), &sources).unwrap();
    let annotation = synthesis.annotation.expect("two sources had notes");
    assert_eq!(annotation.commit, x);
    let found: Vec<(&str, &str, u32, u32)> = annotation
        .regions
        .iter()
        .map(|r| {
            (
                r.file.as_str(),
                r.ast_anchor.name.as_str(),
                r.lines.start,
                r.lines.end,
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("src/lib.rs", "alpha", 5, 7),
            ("docs.txt", "two", 3, 3),
            ("src/lib.rs", "beta", 1, 3),
        ]
    );
    assert_eq!(annotation.regions[0].constraints.len(), 1);
    assert_eq!(annotation.cross_cutting.len(), 1);
    assert_eq!(annotation.context_level, ContextLevel::Enhanced);
    assert_eq!(annotation.task.as_deref(), Some("Numbers"));
    assert!(annotation.summary.contains(&a[..7]) && annotation.summary.contains(&b[..7]));
    let provenance = &annotation.provenance;
    assert_eq!(provenance.operation, ProvenanceOperation::Squash);
    assert_eq!(provenance.derived_from, [a.clone(), b.clone(), c.clone()]);
    assert!(
        !provenance.original_annotations_preserved,
        "gamma was dropped"
    );
    let notes = provenance.synthesis_notes.as_deref().unwrap();
    assert_contains(notes, &format!("Without an annotation: {}.", &c[..7]));
    assert!(notes.contains("gamma"), "{notes}");
    assert_eq!(synthesis.unannotated, [id(&c)]);
    assert_eq!(synthesis.dropped.len(), 1);
    assert!(synthesis.warnings.is_empty(), "{:?}", synthesis.warnings);
    Annotation::from_json(&annotation.to_json()).unwrap();

    // Nothing annotated: nothing to synthesize.
    let none = synthesize(&repository, id(&x), &[(id(&c), None)]).unwrap();
    assert_eq!(none.annotation, None);
}

#[test]
fn a_message_only_amend_copies_the_note_with_amend_provenance() {
    let repo = TestRepo::new();
    let old = repo.commit_file("src/lib.rs", LIB_A, "Add alpha");
    let mut original = note(
        &old,
        vec![region("src/lib.rs", "function", "alpha", (1, 3), "One.")],
    );
    original.context_level = ContextLevel::Enhanced;
    original.task = Some("Numbers".into());
    write(&repo, &original);
    let new = repo.amend(Some("Add alpha, reworded"));

    let repository = open(&repo);
    let rewrite = one_to_one(&old, &new);
    let applied = apply_one(&repository, RewriteKind::Amend, &rewrite).unwrap();
    assert_eq!(applied.action, Action::Copied);
    assert_eq!(applied.delta_from(), None);
    let copied = read(&repo, &new).unwrap();
    assert_eq!(copied.commit, new);
    assert_eq!(copied.regions, original.regions);
    assert_eq!(copied.task, original.task);
    assert_eq!(copied.context_level, ContextLevel::Enhanced);
    assert_eq!(copied.provenance.operation, ProvenanceOperation::Amend);
    assert_eq!(copied.provenance.derived_from, vec![old.as_str()]);
    assert!(copied.provenance.original_annotations_preserved);
    assert_eq!(read(&repo, &old), Some(original), "the old note stays");

    // Running the hook again changes nothing, however much later (the copy
    // is dated back, as if the rerun came a year on).
    let mut dated = copied;
    dated.timestamp = "2025-01-01T00:00:00Z".into();
    write(&repo, &dated);
    apply_one(&repository, RewriteKind::Amend, &rewrite).unwrap();
    assert_eq!(read(&repo, &new), Some(dated));
}

#[test]
fn an_amend_that_changes_code_carries_the_regions_and_asks_for_the_delta() {
    let repo = TestRepo::new();
    let old = repo.commit_file("src/lib.rs", LIB_A, "Add alpha");
    write(
        &repo,
        &note(
            &old,
            vec![
                region("src/lib.rs", "function", "alpha", (1, 3), "One."),
                region("src/lib.rs", "function", "gamma", (5, 7), "Three."),
            ],
        ),
    );
    repo.write("src/lib.rs", LIB_B);
    repo.stage(&["src/lib.rs"]);
    let new = repo.amend(None);

    let repository = open(&repo);
    let rewrite = one_to_one(&old, &new);
    let applied = apply_one(&repository, RewriteKind::Amend, &rewrite).unwrap();
    assert_eq!(applied.action, Action::Amended);
    assert_eq!(applied.delta_from(), Some(id(&old)));
    let carried = read(&repo, &new).unwrap();
    let lines: Vec<(u32, u32)> = carried
        .regions
        .iter()
        .map(|r| (r.lines.start, r.lines.end))
        .collect();
    assert_eq!(lines, [(5, 7), (9, 11)]);
    assert_eq!(carried.provenance.operation, ProvenanceOperation::Amend);
    assert_eq!(carried.provenance.derived_from, vec![old.as_str()]);

    // The same rewrite seen as a rebase pick with changed code: no delta.
    let applied = apply_one(&repository, RewriteKind::Rebase, &rewrite).unwrap();
    assert_eq!(applied.action, Action::Carried);
    assert_eq!(applied.delta_from(), None);
}

#[test]
fn an_unreadable_or_missing_note_is_left_alone() {
    let repo = TestRepo::new();
    let old = repo.commit_file("a.txt", "a\n", "A");
    let new = repo.amend(Some("A again"));
    let repository = open(&repo);
    let rewrite = one_to_one(&old, &new);
    let applied = apply_one(&repository, RewriteKind::Amend, &rewrite).unwrap();
    assert_eq!(applied.action, Action::NoNote);
    assert!(applied.annotate_fresh());
    repository
        .notes(NOTES_REF)
        .unwrap()
        .write(id(&old), "{not json")
        .unwrap();
    let applied = apply_one(&repository, RewriteKind::Rebase, &rewrite).unwrap();
    assert!(
        matches!(applied.action, Action::Unreadable(_)),
        "{applied:?}"
    );
    assert!(!applied.annotate_fresh());
    assert_eq!(
        repository.notes(NOTES_REF).unwrap().read(id(&new)).unwrap(),
        None
    );
}

// Whatever `notes.rewriteMode` the user has: git copies the notes of every
// rewritten ref with it before the hook runs, and the hook repairs ours.

/// The user's own notes ref, which a user who keeps notes rewrites too.
const USER_NOTES: &str = "refs/notes/commits";

/// A repository set up by `init`, with two commits on top of `Base`: A
/// (`LIB_A`) and B (`LIB_B`, adds `beta`), each with the note `notes.0`/`.1`
/// in our ref (raw text; `None` for none) and a note of the user's own. The
/// post-rewrite hook records git's input after the ultragit block, whose
/// program does not exist: in the rebase, git's own copying is all that
/// happens, and the test runs what the hook would.
struct Pair {
    repo: TestRepo,
    a: String,
    b: String,
}

impl Pair {
    fn new(mode: Option<&str>, notes: impl FnOnce(&str, &str) -> [Option<String>; 2]) -> Pair {
        let repo = TestRepo::new();
        repo.commit_file("README", "base\n", "Base");
        repo.write_executable(
            ".git/hooks/post-rewrite",
            "#!/bin/sh\ncat > \"$(git rev-parse --git-dir)/rewritten.txt\"\n",
        );
        init(
            &open(&repo),
            Path::new("/nonexistent/ultragit"),
            &InitOptions::default(),
        )
        .unwrap();
        repo.git(&["config", "--add", "notes.rewriteRef", USER_NOTES]);
        if let Some(mode) = mode {
            repo.git(&["config", "notes.rewriteMode", mode]);
        }
        let a = repo.commit_file("src/lib.rs", LIB_A, "Add alpha and gamma");
        let b = repo.commit_file("src/lib.rs", LIB_B, "Add beta");
        let repository = open(&repo);
        let ours = repository.notes(NOTES_REF).unwrap();
        for (commit, text) in [&a, &b].into_iter().zip(notes(&a, &b)) {
            if let Some(text) = text {
                ours.write(id(commit), &text).unwrap();
            }
        }
        repo.git(&["notes", "add", "-m", "user note of A", &a]);
        repo.git(&["notes", "add", "-m", "user note of B", &b]);
        Pair { repo, a, b }
    }

    /// Our notes on A (`alpha`) and B (`beta`), as the writing agent leaves them.
    fn annotated(a: &str, b: &str) -> [Option<String>; 2] {
        let alpha = region("src/lib.rs", "function", "alpha", (1, 3), "Returns one.");
        let beta = region("src/lib.rs", "function", "beta", (1, 3), "Returns two.");
        [
            Some(note(a, vec![alpha]).to_json()),
            Some(note(b, vec![beta]).to_json()),
        ]
    }

    /// `git rebase -i` squashing B into A (with `env`): the new commit and
    /// git's post-rewrite input, which must be A and B onto it.
    fn rebase(&self, env: &[(&str, &str)]) -> (String, Rewrite) {
        let mut rebase = self
            .repo
            .command()
            .args(["rebase", "--quiet", "-i", "HEAD~2"])
            .env("GIT_SEQUENCE_EDITOR", "sed -i -e '2s/^pick/squash/'")
            .env("GIT_EDITOR", "true")
            .env("GIT_COMMITTER_DATE", "@1700000000 +0000");
        for (key, value) in env {
            rebase = rebase.env(key, value);
        }
        rebase.run().unwrap();
        let x = self.repo.rev_parse("HEAD");
        let input = std::fs::read(self.repo.join(".git/rewritten.txt")).unwrap();
        let squash = Rewrite {
            new: id(&x),
            olds: vec![id(&self.a), id(&self.b)],
        };
        assert_eq!(parse_input(&input).unwrap(), std::slice::from_ref(&squash));
        (x, squash)
    }

    /// [`Pair::rebase`], then what the hook does with git's input; returns
    /// the new commit, the note git left on it in our ref, and what the hook
    /// did.
    fn squash(&self, env: &[(&str, &str)]) -> (String, Option<String>, Applied) {
        let (x, squash) = self.rebase(env);
        let repository = open(&self.repo);
        let copied = repository.notes(NOTES_REF).unwrap().read(id(&x)).unwrap();
        let applied = apply_one(&repository, RewriteKind::Rebase, &squash).unwrap();
        (x, copied, applied)
    }

    /// The user's note on `commit`.
    fn user_note(&self, commit: &str) -> String {
        self.repo
            .git(&["notes", "--ref", USER_NOTES, "show", commit])
    }
}

/// `notes.rewriteMode` in the config, `GIT_NOTES_REWRITE_MODE` in the
/// environment, what git leaves in our ref from A's and B's notes, and the
/// user's note it leaves on the squash.
struct ModeCase {
    config: Option<&'static str>,
    env: Option<&'static str>,
    ours: fn(&str, &str) -> String,
    user: &'static str,
}

fn concatenated(a: &str, b: &str) -> String {
    format!("{a}\n\n{b}")
}

fn sorted_lines(a: &str, b: &str) -> String {
    let mut lines = [a, b];
    lines.sort_unstable();
    format!("{}\n{}\n", lines[0], lines[1])
}

const MODES: &[ModeCase] = &[
    ModeCase {
        config: None,
        env: None,
        ours: concatenated,
        user: "user note of A\n\nuser note of B\n",
    },
    ModeCase {
        config: Some("concatenate"),
        env: None,
        ours: concatenated,
        user: "user note of A\n\nuser note of B\n",
    },
    ModeCase {
        config: Some("cat_sort_uniq"),
        env: None,
        ours: sorted_lines,
        user: "user note of A\nuser note of B\n",
    },
    ModeCase {
        config: Some("overwrite"),
        env: None,
        ours: |_, b| b.to_owned(),
        user: "user note of B\n",
    },
    ModeCase {
        config: Some("ignore"),
        env: None,
        ours: |a, _| a.to_owned(),
        user: "user note of A\n",
    },
    // The environment wins over the config, for every ref.
    ModeCase {
        config: Some("ignore"),
        env: Some("cat_sort_uniq"),
        ours: sorted_lines,
        user: "user note of A\nuser note of B\n",
    },
];

#[test]
fn a_squash_under_every_rewrite_mode_keeps_the_users_notes_and_gives_ours_one_annotation() {
    for case in MODES {
        let name = format!("config {:?}, env {:?}", case.config, case.env);
        let pair = Pair::new(case.config, Pair::annotated);
        let env: Vec<(&str, &str)> = case
            .env
            .map(|mode| ("GIT_NOTES_REWRITE_MODE", mode))
            .into_iter()
            .collect();
        let (x, copied, applied) = pair.squash(&env);
        let [a_json, b_json] = Pair::annotated(&pair.a, &pair.b).map(Option::unwrap);
        assert_eq!(
            copied.as_deref(),
            Some((case.ours)(&a_json, &b_json).as_str()),
            "{name}: what git copied"
        );
        assert_eq!(applied.action, Action::Squashed, "{name}");
        assert!(
            applied.warnings.is_empty(),
            "{name}: {:?}",
            applied.warnings
        );

        // Ours: one annotation of the squash, from both sources.
        let synthesized = read(&pair.repo, &x).expect("a note");
        assert_eq!(synthesized.commit, x, "{name}");
        let provenance = &synthesized.provenance;
        assert_eq!(provenance.operation, ProvenanceOperation::Squash, "{name}");
        assert_eq!(
            provenance.derived_from,
            [pair.a.as_str(), pair.b.as_str()],
            "{name}"
        );
        let mut regions: Vec<(&str, u32)> = synthesized
            .regions
            .iter()
            .map(|r| (r.ast_anchor.name.as_str(), r.lines.start))
            .collect();
        regions.sort_unstable();
        assert_eq!(regions, [("alpha", 5), ("beta", 1)], "{name}");

        // The user's: as git combined them, untouched by the hook.
        assert_eq!(pair.user_note(&x), case.user, "{name}");

        // A rerun changes nothing.
        let squash = Rewrite {
            new: id(&x),
            olds: vec![id(&pair.a), id(&pair.b)],
        };
        let again = apply_one(&open(&pair.repo), RewriteKind::Rebase, &squash).unwrap();
        assert_eq!(again.action, Action::Squashed, "{name}");
        assert_eq!(read(&pair.repo, &x), Some(synthesized), "{name}");
    }
}

#[test]
fn git_concatenating_sources_that_do_not_parse_is_left_and_replaced_once_one_parses() {
    // No source parses: nothing of ours to write, and what git left stays.
    let pair = Pair::new(None, |_, _| {
        [
            Some("{not json A".to_owned()),
            Some("not json B".to_owned()),
        ]
    });
    let (x, copied, applied) = pair.squash(&[]);
    assert_eq!(copied.as_deref(), Some("{not json A\n\nnot json B"));
    assert_eq!(applied.action, Action::NoNote);
    assert_eq!(applied.warnings.len(), 2, "{:?}", applied.warnings);
    assert_contains(&applied.warnings[0], "it is left out");
    let repository = open(&pair.repo);
    let left = repository.notes(NOTES_REF).unwrap().read(id(&x)).unwrap();
    assert_eq!(left, copied);

    // One parses: the concatenation is replaced by what it synthesizes.
    let pair = Pair::new(None, |a, b| {
        let [alpha, _] = Pair::annotated(a, b);
        [alpha, Some("not json B".to_owned())]
    });
    let (x, copied, applied) = pair.squash(&[]);
    assert!(copied.is_some_and(|text| text.ends_with("}\n\nnot json B")));
    assert_eq!(applied.action, Action::Squashed);
    let synthesized = read(&pair.repo, &x).unwrap();
    assert_eq!(synthesized.commit, x);
    assert_eq!(
        synthesized.provenance.derived_from,
        [pair.a.as_str(), pair.b.as_str()]
    );
    assert_eq!(synthesized.regions.len(), 1);
    assert_eq!(synthesized.regions[0].ast_anchor.name, "alpha");
}

#[test]
fn a_concatenation_past_the_note_limit_is_replaced_unread() {
    // Two notes of 2.5 MiB with the same summary: git joins them into 5 MiB,
    // over what any reader loads; the synthesis says the summary once.
    let summary = "s".repeat(5 << 19);
    let pair = Pair::new(None, |a, b| {
        [a, b].map(|commit| {
            let mut big = note(commit, vec![]);
            big.summary.clone_from(&summary);
            Some(big.to_json())
        })
    });
    let (x, squash) = pair.rebase(&[]);
    let repository = open(&pair.repo);
    let err = repository
        .notes(NOTES_REF)
        .unwrap()
        .read(id(&x))
        .unwrap_err();
    assert_contains(&err.to_string(), "over the limit");
    let applied = apply_one(&repository, RewriteKind::Rebase, &squash).unwrap();
    assert_eq!(applied.action, Action::Squashed);
    assert_eq!(applied.warnings.len(), 1, "{:?}", applied.warnings);
    assert_contains(&applied.warnings[0], "unread");
    let synthesized = read(&pair.repo, &x).unwrap();
    assert_eq!(synthesized.commit, x);
    assert_eq!(synthesized.summary, summary);
}

/// What git leaves on a commit with a note when it copies another to it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Left {
    Combined,
    Written,
    Copy,
}

#[test]
fn a_note_written_for_the_new_commit_is_merged_into_whatever_the_mode() {
    // (mode, what git leaves: the two combined into a note that does not
    // parse, the note written for the new commit, or the old one's copy —
    // `overwrite` drops the note written for the new commit before the hook
    // runs).
    for (mode, left) in [
        ("concatenate", Left::Combined),
        ("cat_sort_uniq", Left::Combined),
        ("ignore", Left::Written),
        ("overwrite", Left::Copy),
    ] {
        let repo = TestRepo::new();
        let old = repo.commit_file("src/lib.rs", LIB_A, "Add alpha");
        write(
            &repo,
            &note(
                &old,
                vec![region("src/lib.rs", "function", "alpha", (1, 3), "One.")],
            ),
        );
        repo.write("src/lib.rs", LIB_B);
        repo.stage(&["src/lib.rs"]);
        let new = repo.amend(None);
        // Written for the amended commit before git copied the old note to it
        // (git's own copy, with the mode, as the amend would have made it).
        let mut written = note(
            &new,
            vec![region("src/lib.rs", "function", "beta", (1, 3), "Two.")],
        );
        written.task = Some("Written for the amend".into());
        write(&repo, &written);
        repo.command()
            .args(["notes", "copy", "--for-rewrite=amend"])
            .config("notes.rewriteRef", NOTES_REF)
            .config("notes.rewriteMode", mode)
            .stdin(format!("{old} {new}\n"))
            .run()
            .unwrap();
        let repository = open(&repo);
        let copied = repository.notes(NOTES_REF).unwrap().read(id(&new)).unwrap();
        let copied = copied.as_deref().map(Annotation::from_json);
        match left {
            Left::Combined => assert!(matches!(copied, Some(Err(_))), "{mode}: {copied:?}"),
            Left::Written => assert_eq!(copied, Some(Ok(written.clone())), "{mode}"),
            Left::Copy => assert_eq!(copied.unwrap().unwrap().commit, old, "{mode}"),
        }

        let applied = apply_one(&repository, RewriteKind::Amend, &one_to_one(&old, &new)).unwrap();
        assert_eq!(applied.action, Action::Amended, "{mode}");
        let stored = read(&repo, &new).unwrap();
        assert_eq!(stored.commit, new, "{mode}");
        let names: Vec<&str> = stored
            .regions
            .iter()
            .map(|r| r.ast_anchor.name.as_str())
            .collect();
        if left != Left::Copy {
            assert_eq!(
                names,
                ["beta", "alpha"],
                "{mode}: merged into, not replaced"
            );
            assert_eq!(stored.task, written.task, "{mode}");
        } else {
            assert_eq!(names, ["alpha"], "{mode}");
        }
    }
}
