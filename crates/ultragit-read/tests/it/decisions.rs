//! The decisions a read hands over, and the retired items it withholds
//! (`ultragit_read::decisions`): on a real repository, with a topic merged
//! with `--no-ff`, a later note that retires a constraint (found through the
//! notes index even after its own lines are rewritten), a flagged region and
//! a region whose code is gone.

use serde_json::{Value, json};
use testkit::TestRepo;
use ultragit_read::{Format, ReadQuery, render};

use crate::support::{annotate, note, read};

/// `fn f` of `body` lines (each line's text unique), then `fn g`.
fn source(f_lines: &[&str], g_lines: &[&str]) -> String {
    let mut text = String::from("pub fn f(x: u64) -> u64 {\n");
    for line in f_lines {
        text.push_str(&format!("    {line}\n"));
    }
    text.push_str("    x\n}\n\npub fn g(x: u64) -> u64 {\n");
    for line in g_lines {
        text.push_str(&format!("    {line}\n"));
    }
    text.push_str("    x\n}\n");
    text
}

fn region(name: &str, lines: (u32, u32), constraints: &[&str], extra: Value) -> Value {
    let mut r = json!({
        "file": "src/lib.rs",
        "ast_anchor": {"type": "function", "name": name},
        "lines": {"start": lines.0, "end": lines.1},
        "intent": format!("{name} does its part of the job."),
        "constraints": constraints
            .iter()
            .map(|c| json!({"text": c, "source": "author"}))
            .collect::<Vec<_>>(),
    });
    if let (Value::Object(r), Value::Object(extra)) = (&mut r, extra) {
        r.extend(extra);
    }
    r
}

fn annotate_with(repo: &TestRepo, commit: &str, day: u32, regions: Vec<Value>) {
    annotate(
        repo,
        commit,
        &note(
            commit,
            &format!("2024-01-{day:02}T00:00:00Z"),
            "enhanced",
            regions,
        ),
    );
}

fn markdown(repo: &TestRepo, anchor: &str, budget: Option<u32>) -> String {
    let mut query = ReadQuery::file("src/lib.rs").with_anchor(anchor);
    query.max_tokens = budget;
    render(&read(repo, &query), Format::Markdown, false)
}

#[test]
fn a_later_note_retires_a_constraint_even_after_its_own_lines_are_rewritten() {
    let repo = TestRepo::new();
    // C1 writes f with two lines and two constraints.
    let c1 = repo.commit_file(
        "src/lib.rs",
        source(&["let a = 1;", "let b = 2;"], &["let q = 9;"]),
        "f: first",
    );
    annotate_with(
        &repo,
        &c1,
        1,
        vec![region(
            "f",
            (1, 5),
            &["Keep-alpha must hold.", "Keep-beta must hold."],
            json!({"risk_notes": "Risk-gamma lurks.",
                   "semantic_dependencies": [{"file": "src/lib.rs", "anchor": "g",
                                               "nature": "Dep-delta on g."}]}),
        )],
    );
    // On a topic merged with --no-ff, C2 adds a line and retires Keep-beta
    // (and the dependency), recording a replacement.
    repo.git(&["checkout", "-q", "-b", "topic"]);
    let c2 = repo.commit_file(
        "src/lib.rs",
        source(&["let a = 1;", "let b = 2;", "let c = 3;"], &["let q = 9;"]),
        "f: second",
    );
    annotate_with(
        &repo,
        &c2,
        2,
        vec![region(
            "f",
            (1, 6),
            &["Keep-epsilon replaces beta."],
            json!({"retires": ["keep-BETA   must hold.", "Dep-delta on g."]}),
        )],
    );
    repo.git(&["checkout", "-q", "main"]);
    repo.git(&[
        "merge",
        "-q",
        "--no-ff",
        "topic",
        "-m",
        "Merge branch 'topic'",
    ]);
    // C3 rewrites C2's line: C2 owns no line of f any more, but its note
    // still retires Keep-beta; C1's lines survive.
    let c3 = repo.commit_file(
        "src/lib.rs",
        source(
            &["let a = 1;", "let b = 2;", "let c = 33;"],
            &["let q = 9;"],
        ),
        "f: third",
    );
    annotate_with(
        &repo,
        &c3,
        3,
        vec![region("f", (1, 6), &["Keep-zeta."], json!({}))],
    );

    let out = read(&repo, &ReadQuery::file("src/lib.rs").with_anchor("f"));
    let texts: Vec<&str> = out.decisions.iter().map(|d| d.text.as_str()).collect();
    assert_eq!(
        texts,
        ["Keep-zeta.", "Keep-alpha must hold.", "Risk-gamma lurks."],
        "C3's first (newest), then C1's without the retired two; C2 owns no line: {out:#?}"
    );
    assert_eq!(out.stats.items_retired, 2);
    // The regions returned do not carry the retired items either.
    let c1_region = out.regions.iter().find(|r| r.commit_sha == c1).unwrap();
    assert_eq!(c1_region.region.constraints.len(), 1);
    assert!(c1_region.region.semantic_dependencies.is_empty());
    let text = markdown(&repo, "f", None);
    assert!(
        !text.contains("beta") && !text.contains("Dep-delta"),
        "{text}"
    );
    assert!(text.contains("_2 retired items withheld"), "{text}");
    // The note on g's unit retires nothing there.
    let g = read(&repo, &ReadQuery::file("src/lib.rs").with_anchor("g"));
    assert_eq!(g.stats.items_retired, 0);
}

#[test]
fn a_note_that_is_not_later_retires_nothing() {
    // The retiring note is on an unmerged branch: HEAD does not reach it.
    let repo = TestRepo::new();
    let c1 = repo.commit_file("src/lib.rs", source(&["let a = 1;"], &["let q = 9;"]), "f");
    annotate_with(
        &repo,
        &c1,
        1,
        vec![region("f", (1, 4), &["Keep-alpha."], json!({}))],
    );
    repo.git(&["checkout", "-q", "-b", "wip"]);
    let wip = repo.commit_file(
        "src/lib.rs",
        source(&["let a = 1;", "let w = 0;"], &["let q = 9;"]),
        "wip",
    );
    annotate_with(
        &repo,
        &wip,
        2,
        vec![region(
            "f",
            (1, 5),
            &["Wip."],
            json!({"retires": ["Keep-alpha."]}),
        )],
    );
    repo.git(&["checkout", "-q", "main"]);
    let out = read(&repo, &ReadQuery::file("src/lib.rs").with_anchor("f"));
    let texts: Vec<&str> = out.decisions.iter().map(|d| d.text.as_str()).collect();
    assert_eq!(texts, ["Keep-alpha."]);
    assert_eq!(out.stats.items_retired, 0);
}

#[test]
fn decisions_reach_past_the_region_cap_and_outlive_the_budget() {
    let repo = TestRepo::new();
    let mut lines: Vec<String> = Vec::new();
    for i in 0..30 {
        lines.push(format!("let v{i} = {i};"));
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let c = repo.commit_file(
            "src/lib.rs",
            source(&refs, &["let q = 9;"]),
            &format!("f {i}"),
        );
        let constraint = format!("Constraint number {i} of f holds for every caller of f.");
        annotate_with(
            &repo,
            &c,
            1 + (i % 28),
            vec![region("f", (1, i + 4), &[constraint.as_str()], json!({}))],
        );
    }
    let out = read(&repo, &ReadQuery::file("src/lib.rs").with_anchor("f"));
    assert_eq!(out.regions.len(), 20, "the default region cap");
    assert_eq!(out.decisions.len(), 30, "every region's constraint");
    // 800 tokens hold all 30 constraints: regions go first.
    let text = markdown(&repo, "f", Some(800));
    for i in 0..30 {
        assert!(
            text.contains(&format!("Constraint number {i} of")),
            "{i}: {text}"
        );
    }
    assert!(text.len().div_ceil(4) <= 800, "{}", text.len());
    // 400 do not: the lowest-ranked go, and the notice says so.
    let text = markdown(&repo, "f", Some(400));
    assert!(text.contains("lowest-ranked decisions left out"), "{text}");
    assert!(
        text.contains("Constraint number 29 of"),
        "the newest is ranked first: {text}"
    );
}

#[test]
fn a_flagged_region_keeps_its_flag_and_loses_its_items() {
    let repo = TestRepo::new();
    let c1 = repo.commit_file("src/lib.rs", source(&["let a = 1;"], &["let q = 9;"]), "f");
    let mut n = note(
        &c1,
        "2024-01-01T00:00:00Z",
        "enhanced",
        vec![
            region(
                "f",
                (1, 4),
                &["Flagged-alpha."],
                json!({"risk_notes": "Flagged-risk."}),
            ),
            region("g", (6, 9), &["Kept-g."], json!({})),
        ],
    );
    n["corrections"] = json!([{
        "target": {"file": "src/lib.rs", "anchor": "f"},
        "kind": "flag",
        "reason": "f was rewritten by hand",
        "author": "Ann <a@example.com>",
        "timestamp": "2024-02-01T00:00:00Z"
    }]);
    annotate(&repo, &c1, &n);
    let out = read(&repo, &ReadQuery::file("src/lib.rs"));
    let texts: Vec<&str> = out.decisions.iter().map(|d| d.text.as_str()).collect();
    assert_eq!(texts, ["Kept-g."]);
    assert_eq!(out.stats.items_retired, 2);
    let text = render(&out, Format::Markdown, false);
    assert!(text.contains("**Flagged** 2024-02-01 by Ann"), "{text}");
    assert!(
        !text.contains("Flagged-alpha") && !text.contains("Flagged-risk"),
        "{text}"
    );
}
