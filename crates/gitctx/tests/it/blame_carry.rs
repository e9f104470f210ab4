//! Blame carried forward from a cached ancestor equals a fresh `git blame`,
//! line by line, at every commit of random histories: linear edits, merges
//! with conflicts resolved either way (and merges that change the file on
//! their own), renames, whitespace-only changes, repeated lines, a file
//! deleted and created again.

use gitctx::{BlameCache, BlameEngine, BlameEntry, BlameOptions, CacheOutcome, ObjectId, Repo};
use testkit::TestRepo;

use crate::open;

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
                // Whitespace only.
                let at = at.min(lines.len() - 1);
                lines[at] = if lines[at].starts_with(' ') {
                    lines[at].trim_start().to_owned()
                } else {
                    format!("  {}", lines[at])
                };
            }
            _ if !lines.is_empty() => {
                let at = at.min(lines.len() - 1);
                lines[at] = rng.text(tag);
            }
            _ => lines.push(rng.text(tag)),
        }
    }
}

fn content(lines: &[String]) -> String {
    let mut text = lines.join("\n");
    text.push('\n');
    text
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

/// What a run of the property saw.
#[derive(Debug, Default)]
struct Seen {
    checked: usize,
    carried: usize,
    carried_far: usize,
    carried_over_merge: usize,
    most_processes: u32,
}

/// The history being built: the file's path and lines on `main`.
struct History {
    repo: TestRepo,
    rng: Rng,
    path: Option<String>,
    lines: Vec<String>,
    renames: usize,
    merges: usize,
}

impl History {
    fn new(seed: u64) -> History {
        let repo = TestRepo::new();
        let mut rng = Rng(seed);
        let lines: Vec<String> = (0..12).map(|_| rng.text("start")).collect();
        repo.commit_file("src/f.c", content(&lines), "start");
        History {
            repo,
            rng,
            path: Some("src/f.c".to_owned()),
            lines,
            renames: 0,
            merges: 0,
        }
    }

    /// One random change on `main`, ending in one new commit there.
    fn step(&mut self, n: usize) {
        let tag = format!("c{n}");
        let Some(path) = self.path.clone() else {
            // Created again, partly from the old lines.
            let keep = self.rng.below(self.lines.len() + 1);
            self.lines.truncate(keep);
            self.lines.push(self.rng.text(&tag));
            let path = "src/f.c".to_owned();
            self.repo.commit_file(&path, content(&self.lines), &tag);
            self.path = Some(path);
            return;
        };
        match self.rng.below(12) {
            0 => {
                self.repo.remove(&path).stage_all();
                self.repo.commit(&tag);
                self.path = None;
            }
            1 | 2 => {
                self.renames += 1;
                let to = format!("src/renamed{}.c", self.renames);
                self.repo.rename(&path, &to);
                if self.rng.chance(50) {
                    edit(&mut self.rng, &mut self.lines, &tag);
                    self.repo.write(&to, content(&self.lines)).stage_all();
                }
                self.repo.commit(&tag);
                self.path = Some(to);
            }
            3..=5 => self.merge(&path, &tag),
            6 => {
                // A commit that does not touch the file.
                self.repo.commit_file("other.txt", &tag, &tag);
            }
            _ => {
                edit(&mut self.rng, &mut self.lines, &tag);
                self.repo.commit_file(&path, content(&self.lines), &tag);
            }
        }
    }

    /// A side branch with one or two commits, `main` moved on (or not), and
    /// a merge: conflicts resolved as main's, as the side's, as both, or as
    /// git merged them, sometimes edited further in the merge itself.
    fn merge(&mut self, path: &str, tag: &str) {
        self.merges += 1;
        let side = format!("side{}", self.merges);
        self.repo.checkout_new(&side);
        let mut theirs = self.lines.clone();
        for k in 0..1 + self.rng.below(2) {
            edit(&mut self.rng, &mut theirs, &format!("{tag}s{k}"));
            self.repo
                .commit_file(path, content(&theirs), &format!("{tag} side"));
        }
        self.repo.checkout("main");
        if self.rng.chance(60) {
            edit(&mut self.rng, &mut self.lines, &format!("{tag}m"));
            self.repo
                .commit_file(path, content(&self.lines), &format!("{tag} main"));
        }
        let merged = self
            .repo
            .command()
            .args(["merge", "--no-ff", "--no-commit", "--quiet", &side])
            .run_unchecked()
            .unwrap();
        let resolved = if merged.status.success() {
            std::fs::read_to_string(self.repo.join(path))
                .unwrap()
                .lines()
                .map(str::to_owned)
                .collect()
        } else {
            match self.rng.below(3) {
                0 => self.lines.clone(),
                1 => theirs.clone(),
                _ => {
                    let mut both = self.lines.clone();
                    both.extend(theirs.iter().cloned());
                    both
                }
            }
        };
        self.lines = resolved;
        if self.rng.chance(25) {
            edit(&mut self.rng, &mut self.lines, &format!("{tag}x"));
        }
        self.repo.write(path, content(&self.lines)).stage_all();
        self.repo.commit(&format!("{tag} merge"));
    }
}

/// Builds a history of `steps` random changes from `seed` and, after each
/// commit on `main` that has the file, compares a blame through the cache
/// (carried from whatever ancestor it holds) with a fresh one.
fn run(seed: u64, steps: usize) -> Seen {
    let mut history = History::new(seed);
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = BlameCache::new(cache_dir.path());
    let mut seen = Seen::default();
    for n in 0..steps {
        history.step(n);
        let Some(path) = history.path.clone() else {
            continue;
        };
        let git = open(&history.repo);
        let head = git.resolve_commit("HEAD").unwrap();
        let len = history.lines.len() as u32;
        // Most reads ask for the whole file; some for a part, so that later
        // carries meet lines the cache does not know.
        let lines = if history.rng.chance(25) {
            let start = 1 + history.rng.below(len as usize) as u32;
            let end = start + history.rng.below((len - start + 1) as usize) as u32;
            Some((start, end))
        } else {
            None
        };
        let options = BlameOptions {
            rev: Some(head.to_hex()),
            lines,
            engine: BlameEngine::Cli,
        };
        let (cached, outcome) = git.blame_cached_outcome(&path, &options, &cache).unwrap();
        let fresh = git.blame(&path, &options).unwrap();
        assert_eq!(
            per_line(&cached),
            per_line(&fresh),
            "seed {seed}, step {n}, {path} {lines:?} at {head}, {outcome:?}"
        );
        seen.checked += 1;
        note(&mut seen, &git, head, &outcome);
        // Sometimes forget this commit, so the next read carries from further
        // back.
        if history.rng.chance(35) {
            for file in testkit::files_under(cache_dir.path()) {
                if file.to_string_lossy().contains(&head.to_hex()) {
                    std::fs::remove_file(file).unwrap();
                }
            }
        }
    }
    seen
}

fn note(seen: &mut Seen, git: &Repo, head: ObjectId, outcome: &CacheOutcome) {
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

#[test]
fn carried_blame_equals_a_fresh_blame_at_every_commit() {
    let mut total = Seen::default();
    for seed in [0x9e37_79b9_7f4a_7c15, 0x2545_f491_4f6c_dd1d, 7, 1_000_003] {
        let seen = run(seed, 40);
        total.checked += seen.checked;
        total.carried += seen.carried;
        total.carried_far += seen.carried_far;
        total.carried_over_merge += seen.carried_over_merge;
        total.most_processes = total.most_processes.max(seen.most_processes);
    }
    // The property is only worth something if carrying happened, over
    // several steps and across merges, in most reads.
    assert!(total.checked >= 100, "{total:?}");
    assert!(total.carried * 2 >= total.checked, "{total:?}");
    assert!(total.carried_far >= 10, "{total:?}");
    assert!(total.carried_over_merge >= 3, "{total:?}");
    assert!(total.most_processes <= 2, "{total:?}");
}

fn whole(rev: &str) -> BlameOptions {
    BlameOptions {
        rev: Some(rev.to_owned()),
        lines: None,
        engine: BlameEngine::Cli,
    }
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

#[test]
fn a_carried_read_starts_one_process_when_the_ancestor_knew_the_lines() {
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
            outcome,
            CacheOutcome {
                carried_from: Some((from, steps)),
                git_processes: 1,
            },
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
    // Past the window, nothing is carried.
    let (far, far_commits) = appended(gitctx::blame_carry::MAX_CARRY_STEPS as usize + 1);
    let git = open(&far);
    // A cache of its own: both histories are dated alike, so their first
    // commits are the same objects.
    let far_dir = tempfile::tempdir().unwrap();
    let far_cache = BlameCache::new(far_dir.path());
    git.blame_cached("f.txt", &whole(&far_commits[0]), &far_cache)
        .unwrap();
    let last = far_commits.last().unwrap();
    let (_, outcome) = git
        .blame_cached_outcome("f.txt", &whole(last), &far_cache)
        .unwrap();
    assert_eq!(outcome.carried_from, None);
}

/// Warms `cache` at `commits[2]`, then blames `commits[3]` through it: the
/// answer must be a fresh blame's; returns where it was carried from.
fn carried_from_parent(
    repo: &TestRepo,
    commits: &[String],
    cache: &BlameCache,
) -> Option<(ObjectId, u32)> {
    let git = open(repo);
    git.blame_cached("f.txt", &whole(&commits[2]), cache)
        .unwrap();
    let (entries, outcome) = git
        .blame_cached_outcome("f.txt", &whole(&commits[3]), cache)
        .unwrap();
    assert_eq!(entries, git.blame("f.txt", &whole(&commits[3])).unwrap());
    outcome.carried_from
}

#[test]
fn settings_blame_may_read_differently_are_not_carried() {
    let (repo, commits) = appended(3);
    let dir = tempfile::tempdir().unwrap();
    let cache = BlameCache::new(dir.path());
    repo.git(&["config", "diff.algorithm", "histogram"]);
    assert_eq!(
        carried_from_parent(&repo, &commits, &cache),
        None,
        "diff.algorithm=histogram"
    );
    repo.git(&["config", "diff.algorithm", "myers"]);
    repo.git(&["replace", &commits[1], &commits[0]]);
    assert_eq!(
        carried_from_parent(&repo, &commits, &cache),
        None,
        "a replace ref"
    );
    // The same history without the replace ref carries again.
    repo.git(&["replace", "-d", &commits[1]]);
    let parent = commits[2].parse().unwrap();
    assert_eq!(
        carried_from_parent(&repo, &commits, &cache),
        Some((parent, 1))
    );
}
