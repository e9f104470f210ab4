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
//! [`EPOCH`](crate::EPOCH)` + i * `[`TICK`](crate::TICK).
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
//!
//! **Layout.** The public API is here; `words` holds the vocabulary and
//! sentence templates, `rng` the PRNG, `date` RFC 3339 dates, `model` the
//! trees of functions and files, `plan` the items, regions, notes and
//! topics decided on, and `generator` the generator itself, one submodule
//! per phase (content, topics, `main`'s own commits, notes).

mod date;
mod generator;
mod model;
mod plan;
mod rng;
mod words;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::fast_import;
use crate::{AUTHOR_EMAIL, AUTHOR_NAME, hermetic_git};

use generator::Generator;

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
