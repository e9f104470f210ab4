//! A generated merge-shaped history with `ultragit/v1` notes, for the
//! decision-delivery benchmark: how many of the active decisions
//! (constraints, risks, dependencies) of each function at HEAD reach an
//! agent within a token budget, and that no retired one does.
//!
//! [`generate_delivery`] writes one `git fast-import` stream (commits with
//! marks, then one commit of notes on `refs/notes/ultragit` naming the
//! commits by mark) and checks the work tree out at `main`. Everything is
//! deterministic: a fixed-seed xorshift PRNG, commit `i` (0-based, in stream
//! order) authored and committed by testkit's author at
//! [`EPOCH`]` + i * `[`TICK`].
//!
//! **Shape.** Rust files `src/<word>.rs`, each with top-level functions
//! `pub fn <verb>_<noun>_<n>(x: u64) -> u64 {` … `}` separated by one blank
//! line; names are unique in the repository, and so is every line of every
//! body, so git's diffs (and blame) are unambiguous. One initial commit
//! (unannotated), then topic branches: each forks from `main` (sometimes
//! from one of its last few commits, so topics overlap), has 1–4 commits
//! changing 1–3 functions in 1–2 files, and is merged with a `--no-ff`
//! merge commit (`Merge branch 'topic-N'`). `main` gets unannotated direct
//! commits between merges. An open topic holds the functions it touched:
//! no other topic and no direct commit changes them until it is merged, and
//! a topic only touches functions `main` has not changed since its fork, so
//! every merge's tree is the function-wise combination of its parents.
//!
//! **Edits.** Mostly small (1–3 lines changed, 1–4 inserted, 1–2 deleted);
//! about 5% rewrite the whole body (every line between the `pub fn` line and
//! the closing brace); bodies stay between 3 and about 90 lines. Targets are
//! Zipf-skewed, so some functions collect many surviving decisions.
//! Besides: file renames (a topic of one pure rename commit), functions
//! moved to the end of another file (a topic of one annotated commit), and
//! reverts on `main` of earlier topic commits whose functions nobody changed
//! since (`Revert "<subject>"`, no note).
//!
//! **Notes.** On about 85% of topic commits (never merges, never `main`'s
//! own commits): one region per function changed, with the path at that
//! commit, the function's whole line range after the edit, 1–2 constraints,
//! sometimes a risk note and a dependency. Every constraint text, risk text
//! and dependency nature ends with a unique token `[dNNNNN]` (regex
//! `\[d[0-9]{5}\]`, sequential from `[d00001]`), and the commit message
//! repeats each item (`Constraint: …`, `Risk: …`, `Depends: …`). Some
//! regions carry `retires` (texts of earlier items of the same function this
//! change makes untrue) and some notes carry corrections (`remove` of a
//! constraint, `flag` of a region).
//!
//! The generator keeps its own model of which commit last wrote each line
//! ([`DeliveryCorpus::modelled_active`]), for cross-checking a gold computed
//! from `git blame`.

use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::rc::Rc;

use serde_json::{Value, json};

use crate::fast_import::{self, Commit};
use crate::{AUTHOR_EMAIL, AUTHOR_NAME, EPOCH, TICK, hermetic_git};

/// The size of a generated corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliverySpec {
    /// Rust files at the start.
    pub files: usize,
    /// Top-level functions in each file at the start.
    pub functions_per_file: usize,
    /// Topic branches, every one merged into `main`.
    pub topics: usize,
    /// The seed of the generator's PRNG.
    pub seed: u64,
}

impl DeliverySpec {
    /// A corpus for tests: a few hundred commits, generated in well under a
    /// second.
    pub fn small() -> Self {
        DeliverySpec {
            files: 4,
            functions_per_file: 6,
            topics: 80,
            seed: 0x2545_f491_4f6c_dd1d,
        }
    }

    /// The benchmark's corpus: about 3,000 commits.
    pub fn full() -> Self {
        DeliverySpec {
            files: 24,
            functions_per_file: 8,
            topics: 700,
            seed: 0x9e37_79b9_7f4a_7c15,
        }
    }
}

/// What [`generate_delivery`] made.
#[derive(Debug, Clone, Default)]
pub struct DeliveryCorpus {
    /// A non-bare repository, its work tree checked out at `main` (clean).
    pub repo: PathBuf,
    /// All commits, merges included (the notes commit is not counted).
    pub commits: usize,
    /// The `--no-ff` merges on `main`.
    pub merges: usize,
    /// Commits with a note.
    pub notes: usize,
    /// Items (constraints, risks, dependencies) in all notes: one token
    /// each, `[d00001]` to `[d<items>]`.
    pub items: usize,
    /// Every function unit at HEAD: (file at HEAD, function name), by file
    /// then by position in the file.
    pub units: Vec<(String, String)>,
    /// `(from, to)` file renames made, in order.
    pub renames: Vec<(String, String)>,
    /// `(function, from file, to file)` moves made (paths at the move).
    pub moves: Vec<(String, String, String)>,
    /// Reverts on `main`.
    pub reverts: usize,
    /// Function edits (one function changed by one commit; merges, moves,
    /// renames and reverts not counted).
    pub edits: usize,
    /// Whole-body rewrites among them.
    pub rewrites: usize,
    /// Tokens the generator retired by a later note's `retires`.
    pub retired_by_note: Vec<String>,
    /// Tokens the generator retired by a correction: the constraint a
    /// `remove` names, every item of a flagged region.
    pub retired_by_correction: Vec<String>,
    /// Tokens of items of a function whose later wholesale rewrite replaced
    /// every line their commit had left in it (retired ones included).
    pub rewritten_away: Vec<String>,
    /// Tokens of items that were active on a function just before it moved
    /// to another file (git blame without `-C` gives the moved lines to the
    /// move commit, so by blame they are no longer active).
    pub moved_away: Vec<String>,
    /// Tokens of items of commits that were reverted later.
    pub reverted_away: Vec<String>,
    /// The generator's own model, one entry per unit of [`Self::units`]:
    /// the tokens of items from commits that last wrote at least one line
    /// of the unit at HEAD, minus the retired ones (by note or correction),
    /// sorted. For cross-checking a gold computed from `git blame`; not the
    /// benchmark's gold.
    pub modelled_active: Vec<Vec<String>>,
}

/// Generates the corpus of `spec` in `dir` (empty or missing): a repository
/// whose work tree is checked out, clean, at `main`.
pub fn generate_delivery(dir: &Path, spec: &DeliverySpec) -> Result<DeliveryCorpus, String> {
    if spec.files < 2 || spec.functions_per_file < 2 || spec.topics == 0 {
        return Err(format!(
            "a delivery corpus needs at least 2 files of 2 functions and one topic: {spec:?}"
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let git = |args: &[&str], stdin: Option<Vec<u8>>| {
        let mut cmd = hermetic_git(dir).args(args);
        if let Some(bytes) = stdin {
            cmd = cmd.stdin(bytes);
        }
        cmd.run()
            .map(|_| ())
            .map_err(|e| format!("git {args:?}: {e}"))
    };
    git(&["init", "--quiet", "--initial-branch=main"], None)?;
    let mut child = fast_import::spawn(hermetic_git(dir), Stdio::piped())?;
    let stdin = child.stdin.take().expect("stdin was piped");
    let stdout = child.stdout.take().expect("stdout was piped");
    let mut generator = Generator::new(
        std::io::BufWriter::new(stdin),
        std::io::BufReader::new(stdout),
        spec,
    );
    let result = generator.run();
    let Generator { out, .. } = generator;
    drop(out);
    let finished = fast_import::finish(child);
    let mut corpus = result?;
    finished?;
    git(&["update-ref", "-d", TOPIC_REF], None)?;
    git(&["reset", "--quiet", "--hard", "main"], None)?;
    corpus.repo = dir.to_path_buf();
    Ok(corpus)
}

/// The exponent of the edit targets' Zipf weights.
const ZIPF: f64 = 1.0;

/// The one ref every topic commit is written on (each names its parent);
/// deleted after the import, as merged topic branches are.
const TOPIC_REF: &str = "refs/heads/topic";

/// The correction author (testkit's pinned identity).
fn corrector() -> String {
    format!("{AUTHOR_NAME} <{AUTHOR_EMAIL}>")
}

// ---------------------------------------------------------------------------
// Words and sentences.

const FILE_WORDS: &[&str] = &[
    "session",
    "codec",
    "router",
    "ledger",
    "storage",
    "planner",
    "scheduler",
    "journal",
    "cache",
    "transport",
    "catalog",
    "metrics",
    "auth",
    "config",
    "parser",
    "lexer",
    "archive",
    "mailbox",
    "registry",
    "policy",
    "billing",
    "search",
    "layout",
    "gateway",
    "pipeline",
    "worker",
    "replica",
    "consensus",
    "quota",
    "tenant",
    "audit",
    "export",
    "sync",
    "watcher",
    "format",
    "stream",
    "socket",
    "resolver",
    "crypto",
    "vault",
    "manifest",
    "indexer",
    "compactor",
    "throttle",
    "dispatch",
    "ingest",
    "history",
    "profile",
];

const VERBS: &[&str] = &[
    "parse",
    "encode",
    "decode",
    "flush",
    "merge",
    "resolve",
    "validate",
    "compact",
    "hash",
    "split",
    "load",
    "store",
    "scan",
    "rotate",
    "align",
    "clamp",
    "fold",
    "render",
    "route",
    "reserve",
    "release",
    "refresh",
    "measure",
    "normalise",
];

const NOUNS: &[&str] = &[
    "session", "frame", "header", "checksum", "buffer", "cursor", "ledger", "token", "manifest",
    "segment", "index", "packet", "record", "snapshot", "offset", "payload", "schema", "batch",
    "queue", "lease", "window", "chunk", "digest", "entry",
];

const TAGS: &[&str] = &[
    "correctness",
    "performance",
    "compat",
    "security",
    "cache",
    "parsing",
    "concurrency",
    "api",
];

/// Constraint sentences (the token is appended). `{f}` the function, `{g}`
/// another one, `{n1}` `{n2}` nouns, `{k}` a small number.
const CONSTRAINTS: &[&str] = &[
    "Callers must hold the {n1} lock before calling {f}; releasing it early lets a concurrent writer corrupt the {n2} cache",
    "{f} must stay free of allocation on the hot path because the {n1} loop calls it once per {n2}",
    "The result of {f} is persisted in the {n1} table, so its output for existing inputs must never change",
    "{f} must return zero for an empty {n1}; the {n2} reader treats any other value as a corrupt record",
    "Keep {f} deterministic across runs: the {n1} snapshot tests compare its output byte for byte with stored fixtures",
    "{f} must not panic on truncated {n1} input; the server feeds it untrusted bytes straight from the socket",
    "The low {k} bits produced by {f} form part of the {n1} key and must stay stable between releases",
    "{f} must be called only after the {n1} has been validated, since it skips bounds checks for speed",
    "Do not reorder the steps in {f}: the {n1} checksum depends on the mixing order used since version {k}",
    "{f} must finish within one {n1} tick; anything slower stalls the {n2} scheduler and triggers the watchdog",
    "Inputs to {f} above the {n1} limit must be clamped rather than rejected, because older clients still send them",
    "{f} must remain safe to call from several threads at once without taking the global {n1} mutex",
    "Any change to the output of {f} requires bumping the {n1} format version and migrating stored {n2} files",
    "{f} must treat a zero {n1} as absent rather than as a valid value, matching what the {n2} parser expects",
    "The {n1} retry budget checked in {f} must stay below {k} attempts or the upstream rate limiter bans us",
    "{f} must keep its public signature because third party {n1} plugins link against it by name",
];

/// Risk sentences (the token is appended).
const RISKS: &[&str] = &[
    "Changing the constants in {f} silently invalidates every cached {n1} entry and forces a full rebuild on the next start",
    "If {f} ever returns the sentinel value, the {n1} reader loops forever waiting for a {n2} that never arrives",
    "A regression in {f} shows up only under load, when the {n1} queue is full and {n2} batches are merged",
    "{f} is on the latency critical path; an extra branch here costs measurable time in the {n1} benchmarks",
    "Overflow in {f} is masked by wrapping arithmetic, so a wrong {n1} value would pass tests and fail in production",
    "Older {n1} files written before version {k} rely on the quirk in {f}, and removing it breaks their import",
    "The fuzz corpus for {n1} parsing exercises {f} heavily, so any change here needs a full fuzzing run first",
    "{f} shares state with the {n1} metrics exporter, and a change in call order can double count {n2} events",
];

/// Dependency natures (the token is appended); `{g}` is the function
/// depended on.
const DEPENDENCIES: &[&str] = &[
    "{f} calls {g} to normalise the {n1} value and relies on it never returning zero for valid input",
    "{f} assumes {g} has already validated the {n1} header, so it reads fields without checking their bounds",
    "The {n1} key computed by {g} must match the one {f} derives, or lookups in the shared cache miss",
    "{f} feeds its result to {g}, which expects the low {k} bits to encode the {n1} kind",
    "{f} relies on {g} being idempotent, because it may call it twice when the {n1} retry path fires",
    "{f} and {g} must agree on the {n1} rounding mode, since their outputs are compared in the consistency check",
];

/// What a change does: the subject of its message (after `name: `) and the
/// intent of its region (15–25 words naming the function).
const CHANGES: &[(&str, &str)] = &[
    (
        "reject empty {n1} input",
        "Make {f} reject empty {n1} input early so that callers get a clear error instead of a wrong {n2} value.",
    ),
    (
        "cache the decoded {n1}",
        "Teach {f} to cache the decoded {n1} so repeated lookups from the {n2} path skip the expensive mixing step.",
    ),
    (
        "cover trailing bytes in the {n1} checksum",
        "Change {f} so the {n1} checksum covers the trailing bytes as well, closing the gap found in the last audit.",
    ),
    (
        "clamp oversized {n1} values",
        "Let {f} clamp oversized {n1} values instead of failing, which keeps older clients working during the migration.",
    ),
    (
        "simplify the {n1} mixing loop",
        "Simplify the {n1} mixing loop in {f} so that this code path is easier to read and cheaper to run.",
    ),
    (
        "guard against a degenerate {n1} state",
        "Guard {f} against the degenerate {n1} state reported by the fuzzer, where the accumulator collapsed to zero.",
    ),
    (
        "honour the configured {n1} limit",
        "Make {f} honour the configured {n1} limit so the {n2} worker no longer overruns its batch budget.",
    ),
    (
        "split out {n1} normalisation",
        "Split the {n1} normalisation out of the main loop of {f} so that it can be tested on its own.",
    ),
    (
        "fix an off by one at the end of a {n1} batch",
        "Fix the off by one in {f} that dropped the last {n1} of every batch when the {n2} buffer was full.",
    ),
    (
        "use wrapping arithmetic for the {n1} state",
        "Rework {f} to use wrapping arithmetic for the {n1} state, matching the reference implementation bit for bit.",
    ),
];

const REWRITE: (&str, &str) = (
    "rewrite around a single {n1} pass",
    "Rewrite {f} from scratch around a single {n1} pass, replacing the special cases that had piled up over time.",
);

const REASONS: &[&str] = &[
    "A lookup table was considered and rejected because it costs a cache miss on every call.",
    "The simpler version was measured to be as fast and is much easier to review.",
    "Failing loudly here is better than letting a corrupt {n1} travel further down the pipeline.",
    "This keeps the behaviour identical for valid inputs, which the snapshot tests confirm.",
    "The {n1} team asked for this so their migration can proceed without a flag day.",
    "Doing the check once at the boundary avoids repeating it in every caller.",
];

/// Subjects of `main`'s own commits (after `name: `) and their body.
const CHORES: &[&str] = &[
    "tidy up the {n1} loop",
    "rename a local {n1} variable",
    "drop a stale comment about the {n1}",
    "inline a small {n1} helper step",
    "reorder two independent {n1} statements",
];

const CHORE_BODY: &str =
    "No change in behaviour intended; this only makes the {n1} code easier to follow.";

const REMOVE_REASONS: &[&str] = &[
    "This constraint no longer holds since the {n1} lock was removed upstream.",
    "Wrong: the {n1} path never calls this concurrently, the rule was a misreading.",
];

const FLAG_REASONS: &[&str] = &[
    "The reasoning here was written from a misreading of the {n1} protocol; treat this region with suspicion.",
    "Reviewers disagree with this description of the {n1} handling; it needs a second look.",
];

// ---------------------------------------------------------------------------
// The PRNG.

/// xorshift64*: small, fast, and the same on every machine.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        let state = seed ^ 0x6a09_e667_f3bc_c909;
        Rng(if state == 0 { 1 } else { state })
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        ((self.next() >> 11) % n as u64) as usize
    }

    /// True `percent` times in a hundred.
    fn percent(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// An index of `cumulative` (increasing weights' running sums), drawn
    /// by weight.
    fn weighted(&mut self, cumulative: &[f64]) -> usize {
        let total = cumulative.last().copied().unwrap_or(0.0);
        let x = (self.next() >> 11) as f64 / (1u64 << 53) as f64 * total;
        cumulative
            .partition_point(|&c| c <= x)
            .min(cumulative.len() - 1)
    }
}

// ---------------------------------------------------------------------------
// The model: trees of functions whose lines know the commit that wrote them.

/// One line of a function and the commit (by sequence number) that last
/// wrote it, as blame would say.
#[derive(Debug, Clone)]
struct Line {
    text: String,
    origin: usize,
}

/// One version of a function: its `pub fn` line, body, closing brace.
#[derive(Debug)]
struct Func {
    lines: Vec<Line>,
}

impl Func {
    fn origins(&self) -> BTreeSet<usize> {
        self.lines.iter().map(|l| l.origin).collect()
    }
}

/// One version of a file's path and function order.
#[derive(Debug)]
struct FileState {
    path: String,
    order: Vec<usize>,
}

/// The content of one commit. Versions are shared (`Rc`), so whether a
/// side changed something is whether its pointer differs.
#[derive(Debug, Clone)]
struct Tree {
    funcs: Vec<Rc<Func>>,
    files: Vec<Rc<FileState>>,
}

impl Tree {
    fn file_of(&self, f: usize) -> usize {
        self.files
            .iter()
            .position(|file| file.order.contains(&f))
            .expect("every function is in a file")
    }

    fn render(&self, file: usize) -> String {
        let mut text = String::new();
        for (k, &f) in self.files[file].order.iter().enumerate() {
            if k > 0 {
                text.push('\n');
            }
            for line in &self.funcs[f].lines {
                text.push_str(&line.text);
                text.push('\n');
            }
        }
        text
    }

    /// The 1-based inclusive line range of `f` in its file.
    fn range(&self, f: usize) -> (usize, usize) {
        let mut line = 1;
        for &g in &self.files[self.file_of(f)].order {
            let len = self.funcs[g].lines.len();
            if g == f {
                return (line, line + len - 1);
            }
            line += len + 1;
        }
        unreachable!("file_of found the function")
    }

    /// Whether `file` differs between the two trees (path, order or a
    /// function's version).
    fn file_differs(&self, other: &Tree, file: usize) -> bool {
        let (a, b) = (&self.files[file], &other.files[file]);
        if !Rc::ptr_eq(a, b) && (a.path != b.path || a.order != b.order) {
            return true;
        }
        a.order
            .iter()
            .any(|&f| !Rc::ptr_eq(&self.funcs[f], &other.funcs[f]))
    }
}

/// Which kind of item a token names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Constraint,
    Risk,
    Dependency,
}

#[derive(Debug)]
struct Item {
    token: String,
    text: String,
    kind: Kind,
}

#[derive(Debug)]
struct RegionPlan {
    file: String,
    func: usize,
    lines: (usize, usize),
    intent: String,
    reasoning: String,
    constraints: Vec<(usize, &'static str)>,
    risk: Option<usize>,
    dependency: Option<(String, String, usize)>,
    tags: Vec<&'static str>,
    retires: Vec<String>,
}

impl RegionPlan {
    fn items(&self) -> Vec<usize> {
        let mut items: Vec<usize> = self.constraints.iter().map(|c| c.0).collect();
        items.extend(self.risk);
        items.extend(self.dependency.as_ref().map(|d| d.2));
        items
    }
}

#[derive(Debug)]
enum CorrectionPlan {
    /// Remove constraint `item` of region `region`.
    Remove { region: usize, item: usize },
    /// Flag region `region`.
    Flag { region: usize },
}

#[derive(Debug)]
struct NotePlan {
    commit: usize,
    summary: String,
    task: Option<String>,
    enhanced: bool,
    regions: Vec<RegionPlan>,
    corrections: Vec<CorrectionPlan>,
}

/// What a topic is for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Purpose {
    Changes,
    /// Rename file `file` to `to`.
    Rename {
        file: usize,
        to: String,
    },
    /// Move function `func` to the end of file `to`.
    Move {
        func: usize,
        to: usize,
    },
}

#[derive(Debug)]
struct Topic {
    id: usize,
    purpose: Purpose,
    fork: Tree,
    tree: Tree,
    /// The mark of the topic's tip (its fork point before its first commit).
    tip: usize,
    planned: usize,
    made: usize,
    /// Functions it changed (nobody else touches them until it is merged).
    held: Vec<usize>,
    /// Files whose path or order it changes.
    held_files: Vec<usize>,
    /// Its commits that could be reverted once merged.
    revertible: Vec<Revertible>,
}

/// A topic commit a revert could undo: its subject and, per function, the
/// version before and after it.
#[derive(Debug)]
struct Revertible {
    commit: usize,
    subject: String,
    changed: Vec<(usize, Rc<Func>, Rc<Func>)>,
}

// ---------------------------------------------------------------------------
// The generator.

struct Generator<'s, W: Write, R: BufRead> {
    out: W,
    answers: R,
    rng: Rng,
    spec: &'s DeliverySpec,
    names: Vec<String>,
    /// Running sums of each function's edit weight (Zipf over a shuffled
    /// rank).
    heat: Vec<f64>,
    weight: Vec<f64>,
    /// Each commit's subject, by sequence number.
    subjects: Vec<String>,
    merges: usize,
    notes: Vec<NotePlan>,
    items: Vec<Item>,
    retired: Vec<bool>,
    /// Per function: the commits whose notes have a region on it and that
    /// region's items.
    regions_of: Vec<Vec<(usize, Vec<usize>)>>,
    /// Per function: the entry of [`CHANGES`] its last topic change used.
    last_change: Vec<Option<usize>>,
    next_line: usize,
    main: Tree,
    main_mark: usize,
    /// `main`'s last few commits (mark, tree), oldest first.
    recent: Vec<(usize, Tree)>,
    open: Vec<Topic>,
    next_topic: usize,
    merged_topics: usize,
    revertible: Vec<Revertible>,
    used_words: Vec<bool>,
    renames_wanted: Vec<usize>,
    moves_wanted: Vec<usize>,
    reverts_wanted: Vec<usize>,
    corpus: DeliveryCorpus,
}

impl<'s, W: Write, R: BufRead> Generator<'s, W, R> {
    fn new(out: W, answers: R, spec: &'s DeliverySpec) -> Self {
        let mut rng = Rng::new(spec.seed);
        let count = spec.files * spec.functions_per_file;
        let names = (0..count)
            .map(|i| format!("{}_{}_{i}", rng.pick(VERBS), rng.pick(NOUNS)))
            .collect();
        // A shuffled rank per function; weight 1 / (rank + 2)^ZIPF.
        let mut rank: Vec<usize> = (0..count).collect();
        for i in (1..count).rev() {
            rank.swap(i, rng.below(i + 1));
        }
        let weight: Vec<f64> = rank
            .iter()
            .map(|&r| 1.0 / ((r + 2) as f64).powf(ZIPF))
            .collect();
        let heat = weight
            .iter()
            .scan(0.0, |sum, w| {
                *sum += w;
                Some(*sum)
            })
            .collect();
        let at = |fraction: usize| (spec.topics * fraction / 100).max(1);
        let large = spec.topics >= 300;
        let renames_wanted = if large {
            vec![at(22), at(48), at(74)]
        } else {
            vec![at(25), at(60)]
        };
        let moves_wanted = if large {
            vec![at(33), at(57), at(83)]
        } else {
            vec![at(40), at(70)]
        };
        let reverts_wanted = if large {
            vec![at(15), at(35), at(55), at(75), at(92)]
        } else {
            vec![at(30), at(55), at(85)]
        };
        Generator {
            out,
            answers,
            rng,
            spec,
            names,
            heat,
            weight,
            subjects: Vec::new(),
            merges: 0,
            notes: Vec::new(),
            items: Vec::new(),
            retired: Vec::new(),
            regions_of: vec![Vec::new(); count],
            last_change: vec![None; count],
            next_line: 1,
            main: Tree {
                funcs: Vec::new(),
                files: Vec::new(),
            },
            main_mark: 0,
            recent: Vec::new(),
            open: Vec::new(),
            next_topic: 0,
            merged_topics: 0,
            revertible: Vec::new(),
            used_words: vec![false; FILE_WORDS.len()],
            renames_wanted,
            moves_wanted,
            reverts_wanted,
            corpus: DeliveryCorpus::default(),
        }
    }

    fn run(&mut self) -> Result<DeliveryCorpus, String> {
        self.initial()?;
        while self.merged_topics < self.spec.topics {
            while self.next_topic < self.spec.topics
                && (self.open.is_empty() || (self.open.len() < 3 && self.rng.percent(45)))
            {
                self.start_topic();
            }
            let t = self.rng.below(self.open.len());
            if self.open[t].made < self.open[t].planned {
                self.topic_commit(t)?;
            } else {
                for _ in 0..[0, 0, 1, 1, 2][self.rng.below(5)] {
                    self.chore()?;
                }
                self.merge(t)?;
                if self
                    .reverts_wanted
                    .first()
                    .is_some_and(|&at| self.merged_topics >= at)
                    && self.revert()?
                {
                    self.reverts_wanted.remove(0);
                }
            }
        }
        let marks: Vec<usize> = self.notes.iter().map(|n| n.commit + 1).collect();
        let ids = fast_import::get_marks(&mut self.out, &mut self.answers, &marks)?;
        self.write_notes(&ids)?;
        self.finish_corpus();
        Ok(std::mem::take(&mut self.corpus))
    }

    // --- text ---------------------------------------------------------------

    /// `template` with its slots filled: `{f}` and `{g}` the given names,
    /// `{n1}` and `{n2}` two different nouns, `{k}` a small number.
    fn fill(&mut self, template: &str, f: &str, g: &str) -> String {
        let slots = self.slots();
        fill(template, f, g, slots)
    }

    /// Two different nouns and a small number for [`fill`].
    fn slots(&mut self) -> Slots {
        let n1 = *self.rng.pick(NOUNS);
        let mut n2 = *self.rng.pick(NOUNS);
        while n2 == n1 {
            n2 = *self.rng.pick(NOUNS);
        }
        (n1, n2, 3 + self.rng.below(9))
    }

    /// A new item: `template` filled, its token appended.
    fn item(&mut self, kind: Kind, template: &str, f: &str, g: &str) -> usize {
        let index = self.items.len();
        let token = format!("[d{:05}]", index + 1);
        let text = format!("{} {token}", self.fill(template, f, g));
        self.items.push(Item { token, text, kind });
        self.retired.push(false);
        index
    }

    fn unique(&mut self) -> usize {
        let u = self.next_line;
        self.next_line += 1;
        u
    }

    /// A body statement, unique in the repository; a call of `call` when
    /// given.
    fn statement(&mut self, call: Option<usize>) -> String {
        let u = self.unique();
        let (a, b) = (3 + 2 * self.rng.below(1 << 14), 1 + self.rng.below(31));
        if let Some(g) = call {
            return format!(
                "    acc = acc.wrapping_add({}(acc >> {b})) ^ {u};",
                self.names[g]
            );
        }
        let noun = *self.rng.pick(NOUNS);
        match self.rng.below(9) {
            0 => format!("    acc = acc.wrapping_mul({a}).rotate_left({b}) ^ {u};"),
            1 => format!("    acc ^= (acc >> {b}).wrapping_add({u});"),
            2 => format!("    if acc % {a} == {b} {{ acc = acc.wrapping_add({u}); }}"),
            3 => format!(
                "    let t{u} = acc.count_ones() as u64 + {a}; acc = acc.wrapping_sub(t{u});"
            ),
            4 => format!("    acc = acc.saturating_sub({a}).max({u});"),
            5 => format!("    acc = if acc > {a} {{ acc - {b} }} else {{ acc + {u} }};"),
            6 => format!("    let {noun}_{u} = acc & 0x{a:x}; acc ^= {noun}_{u} << {b};"),
            7 => {
                format!("    // Step {u}: the low {b} bits feed the {noun} key, keep them stable.")
            }
            _ => format!("    acc = acc.wrapping_add({a}) ^ ({u} << {b}); // {noun} mix"),
        }
    }

    /// A fresh function body: its first line, `mids` statements, its last
    /// expression, all written by `commit`.
    fn body(&mut self, mids: usize, commit: usize) -> Vec<Line> {
        let u = self.unique();
        let mut lines = vec![Line {
            text: format!("    let mut acc = x ^ 0x{u:x};"),
            origin: commit,
        }];
        for _ in 0..mids {
            let text = self.statement(None);
            lines.push(Line {
                text,
                origin: commit,
            });
        }
        let u = self.unique();
        lines.push(Line {
            text: format!("    acc.rotate_right({}) ^ {u}", 1 + u % 31),
            origin: commit,
        });
        lines
    }

    fn signature(&self, f: usize) -> String {
        format!("pub fn {}(x: u64) -> u64", self.names[f])
    }

    // --- edits --------------------------------------------------------------

    /// `old` after a small edit by `commit` (a few lines changed, inserted
    /// or deleted; a call of `call` inserted when given). The first and last
    /// body lines stay.
    fn small_edit(&mut self, old: &Func, commit: usize, call: Option<usize>) -> Func {
        let mut lines = old.lines.clone();
        let new = |text| Line {
            text,
            origin: commit,
        };
        // Statements are lines[2..len-2]; the `pub fn` line, the first body
        // line, the last expression and the brace stay.
        let mids = |lines: &Vec<Line>| lines.len() - 4;
        let op = self.rng.below(100);
        if op < 60 && mids(&lines) > 0 {
            let count = [1, 1, 2, 2, 3][self.rng.below(5)].min(mids(&lines));
            let at = 2 + self.rng.below(mids(&lines) - count + 1);
            for line in &mut lines[at..at + count] {
                *line = new(self.statement(None));
            }
        }
        if (35..90).contains(&op) || call.is_some() || mids(&lines) == 0 {
            let count = 1 + self.rng.below(4);
            let at = 2 + self.rng.below(mids(&lines) + 1);
            for i in 0..count {
                let text = self.statement(if i == 0 { call } else { None });
                lines.insert(at + i, new(text));
            }
        }
        if op >= 85 && mids(&lines) > 2 {
            for _ in 0..1 + self.rng.below(2) {
                let at = 2 + self.rng.below(mids(&lines));
                lines.remove(at);
            }
        }
        while lines.len() > 94 {
            let at = 2 + self.rng.below(mids(&lines));
            lines.remove(at);
        }
        Func { lines }
    }

    /// `old` rewritten by `commit`: every line between the `pub fn` line and
    /// the closing brace replaced.
    fn rewrite(&mut self, old: &Func, commit: usize, call: Option<usize>) -> Func {
        let len = old.lines.len();
        let mids = 2 + self.rng.below((len - 4).clamp(4, 30));
        let mut body = self.body(mids, commit);
        if let Some(g) = call {
            let text = self.statement(Some(g));
            body.insert(
                1 + self.rng.below(mids),
                Line {
                    text,
                    origin: commit,
                },
            );
        }
        let mut lines = vec![old.lines[0].clone()];
        lines.extend(body);
        lines.push(old.lines[len - 1].clone());
        Func { lines }
    }

    // --- commits ------------------------------------------------------------

    fn write(&mut self, text: &str) -> Result<(), String> {
        self.out
            .write_all(text.as_bytes())
            .map_err(|e| format!("writing to git fast-import: {e}"))
    }

    /// Writes commit number `self.subjects.len()` on `refname` with
    /// `message`, first parent `from` (a mark; its tree `parent`), second
    /// parent `merge`, and the tree `tree`. Returns its mark.
    fn emit(
        &mut self,
        refname: &str,
        message: &str,
        from: Option<(usize, &Tree)>,
        merge: Option<usize>,
        tree: &Tree,
    ) -> Result<usize, String> {
        let seq = self.subjects.len();
        let mark = seq + 1;
        let when = EPOCH + seq as i64 * TICK;
        let mut text = String::new();
        Commit::on(refname, when, message)
            .marked(mark)
            .parents(from.map(|f| f.0), merge)
            .push_header(&mut text);
        for file in 0..tree.files.len() {
            let path = &tree.files[file].path;
            match from {
                Some((_, parent)) if !tree.file_differs(parent, file) => {}
                Some((_, parent)) if parent.files[file].path != *path => {
                    fast_import::push_delete(&mut text, &parent.files[file].path);
                    fast_import::push_file(&mut text, path, &tree.render(file));
                }
                _ => fast_import::push_file(&mut text, path, &tree.render(file)),
            }
        }
        text.push('\n');
        self.write(&text)?;
        self.subjects
            .push(message.lines().next().unwrap_or_default().to_owned());
        Ok(mark)
    }

    /// The initial commit on `main`: every file, unannotated.
    fn initial(&mut self) -> Result<(), String> {
        let spec = self.spec;
        let mut funcs = Vec::new();
        for f in 0..spec.files * spec.functions_per_file {
            let mids = 3 + self.rng.below(16);
            let mut lines = vec![Line {
                text: format!("{} {{", self.signature(f)),
                origin: 0,
            }];
            lines.extend(self.body(mids, 0));
            lines.push(Line {
                text: "}".to_owned(),
                origin: 0,
            });
            funcs.push(Rc::new(Func { lines }));
        }
        let files = (0..spec.files)
            .map(|i| {
                let path = self.new_path();
                Rc::new(FileState {
                    path,
                    order: (i * spec.functions_per_file..(i + 1) * spec.functions_per_file)
                        .collect(),
                })
            })
            .collect();
        let tree = Tree { funcs, files };
        let message = format!(
            "Start the service: {} modules\n\nThe first cut of every module, moved over from the prototype.\n",
            spec.files
        );
        self.main_mark = self.emit("refs/heads/main", &message, None, None, &tree)?;
        self.main = tree;
        self.remember_main();
        Ok(())
    }

    /// A file path not used before.
    fn new_path(&mut self) -> String {
        let free: Vec<usize> = (0..FILE_WORDS.len())
            .filter(|&w| !self.used_words[w])
            .collect();
        if free.is_empty() {
            let k = self.unique();
            return format!("src/{}_{k}.rs", self.rng.pick(FILE_WORDS));
        }
        let w = free[self.rng.below(free.len())];
        self.used_words[w] = true;
        format!("src/{}.rs", FILE_WORDS[w])
    }

    fn remember_main(&mut self) {
        self.recent.push((self.main_mark, self.main.clone()));
        if self.recent.len() > 6 {
            self.recent.remove(0);
        }
    }

    fn held_by_others(&self, t: Option<usize>, f: usize) -> bool {
        self.open
            .iter()
            .enumerate()
            .any(|(i, topic)| Some(i) != t && topic.held.contains(&f))
    }

    fn file_held(&self, file: usize) -> bool {
        self.open
            .iter()
            .any(|topic| topic.held_files.contains(&file))
    }

    // --- topics -------------------------------------------------------------

    fn start_topic(&mut self) {
        let id = self.next_topic;
        self.next_topic += 1;
        let mut purpose = Purpose::Changes;
        if self.renames_wanted.first().is_some_and(|&at| id >= at)
            && let Some(p) = self.plan_rename()
        {
            self.renames_wanted.remove(0);
            purpose = p;
        } else if self.moves_wanted.first().is_some_and(|&at| id >= at)
            && let Some(p) = self.plan_move()
        {
            self.moves_wanted.remove(0);
            purpose = p;
        }
        let (fork_mark, fork) = if purpose == Purpose::Changes && self.rng.percent(30) {
            let back = self.rng.below(self.recent.len());
            self.recent[back].clone()
        } else {
            (self.main_mark, self.main.clone())
        };
        let (planned, held, held_files) = match &purpose {
            Purpose::Changes => (1 + self.rng.below(4), vec![], vec![]),
            Purpose::Rename { file, .. } => (1, vec![], vec![*file]),
            Purpose::Move { func, to } => (1, vec![*func], vec![fork.file_of(*func), *to]),
        };
        self.open.push(Topic {
            id,
            purpose,
            tree: fork.clone(),
            fork,
            tip: fork_mark,
            planned,
            made: 0,
            held,
            held_files,
            revertible: Vec::new(),
        });
    }

    fn plan_rename(&mut self) -> Option<Purpose> {
        let files: Vec<usize> = (0..self.main.files.len())
            .filter(|&x| !self.file_held(x))
            .collect();
        if files.is_empty() {
            return None;
        }
        let file = files[self.rng.below(files.len())];
        let to = self.new_path();
        Some(Purpose::Rename { file, to })
    }

    fn plan_move(&mut self) -> Option<Purpose> {
        for _ in 0..50 {
            let func = self.rng.below(self.names.len());
            let from = self.main.file_of(func);
            let to = self.rng.below(self.main.files.len());
            if to == from
                || self.main.files[from].order.len() < 3
                || self.held_by_others(None, func)
                || self.file_held(from)
                || self.file_held(to)
            {
                continue;
            }
            return Some(Purpose::Move { func, to });
        }
        None
    }

    /// Whether topic `t` may change `f`: it already holds it, or nobody else
    /// does and `main` has not changed it since the fork.
    fn may_change(&self, t: usize, f: usize) -> bool {
        let topic = &self.open[t];
        topic.held.contains(&f)
            || (!self.held_by_others(Some(t), f)
                && Rc::ptr_eq(&topic.fork.funcs[f], &self.main.funcs[f]))
    }

    /// Up to 1–3 functions for the next commit of topic `t`, in at most two
    /// files.
    fn choose_functions(&mut self, t: usize) -> Vec<usize> {
        let want = match self.rng.below(100) {
            0..55 => 1,
            55..85 => 2,
            _ => 3,
        };
        let mut chosen: Vec<usize> = Vec::new();
        let mut files: Vec<usize> = Vec::new();
        for i in 0..want {
            for _ in 0..40 {
                let held = &self.open[t].held;
                let f = if i == 0 && !held.is_empty() && self.rng.percent(40) {
                    held[self.rng.below(held.len())]
                } else if i > 0 && self.rng.percent(65) {
                    let order = self.open[t].tree.files[files[0]].order.clone();
                    let sums: Vec<f64> = order
                        .iter()
                        .scan(0.0, |s, &g| {
                            *s += self.weight[g];
                            Some(*s)
                        })
                        .collect();
                    order[self.rng.weighted(&sums)]
                } else {
                    let heat = std::mem::take(&mut self.heat);
                    let f = self.rng.weighted(&heat);
                    self.heat = heat;
                    f
                };
                if chosen.contains(&f) || !self.may_change(t, f) {
                    continue;
                }
                let file = self.open[t].tree.file_of(f);
                if files.len() == 2 && !files.contains(&file) {
                    continue;
                }
                if !files.contains(&file) {
                    files.push(file);
                }
                chosen.push(f);
                break;
            }
        }
        if chosen.is_empty() {
            let n = self.names.len();
            let start = self.rng.below(n);
            chosen.extend(
                (0..n)
                    .map(|k| (start + k) % n)
                    .find(|&f| self.may_change(t, f)),
            );
        }
        chosen
    }

    /// The active items of `f` in `tree`: from commits that wrote one of
    /// its lines, not retired.
    fn active_items(&self, tree: &Tree, f: usize) -> Vec<usize> {
        let origins = tree.funcs[f].origins();
        self.regions_of[f]
            .iter()
            .filter(|(commit, _)| origins.contains(commit))
            .flat_map(|(_, items)| items.iter().copied())
            .filter(|&i| !self.retired[i])
            .collect()
    }

    /// The next commit of topic `t`.
    fn topic_commit(&mut self, t: usize) -> Result<(), String> {
        match self.open[t].purpose.clone() {
            Purpose::Rename { file, to } => return self.rename_commit(t, file, &to),
            Purpose::Move { func, to } => return self.move_commit(t, func, to),
            Purpose::Changes => {}
        }
        let seq = self.subjects.len();
        let chosen = self.choose_functions(t);
        if chosen.is_empty() {
            return Err("no function is free to change (a generator bug)".to_owned());
        }
        let annotated = self.rng.percent(85);
        let mut tree = self.open[t].tree.clone();
        let mut regions = Vec::new();
        let mut changed = Vec::new();
        let mut subject = String::new();
        let mut body = String::new();
        let mut any_rewrite = false;
        let mut planned = Vec::new();
        for (k, &f) in chosen.iter().enumerate() {
            let name = self.names[f].clone();
            // About 5% of edits in all: short functions get rewritten, long
            // ones mostly trimmed (`small_edit` keeps them under ~90 lines).
            let rewrite = self.rng.percent(if tree.funcs[f].lines.len() < 25 {
                12
            } else {
                2
            });
            self.corpus.edits += 1;
            let dependency = annotated && self.rng.percent(30);
            let callee = if dependency {
                let heat = std::mem::take(&mut self.heat);
                let mut g = self.rng.weighted(&heat);
                while g == f {
                    g = self.rng.weighted(&heat);
                }
                self.heat = heat;
                Some(g)
            } else {
                None
            };
            let old = Rc::clone(&tree.funcs[f]);
            let new = if rewrite {
                self.rewrite(&old, seq, callee)
            } else {
                self.small_edit(&old, seq, callee)
            };
            if rewrite {
                any_rewrite = true;
                self.corpus.rewrites += 1;
                let before = old.origins();
                let after = new.origins();
                let gone: Vec<usize> = self.regions_of[f]
                    .iter()
                    .filter(|(c, _)| before.contains(c) && !after.contains(c))
                    .flat_map(|(_, items)| items.iter().copied())
                    .collect();
                for i in gone {
                    self.corpus.rewritten_away.push(self.items[i].token.clone());
                }
            }
            let new = Rc::new(new);
            tree.funcs[f] = Rc::clone(&new);
            changed.push((f, old, new));
            let (what, intent) = if rewrite {
                REWRITE
            } else {
                // Not what the function's previous change did.
                let mut change = self.rng.below(CHANGES.len());
                while Some(change) == self.last_change[f] {
                    change = self.rng.below(CHANGES.len());
                }
                self.last_change[f] = Some(change);
                CHANGES[change]
            };
            // The subject and the intent speak of the same things.
            let slots = self.slots();
            let what = fill(what, &name, "", slots);
            let intent = fill(intent, &name, "", slots);
            if k == 0 {
                subject = format!("{name}: {what}");
                body.push_str(&intent);
                body.push(' ');
                let reason = *self.rng.pick(REASONS);
                body.push_str(&self.fill(reason, &name, ""));
            } else {
                body.push_str(&format!(" It also touches {name} to {what}."));
            }
            planned.push((f, intent, callee));
        }
        // Regions once every function is edited: an edit above `f` in the
        // same file moves its lines.
        if annotated {
            for (f, intent, callee) in planned {
                regions.push(self.region(&tree, f, intent, callee, true));
            }
        }
        let held = &mut self.open[t].held;
        for &f in &chosen {
            if !held.contains(&f) {
                held.push(f);
            }
        }
        let message = self.message(&subject, &body, &regions);
        let from = self.open[t].tip;
        let parent = self.open[t].tree.clone();
        let mark = self.emit(TOPIC_REF, &message, Some((from, &parent)), None, &tree)?;
        let topic = &mut self.open[t];
        topic.tip = mark;
        topic.tree = tree;
        topic.made += 1;
        let mut plain = !any_rewrite;
        if annotated {
            let note = self.note(seq, &subject, regions);
            plain &=
                note.corrections.is_empty() && note.regions.iter().all(|r| r.retires.is_empty());
            self.notes.push(note);
        }
        if plain {
            self.open[t].revertible.push(Revertible {
                commit: seq,
                subject,
                changed,
            });
        }
        Ok(())
    }

    /// The region of `f` (changed in `tree`) for the commit being made;
    /// retiring an earlier item of `f` now and then when `may_retire`.
    fn region(
        &mut self,
        tree: &Tree,
        f: usize,
        intent: String,
        callee: Option<usize>,
        may_retire: bool,
    ) -> RegionPlan {
        let seq = self.subjects.len();
        let name = self.names[f].clone();
        let enhanced = self.rng.percent(80);
        let mut retires = Vec::new();
        let mut constraints = Vec::new();
        let earlier = self.active_items(tree, f);
        if may_retire && !earlier.is_empty() && self.rng.percent(6) {
            let constraints_only: Vec<usize> = earlier
                .iter()
                .copied()
                .filter(|&i| self.items[i].kind == Kind::Constraint)
                .collect();
            let pool = if constraints_only.is_empty() || self.rng.percent(20) {
                &earlier
            } else {
                &constraints_only
            };
            let old = pool[self.rng.below(pool.len())];
            retires.push(self.items[old].text.clone());
            self.retired[old] = true;
            self.corpus
                .retired_by_note
                .push(self.items[old].token.clone());
        }
        let count = if self.rng.percent(30) { 2 } else { 1 };
        for _ in 0..count {
            let template = *self.rng.pick(CONSTRAINTS);
            let item = self.item(Kind::Constraint, template, &name, "");
            let source = if enhanced && self.rng.percent(85) {
                "author"
            } else {
                "inferred"
            };
            constraints.push((item, source));
        }
        let risk = self.rng.percent(40).then(|| {
            let template = *self.rng.pick(RISKS);
            self.item(Kind::Risk, template, &name, "")
        });
        let dependency = callee.map(|g| {
            let template = *self.rng.pick(DEPENDENCIES);
            let callee = self.names[g].clone();
            let item = self.item(Kind::Dependency, template, &name, &callee);
            let file = tree.files[tree.file_of(g)].path.clone();
            (file, callee, item)
        });
        let mut tags = vec![*self.rng.pick(TAGS)];
        if self.rng.percent(30) {
            let second = *self.rng.pick(TAGS);
            if second != tags[0] {
                tags.push(second);
            }
        }
        let reason = *self.rng.pick(REASONS);
        let reasoning = self.fill(reason, &name, "");
        let plan = RegionPlan {
            file: tree.files[tree.file_of(f)].path.clone(),
            func: f,
            lines: tree.range(f),
            intent,
            reasoning,
            constraints,
            risk,
            dependency,
            tags,
            retires,
        };
        self.regions_of[f].push((seq, plan.items()));
        plan
    }

    /// The note of commit `seq`, corrections decided.
    fn note(&mut self, seq: usize, subject: &str, regions: Vec<RegionPlan>) -> NotePlan {
        let mut corrections = Vec::new();
        if self.rng.percent(3) {
            let region = self.rng.below(regions.len());
            if self.rng.percent(50) {
                let constraints = &regions[region].constraints;
                let item = constraints[self.rng.below(constraints.len())].0;
                corrections.push(CorrectionPlan::Remove { region, item });
                self.retire_by_correction(item);
            } else {
                corrections.push(CorrectionPlan::Flag { region });
                for item in regions[region].items() {
                    self.retire_by_correction(item);
                }
            }
        }
        let (_, what) = subject.split_once(": ").unwrap_or(("", subject));
        let mut summary = format!("{}{}", what[..1].to_uppercase(), &what[1..]);
        let names: Vec<&str> = regions
            .iter()
            .map(|r| self.names[r.func].as_str())
            .collect();
        summary.push_str(&format!(" in {}.", names.join(" and ")));
        let task = self
            .rng
            .percent(25)
            .then(|| format!("Ticket {}: {what}", 100 + self.rng.below(900)));
        NotePlan {
            commit: seq,
            summary,
            task,
            enhanced: self.rng.percent(80),
            regions,
            corrections,
        }
    }

    fn retire_by_correction(&mut self, item: usize) {
        self.retired[item] = true;
        self.corpus
            .retired_by_correction
            .push(self.items[item].token.clone());
    }

    /// A commit message: subject, body paragraph, then one line per item.
    fn message(&self, subject: &str, body: &str, regions: &[RegionPlan]) -> String {
        let mut message = format!("{subject}\n\n{body}\n");
        if regions.iter().any(|r| !r.retires.is_empty()) {
            message.push_str(
                "\nThis supersedes an earlier rule on the same code; the rule that holds now is listed below.\n",
            );
        }
        let mut lines = String::new();
        for region in regions {
            for &(item, _) in &region.constraints {
                lines.push_str(&format!("Constraint: {}\n", self.items[item].text));
            }
            if let Some(item) = region.risk {
                lines.push_str(&format!("Risk: {}\n", self.items[item].text));
            }
            if let Some((_, _, item)) = &region.dependency {
                lines.push_str(&format!("Depends: {}\n", self.items[*item].text));
            }
        }
        if !lines.is_empty() {
            message.push('\n');
            message.push_str(&lines);
        }
        message
    }

    fn rename_commit(&mut self, t: usize, file: usize, to: &str) -> Result<(), String> {
        let mut tree = self.open[t].tree.clone();
        let from = tree.files[file].path.clone();
        tree.files[file] = Rc::new(FileState {
            path: to.to_owned(),
            order: tree.files[file].order.clone(),
        });
        let message = format!(
            "Rename {from} to {to}\n\nThe module outgrew its old name; no code changes, only the path.\n"
        );
        let parent = self.open[t].tree.clone();
        let mark = self.emit(
            TOPIC_REF,
            &message,
            Some((self.open[t].tip, &parent)),
            None,
            &tree,
        )?;
        self.corpus.renames.push((from, to.to_owned()));
        let topic = &mut self.open[t];
        topic.tip = mark;
        topic.tree = tree;
        topic.made += 1;
        Ok(())
    }

    fn move_commit(&mut self, t: usize, func: usize, to: usize) -> Result<(), String> {
        let seq = self.subjects.len();
        let mut tree = self.open[t].tree.clone();
        let from = tree.file_of(func);
        let before = self.active_items(&tree, func);
        for &i in &before {
            self.corpus.moved_away.push(self.items[i].token.clone());
        }
        let moved = Func {
            lines: tree.funcs[func]
                .lines
                .iter()
                .map(|l| Line {
                    text: l.text.clone(),
                    origin: seq,
                })
                .collect(),
        };
        tree.funcs[func] = Rc::new(moved);
        let mut source = tree.files[from].order.clone();
        source.retain(|&g| g != func);
        tree.files[from] = Rc::new(FileState {
            path: tree.files[from].path.clone(),
            order: source,
        });
        let mut target = tree.files[to].order.clone();
        target.push(func);
        tree.files[to] = Rc::new(FileState {
            path: tree.files[to].path.clone(),
            order: target,
        });
        let name = self.names[func].clone();
        let (from_path, to_path) = (tree.files[from].path.clone(), tree.files[to].path.clone());
        let intent = format!(
            "Move {name} from {from_path} to {to_path}, next to its only callers, without changing a line of its body."
        );
        let mut region = self.region(&tree, func, intent, None, false);
        // A fresh constraint saying why it lives here now.
        let template = "{f} now lives beside its callers in this module; moving it back would reintroduce the import cycle";
        let item = self.item(Kind::Constraint, template, &name, "");
        region.constraints.insert(0, (item, "author"));
        if let Some(entry) = self.regions_of[func].last_mut() {
            entry.1 = region.items();
        }
        let subject = format!("Move {name} from {from_path} to {to_path}");
        let body = "Only its callers in the new module use it, and keeping it in the old one forced an import cycle.";
        let message = self.message(&subject, body, std::slice::from_ref(&region));
        let parent = self.open[t].tree.clone();
        let mark = self.emit(
            TOPIC_REF,
            &message,
            Some((self.open[t].tip, &parent)),
            None,
            &tree,
        )?;
        let note = NotePlan {
            commit: seq,
            summary: format!("Move {name} to {to_path} beside its callers."),
            task: None,
            enhanced: true,
            regions: vec![region],
            corrections: Vec::new(),
        };
        self.notes.push(note);
        self.corpus.moves.push((name, from_path, to_path));
        let topic = &mut self.open[t];
        topic.tip = mark;
        topic.tree = tree;
        topic.made += 1;
        topic.held.push(func);
        Ok(())
    }

    /// A direct, unannotated commit on `main` changing 1–2 functions no open
    /// topic holds.
    fn chore(&mut self) -> Result<(), String> {
        let seq = self.subjects.len();
        let mut tree = self.main.clone();
        let mut chosen = Vec::new();
        for _ in 0..1 + self.rng.below(2) {
            for _ in 0..40 {
                let f = self.rng.below(self.names.len());
                if !chosen.contains(&f) && !self.held_by_others(None, f) {
                    chosen.push(f);
                    break;
                }
            }
        }
        if chosen.is_empty() {
            return Ok(());
        }
        for &f in &chosen {
            self.corpus.edits += 1;
            let new = self.small_edit(&tree.funcs[f].clone(), seq, None);
            tree.funcs[f] = Rc::new(new);
        }
        let name = self.names[chosen[0]].clone();
        let what = *self.rng.pick(CHORES);
        let subject = format!("{name}: {}", self.fill(what, &name, ""));
        let body = self.fill(CHORE_BODY, &name, "");
        let message = format!("{subject}\n\n{body}\n");
        let main = self.main.clone();
        self.main_mark = self.emit(
            "refs/heads/main",
            &message,
            Some((self.main_mark, &main)),
            None,
            &tree,
        )?;
        self.main = tree;
        self.remember_main();
        Ok(())
    }

    /// Merges topic `t` into `main` with a `--no-ff` merge commit.
    fn merge(&mut self, t: usize) -> Result<(), String> {
        let topic = self.open.remove(t);
        let mut tree = self.main.clone();
        for f in 0..tree.funcs.len() {
            if !Rc::ptr_eq(&topic.tree.funcs[f], &topic.fork.funcs[f]) {
                if !Rc::ptr_eq(&self.main.funcs[f], &topic.fork.funcs[f]) {
                    return Err(format!(
                        "topic-{} and main both changed {} (a generator bug)",
                        topic.id, self.names[f]
                    ));
                }
                tree.funcs[f] = Rc::clone(&topic.tree.funcs[f]);
            }
        }
        for x in 0..tree.files.len() {
            if !Rc::ptr_eq(&topic.tree.files[x], &topic.fork.files[x]) {
                if !Rc::ptr_eq(&self.main.files[x], &topic.fork.files[x]) {
                    return Err(format!(
                        "topic-{} and main both changed file {x} (a generator bug)",
                        topic.id
                    ));
                }
                tree.files[x] = Rc::clone(&topic.tree.files[x]);
            }
        }
        let message = format!("Merge branch 'topic-{}'", topic.id);
        let main = self.main.clone();
        self.main_mark = self.emit(
            "refs/heads/main",
            &message,
            Some((self.main_mark, &main)),
            Some(topic.tip),
            &tree,
        )?;
        self.main = tree;
        self.remember_main();
        self.merges += 1;
        self.merged_topics += 1;
        self.revertible.extend(topic.revertible);
        Ok(())
    }

    /// Reverts on `main` the newest merged topic commit whose functions
    /// nobody changed since (preferring annotated ones); false when none
    /// qualifies.
    fn revert(&mut self) -> Result<bool, String> {
        let noted: BTreeSet<usize> = self.notes.iter().map(|n| n.commit).collect();
        let found = (0..self.revertible.len()).rev().find(|&i| {
            let candidate = &self.revertible[i];
            noted.contains(&candidate.commit)
                && candidate.changed.iter().all(|(f, _, after)| {
                    Rc::ptr_eq(&self.main.funcs[*f], after) && !self.held_by_others(None, *f)
                })
        });
        let Some(i) = found else {
            return Ok(false);
        };
        let candidate = self.revertible.remove(i);
        let seq = self.subjects.len();
        let mut tree = self.main.clone();
        for (f, before, after) in &candidate.changed {
            let kept: std::collections::HashMap<&str, usize> = after
                .lines
                .iter()
                .map(|l| (l.text.as_str(), l.origin))
                .collect();
            let lines = before
                .lines
                .iter()
                .map(|l| Line {
                    text: l.text.clone(),
                    origin: kept.get(l.text.as_str()).copied().unwrap_or(seq),
                })
                .collect();
            tree.funcs[*f] = Rc::new(Func { lines });
            for (commit, items) in &self.regions_of[*f] {
                if *commit == candidate.commit {
                    for &item in items {
                        self.corpus
                            .reverted_away
                            .push(self.items[item].token.clone());
                    }
                }
            }
        }
        let ids =
            fast_import::get_marks(&mut self.out, &mut self.answers, &[candidate.commit + 1])?;
        let message = format!(
            "Revert \"{}\"\n\nThis reverts commit {}.\n\nIt broke the nightly {} run; back it out until it is fixed.\n",
            candidate.subject,
            ids[0],
            self.rng.pick(NOUNS)
        );
        let main = self.main.clone();
        self.main_mark = self.emit(
            "refs/heads/main",
            &message,
            Some((self.main_mark, &main)),
            None,
            &tree,
        )?;
        self.main = tree;
        self.remember_main();
        self.corpus.reverts += 1;
        Ok(true)
    }

    // --- notes --------------------------------------------------------------

    fn write_notes(&mut self, ids: &[String]) -> Result<(), String> {
        let when = EPOCH + self.subjects.len() as i64 * TICK;
        let mut text = String::new();
        Commit::notes(when).push_header(&mut text);
        self.write(&text)?;
        for (note, id) in self.notes.iter().zip(ids) {
            let json = self.note_json(note, id).to_string();
            let mut text = String::new();
            fast_import::push_note(&mut text, &format!(":{}", note.commit + 1), &json);
            self.out
                .write_all(text.as_bytes())
                .map_err(|e| format!("writing to git fast-import: {e}"))?;
        }
        self.write("\n")?;
        self.out
            .flush()
            .map_err(|e| format!("writing to git fast-import: {e}"))
    }

    fn note_json(&self, note: &NotePlan, id: &str) -> Value {
        let when = EPOCH + note.commit as i64 * TICK;
        let regions: Vec<Value> = note
            .regions
            .iter()
            .map(|r| {
                let name = &self.names[r.func];
                let mut region = json!({
                    "file": r.file,
                    "ast_anchor": {"type": "function", "name": name, "signature": self.signature(r.func)},
                    "lines": {"start": r.lines.0, "end": r.lines.1},
                    "intent": r.intent,
                    "reasoning": r.reasoning,
                    "constraints": r.constraints.iter().map(|&(i, source)| json!({"text": self.items[i].text, "source": source})).collect::<Vec<_>>(),
                    "tags": r.tags,
                });
                if let Some(i) = r.risk {
                    region["risk_notes"] = json!(self.items[i].text);
                }
                if let Some((file, anchor, i)) = &r.dependency {
                    region["semantic_dependencies"] =
                        json!([{"file": file, "anchor": anchor, "nature": self.items[*i].text}]);
                }
                if !r.retires.is_empty() {
                    region["retires"] = json!(r.retires);
                }
                region
            })
            .collect();
        let mut value = json!({
            "$schema": "ultragit/v1",
            "commit": id,
            "timestamp": rfc3339(when),
            "task": note.task,
            "summary": note.summary,
            "context_level": if note.enhanced { "enhanced" } else { "inferred" },
            "regions": regions,
            "cross_cutting": [],
            "provenance": {"operation": "initial", "original_annotations_preserved": false},
        });
        if !note.corrections.is_empty() {
            let stamp = rfc3339(when + 3 * 86_400);
            let corrections: Vec<Value> = note
                .corrections
                .iter()
                .enumerate()
                .map(|(k, c)| {
                    let pick = |list: &[&str]| {
                        list[(note.commit + k) % list.len()]
                            .replace("{n1}", NOUNS[note.commit % NOUNS.len()])
                    };
                    match c {
                        CorrectionPlan::Remove { region, item } => {
                            let r = &note.regions[*region];
                            json!({
                                "target": {"file": r.file, "anchor": self.names[r.func]},
                                "kind": "remove",
                                "field": "constraints",
                                "value": self.items[*item].text,
                                "reason": pick(REMOVE_REASONS),
                                "author": corrector(),
                                "timestamp": stamp,
                            })
                        }
                        CorrectionPlan::Flag { region } => {
                            let r = &note.regions[*region];
                            json!({
                                "target": {"file": r.file, "anchor": self.names[r.func]},
                                "kind": "flag",
                                "reason": pick(FLAG_REASONS),
                                "author": corrector(),
                                "timestamp": stamp,
                            })
                        }
                    }
                })
                .collect();
            value["corrections"] = json!(corrections);
        }
        value
    }

    fn finish_corpus(&mut self) {
        let corpus = &mut self.corpus;
        corpus.commits = self.subjects.len();
        corpus.merges = self.merges;
        corpus.notes = self.notes.len();
        corpus.items = self.items.len();
        let mut units = Vec::new();
        let mut active = Vec::new();
        for file in &self.main.files {
            for &f in &file.order {
                units.push((file.path.clone(), self.names[f].clone()));
                let origins = self.main.funcs[f].origins();
                let mut tokens: Vec<String> = self.regions_of[f]
                    .iter()
                    .filter(|(c, _)| origins.contains(c))
                    .flat_map(|(_, items)| items.iter())
                    .filter(|&&i| !self.retired[i])
                    .map(|&i| self.items[i].token.clone())
                    .collect();
                tokens.sort();
                active.push(tokens);
            }
        }
        corpus.units = units;
        corpus.modelled_active = active;
    }
}

/// What fills a template's `{n1}`, `{n2}` and `{k}`.
type Slots = (&'static str, &'static str, usize);

/// `template` with `{f}` and `{g}` replaced by the given names and `{n1}`,
/// `{n2}`, `{k}` by `slots`.
fn fill(template: &str, f: &str, g: &str, (n1, n2, k): Slots) -> String {
    template
        .replace("{f}", f)
        .replace("{g}", g)
        .replace("{n1}", n1)
        .replace("{n2}", n2)
        .replace("{k}", &k.to_string())
}

/// `when` (seconds since the epoch) as RFC 3339 in UTC, e.g.
/// `2024-01-01T00:00:00Z`.
fn rfc3339(when: i64) -> String {
    let days = when.div_euclid(86_400);
    let secs = when.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// The proleptic Gregorian date of `days` since 1970-01-01 (Howard
/// Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_of_the_epoch_and_a_leap_day() {
        assert_eq!(rfc3339(EPOCH), "2024-01-01T00:00:00Z");
        assert_eq!(rfc3339(EPOCH + 59 * 86_400 + 3_661), "2024-02-29T01:01:01Z");
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    }

    #[test]
    fn every_template_makes_a_sentence_of_12_to_25_words() {
        let mut generator = Generator::new(
            Vec::new(),
            std::io::empty(),
            &DeliverySpec {
                files: 2,
                functions_per_file: 2,
                topics: 1,
                seed: 7,
            },
        );
        for (kind, templates) in [
            (Kind::Constraint, CONSTRAINTS),
            (Kind::Risk, RISKS),
            (Kind::Dependency, DEPENDENCIES),
        ] {
            for template in templates {
                let item = generator.item(kind, template, "parse_header_17", "load_cursor_3");
                let text = &generator.items[item].text;
                let words = text.split_whitespace().count();
                assert!((12..=25).contains(&words), "{words} words: {text}");
                assert!(!text.contains(['"', '\\', '{', '}']), "{text}");
            }
        }
        for (_, intent) in CHANGES.iter().chain([&REWRITE]) {
            let text = generator.fill(intent, "parse_header_17", "");
            let words = text.split_whitespace().count();
            assert!((15..=25).contains(&words), "{words} words: {text}");
            assert!(text.contains("parse_header_17"), "{text}");
        }
    }
}
