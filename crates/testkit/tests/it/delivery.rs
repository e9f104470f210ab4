//! The delivery corpus (`testkit::delivery`), small spec, generated once per
//! test process.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::OnceLock;

use serde_json::Value;
use testkit::{DeliveryCorpus, DeliverySpec, generate_delivery};

fn git(dir: &Path, args: &[&str]) -> String {
    git_in(dir, args, None)
}

fn git_in(dir: &Path, args: &[&str], stdin: Option<String>) -> String {
    let mut cmd = gitctx::GitCommand::new(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args(args);
    if let Some(input) = stdin {
        cmd = cmd.stdin(input.into_bytes());
    }
    cmd.run_text()
        .unwrap_or_else(|e| panic!("git {args:?}: {e}"))
}

/// The small corpus, generated once (kept for the process's lifetime).
fn small() -> &'static DeliveryCorpus {
    static CORPUS: OnceLock<(tempfile::TempDir, DeliveryCorpus)> = OnceLock::new();
    &CORPUS
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let corpus = generate_delivery(&dir.path().join("repo"), &DeliverySpec::small())
                .expect("the small corpus generates");
            (dir, corpus)
        })
        .1
}

/// Every note: (annotated commit, parsed JSON).
fn notes(repo: &Path) -> Vec<(String, Value)> {
    let list = git(repo, &["notes", "--ref=ultragit", "list"]);
    let pairs: Vec<(&str, &str)> = list
        .lines()
        .map(|line| line.split_once(' ').unwrap())
        .collect();
    let input: String = pairs.iter().map(|(blob, _)| format!("{blob}\n")).collect();
    let batch = git_in(repo, &["cat-file", "--batch"], Some(input));
    let mut rest = batch.as_str();
    let mut notes = Vec::new();
    for (_, commit) in &pairs {
        let (header, after) = rest.split_once('\n').unwrap();
        let size: usize = header.rsplit(' ').next().unwrap().parse().unwrap();
        let value: Value = serde_json::from_str(&after[..size]).unwrap();
        notes.push(((*commit).to_owned(), value));
        rest = &after[size + 1..];
    }
    notes
}

/// The item texts of a region: constraints, risk, dependency natures.
fn region_items(region: &Value) -> Vec<String> {
    let mut items: Vec<String> = region["constraints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["text"].as_str().unwrap().to_owned())
        .collect();
    items.extend(region["risk_notes"].as_str().map(str::to_owned));
    if let Some(deps) = region["semantic_dependencies"].as_array() {
        items.extend(
            deps.iter()
                .map(|d| d["nature"].as_str().unwrap().to_owned()),
        );
    }
    items
}

fn token(text: &str) -> String {
    let at = text.rfind("[d").expect("a token");
    text[at..].to_owned()
}

#[test]
fn the_small_corpus_is_deterministic_and_fsck_clean() {
    let a = small();
    let dir = tempfile::tempdir().unwrap();
    let b = generate_delivery(&dir.path().join("repo"), &DeliverySpec::small()).unwrap();
    for rev in ["main", "refs/notes/ultragit"] {
        assert_eq!(
            git(&a.repo, &["rev-parse", rev]),
            git(&b.repo, &["rev-parse", rev])
        );
    }
    assert_eq!(a.units, b.units);
    assert_eq!(a.modelled_active, b.modelled_active);
    git(
        &a.repo,
        &["fsck", "--strict", "--no-progress", "--no-dangling"],
    );
    assert_eq!(git(&a.repo, &["status", "--porcelain"]), "");
    assert_eq!(git(&a.repo, &["branch", "--show-current"]).trim(), "main");
    assert_eq!(
        git(&a.repo, &["for-each-ref", "--format=%(refname)"]),
        "refs/heads/main\nrefs/notes/ultragit\n"
    );
}

#[test]
fn main_is_a_history_of_no_ff_merges_and_direct_commits() {
    let corpus = small();
    let repo = &corpus.repo;
    let count = |args: &[&str]| -> usize { git(repo, args).trim().parse().unwrap() };
    assert_eq!(count(&["rev-list", "--count", "main"]), corpus.commits);
    assert_eq!(
        count(&["rev-list", "--merges", "--count", "main"]),
        corpus.merges
    );
    assert_eq!(corpus.merges, DeliverySpec::small().topics);
    assert!(
        (300..=420).contains(&corpus.commits),
        "{} commits",
        corpus.commits
    );
    let first_parents = count(&["rev-list", "--first-parent", "--count", "main"]);
    assert!(first_parents < corpus.commits / 2, "topics live off main");
    let subjects = git(repo, &["log", "--merges", "--format=%s", "main"]);
    for subject in subjects.lines() {
        assert!(subject.starts_with("Merge branch 'topic-"), "{subject}");
    }
    // Some topics fork from an older main commit: their merge base is not
    // the merge's first parent.
    let merges = git(repo, &["rev-list", "--merges", "--parents", "main"]);
    let older = merges
        .lines()
        .filter(|line| {
            let ids: Vec<&str> = line.split(' ').collect();
            git(repo, &["merge-base", ids[1], ids[2]]).trim() != ids[1]
        })
        .count();
    assert!(older > 0, "no topic overlaps another");
    // Each merge's tree is what git itself makes of its parents.
    for line in merges.lines() {
        let ids: Vec<&str> = line.split(' ').collect();
        let merged = git(repo, &["merge-tree", "--write-tree", ids[1], ids[2]]);
        let tree = git(repo, &["rev-parse", &format!("{}^{{tree}}", ids[0])]);
        assert_eq!(merged.trim(), tree.trim(), "the merge {}", ids[0]);
    }
}

#[test]
fn the_corpus_has_renames_moves_reverts_rewrites_and_retirements() {
    let corpus = small();
    assert!(
        (2..=3).contains(&corpus.renames.len()),
        "{:?}",
        corpus.renames
    );
    assert!((2..=3).contains(&corpus.moves.len()), "{:?}", corpus.moves);
    assert!(
        (3..=5).contains(&corpus.reverts),
        "{} reverts",
        corpus.reverts
    );
    assert!(corpus.rewrites > 0);
    assert!(!corpus.retired_by_note.is_empty());
    assert!(!corpus.retired_by_correction.is_empty());
    assert!(!corpus.rewritten_away.is_empty());
    let reverts = git(
        &corpus.repo,
        &["log", "--format=%s", "--grep=^Revert \"", "main"],
    );
    assert_eq!(reverts.lines().count(), corpus.reverts);
    for (from, to) in &corpus.renames {
        let follow = git(
            &corpus.repo,
            &[
                "log",
                "--follow",
                "--name-only",
                "--format=",
                "main",
                "--",
                to,
            ],
        );
        assert!(
            follow.lines().any(|path| path == from),
            "git log --follow {to} does not reach {from}:\n{follow}"
        );
    }
    let heads: BTreeSet<&str> = corpus.units.iter().map(|(file, _)| file.as_str()).collect();
    for (function, _, to) in &corpus.moves {
        let unit = corpus
            .units
            .iter()
            .find(|(_, name)| name == function)
            .unwrap();
        assert!(
            heads.contains(to.as_str())
                || unit.0 != *to
                || corpus.renames.iter().any(|r| r.0 == *to)
        );
        let text = std::fs::read_to_string(corpus.repo.join(&unit.0)).unwrap();
        assert!(text.contains(&format!("pub fn {function}(x: u64) -> u64 {{")));
    }
}

#[test]
fn every_note_names_its_commit_and_carries_unique_tokens() {
    let corpus = small();
    let notes = notes(&corpus.repo);
    assert_eq!(notes.len(), corpus.notes);
    let mut tokens = Vec::new();
    for (commit, note) in &notes {
        assert_eq!(note["$schema"], "ultragit/v1");
        assert_eq!(note["commit"].as_str(), Some(commit.as_str()));
        for field in ["timestamp", "summary", "context_level"] {
            assert!(note[field].is_string(), "{field} in {note}");
        }
        let time = git(&corpus.repo, &["log", "-1", "--format=%cI", commit]);
        assert_eq!(
            time.trim().replace("+00:00", "Z"),
            note["timestamp"].as_str().unwrap()
        );
        assert!(note["provenance"].is_object() && note["cross_cutting"].is_array());
        let message = git(&corpus.repo, &["log", "-1", "--format=%B", commit]);
        assert_eq!(
            git(&corpus.repo, &["rev-list", "--parents", "-1", commit])
                .split(' ')
                .count(),
            2
        );
        for region in note["regions"].as_array().unwrap() {
            for field in ["file", "intent", "reasoning"] {
                assert!(region[field].is_string(), "{field} in {region}");
            }
            let anchor = &region["ast_anchor"];
            assert_eq!(anchor["type"], "function");
            let name = anchor["name"].as_str().unwrap();
            assert_eq!(
                anchor["signature"].as_str().unwrap(),
                format!("pub fn {name}(x: u64) -> u64")
            );
            let (start, end) = (
                region["lines"]["start"].as_u64().unwrap() as usize,
                region["lines"]["end"].as_u64().unwrap() as usize,
            );
            // The range is the whole function in the file at that commit.
            let file = region["file"].as_str().unwrap();
            let text = git(&corpus.repo, &["show", &format!("{commit}:{file}")]);
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines[start - 1], format!("pub fn {name}(x: u64) -> u64 {{"));
            assert_eq!(lines[end - 1], "}");
            assert!(lines[start..end - 1].iter().all(|l| l.starts_with("    ")));
            let items = region_items(region);
            assert!(!items.is_empty());
            for item in items {
                assert!(
                    !item.contains(['"', '\\']) && !item.chars().any(char::is_control),
                    "{item}"
                );
                let words = item.split_whitespace().count();
                assert!((12..=25).contains(&words), "{words} words: {item}");
                assert!(
                    message.lines().any(|line| line.ends_with(&item)),
                    "the message of {commit} lacks {item}:\n{message}"
                );
                tokens.push(token(&item));
            }
        }
    }
    let unique: BTreeSet<&String> = tokens.iter().collect();
    assert_eq!(unique.len(), tokens.len(), "a token is used twice");
    assert_eq!(tokens.len(), corpus.items);
    let expected: BTreeSet<String> = (1..=corpus.items).map(|i| format!("[d{i:05}]")).collect();
    assert_eq!(
        unique.into_iter().cloned().collect::<BTreeSet<_>>(),
        expected
    );
}

#[test]
fn retirements_name_earlier_items_of_the_same_function() {
    let corpus = small();
    let notes = notes(&corpus.repo);
    // Every item text so far, by function name.
    let mut by_function: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let order = git(
        &corpus.repo,
        &["rev-list", "--reverse", "--topo-order", "main"],
    );
    let position: BTreeMap<&str, usize> = order.lines().enumerate().map(|(i, c)| (c, i)).collect();
    let mut sorted: Vec<&(String, Value)> = notes.iter().collect();
    sorted.sort_by_key(|(commit, _)| position[commit.as_str()]);
    let mut retired = Vec::new();
    for (_, note) in sorted {
        for region in note["regions"].as_array().unwrap() {
            let name = region["ast_anchor"]["name"].as_str().unwrap().to_owned();
            if let Some(retires) = region["retires"].as_array() {
                for text in retires {
                    let text = text.as_str().unwrap();
                    assert!(
                        by_function
                            .get(&name)
                            .is_some_and(|earlier| earlier.iter().any(|t| t == text)),
                        "{name} retires {text}, not one of its earlier items"
                    );
                    retired.push(token(text));
                }
            }
            by_function
                .entry(name)
                .or_default()
                .extend(region_items(region));
        }
        if let Some(corrections) = note["corrections"].as_array() {
            for correction in corrections {
                assert!(["remove", "flag"].contains(&correction["kind"].as_str().unwrap()));
                assert!(correction["reason"].is_string() && correction["timestamp"].is_string());
                assert_eq!(correction["author"], "Test Author <author@example.com>");
            }
        }
    }
    retired.sort();
    let mut expected = corpus.retired_by_note.clone();
    expected.sort();
    assert_eq!(retired, expected);
}

/// The lines of `name` in `text`: from its `pub fn` line to the next
/// closing brace (1-based, inclusive).
fn lines_of(text: &str, name: &str) -> (usize, usize) {
    let head = format!("pub fn {name}(x: u64) -> u64 {{");
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| *l == head).unwrap();
    let end = start + lines[start..].iter().position(|l| *l == "}").unwrap();
    (start + 1, end + 1)
}

#[test]
fn blame_agrees_with_the_generators_model_of_active_items() {
    let corpus = small();
    let repo = &corpus.repo;
    let mut items_of: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for (commit, note) in notes(repo) {
        for region in note["regions"].as_array().unwrap() {
            let name = region["ast_anchor"]["name"].as_str().unwrap().to_owned();
            items_of
                .entry((commit.clone(), name))
                .or_default()
                .extend(region_items(region).iter().map(|t| token(t)));
        }
    }
    let retired: BTreeSet<&String> = corpus
        .retired_by_note
        .iter()
        .chain(&corpus.retired_by_correction)
        .collect();
    let mut mismatches = Vec::new();
    for ((file, name), modelled) in corpus.units.iter().zip(&corpus.modelled_active) {
        let text = std::fs::read_to_string(repo.join(file)).unwrap();
        let (start, end) = lines_of(&text, name);
        let blame = git(
            repo,
            &[
                "blame",
                "--porcelain",
                "-L",
                &format!("{start},{end}"),
                "main",
                "--",
                file,
            ],
        );
        let commits: BTreeSet<&str> = blame
            .lines()
            .filter_map(|l| l.split(' ').next())
            .filter(|id| id.len() == 40 && id.bytes().all(|b| b.is_ascii_hexdigit()))
            .collect();
        let mut active: Vec<String> = commits
            .iter()
            .filter_map(|c| items_of.get(&((*c).to_owned(), name.clone())))
            .flatten()
            .filter(|t| !retired.contains(t))
            .cloned()
            .collect();
        active.sort();
        if active != *modelled {
            mismatches.push(format!(
                "{file}:{name}: blame {active:?}, model {modelled:?}"
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    // What the generator says died is not active.
    let active: BTreeSet<&String> = corpus.modelled_active.iter().flatten().collect();
    for (what, tokens) in [
        ("retired by note", &corpus.retired_by_note),
        ("retired by correction", &corpus.retired_by_correction),
        ("rewritten away", &corpus.rewritten_away),
        ("moved away", &corpus.moved_away),
        ("reverted away", &corpus.reverted_away),
    ] {
        for token in tokens {
            assert!(!active.contains(token), "{token}, {what}, is active");
        }
    }
    assert!(!corpus.moved_away.is_empty() && !corpus.reverted_away.is_empty());
}

#[test]
fn active_items_are_dense_enough() {
    let corpus = small();
    let mut counts: Vec<usize> = corpus.modelled_active.iter().map(Vec::len).collect();
    counts.sort();
    let median = counts[counts.len() / 2];
    let dense = counts.iter().filter(|&&c| c >= 20).count();
    assert!(median >= 5, "median {median}: {counts:?}");
    assert!(
        dense * 10 >= counts.len(),
        "{dense} units with 20 or more: {counts:?}"
    );
}
