//! `history`, `summary`, `deps` and `read` on a history shaped like
//! git/git's ([`TestRepo::merge_shaped`]: topic branches merged with
//! `--no-ff`, a rename, a moved function, an octopus merge, an unmerged
//! annotated branch; notes on topic commits only), each checked against an
//! expectation computed here from `git log`, `git blame` and the notes' JSON
//! — never from `ultragit-read`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use testkit::{MergeShaped, TestRepo};
use ultragit_read::deps::{DepsQuery, deps};
use ultragit_read::history::{HistoryQuery, history};
use ultragit_read::summary::{SummaryQuery, summary};
use ultragit_read::{Format, ReadQuery};

use crate::support::{pipeline, read};

/// Every note on the ultragit ref, parsed, by commit.
fn notes(repo: &TestRepo) -> BTreeMap<String, Value> {
    repo.git(&["notes", "--ref=ultragit", "list"])
        .lines()
        .map(|line| {
            let commit = line
                .split_whitespace()
                .nth(1)
                .expect("note commit")
                .to_owned();
            let text = repo.git(&["notes", "--ref=ultragit", "show", &commit]);
            (commit, serde_json::from_str(&text).expect("a JSON note"))
        })
        .collect()
}

/// The names `file` had, as `git log --follow` finds them.
fn names(repo: &TestRepo, file: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in repo
        .git(&[
            "log",
            "--follow",
            "--name-only",
            "--format=",
            "HEAD",
            "--",
            file,
        ])
        .lines()
        .filter(|l| !l.is_empty())
    {
        if !out.iter().any(|n| n == name) {
            out.push(name.to_owned());
        }
    }
    out
}

/// The non-merge commits HEAD's history holds that changed any of `paths`,
/// on every branch, newest first.
fn touching(repo: &TestRepo, paths: &[String]) -> Vec<String> {
    let mut args = vec![
        "log",
        "--full-history",
        "--no-merges",
        "--format=%H",
        "HEAD",
        "--",
    ];
    args.extend(paths.iter().map(String::as_str));
    repo.git(&args).lines().map(str::to_owned).collect()
}

/// Two anchors name one unit: equal, or one is the other qualified.
fn same_unit(a: &str, b: &str) -> bool {
    a == b || a.ends_with(&format!("::{b}")) || b.ends_with(&format!("::{a}"))
}

/// The regions of `note` in one of `files` (of the unit `anchor`, if any).
fn regions_in<'a>(note: &'a Value, files: &[String], anchor: Option<&str>) -> Vec<&'a Value> {
    note["regions"]
        .as_array()
        .expect("regions")
        .iter()
        .filter(|r| files.iter().any(|f| r["file"] == f.as_str()))
        .filter(|r| anchor.is_none_or(|a| same_unit(r["ast_anchor"]["name"].as_str().unwrap(), a)))
        .collect()
}

/// `(commit, anchor)` of every annotated region of `file` (or its unit
/// `anchor`) in HEAD's history, newest commit first: what `history` must
/// answer.
fn expected_history(repo: &TestRepo, file: &str, anchor: Option<&str>) -> Vec<(String, String)> {
    let names = names(repo, file);
    let notes = notes(repo);
    let mut out = Vec::new();
    for commit in touching(repo, &names) {
        let Some(note) = notes.get(&commit) else {
            continue;
        };
        for region in regions_in(note, &names, anchor) {
            out.push((
                commit.clone(),
                region["ast_anchor"]["name"].as_str().unwrap().to_owned(),
            ));
        }
    }
    out
}

fn fixture() -> MergeShaped {
    TestRepo::merge_shaped()
}

#[test]
fn history_finds_every_annotated_commit_on_any_parent_across_the_rename() {
    let m = fixture();
    let p = pipeline(&m.repo);
    for (file, anchor) in [
        ("src/diff.rs", Some("show_stats")),
        ("src/diff.rs", Some("builtin_diff")),
        ("src/diff.rs", Some("helper")),
        ("src/diff.rs", Some("old_helper")),
        ("src/diff.rs", None),
        ("src/opts.rs", Some("parse_opts")),
        ("src/opts.rs", None),
    ] {
        let mut query = HistoryQuery::file(file);
        if let Some(anchor) = anchor {
            query = query.with_anchor(anchor);
        }
        let out = history(&p, &query).unwrap();
        let got: Vec<(String, String)> = out
            .entries
            .iter()
            .map(|e| (e.commit.clone(), e.anchor.clone()))
            .collect();
        let expected = expected_history(&m.repo, file, anchor);
        let named = |list: &[(String, String)]| -> Vec<String> {
            list.iter()
                .map(|(c, a)| format!("{} {a}", m.name_of(c)))
                .collect()
        };
        assert_eq!(named(&got), named(&expected), "{file} {anchor:?}");
        assert!(!expected.is_empty(), "{file} {anchor:?} has annotations");
    }

    // The facts behind those expectations: topic commits only, the narrow
    // T1 and the octopus's T6, not the unmerged T9.
    let stats = history(
        &p,
        &HistoryQuery::file("src/diff.rs").with_anchor("show_stats"),
    )
    .unwrap();
    let commits: Vec<&str> = stats.entries.iter().map(|e| m.name_of(&e.commit)).collect();
    assert_eq!(commits, ["T6", "T1"]);
    assert_eq!((stats.annotated_commits, stats.outside_history), (2, 1));
    let md = ultragit_read::Answer::render(&stats, Format::Markdown);
    assert!(
        md.contains("2 annotated regions from 2 annotated commits in HEAD's history (1 annotated commit more not in it"),
        "{md}"
    );
    // Renamed on a branch of its own while another branch changed it.
    let parse = history(
        &p,
        &HistoryQuery::file("src/opts.rs").with_anchor("parse_opts"),
    )
    .unwrap();
    let commits: Vec<&str> = parse.entries.iter().map(|e| m.name_of(&e.commit)).collect();
    assert_eq!(commits, ["T7", "T4"]);
    assert_eq!(parse.former_names, ["src/util.rs"]);
    assert_eq!(
        parse.entries[1].file, "src/util.rs",
        "the path the note names"
    );
    assert_eq!(parse.entries[0].constraints_dropped, ["constraint-T4"]);
}

#[test]
fn summary_of_a_file_and_a_directory_agree_with_the_history() {
    let m = fixture();
    let p = pipeline(&m.repo);
    for file in ["src/diff.rs", "src/opts.rs"] {
        let out = summary(&p, &SummaryQuery::path(file), Format::Json).unwrap();
        let expected = expected_history(&m.repo, file, None);
        let mut counts: BTreeMap<String, u32> = BTreeMap::new();
        for (_, anchor) in &expected {
            *counts.entry(anchor.clone()).or_default() += 1;
        }
        let got: BTreeMap<String, u32> = out.files[0]
            .units
            .iter()
            .map(|u| (u.anchor.clone(), u.annotations))
            .collect();
        assert_eq!(got, counts, "{file}");
        let commits: BTreeSet<&String> = expected.iter().map(|(c, _)| c).collect();
        assert_eq!(out.files[0].annotations as usize, commits.len(), "{file}");
        // The latest of each unit is its newest annotated commit.
        for unit in &out.files[0].units {
            let newest = expected
                .iter()
                .find(|(_, a)| *a == unit.anchor)
                .map(|(c, _)| c.as_str());
            assert_eq!(
                Some(unit.latest_commit.as_str()),
                newest,
                "{file} {}",
                unit.anchor
            );
        }
    }
    let dir = summary(&p, &SummaryQuery::path("src"), Format::Json).unwrap();
    let files: Vec<&str> = dir.files.iter().map(|f| f.file.as_str()).collect();
    assert_eq!(files, ["src/diff.rs", "src/opts.rs"]);
    let whole = summary(&p, &SummaryQuery::path("."), Format::Json).unwrap();
    assert_eq!(whole.files, dir.files);
    let parse = dir.files[1]
        .units
        .iter()
        .find(|u| u.anchor == "parse_opts")
        .expect("parse_opts");
    assert_eq!(parse.annotations, 2, "T7, and T4 under the former name");
}

#[test]
fn deps_agree_with_the_declared_dependencies() {
    let m = fixture();
    let p = pipeline(&m.repo);
    let notes = notes(&m.repo);
    for (file, anchor) in [
        ("src/opts.rs", "parse_opts"),
        ("src/diff.rs", "builtin_diff"),
    ] {
        let names = names(&m.repo, file);
        let mut expected: Vec<(String, String, String)> = Vec::new();
        for (commit, note) in &notes {
            for region in note["regions"].as_array().unwrap() {
                for dep in region["semantic_dependencies"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    if names.iter().any(|n| dep["file"] == n.as_str())
                        && same_unit(dep["anchor"].as_str().unwrap(), anchor)
                    {
                        expected.push((
                            region["file"].as_str().unwrap().to_owned(),
                            region["ast_anchor"]["name"].as_str().unwrap().to_owned(),
                            commit.clone(),
                        ));
                    }
                }
            }
        }
        let out = deps(&p, &DepsQuery::new(file, anchor)).unwrap();
        let mut got: Vec<(String, String, String)> = out
            .dependents
            .iter()
            .map(|d| (d.file.clone(), d.anchor.clone(), d.commit.clone()))
            .collect();
        got.sort();
        expected.sort();
        assert_eq!(got, expected, "{file} {anchor}");
        assert_eq!(got.len(), 1, "{file} {anchor}");
    }
}

/// The commits `git blame` names for `lines` of `file` at HEAD, and for each
/// the final lines it holds.
fn blame(repo: &TestRepo, file: &str, lines: (u32, u32)) -> BTreeMap<String, Vec<u32>> {
    let range = format!("{},{}", lines.0, lines.1);
    let out = repo.git(&["blame", "--porcelain", "-L", &range, "HEAD", "--", file]);
    let mut found: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for line in out.lines() {
        let mut fields = line.split(' ');
        let (Some(sha), Some(_), Some(final_line)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            found
                .entry(sha.to_owned())
                .or_default()
                .push(final_line.parse().unwrap());
        }
    }
    found
}

/// `(commit, anchor)` of the regions `out` returns for `anchor`, sorted.
fn returned(out: &ultragit_read::ReadOutput, anchor: &str) -> Vec<(String, String)> {
    let mut got: Vec<(String, String)> = out
        .regions
        .iter()
        .filter(|r| same_unit(&r.region.ast_anchor.name, anchor))
        .map(|r| (r.commit_sha.clone(), r.region.ast_anchor.name.clone()))
        .collect();
    got.sort();
    got
}

#[test]
fn read_by_anchor_and_by_lines_inside_the_unit_return_the_same_notes() {
    let m = fixture();
    let notes = notes(&m.repo);
    let file = "src/diff.rs";
    let by_anchor = read(&m.repo, &ReadQuery::file(file).with_anchor("show_stats"));
    let scope = by_anchor.query.scopes[0].line_range.expect("a unit");
    // Expected: the blamed commits of the unit whose notes name it.
    let blamed = blame(&m.repo, file, (scope.start, scope.end));
    let mut expected: Vec<(String, String)> = blamed
        .keys()
        .filter_map(|c| notes.get(c).map(|n| (c, n)))
        .flat_map(|(c, n)| {
            regions_in(n, &[file.to_owned()], Some("show_stats"))
                .into_iter()
                .map(move |r| {
                    (
                        c.clone(),
                        r["ast_anchor"]["name"].as_str().unwrap().to_owned(),
                    )
                })
        })
        .collect();
    expected.sort();
    assert_eq!(returned(&by_anchor, "show_stats"), expected);
    assert_eq!(expected.len(), 2, "T1 and T6");

    // Lines of the unit that only C2 wrote (no note names them): the unit's
    // notes still come back, as for the anchor.
    let c2_lines = &blamed[m.id("C2")];
    let (start, end) = (c2_lines[0], *c2_lines.last().unwrap());
    assert!(
        blame(&m.repo, file, (start, end))
            .keys()
            .all(|c| c == m.id("C2"))
    );
    let by_lines = read(&m.repo, &ReadQuery::file(file).with_lines(start, end));
    assert_eq!(returned(&by_lines, "show_stats"), expected);
    assert_eq!(by_lines.query.scopes[0].units[0].name, "show_stats");
    assert_eq!(
        (
            by_lines.query.scopes[0].units[0].lines.start,
            by_lines.query.scopes[0].units[0].lines.end
        ),
        (scope.start, scope.end)
    );

    // T1's note was about three lines; it is reported at the unit with its
    // own lines where blame puts them today (moved down one by T6).
    for out in [&by_anchor, &by_lines] {
        let t1 = out
            .regions
            .iter()
            .find(|r| r.commit_sha == m.id("T1"))
            .expect("T1's region");
        assert_eq!(
            (t1.region.lines.start, t1.region.lines.end),
            (scope.start, scope.end)
        );
        let own = &blamed[m.id("T1")];
        let focus = t1.focus.expect("a focus");
        assert_eq!((focus.start, focus.end), (own[0], *own.last().unwrap()));
        assert_eq!(focus.end - focus.start, 2, "three lines");
    }
    let md = ultragit_read::format_markdown(&by_lines, false);
    assert!(
        md.contains(&format!(
            "lie in `show_stats` (function, lines {}–{})",
            scope.start, scope.end
        )),
        "{md}"
    );
}

#[test]
fn cross_cutting_concerns_only_where_they_overlap_the_query() {
    let m = fixture();
    let file = "src/diff.rs";
    let concern = |out: &ultragit_read::ReadOutput| {
        out.cross_cutting
            .iter()
            .any(|c| c.description.starts_with("concern-T2"))
    };
    let builtin = read(&m.repo, &ReadQuery::file(file).with_anchor("builtin_diff"));
    assert!(concern(&builtin), "the unit the concern names");
    let unit = builtin.query.scopes[0].line_range.unwrap();
    let inside = read(
        &m.repo,
        &ReadQuery::file(file).with_lines(unit.start + 3, unit.start + 4),
    );
    assert!(concern(&inside), "lines of the unit it names");
    assert!(
        concern(&read(&m.repo, &ReadQuery::file(file))),
        "the whole file"
    );
    let helper = read(&m.repo, &ReadQuery::file(file).with_anchor("helper"));
    let lines = helper.query.scopes[0].line_range.unwrap();
    let elsewhere = read(
        &m.repo,
        &ReadQuery::file(file).with_lines(lines.start, lines.end),
    );
    assert!(!elsewhere.regions.is_empty());
    assert!(!concern(&elsewhere), "{:?}", elsewhere.cross_cutting);
    assert!(!concern(&helper), "{:?}", helper.cross_cutting);
}
