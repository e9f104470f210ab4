//! Blame carried forward from a cached ancestor equals a fresh `git blame`,
//! line by line, at every commit of random histories — main's, each side
//! branch's, and main's last commit before each merge: linear edits, merges
//! with conflicts resolved as ours, as theirs, as both or merged by git (and
//! merges that change the file on their own), octopus merges, renames,
//! whitespace-only changes, mode changes, files without a final newline,
//! repeated lines, a file deleted and created again — with the indent
//! heuristic or histogram configured, which blame is told to ignore. Also:
//! configuration from `GIT_CONFIG_GLOBAL` changes nothing, and shallow
//! clones, grafts and replace refs are blamed afresh.

use std::collections::BTreeMap;
use std::path::Path;

use gitctx::{BlameCache, BlameEngine, BlameEntry, BlameOptions, CacheOutcome, ObjectId, Repo};
use testkit::TestRepo;

use crate::{child, open};

/// A small seeded generator (xorshift64), so a failing seed replays.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        usize::try_from(self.0 % n.max(1) as u64).unwrap()
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// A line, often one that repeats elsewhere (braces, blanks), so that
    /// diffs have several ways to pair lines up.
    fn text(&mut self, tag: &str) -> String {
        match self.below(8) {
            0 => "}".to_owned(),
            1 => String::new(),
            2 => "{".to_owned(),
            3 => "    return 0;".to_owned(),
            _ => format!("{tag} {}", self.below(1000)),
        }
    }
}

/// Edits `lines` in place: replaced, inserted, deleted and re-indented lines.
fn edit(rng: &mut Rng, lines: &mut Vec<String>, tag: &str) {
    let edits = 1 + rng.below(4);
    for _ in 0..edits {
        let at = rng.below(lines.len() + 1);
        match rng.below(5) {
            0 | 1 => lines.insert(at, rng.text(tag)),
            2 if lines.len() > 3 => {
                lines.remove(at.min(lines.len() - 1));
            }
            3 if !lines.is_empty() => {
                let at = at.min(lines.len() - 1);
                reindent(lines, at);
            }
            _ if !lines.is_empty() => {
                let at = at.min(lines.len() - 1);
                lines[at] = rng.text(tag);
            }
            _ => lines.push(rng.text(tag)),
        }
    }
}

/// Changes only the leading whitespace of line `at`.
fn reindent(lines: &mut [String], at: usize) {
    lines[at] = if lines[at].starts_with(' ') {
        lines[at].trim_start().to_owned()
    } else {
        format!("  {}", lines[at])
    };
}

/// One line's blame, to compare answers line by line.
type LineBlame = (ObjectId, String, u32, bool);

fn per_line(entries: &[BlameEntry]) -> Vec<(u32, LineBlame)> {
    entries
        .iter()
        .flat_map(|e| {
            (0..e.len()).map(move |k| {
                (
                    e.final_start + k,
                    (
                        e.commit,
                        e.original_path.clone(),
                        e.original_start + k,
                        e.boundary,
                    ),
                )
            })
        })
        .collect()
}

/// The tracked file as one commit has it.
#[derive(Debug, Clone)]
struct File {
    /// `None`: deleted.
    path: Option<String>,
    lines: Vec<String>,
    final_newline: bool,
    executable: bool,
}

impl File {
    fn content(&self) -> String {
        let mut text = self.lines.join("\n");
        if self.final_newline && !self.lines.is_empty() {
            text.push('\n');
        }
        text
    }

    /// The file as git merged it: `text` split into lines.
    fn set_content(&mut self, text: &str) {
        self.final_newline = text.ends_with('\n');
        self.lines = text.lines().map(str::to_owned).collect();
    }
}

/// A branch's tip: its commit and what it holds.
#[derive(Debug, Clone)]
struct Tip {
    commit: git2::Oid,
    file: File,
    /// The content of `other.txt`, a file the tracked one never is.
    other: String,
}

/// What a run built and saw: the scenarios that occurred, and how the
/// checks went.
#[derive(Debug, Default, Clone)]
struct Seen {
    commits: usize,
    checked: usize,
    side_checked: usize,
    before_merge_checked: usize,
    carried: usize,
    carried_far: usize,
    carried_over_merge: usize,
    most_processes: u32,
    merged_by_git: usize,
    resolved_ours: usize,
    resolved_theirs: usize,
    resolved_both: usize,
    octopus: usize,
    renames: usize,
    deletions: usize,
    recreations: usize,
    whitespace_only: usize,
    mode_changes: usize,
    without_final_newline: usize,
    configured: usize,
}

impl Seen {
    fn add(&mut self, other: &Seen) {
        self.commits += other.commits;
        self.checked += other.checked;
        self.side_checked += other.side_checked;
        self.before_merge_checked += other.before_merge_checked;
        self.carried += other.carried;
        self.carried_far += other.carried_far;
        self.carried_over_merge += other.carried_over_merge;
        self.most_processes = self.most_processes.max(other.most_processes);
        self.merged_by_git += other.merged_by_git;
        self.resolved_ours += other.resolved_ours;
        self.resolved_theirs += other.resolved_theirs;
        self.resolved_both += other.resolved_both;
        self.octopus += other.octopus;
        self.renames += other.renames;
        self.deletions += other.deletions;
        self.recreations += other.recreations;
        self.whitespace_only += other.whitespace_only;
        self.mode_changes += other.mode_changes;
        self.without_final_newline += other.without_final_newline;
        self.configured += other.configured;
    }
}

/// Which commit a check is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Main,
    Side,
    BeforeMerge,
}

/// A random history, built in-process with libgit2 (only the checks start
/// git processes), and checked commit by commit as it grows.
struct History {
    repo: TestRepo,
    objects: git2::Repository,
    rng: Rng,
    main: Tip,
    time: i64,
    branches: usize,
    seen: Seen,
    cache_dir: tempfile::TempDir,
}

impl History {
    /// A history from `seed`; `settings` picks diff settings a user may
    /// have, which blame is told to ignore (its diff options are fixed): none,
    /// the indent heuristic off, or histogram and a driver's patience.
    fn new(seed: u64, settings: usize) -> History {
        let repo = TestRepo::new();
        match settings {
            1 => {
                repo.git(&["config", "diff.indentHeuristic", "false"]);
            }
            2 => {
                repo.git(&["config", "diff.algorithm", "histogram"]);
                std::fs::create_dir_all(repo.join(".git/info")).unwrap();
                std::fs::write(repo.join(".git/info/attributes"), "*.c diff=patient\n").unwrap();
                repo.git(&["config", "diff.patient.algorithm", "patience"]);
            }
            _ => {}
        }
        let objects = git2::Repository::open(repo.path()).unwrap();
        let mut rng = Rng(seed);
        let lines: Vec<String> = (0..12).map(|_| rng.text("start")).collect();
        let file = File {
            path: Some("src/f.c".to_owned()),
            lines,
            final_newline: true,
            executable: false,
        };
        let mut history = History {
            repo,
            objects,
            rng,
            main: Tip {
                commit: git2::Oid::ZERO_SHA1,
                file,
                other: String::new(),
            },
            time: 1_700_000_000,
            branches: 0,
            seen: Seen {
                configured: usize::from(settings != 0),
                ..Seen::default()
            },
            cache_dir: tempfile::tempdir().unwrap(),
        };
        let tip = history.main.clone();
        history.main.commit = history.commit(&tip, &[], "start");
        history.set_branch("main", history.main.commit);
        history.check(history.main.commit, &history.main.file.clone(), Role::Main);
        history
    }

    /// Writes `tip`'s files as a commit with `parents`.
    fn commit(&mut self, tip: &Tip, parents: &[git2::Oid], message: &str) -> git2::Oid {
        let mut files: BTreeMap<String, (git2::Oid, i32)> = BTreeMap::new();
        let other = self.objects.blob(tip.other.as_bytes()).unwrap();
        files.insert("other.txt".to_owned(), (other, 0o100_644));
        if let Some(path) = &tip.file.path {
            let blob = self.objects.blob(tip.file.content().as_bytes()).unwrap();
            let mode = if tip.file.executable {
                0o100_755
            } else {
                0o100_644
            };
            files.insert(path.clone(), (blob, mode));
        }
        let tree = write_tree(&self.objects, &files);
        let tree = self.objects.find_tree(tree).unwrap();
        self.time += 60;
        let when = git2::Time::new(self.time, 0);
        let signature = git2::Signature::new("T", "t@example.com", &when).unwrap();
        let parents: Vec<git2::Commit<'_>> = parents
            .iter()
            .map(|p| self.objects.find_commit(*p).unwrap())
            .collect();
        let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
        self.seen.commits += 1;
        self.objects
            .commit(None, &signature, &signature, message, &tree, &parents)
            .unwrap()
    }

    fn set_branch(&self, name: &str, commit: git2::Oid) {
        self.objects
            .reference(&format!("refs/heads/{name}"), commit, true, "test")
            .unwrap();
    }

    /// Main moves on to a new commit of `self.main` with `parents` (main's
    /// tip first when empty), which is checked.
    fn advance(&mut self, parents: &[git2::Oid], message: &str) {
        let parents = if parents.is_empty() {
            vec![self.main.commit]
        } else {
            parents.to_vec()
        };
        let tip = self.main.clone();
        self.main.commit = self.commit(&tip, &parents, message);
        self.set_branch("main", self.main.commit);
        self.check(self.main.commit, &tip.file, Role::Main);
    }

    /// One random change on `main`, ending in one new commit there (and any
    /// side branches it merges).
    fn step(&mut self, n: usize) {
        let tag = format!("c{n}");
        if self.main.file.path.is_none() {
            // Created again, partly from the old lines.
            let file = &mut self.main.file;
            let keep = self.rng.below(file.lines.len() + 1);
            file.lines.truncate(keep);
            file.lines.push(self.rng.text(&tag));
            file.path = Some("src/f.c".to_owned());
            self.seen.recreations += 1;
            self.advance(&[], &tag);
            return;
        }
        match self.rng.below(16) {
            0 => {
                self.main.file.path = None;
                self.seen.deletions += 1;
            }
            1 | 2 => {
                self.seen.renames += 1;
                self.main.file.path = Some(format!("src/renamed{}.c", self.seen.renames));
                if self.rng.chance(50) {
                    edit(&mut self.rng, &mut self.main.file.lines, &tag);
                }
            }
            3..=5 => return self.merge(&tag),
            6 => return self.octopus(&tag),
            7 => {
                // A commit that does not touch the file.
                self.main.other = tag.clone();
            }
            8 => {
                // Whitespace only.
                let lines = &mut self.main.file.lines;
                for _ in 0..1 + self.rng.below(3) {
                    let at = self.rng.below(lines.len());
                    reindent(lines, at);
                }
                self.seen.whitespace_only += 1;
            }
            9 => {
                // The mode, with or without the content.
                self.main.file.executable = !self.main.file.executable;
                if self.rng.chance(50) {
                    edit(&mut self.rng, &mut self.main.file.lines, &tag);
                }
                self.seen.mode_changes += 1;
            }
            10 => {
                // The final newline comes or goes, with an edit or not.
                self.main.file.final_newline = !self.main.file.final_newline;
                if self.rng.chance(50) {
                    edit(&mut self.rng, &mut self.main.file.lines, &tag);
                }
            }
            _ => edit(&mut self.rng, &mut self.main.file.lines, &tag),
        }
        self.advance(&[], &tag);
    }

    /// A branch from main's tip with `commits` random edits of the file,
    /// each checked; returns its tip.
    fn side_branch(&mut self, tag: &str, commits: usize) -> Tip {
        self.branches += 1;
        let name = format!("side{}", self.branches);
        let mut side = self.main.clone();
        for k in 0..commits {
            edit(&mut self.rng, &mut side.file.lines, &format!("{tag}s{k}"));
            let previous = side.clone();
            side.commit = self.commit(&previous, &[previous.commit], &format!("{tag} side"));
            self.set_branch(&name, side.commit);
            self.check(side.commit, &side.file, Role::Side);
        }
        side
    }

    /// A side branch with one or two commits, `main` moved on (or not), and
    /// a merge: conflicts resolved as main's, as the side's, as both, or as
    /// git merged them, sometimes edited further in the merge itself.
    fn merge(&mut self, tag: &str) {
        let path = self.main.file.path.clone().unwrap();
        let base = self.main.commit;
        let commits = 1 + self.rng.below(2);
        let side = self.side_branch(tag, commits);
        if self.rng.chance(60) {
            edit(&mut self.rng, &mut self.main.file.lines, &format!("{tag}m"));
            let tip = self.main.clone();
            self.main.commit = self.commit(&tip, &[tip.commit], &format!("{tag} main"));
            self.check(self.main.commit, &tip.file, Role::BeforeMerge);
        }
        let merged = self.merged_by_git(base, self.main.commit, side.commit, &path);
        match merged {
            Some(text) => {
                self.main.file.set_content(&text);
                self.seen.merged_by_git += 1;
            }
            None => match self.rng.below(3) {
                0 => self.seen.resolved_ours += 1,
                1 => {
                    self.main.file.lines = side.file.lines.clone();
                    self.main.file.final_newline = side.file.final_newline;
                    self.seen.resolved_theirs += 1;
                }
                _ => {
                    self.main.file.lines.extend(side.file.lines.iter().cloned());
                    self.seen.resolved_both += 1;
                }
            },
        }
        if self.rng.chance(25) {
            edit(&mut self.rng, &mut self.main.file.lines, &format!("{tag}x"));
        }
        self.advance(&[self.main.commit, side.commit], &format!("{tag} merge"));
    }

    /// An octopus: two branches (one edits the file, the other `other.txt`)
    /// merged into main at once, the merge taking the edited file as it is
    /// (no step that carrying replays: a fresh blame) or editing it further.
    fn octopus(&mut self, tag: &str) {
        let edited = self.side_branch(tag, 1);
        self.branches += 1;
        let mut elsewhere = self.main.clone();
        elsewhere.other = format!("{tag} elsewhere");
        elsewhere.commit = self.commit(&elsewhere.clone(), &[elsewhere.commit], tag);
        self.set_branch(&format!("side{}", self.branches), elsewhere.commit);
        self.check(elsewhere.commit, &elsewhere.file, Role::Side);
        self.main.file = edited.file.clone();
        self.main.other = elsewhere.other.clone();
        if self.rng.chance(50) {
            edit(&mut self.rng, &mut self.main.file.lines, &format!("{tag}o"));
        }
        self.seen.octopus += 1;
        self.advance(
            &[self.main.commit, edited.commit, elsewhere.commit],
            &format!("{tag} octopus"),
        );
    }

    /// `path` as git's merge of `ours` and `theirs` (from `base`) leaves it,
    /// `None` when it conflicts.
    fn merged_by_git(
        &self,
        base: git2::Oid,
        ours: git2::Oid,
        theirs: git2::Oid,
        path: &str,
    ) -> Option<String> {
        let tree = |c: git2::Oid| self.objects.find_commit(c).unwrap().tree().unwrap();
        let index = self
            .objects
            .merge_trees(&tree(base), &tree(ours), &tree(theirs), None)
            .unwrap();
        if index.has_conflicts() {
            return None;
        }
        let entry = index.get_path(Path::new(path), 0)?;
        let blob = self.objects.find_blob(entry.id).unwrap();
        Some(String::from_utf8(blob.content().to_vec()).unwrap())
    }

    /// Compares a blame of `file` at `commit` through the cache (carried
    /// from whatever ancestor it holds) with a fresh one, line by line.
    fn check(&mut self, commit: git2::Oid, file: &File, role: Role) {
        let Some(path) = file.path.clone() else {
            return;
        };
        if !file.final_newline {
            self.seen.without_final_newline += 1;
        }
        let git = open(&self.repo);
        let head: ObjectId = commit.to_string().parse().unwrap();
        let len = file.lines.len() as u32;
        // Most reads ask for the whole file; some for a part, so that later
        // carries meet lines the cache does not know.
        let lines = if len > 0 && self.rng.chance(25) {
            let start = 1 + self.rng.below(len as usize) as u32;
            let end = start + self.rng.below((len - start + 1) as usize) as u32;
            Some((start, end))
        } else {
            None
        };
        let options = BlameOptions {
            rev: Some(head.to_hex()),
            lines,
            engine: BlameEngine::Cli,
        };
        let cache = BlameCache::new(self.cache_dir.path());
        let (cached, outcome) = git.blame_cached_outcome(&path, &options, &cache).unwrap();
        let fresh = git.blame(&path, &options).unwrap();
        assert_eq!(
            per_line(&cached),
            per_line(&fresh),
            "{path} {lines:?} at {head} ({role:?}), {outcome:?}, {:?}",
            self.seen
        );
        self.seen.checked += 1;
        match role {
            Role::Main => {}
            Role::Side => self.seen.side_checked += 1,
            Role::BeforeMerge => self.seen.before_merge_checked += 1,
        }
        self.note(&git, head, &outcome);
        // Sometimes forget this commit, so a later read carries from
        // further back.
        if self.rng.chance(35) {
            for file in testkit::files_under(self.cache_dir.path()) {
                if file.to_string_lossy().contains(&head.to_hex()) {
                    std::fs::remove_file(file).unwrap();
                }
            }
        }
    }

    fn note(&mut self, git: &Repo, head: ObjectId, outcome: &CacheOutcome) {
        let seen = &mut self.seen;
        seen.most_processes = seen.most_processes.max(outcome.git_processes);
        let Some((_, steps)) = outcome.carried_from else {
            return;
        };
        seen.carried += 1;
        if steps > 1 {
            seen.carried_far += 1;
        }
        if git.commit_info_by_id(head).unwrap().is_merge() {
            seen.carried_over_merge += 1;
        }
    }
}

/// Writes a tree of `files` (paths with `/`), with its subtrees.
fn write_tree(objects: &git2::Repository, files: &BTreeMap<String, (git2::Oid, i32)>) -> git2::Oid {
    let mut here = objects.treebuilder(None).unwrap();
    let mut dirs: BTreeMap<&str, BTreeMap<String, (git2::Oid, i32)>> = BTreeMap::new();
    for (path, &(id, mode)) in files {
        match path.split_once('/') {
            Some((dir, rest)) => {
                dirs.entry(dir)
                    .or_default()
                    .insert(rest.to_owned(), (id, mode));
            }
            None => {
                here.insert(path, id, mode).unwrap();
            }
        }
    }
    for (dir, inner) in dirs {
        here.insert(dir, write_tree(objects, &inner), 0o040_000)
            .unwrap();
    }
    here.write().unwrap()
}

/// Builds a history of `steps` random changes from `seed`, checking every
/// commit that has the file as it is made.
fn run(seed: u64, settings: usize, steps: usize) -> Seen {
    let mut history = History::new(seed, settings);
    for n in 0..steps {
        history.step(n);
    }
    history.seen
}

#[test]
fn carried_blame_equals_a_fresh_blame_at_every_commit() {
    let seeds = [0x9e37_79b9_7f4a_7c15, 0x2545_f491_4f6c_dd1d, 7, 1_000_003];
    // One thread per seed: the checks wait on git processes.
    let runs: Vec<Seen> = std::thread::scope(|scope| {
        let handles: Vec<_> = seeds
            .iter()
            .enumerate()
            .map(|(settings, &seed)| scope.spawn(move || run(seed, settings % 3, 40)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut total = Seen::default();
    for seen in &runs {
        total.add(seen);
    }
    // The property is only worth something if every scenario happened, and
    // carrying happened, over several steps and across merges, in most reads.
    assert!(total.checked >= 150, "{total:?}");
    assert!(total.carried * 2 >= total.checked, "{total:?}");
    assert!(total.carried_far >= 10, "{total:?}");
    assert!(total.carried_over_merge >= 3, "{total:?}");
    assert!(total.most_processes <= 1, "{total:?}");
    assert!(total.side_checked >= 20, "{total:?}");
    assert!(total.before_merge_checked >= 5, "{total:?}");
    for (scenario, count) in [
        ("merged by git", total.merged_by_git),
        ("conflict resolved as ours", total.resolved_ours),
        ("conflict resolved as theirs", total.resolved_theirs),
        ("conflict resolved as both", total.resolved_both),
        ("octopus merge", total.octopus),
        ("rename", total.renames),
        ("deletion", total.deletions),
        ("re-creation", total.recreations),
        ("whitespace-only commit", total.whitespace_only),
        ("mode change", total.mode_changes),
        ("file without a final newline", total.without_final_newline),
        ("configured diff settings", total.configured),
    ] {
        assert!(count >= 1, "no {scenario}: {total:?}");
    }
}

fn whole(rev: &str) -> BlameOptions {
    BlameOptions {
        rev: Some(rev.to_owned()),
        lines: None,
        engine: BlameEngine::Cli,
    }
}

fn content(lines: &[String]) -> String {
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// A 30-line file, then `n` commits each changing one line near the end.
fn appended(n: usize) -> (TestRepo, Vec<String>) {
    let repo = TestRepo::new();
    let mut lines: Vec<String> = (1..=30).map(|i| format!("line {i}")).collect();
    let mut commits = vec![repo.commit_file("f.txt", content(&lines), "start")];
    for k in 0..n {
        lines[25 + k % 5] = format!("changed by {k}");
        commits.push(repo.commit_file("f.txt", content(&lines), &format!("change {k}")));
    }
    (repo, commits)
}

/// Carrying over a file of several KiB (so git cuts the common tail before
/// each step's diff) with many equal lines (so how xdiff pairs them up
/// matters), along a chain long enough to be diffed on two threads: the
/// carried blame is git's, line for line, at every commit.
#[test]
fn a_long_chain_over_a_large_file_carries_exactly() {
    let repo = TestRepo::new();
    let mut lines: Vec<String> = (0..320)
        .map(|n| match n % 6 {
            0 => "}".to_owned(),
            1 => String::new(),
            2 => "    x += 1;".to_owned(),
            _ => format!("    let v{n} = step({n});"),
        })
        .collect();
    let mut commits = vec![repo.commit_file("big.rs", content(&lines), "start")];
    for k in 0..14 {
        match k % 4 {
            0 => lines.insert(10 + k * 7, "}".to_owned()),
            1 => {
                lines.remove(160 + k);
            }
            2 => lines.insert(200, "    x += 1;".to_owned()),
            _ => lines.push(format!("// appended by {k}")),
        }
        commits.push(repo.commit_file("big.rs", content(&lines), &format!("edit {k}")));
    }
    assert!(content(&lines).len() > 4 * 1024);
    let git = open(&repo);
    for (from, to) in [(0, 14), (3, 14), (0, 9)] {
        let dir = tempfile::tempdir().unwrap();
        let cache = BlameCache::new(dir.path());
        git.blame_cached("big.rs", &whole(&commits[from]), &cache)
            .unwrap();
        let (entries, outcome) = git
            .blame_cached_outcome("big.rs", &whole(&commits[to]), &cache)
            .unwrap();
        assert_eq!(
            per_line(&entries),
            per_line(&git.blame("big.rs", &whole(&commits[to])).unwrap()),
            "carried from {from} to {to}"
        );
        let steps = u32::try_from(to - from).unwrap();
        assert_eq!(
            (outcome.carried_from, outcome.git_processes),
            (Some((commits[from].parse().unwrap(), steps)), 0),
            "carried from {from} to {to}"
        );
        let walk = outcome.carry.expect("a carry's walk is reported");
        assert_eq!(walk.unknown, 0, "every line decided in-process");
        assert_eq!(
            walk.met + walk.own,
            entries.iter().map(BlameEntry::len).sum::<u32>()
        );
    }
}

#[test]
fn a_carried_read_starts_no_process_when_the_ancestor_knew_the_lines() {
    let (repo, commits) = appended(20);
    let git = open(&repo);
    let dir = tempfile::tempdir().unwrap();
    let cache = BlameCache::new(dir.path());
    let lines = BlameOptions {
        lines: Some((3, 12)),
        ..whole(&commits[0])
    };
    git.blame_cached("f.txt", &lines, &cache).unwrap();
    for (at, steps) in [(1, 1), (20, 19)] {
        let options = BlameOptions {
            rev: Some(commits[at].clone()),
            ..lines.clone()
        };
        let (entries, outcome) = git.blame_cached_outcome("f.txt", &options, &cache).unwrap();
        assert_eq!(entries, git.blame("f.txt", &options).unwrap());
        let from = commits[if at == 1 { 0 } else { 1 }].parse().unwrap();
        assert_eq!(
            (outcome.carried_from, outcome.git_processes),
            // The steps are diffed in-process.
            (Some((from, steps)), 0),
            "at commit {at}"
        );
    }
    // The whole file at the last commit: its lines beyond what was asked
    // before are blamed in one more process.
    let (entries, outcome) = git
        .blame_cached_outcome("f.txt", &whole(&commits[20]), &cache)
        .unwrap();
    assert_eq!(entries, git.blame("f.txt", &whole(&commits[20])).unwrap());
    assert_eq!(outcome.carried_from, None, "known at this commit already");
    assert_eq!(outcome.git_processes, 1);
    // Far back, the blame is carried all the same.
    let (far, far_commits) = appended(300);
    let git = open(&far);
    // A cache of its own: both histories are dated alike, so their first
    // commits are the same objects.
    let far_dir = tempfile::tempdir().unwrap();
    let far_cache = BlameCache::new(far_dir.path());
    git.blame_cached("f.txt", &whole(&far_commits[0]), &far_cache)
        .unwrap();
    // A walk this long is judged by the cost model against what the fresh
    // blame just cost (milliseconds, here): say it cost an hour, as a blame
    // of a long history would, so that the carry is not raced by the clock.
    for file in testkit::files_under(far_dir.path()) {
        if file.file_name().is_some_and(|n| n == ".cost") {
            std::fs::write(&file, "gitctx-blame-cost 1\nmicros 3600000000\n").unwrap();
        }
    }
    let last = far_commits.last().unwrap();
    let (entries, outcome) = git
        .blame_cached_outcome("f.txt", &whole(last), &far_cache)
        .unwrap();
    assert_eq!(entries, git.blame("f.txt", &whole(last)).unwrap());
    assert_eq!(
        (outcome.carried_from, outcome.git_processes),
        (Some((far_commits[0].parse().unwrap(), 300)), 0)
    );
}

/// Warms `cache` at `commits[2]` in `repo` (opened at `dir`), then blames
/// `commits[3]` through it: the answer must be a fresh blame's; returns where
/// it was carried from.
fn carried_from_parent(
    dir: &Path,
    commits: &[String],
    cache: &BlameCache,
) -> Option<(ObjectId, u32)> {
    let git = Repo::discover(dir).unwrap();
    git.blame_cached("f.txt", &whole(&commits[2]), cache)
        .unwrap();
    let (entries, outcome) = git
        .blame_cached_outcome("f.txt", &whole(&commits[3]), cache)
        .unwrap();
    assert_eq!(entries, git.blame("f.txt", &whole(&commits[3])).unwrap());
    outcome.carried_from
}

#[test]
fn replace_refs_grafts_and_shallow_clones_are_blamed_afresh() {
    let (repo, commits) = appended(3);
    let dir = tempfile::tempdir().unwrap();
    let cache = BlameCache::new(dir.path());
    let parent: ObjectId = commits[2].parse().unwrap();

    repo.git(&["replace", &commits[1], &commits[0]]);
    assert_eq!(
        carried_from_parent(repo.path(), &commits, &cache),
        None,
        "a replace ref"
    );
    // The same history without the replace ref carries again.
    repo.git(&["replace", "-d", &commits[1]]);
    assert_eq!(
        carried_from_parent(repo.path(), &commits, &cache),
        Some((parent, 1))
    );

    // Grafts: the parent made a root.
    let grafts = repo.join(".git/info/grafts");
    std::fs::write(&grafts, format!("{}\n", commits[2])).unwrap();
    assert_eq!(
        carried_from_parent(repo.path(), &commits, &cache),
        None,
        "grafts"
    );
    std::fs::remove_file(&grafts).unwrap();

    // A shallow clone whose boundary is the parent.
    let clones = tempfile::tempdir().unwrap();
    let clone = clones.path().join("shallow");
    let url = format!("file://{}", repo.path().display());
    repo.git(&[
        "clone",
        "--quiet",
        "--depth",
        "2",
        &url,
        clone.to_str().unwrap(),
    ]);
    let shallow_cache = BlameCache::new(dir.path().join("shallow"));
    assert_eq!(
        carried_from_parent(&clone, &commits, &shallow_cache),
        None,
        "a shallow clone"
    );
}

/// The history of [`configured_diff_settings_change_nothing`]: two files
/// whose second commit git diffs differently with the diff settings it was
/// given — `f.c` by algorithm, `g.c` by the indent heuristic.
const ALGORITHM: [&str; 2] = [
    "a\n}\nreturn 0;\nx++;\nb\n}\nx++;\n}\nx++;\na\n{\n{\nreturn 0;\nc\ny--;\n\nc\ny--;\nc\nb\n",
    "a\n}\nreturn 0;\nx++;\nb\n}\nx++;\n}\nx++;\na\n{\n{\n\nc\ny--;\n\n{\nc\n{\ny--;\nb\n",
];
const HEURISTIC: [&str; 2] = [
    "    }\nint g()\nint g()\n}\n{\n    }\n    x();\n    if (a) {\n\n    x();\n}\n\n",
    "    }\nint g()\n    if (a) {\n    }\nint g()\nint g()\n}\n{\n    }\n    x();\n    if (a) {\n\n    x();\n}\n\n",
];

/// `git diff-tree -p -U0` of `path` between two commits, with `options`.
fn diff_with(repo: &TestRepo, commits: &[String; 2], path: &str, options: &[&str]) -> String {
    let mut args = vec!["diff-tree", "-p", "-U0"];
    args.extend_from_slice(options);
    args.extend_from_slice(&[&commits[0], &commits[1], "--", path]);
    repo.git(&args)
}

#[test]
fn configured_diff_settings_change_nothing() {
    let repo = TestRepo::new();
    repo.write("f.c", ALGORITHM[0]).write("g.c", HEURISTIC[0]);
    let first = repo.commit_all("first");
    repo.write("f.c", ALGORITHM[1]).write("g.c", HEURISTIC[1]);
    let second = repo.commit_all("second");
    let commits = [first, second];
    // The second commit diffs differently under other settings: a carry
    // whose diffs followed them while the blame did not (or the other way
    // round) would pair lines differently.
    assert_ne!(
        diff_with(&repo, &commits, "f.c", &["--diff-algorithm=myers"]),
        diff_with(&repo, &commits, "f.c", &["--diff-algorithm=histogram"])
    );
    assert_ne!(
        diff_with(&repo, &commits, "g.c", &["--indent-heuristic"]),
        diff_with(&repo, &commits, "g.c", &["--no-indent-heuristic"])
    );
    // The user's settings, where libgit2 does not look: the file
    // `GIT_CONFIG_GLOBAL` names. A diff driver's algorithm on top.
    let config = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        config.path(),
        "[diff]\n\talgorithm = histogram\n\tindentHeuristic = false\n\
         [diff \"hist\"]\n\talgorithm = histogram\n",
    )
    .unwrap();
    std::fs::create_dir_all(repo.join(".git/info")).unwrap();
    std::fs::write(repo.join(".git/info/attributes"), "*.c diff=hist\n").unwrap();
    let instructions = format!("{}\n{}\n{}", repo.path().display(), commits[0], commits[1]);
    let config_path = config.path().to_str().unwrap();
    child::expect_success(child::spawn(
        "blame_carry::child_blames_under_the_users_settings",
        &instructions,
        &[("GIT_CONFIG_GLOBAL", config_path)],
    ));
}

/// One line of `git blame --porcelain`'s answer: (commit, line in it).
fn porcelain_lines(output: &str) -> Vec<(ObjectId, u32)> {
    output
        .lines()
        .filter_map(|line| {
            let mut words = line.split(' ');
            let commit = words.next()?;
            if commit.len() != 40 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            Some((commit.parse().ok()?, words.next()?.parse().ok()?))
        })
        .collect()
}

#[test]
fn child_blames_under_the_users_settings() {
    let Some([dir, first, second]) = child::instruction_lines() else {
        return;
    };
    let (first, second) = (first.as_str(), second.as_str());
    let git = Repo::discover(dir).unwrap();
    // git sees the user's settings.
    let setting = |key: &str| {
        git.git()
            .args(["config", "--get", key])
            .run_text()
            .unwrap()
            .trim()
            .to_owned()
    };
    assert_eq!(setting("diff.algorithm"), "histogram");
    assert_eq!(setting("diff.indentHeuristic"), "false");
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = BlameCache::new(cache_dir.path());
    for path in ["f.c", "g.c"] {
        git.blame_cached(path, &whole(first), &cache).unwrap();
        let (carried, outcome) = git
            .blame_cached_outcome(path, &whole(second), &cache)
            .unwrap();
        assert_eq!(
            outcome.carried_from,
            Some((first.parse().unwrap(), 1)),
            "{path}"
        );
        let fresh = git.blame(path, &whole(second)).unwrap();
        assert_eq!(carried, fresh, "{path}");
        // Both are git's blame told the fixed options.
        let told = git
            .git()
            .args([
                "blame",
                "--porcelain",
                "--diff-algorithm=myers",
                "--indent-heuristic",
                second,
                "--",
                path,
            ])
            .run_text()
            .unwrap();
        let fresh_lines: Vec<(ObjectId, u32)> = per_line(&fresh)
            .into_iter()
            .map(|(_, (commit, _, original, _))| (commit, original))
            .collect();
        assert_eq!(fresh_lines, porcelain_lines(&told), "{path}");
    }
}

/// A 90-line file: distinct lines among repeated braces and blanks.
fn lines_of(tag: &str) -> Vec<String> {
    (0..90)
        .map(|n| match n % 9 {
            0 => "}".to_owned(),
            4 => String::new(),
            _ => format!("    {tag}_{n} = step({n});"),
        })
        .collect()
}

/// Replaces line `at` of the file in the work tree and commits it.
fn change_line(repo: &TestRepo, lines: &mut [String], at: usize, text: &str) -> String {
    lines[at] = text.to_owned();
    repo.commit_file("src/f.c", content(lines), text)
}

/// The lines of `src/f.c` at HEAD in the work tree of `repo`.
fn lines_at_head(repo: &TestRepo) -> Vec<String> {
    repo.git(&["show", "HEAD:src/f.c"])
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Blames the whole of `src/f.c` at `rev` through `cache` and afresh: the
/// same, line for line; returns how the cached blame was found.
fn blamed_alike(repo: &TestRepo, rev: &str, cache: &BlameCache) -> CacheOutcome {
    let git = open(repo);
    let (cached, outcome) = git
        .blame_cached_outcome("src/f.c", &whole(rev), cache)
        .unwrap();
    let fresh = git.blame("src/f.c", &whole(rev)).unwrap();
    assert_eq!(per_line(&cached), per_line(&fresh), "at {rev}: {outcome:?}");
    outcome
}

/// HEAD moves the ways a pull, a checkout and a rebase move it — forward
/// through `--no-ff` merges of a topic forked before the cached commit with
/// changes on both sides, backwards, to an unrelated history, to rebased
/// commits, to a merge of upstream into local work — and each blame through
/// the cache equals a fresh one; where the cached commit's lines can be
/// met, they are carried.
#[test]
fn head_moved_in_every_direction_blames_exactly() {
    let repo = TestRepo::new();
    let mut lines = lines_of("base");
    repo.commit_file("src/f.c", content(&lines), "start");
    // A long-lived topic, forked before the commit a read will cache.
    repo.git(&["branch", "topic"]);
    for k in 0..4 {
        change_line(&repo, &mut lines, 10 + 9 * k, &format!("    main_{k}();"));
    }
    let cached_at = repo.rev_parse("HEAD");
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = BlameCache::new(cache_dir.path());
    assert_eq!(blamed_alike(&repo, &cached_at, &cache).carried_from, None);

    // The topic changes other lines; main moves on; the topic is merged
    // with `--no-ff` (git merges both sides' changes); main moves on again.
    repo.checkout("topic");
    let mut topic = lines_at_head(&repo);
    for k in 0..3 {
        change_line(&repo, &mut topic, 60 + 7 * k, &format!("    topic_{k}();"));
    }
    repo.checkout("main");
    change_line(&repo, &mut lines, 50, "    main_later();");
    repo.git(&[
        "merge",
        "--no-ff",
        "-q",
        "-m",
        "Merge branch 'topic'",
        "topic",
    ]);
    let mut lines = lines_at_head(&repo);
    change_line(&repo, &mut lines, 2, "    after_merge();");
    let head = repo.rev_parse("HEAD");
    let outcome = blamed_alike(&repo, &head, &cache);
    assert_eq!(
        outcome.carried_from.map(|(from, _)| from.to_hex()),
        Some(cached_at.clone()),
        "{outcome:?}"
    );
    let walk = outcome.carry.unwrap();
    assert!(walk.met > 0 && walk.own > 0, "{walk:?}");

    // Backwards: only the newest commit cached, a blame three commits back.
    let back_dir = tempfile::tempdir().unwrap();
    let back = BlameCache::new(back_dir.path());
    blamed_alike(&repo, &head, &back);
    let outcome = blamed_alike(&repo, &repo.rev_parse("HEAD~3"), &back);
    assert!(outcome.carried_from.is_some(), "{outcome:?}");

    // An unrelated history with a file of the same name and some of the
    // same lines.
    repo.git(&["checkout", "-q", "--orphan", "unrelated"]);
    let mut other = lines_of("other");
    other[0..20].clone_from_slice(&lines[0..20]);
    repo.commit_file("src/f.c", content(&other), "unrelated start");
    change_line(&repo, &mut other, 30, "    unrelated();");
    blamed_alike(&repo, "HEAD", &back);
    blamed_alike(&repo, "HEAD", &cache);

    // `git pull --rebase`: local work on an older upstream, cached, then
    // rebased onto the upstream with the merge.
    repo.git(&["checkout", "-q", "-b", "local", &cached_at]);
    let mut local = lines_at_head(&repo);
    change_line(&repo, &mut local, 80, "    local_a();");
    change_line(&repo, &mut local, 85, "    local_b();");
    blamed_alike(&repo, "HEAD", &cache);
    repo.git(&["rebase", "-q", "main"]);
    let outcome = blamed_alike(&repo, "HEAD", &cache);
    assert!(outcome.carried_from.is_some(), "{outcome:?}");

    // `git pull` with local work: upstream merged into it.
    repo.git(&["checkout", "-q", "-b", "mine", &cached_at]);
    let mut mine = lines_at_head(&repo);
    change_line(&repo, &mut mine, 40, "    mine();");
    blamed_alike(&repo, "HEAD", &cache);
    repo.git(&[
        "merge",
        "--no-ff",
        "-q",
        "-m",
        "Merge branch 'main' into mine",
        "main",
    ]);
    let outcome = blamed_alike(&repo, "HEAD", &cache);
    assert!(outcome.carried_from.is_some(), "{outcome:?}");
}
