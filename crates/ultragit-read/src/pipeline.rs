//! The seven stages of spec 003 §4, run by [`GitReadPipeline`]: one method
//! each, each returning what the next one needs.
//!
//! 1. *resolve*: the scopes of each file asked for — the whole file, a line
//!    range, or the units an anchor resolves to in today's outline; an anchor
//!    the outline does not have (a macro-defined test such as `rgtest!(name,
//!    …)`, a file without a grammar) or matches only fuzzily resolves through
//!    the notes instead: the regions of the file's blamed commits that name it,
//!    carried to today's lines by blame, and the output says so
//!    (`resolved_by: "notes"`);
//! 2. *blame*: each scope at HEAD;
//! 3. *fetch notes*: the notes of the blamed commits that pass `--since` and
//!    the context level;
//! 4. *match regions*: the regions of those notes that concern a scope, in
//!    today's lines; a region whose lines cannot exist is named in a warning;
//! 5. *score*: the confidence of each region (by its commit's date, see
//!    [`crate::score`]), its related annotations followed, and the later
//!    commits without a note that changed its lines (`changed_since`);
//! 6. *rank*: best first, filtered by confidence and tags, capped;
//! 7. *assemble*: what depends on the scopes, the cross-cutting concerns that
//!    mention them (from every note the read loaded, so a concern reaches all
//!    its members), the query's echo and the counts — then trimmed to
//!    `--max-tokens` ([`crate::trim`]).
//!
//! **Line coordinates.** A region's `lines` are in the coordinates of the commit
//! that wrote it. Blame says, for each commit, which of its own lines survive and
//! where they sit now (`original_*` → `final_*`). Overlap with the query is judged
//! in the commit's own coordinates. A returned region's `lines` are today's: the
//! span of its surviving lines, widened to its unit in today's outline when a unit
//! of the region's name encloses them (blame attributes the region's unchanged
//! lines to older commits, so the surviving span alone can be too narrow). A region
//! none of whose lines survive in the blamed range is not current and is not
//! returned — except a region matched by anchor name, whose subject still exists
//! today: it is reported at the anchor's current lines.
//!
//! **Processes.** At most one `git blame` per resolved scope (an anchor
//! resolved through the notes blames its whole file once, and its scope is cut
//! from that); notes, commits,
//! trees and outlines are read in-process, so the number of processes does not
//! grow with history.
//!
//! **Blame cache.** Blame is most of a read's time on a long history (it is
//! `git blame` itself). By default the pipeline remembers blame results in
//! `ultragit/cache/blame/` of the repository's git directory
//! ([`gitctx::blame_cache`]): a later read of lines already blamed at the same
//! HEAD starts no process, and one of other lines blames only those. The
//! answers are the same as without the cache; a new commit is a new key. A
//! cache that cannot be written (a read-only repository) only costs speed.
//! [`GitReadPipeline::with_blame_cache`] turns it off or moves it.
//!
//! **Blame carried ahead.** After new commits, the cached blame of a file at
//! an older HEAD is carried forward to HEAD ([`BlameCache::carry_forward`]:
//! the new commits' diffs of the file, in-process; no git process). A read
//! starts that on a thread of its own as it begins, for the files it names
//! (at most [`CARRY_AHEAD_FILES`]), so that the steps are diffed while the
//! read parses the file and resolves its scopes; the first blame the read
//! asks for waits for it, then finds HEAD's blame in the cache. The answer is
//! the same: the carried blame is stored under HEAD's key exactly as if the
//! blame had carried it.
//!
//! **Blamed ahead.** On a fresh clone nothing is cached, and a large file's
//! parse costs about as much as its blame. So the same thread blames, through
//! the cache, what the query will need before the outline says exactly what
//! that is: a whole file for a query of files, and for an anchor the lines
//! its definition seems to span in the file's text (the `speculate` module). The
//! read's own blame then finds those lines known and blames only what the
//! guess missed; a guess costs time when wrong, never exactness (blame
//! decides each line on its own, whatever range it is asked for).
//!
//! **Outline cache.** Once blame is cached, parsing the file read is most of
//! what is left (about 130 ms for an 8,000-line Rust file). The pipeline
//! keeps each file's outline in `ultragit/cache/outline/`
//! ([`crate::outline_cache`]), keyed by the blob it was made from: a read of
//! the same content parses nothing, and one of a later version carries the
//! cached outline forward ([`outline::carry`], parsing only the changed
//! stretches), or parses the file when that cannot be done exactly. The
//! outlines, and so the answers, are the same as without the cache.
//! [`GitReadPipeline::with_outline_cache`] turns it off or moves it.
//!
//! Part of the published API for these rules; its items are re-exported at
//! the crate root.

use std::collections::{HashMap, HashSet, VecDeque};
use std::rc::Rc;

use chrono::{DateTime, Utc};
use gitctx::{BlameCache, BlameEngine, BlameEntry, BlameOptions, ObjectId, Repo};
use outline::{MatchKind, OutlineError, Unit};
use ultragit_schema::{
    Annotation, ConfidenceFactors, CrossCuttingEntry, DependencyEntry, LineRange, QueryEcho,
    READ_SCHEMA_V1, ReadOutput, ReadStats, RegionAnnotation, ResolvedRelated, SCHEMA_V1,
    ScoredRegion, UnannotatedChange,
};

use crate::config::ReadConfig;
use crate::corrections;
use crate::decisions;
use crate::error::ReadError;
use crate::index::{DepsIndex, IndexedDependency};
use crate::outline_cache::OutlineCache;
use crate::query::{ReadQuery, SinceFilter, validate_range};
use crate::rank::{cap, group_by_file, rank};
use crate::regions::{
    Dropped, Fetched, Matched, Matches, clip_blame, match_regions, surviving_lines,
};
use crate::scope::{
    FileAtHead, NamedSpan, Resolved, ResolvedScope, dedup, resolve_scope, scopes_from_notes,
};
use crate::score::{
    MatchType, round3, rounded, score_anchor_stability, score_context_level, score_provenance,
    score_recency, score_staleness,
};
use crate::speculate;
use crate::trim;

/// The notes ref ultragit reads and writes.
pub const NOTES_REF: &str = "refs/notes/ultragit";

/// The hint given when the repository has no ultragit notes at all (spec 003 §5).
pub const NO_NOTES_HINT: &str = "No Ultragit annotations found. Run 'ultragit init' to set up.";

/// The read pipeline (spec 003 §3.3), composable for testing.
pub trait ReadPipeline {
    fn execute(&self, query: &ReadQuery) -> Result<ReadOutput, ReadError>;
}

/// The read pipeline over a real repository.
#[derive(Debug)]
pub struct GitReadPipeline {
    repo: Repo,
    config: ReadConfig,
    engine: BlameEngine,
    blame_cache: Option<BlameCache>,
    outline_cache: Option<OutlineCache>,
}

/// What stage 3 found: the notes that passed the filters.
struct FetchedNotes {
    /// How many distinct commits blame named.
    commits_examined: u32,
    fetched: Vec<Fetched>,
}

/// What stage 5 found: every matched region scored, in no particular order.
struct Scored {
    regions: Vec<ScoredRegion>,
    /// Related annotations resolved, over all regions.
    related_hops: u32,
}

/// How many of the files a query names have their cached blame carried to
/// HEAD ahead of the read (see the module docs).
pub const CARRY_AHEAD_FILES: usize = 8;

/// How a read found the blame of one file: what
/// [`GitReadPipeline::execute_traced`] reports, for `ultragit read
/// --verbose`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlameRoute {
    /// The file (repository-relative).
    pub path: String,
    /// Carried to HEAD ahead of the read (from the blame cache), or `None`.
    pub carried_ahead: Option<gitctx::CacheOutcome>,
    /// The read's own blame of the lines it needed through the cache (`None`
    /// without the cache, or when a whole-file blame was at hand).
    pub blamed: Option<gitctx::CacheOutcome>,
}

impl BlameRoute {
    /// The git blame processes run for the file, ahead of the read and by it.
    fn processes(&self) -> u32 {
        [&self.carried_ahead, &self.blamed]
            .into_iter()
            .flatten()
            .map(|o| o.git_processes)
            .sum()
    }

    /// One line saying what happened, e.g. `src/lib.rs: carried from
    /// 1a2b3c4d over 719 commits (720 walked, 64 diffs, 257 lines met, 501
    /// the walk's own); lines blamed by git: none`.
    pub fn describe(&self) -> String {
        let mut text = format!("{}: ", self.path);
        let carried = [&self.carried_ahead, &self.blamed]
            .into_iter()
            .flatten()
            .find_map(|o| Some((o, o.carried_from?)));
        match carried {
            Some((outcome, (from, steps))) => {
                text.push_str(&format!(
                    "carried from {} ({steps} commits back)",
                    &from.to_hex()[..8]
                ));
                if let Some(walk) = &outcome.carry {
                    text.push_str(&format!(
                        ": {} commits walked, {} diffs, {} lines met a cached blame, {} decided by the walk, {} left to git{}",
                        walk.commits,
                        walk.diffs,
                        walk.met,
                        walk.own,
                        walk.unknown,
                        match (walk.stopped_by_cost, walk.over_budget) {
                            (Some(stop), _) => format!(
                                " (stopped by the cost model: after {} ms the walk was on course \
                                 for about {} ms, more than the {} ms the last fresh blame of the \
                                 file took)",
                                stop.spent_ms, stop.predicted_ms, stop.blame_ms
                            ),
                            (None, true) => " (the walk's budget ran out)".to_owned(),
                            (None, false) => String::new(),
                        }
                    ));
                }
            }
            None => {
                let served = self.blamed.is_some() && self.processes() == 0;
                text.push_str(if served {
                    "served from the cache at HEAD (blamed or carried there before)"
                } else {
                    "not carried (nothing cached at HEAD, and no cached blame of the file met its lines)"
                });
            }
        }
        text.push_str(&match (&self.blamed, self.processes()) {
            (None, _) => "; blamed without the cache".to_owned(),
            (Some(_), 0) => "; no git blame run".to_owned(),
            (Some(_), n) => format!("; {n} git blame run for the lines not known"),
        });
        text
    }
}

/// What the carrying ahead did, per file.
type CarryOutcomes = Vec<(String, Option<gitctx::CacheOutcome>)>;

/// What the thread ahead of a read does with each file ([`CarryAhead::start`]).
enum Ahead {
    /// Carries the cached blame forward to HEAD (a query for lines).
    Carry,
    /// Blames the whole file at HEAD through the cache (a query for files).
    Whole(ObjectId),
    /// Carries, then blames the lines the anchor seems to span at HEAD
    /// through the cache.
    Anchor(ObjectId, String),
}

/// A file larger than this is not scanned for an anchor's definition ahead
/// of the read (its blame then waits for the outline).
const MAX_SPECULATED_BYTES: usize = 16 << 20;

/// The thread carrying cached blames forward to HEAD while a read begins;
/// joined before the read's first blame, and when dropped.
struct CarryAhead(std::cell::Cell<Option<std::thread::JoinHandle<CarryOutcomes>>>);

impl CarryAhead {
    /// Starts carrying `cache`'s blames of `paths` forward to HEAD of the
    /// repository whose working tree is `root` (opened again: a repository
    /// handle is not shared between threads). Best effort: whatever fails
    /// only leaves the read to blame as it would have.
    ///
    /// With [`Ahead::Whole`] (a query for whole files) it blames them
    /// through the cache instead, at HEAD — carried when it can be, else by
    /// git — so that the blame runs while the read parses the files, and the
    /// read's own blame finds every line cached. With [`Ahead::Anchor`] it
    /// carries the file forward, then does the same for the lines the
    /// anchor's definition seems to span in each file's text ([`speculate`]):
    /// found known when the carry decided them, blamed by git (only those not
    /// known) otherwise; a file where no definition is seen is only carried.
    fn start(
        cache: BlameCache,
        root: std::path::PathBuf,
        paths: Vec<String>,
        ahead: Ahead,
    ) -> CarryAhead {
        let carry = move || {
            let Ok(repo) = Repo::open(&root) else {
                return Vec::new();
            };
            if !matches!(ahead, Ahead::Carry)
                && paths.iter().any(|path| !cache.has_head_entry(&repo, path))
            {
                // A blame is likely to run, and it needs git's version: asked
                // meanwhile (a warm read asks nothing of git).
                gitctx::prefetch_git_version();
            }
            paths
                .into_iter()
                .map(|path| {
                    let lines = match &ahead {
                        Ahead::Carry => None,
                        Ahead::Whole(_) => Some(None),
                        Ahead::Anchor(head, anchor) => repo
                            .file_at_most(&head.to_hex(), &path, MAX_SPECULATED_BYTES)
                            .ok()
                            .flatten()
                            .and_then(|bytes| {
                                speculate::guess_lines(
                                    &path,
                                    &String::from_utf8_lossy(&bytes),
                                    anchor,
                                )
                            })
                            .map(Some),
                    };
                    let carried = match &ahead {
                        Ahead::Whole(_) => None,
                        _ => cache.carry_forward(&repo, &path),
                    };
                    let blamed = match (lines, &ahead) {
                        (Some(lines), Ahead::Whole(head) | Ahead::Anchor(head, _)) => {
                            let options = BlameOptions {
                                rev: Some(head.to_hex()),
                                lines,
                                engine: BlameEngine::Cli,
                            };
                            repo.blame_cached_outcome(&path, &options, &cache)
                                .ok()
                                .map(|(_, outcome)| outcome)
                        }
                        _ => None,
                    };
                    let outcome = match (carried, blamed) {
                        (Some(mut carried), Some(blamed)) => {
                            carried.git_processes += blamed.git_processes;
                            Some(carried)
                        }
                        (carried, blamed) => carried.or(blamed),
                    };
                    (path, outcome)
                })
                .collect()
        };
        CarryAhead(std::cell::Cell::new(
            std::thread::Builder::new().spawn(carry).ok(),
        ))
    }

    /// Whether the thread is still to be joined.
    fn pending(&self) -> bool {
        let handle = self.0.take();
        let pending = handle.is_some();
        self.0.set(handle);
        pending
    }

    /// Waits for the carrying to end; what it did, the first time.
    fn join(&self) -> CarryOutcomes {
        match self.0.take() {
            // A panic there only lost the carrying: the read blames as usual.
            Some(handle) => handle.join().unwrap_or_default(),
            None => Vec::new(),
        }
    }
}

impl Drop for CarryAhead {
    fn drop(&mut self) {
        let _ = self.join();
    }
}

/// Per-query state shared by the stages.
struct Run<'p> {
    pipeline: &'p GitReadPipeline,
    head: ObjectId,
    head_time: DateTime<Utc>,
    warnings: Vec<String>,
    /// Parsed notes by commit hex (`None`: no note, or a malformed one).
    notes: HashMap<String, Option<Rc<Annotation>>>,
    /// Outlines at HEAD by path (`None`: missing file or no grammar).
    outlines: HashMap<String, Option<Rc<Vec<Unit>>>>,
    /// Anchor stability by (file, anchor, signature, kind of match): many regions
    /// (one per commit that touched a unit) share them.
    stability: HashMap<(String, String, Option<String>, u8), f64>,
    /// Commits read for their dates and subjects (`None`: not readable).
    commits: HashMap<ObjectId, Option<Rc<CommitMeta>>>,
    /// `--since` as a point in time: annotated commits before it are left out.
    cutoff: Option<DateTime<Utc>>,
    /// Whole-file blames stage 1 needed (anchors resolved through the notes).
    file_blames: HashMap<String, Vec<BlameEntry>>,
    /// The other paths each scope's blame names (the file's names before
    /// renames), for `dependencies_on_this`.
    blamed_paths: HashMap<String, Vec<String>>,
    notes_ref_exists: bool,
    /// The notes index, once opened.
    index: Option<Rc<DepsIndex>>,
    /// Cached blames being carried forward to HEAD (see the module docs).
    carry_ahead: CarryAhead,
    /// How each file's blame was found, in the order asked.
    routes: std::cell::RefCell<Vec<BlameRoute>>,
}

/// What a read needs of a commit besides its note.
struct CommitMeta {
    time: DateTime<Utc>,
    summary: String,
}

impl GitReadPipeline {
    /// The pipeline for the repository containing `path`, with its configuration
    /// (spec 003 §6).
    pub fn open(path: impl AsRef<std::path::Path>) -> Result<GitReadPipeline, ReadError> {
        let path = path.as_ref();
        let repo = Repo::discover(path).map_err(|err| match err {
            gitctx::Error::NotARepository { .. } | gitctx::Error::BareRepository { .. } => {
                ReadError::NotARepository {
                    path: path.display().to_string(),
                }
            }
            other => ReadError::Git(other),
        })?;
        GitReadPipeline::new(repo)
    }

    /// The pipeline for `repo`, with its configuration.
    pub fn new(repo: Repo) -> Result<GitReadPipeline, ReadError> {
        let config = ReadConfig::load(&repo)?;
        Ok(GitReadPipeline::with_config(repo, config))
    }

    /// The pipeline for `repo` with an explicit configuration.
    pub fn with_config(repo: Repo, config: ReadConfig) -> GitReadPipeline {
        let blame_cache = Some(GitReadPipeline::default_blame_cache(&repo));
        let outline_cache = Some(GitReadPipeline::default_outline_cache(&repo));
        GitReadPipeline {
            repo,
            config,
            engine: BlameEngine::default(),
            blame_cache,
            outline_cache,
        }
    }

    /// Uses another blame engine. Part of the published API: a caller may
    /// choose libgit2's blame (`gitctx::BlameEngine`); our binaries keep the
    /// default.
    pub fn with_blame_engine(mut self, engine: BlameEngine) -> GitReadPipeline {
        self.engine = engine;
        self
    }

    /// Uses `cache` for blame results, or none (`None`: every read runs
    /// `git blame`). The default is [`GitReadPipeline::default_blame_cache`].
    pub fn with_blame_cache(mut self, cache: Option<BlameCache>) -> GitReadPipeline {
        self.blame_cache = cache;
        self
    }

    /// The blame cache in use, if any.
    pub fn blame_cache(&self) -> Option<&BlameCache> {
        self.blame_cache.as_ref()
    }

    /// The default blame cache of `repo`: `ultragit/cache/blame/` in its
    /// common git directory (shared by its worktrees).
    pub fn default_blame_cache(repo: &Repo) -> BlameCache {
        BlameCache::new(
            repo.common_dir()
                .join("ultragit")
                .join("cache")
                .join("blame"),
        )
    }

    /// Uses `cache` for the outlines of the files read, or none (`None`:
    /// every read parses them). The default is
    /// [`GitReadPipeline::default_outline_cache`].
    pub fn with_outline_cache(mut self, cache: Option<OutlineCache>) -> GitReadPipeline {
        self.outline_cache = cache;
        self
    }

    /// The outline cache in use, if any.
    pub fn outline_cache(&self) -> Option<&OutlineCache> {
        self.outline_cache.as_ref()
    }

    /// The default outline cache of `repo`: `ultragit/cache/outline/` in its
    /// common git directory (shared by its worktrees).
    pub fn default_outline_cache(repo: &Repo) -> OutlineCache {
        OutlineCache::new(
            repo.common_dir()
                .join("ultragit")
                .join("cache")
                .join("outline"),
        )
    }

    /// The repository.
    pub fn repo(&self) -> &Repo {
        &self.repo
    }

    /// The configuration in use.
    pub fn config(&self) -> &ReadConfig {
        &self.config
    }

    /// True when `path` (repository-relative) is a file at HEAD.
    pub fn file_exists_at_head(&self, path: &str) -> bool {
        matches!(self.repo.file_at_opt("HEAD", path), Ok(Some(_)))
    }
}

impl ReadPipeline for GitReadPipeline {
    fn execute(&self, query: &ReadQuery) -> Result<ReadOutput, ReadError> {
        Ok(self.execute_traced(query)?.0)
    }
}

impl GitReadPipeline {
    /// [`ReadPipeline::execute`], saying besides how each file's blame was
    /// found (carried from the cache, and how far; what git blamed).
    pub fn execute_traced(
        &self,
        query: &ReadQuery,
    ) -> Result<(ReadOutput, Vec<BlameRoute>), ReadError> {
        validate_query(query)?;
        let mut run = Run::start(self, &query.files[0])?;
        let output = run.execute(query)?;
        Ok((output, run.routes.take()))
    }
}

fn validate_query(query: &ReadQuery) -> Result<(), ReadError> {
    if query.files.is_empty() {
        return Err(ReadError::InvalidArgument(
            "No file given: name at least one file, e.g. `ultragit read src/lib.rs`".to_owned(),
        ));
    }
    if query.anchor.is_some() && query.lines.is_some() {
        return Err(ReadError::InvalidArgument(
            "--lines cannot be combined with an anchor: give one or the other".to_owned(),
        ));
    }
    if let Some(anchor) = &query.anchor
        && anchor.trim().is_empty()
    {
        return Err(ReadError::InvalidArgument("The anchor is empty".to_owned()));
    }
    if let Some(lines) = query.lines {
        validate_range(
            lines.start,
            lines.end,
            &format!("{}:{}", lines.start, lines.end),
        )?;
    }
    if !(0.0..=1.0).contains(&query.min_confidence) {
        return Err(ReadError::InvalidArgument(format!(
            "--min-confidence must be between 0 and 1, not {}",
            query.min_confidence
        )));
    }
    if query.max_regions == Some(0) {
        return Err(ReadError::InvalidArgument(
            "--max-regions must be at least 1".to_owned(),
        ));
    }
    Ok(())
}

impl Run<'_> {
    fn repo(&self) -> &Repo {
        &self.pipeline.repo
    }

    /// The state of one query at today's HEAD; an unborn HEAD has no file
    /// `first` (the first file asked for).
    fn start<'p>(pipeline: &'p GitReadPipeline, first: &str) -> Result<Run<'p>, ReadError> {
        let repo = &pipeline.repo;
        let head = match repo.resolve_commit("HEAD") {
            Ok(id) => id,
            Err(gitctx::Error::UnbornHead { .. }) => {
                return Err(ReadError::FileNotFound {
                    path: first.to_owned(),
                });
            }
            Err(err) => return Err(ReadError::Git(err)),
        };
        let head_time = repo.commit_info_by_id(head)?.committer.time.to_utc();
        let notes_ref_exists = repo.notes(NOTES_REF)?.tip()?.is_some();
        Ok(Run {
            pipeline,
            head,
            head_time,
            warnings: Vec::new(),
            notes: HashMap::new(),
            outlines: HashMap::new(),
            stability: HashMap::new(),
            commits: HashMap::new(),
            cutoff: None,
            file_blames: HashMap::new(),
            blamed_paths: HashMap::new(),
            notes_ref_exists,
            index: None,
            carry_ahead: CarryAhead(std::cell::Cell::new(None)),
            routes: std::cell::RefCell::new(Vec::new()),
        })
    }

    /// Starts carrying the cached blames of the files `query` names forward
    /// to HEAD, when the blame cache is in use with git's blame (the only
    /// engine whose blames are carried).
    fn carry_ahead(&mut self, query: &ReadQuery) {
        let Some(cache) = &self.pipeline.blame_cache else {
            return;
        };
        if self.pipeline.engine != BlameEngine::Cli {
            return;
        }
        let paths = query
            .files
            .iter()
            .take(CARRY_AHEAD_FILES)
            .cloned()
            .collect();
        let ahead = match (&query.anchor, &query.lines) {
            (None, None) => Ahead::Whole(self.head),
            (Some(anchor), _) => Ahead::Anchor(self.head, anchor.clone()),
            (None, Some(_)) => Ahead::Carry,
        };
        self.carry_ahead = CarryAhead::start(
            cache.clone(),
            self.repo().root().to_path_buf(),
            paths,
            ahead,
        );
    }

    /// The stages of spec 003 §4, in order; each returns what the next needs.
    fn execute(&mut self, query: &ReadQuery) -> Result<ReadOutput, ReadError> {
        self.cutoff = self.since_cutoff(query.since.as_ref())?;
        self.carry_ahead(query);
        let resolved = self.resolve(query)?;
        if self.notes_ref_exists && self.carry_ahead.pending() {
            // The notes index (read, or built on a first read) is needed
            // later anyway: opened while the blame runs ahead. A failure is
            // met again, and reported, where it is needed.
            let _ = self.index();
        }
        let blames = self.blame(&resolved)?;
        for (scope, entries) in resolved.scopes.iter().zip(&blames) {
            let paths = self
                .blamed_paths
                .entry(scope.file().to_owned())
                .or_default();
            for entry in entries.iter().filter(|e| e.original_path != scope.file()) {
                if !paths.contains(&entry.original_path) {
                    paths.push(entry.original_path.clone());
                }
            }
        }
        let notes = self.fetch_notes(&blames, query)?;
        let matched = self.match_regions(&resolved, &blames, &notes.fetched);
        let scored = self.score(matched, &notes.fetched, query.depth);
        let mut ranked = rank(scored.regions, query);
        let items_retired = self.retire(query, &resolved, &mut ranked)?;
        let decisions = decisions::collect(&ranked);
        let regions = cap(
            ranked,
            query,
            self.pipeline.config.default_max_regions,
            &resolved.paths,
        );
        let mut output = self.assemble(query, &resolved, &notes, regions, scored.related_hops)?;
        output.decisions = decisions;
        output.stats.items_retired = items_retired;
        if let Some(budget) = query.max_tokens {
            trim::trim_to_budget(&mut output, budget, query.format, query.verbose);
            group_by_file(&mut output.regions, &resolved.paths);
        }
        Ok(output)
    }

    /// Stage 1: the scopes of every file asked for. With several files, an
    /// anchor needs to exist in one of them only: the others are left out,
    /// with a warning.
    fn resolve(&mut self, query: &ReadQuery) -> Result<Resolved, ReadError> {
        let paths = dedup(&query.files);
        let mut scopes = Vec::new();
        let mut files = Vec::new();
        let mut ambiguous = false;
        let mut first_miss = None;
        for path in &paths {
            let file = self.file_at_head(path)?;
            match self.resolve_file(&file, query) {
                Ok(resolved) => {
                    ambiguous |= resolved.iter().any(|s| s.echo.ambiguous);
                    scopes.extend(resolved);
                }
                Err(err @ ReadError::AnchorNotFound { .. }) if paths.len() > 1 => {
                    self.warnings.push(format!(
                        "{path}: no unit matches '{}'; the file is left out",
                        query.anchor.as_deref().unwrap_or_default()
                    ));
                    first_miss.get_or_insert(err);
                }
                Err(err) => return Err(err),
            }
            files.push(file);
        }
        if scopes.is_empty()
            && let Some(err) = first_miss
        {
            return Err(err);
        }
        Ok(Resolved {
            paths,
            files,
            scopes,
            ambiguous,
        })
    }

    /// The scopes of `query` in `file`: today's outline first; when the anchor
    /// names no unit of it (a macro-defined item such as `rgtest!(name, …)`,
    /// or a file without a grammar), the notes ([`Run::resolve_by_notes`]).
    /// Without either, a file with a grammar has no such anchor; one without
    /// keeps its whole-file scope, matched by name.
    fn resolve_file(
        &mut self,
        file: &FileAtHead,
        query: &ReadQuery,
    ) -> Result<Vec<ResolvedScope>, ReadError> {
        let mut warnings = Vec::new();
        let outcome = resolve_scope(file, query, &mut warnings);
        let anchor = query.anchor.as_deref().unwrap_or_default();
        let unresolved = match &outcome {
            Err(ReadError::AnchorNotFound { .. }) => true,
            // Only a fuzzy match (`reads_stdn` for `reads_stdin`): a note
            // naming the anchor exactly is the better answer.
            Ok(scopes) => {
                file.units.is_none()
                    || scopes.iter().all(|s| {
                        let name = s.echo.anchor_name.as_deref().unwrap_or_default();
                        matches!(
                            outline::match_name(anchor, name),
                            Some(MatchKind::Fuzzy { .. })
                        )
                    })
            }
            Err(_) => false,
        };
        if unresolved && query.anchor.is_some() {
            let by_notes = self.resolve_by_notes(&file.path, anchor)?;
            if !by_notes.is_empty() {
                return Ok(by_notes);
            }
        }
        self.warnings.extend(warnings);
        outcome
    }

    /// The scopes of `anchor` in `path` according to the notes: the regions of
    /// the commits blame names in the file whose anchor is `anchor` (exactly
    /// or unqualified), carried to today's lines through blame (the annotated
    /// commit's lines → today's), overlapping spans merged. Several disjoint
    /// spans are an ambiguous anchor. Empty when no note names it.
    fn resolve_by_notes(
        &mut self,
        path: &str,
        anchor: &str,
    ) -> Result<Vec<ResolvedScope>, ReadError> {
        let entries = self.blame_lines(path, None)?;
        self.file_blames.insert(path.to_owned(), entries.clone());
        let mut commits: Vec<String> = entries.iter().map(|e| e.commit.to_hex()).collect();
        commits.sort();
        commits.dedup();
        self.load_notes(&commits)?;
        let mut found: Vec<NamedSpan> = Vec::new();
        for commit in &commits {
            let Some(Some(annotation)) = self.notes.get(commit).cloned() else {
                continue;
            };
            let own: Vec<&BlameEntry> = entries
                .iter()
                .filter(|e| e.commit.to_hex() == *commit)
                .collect();
            for region in &annotation.regions {
                let exact = match outline::match_name(anchor, &region.ast_anchor.name) {
                    Some(MatchKind::Exact) => true,
                    Some(MatchKind::Unqualified) => false,
                    _ => continue,
                };
                if let Some(today) = surviving_lines(region, &own) {
                    found.push(NamedSpan {
                        today,
                        anchor: region.ast_anchor.clone(),
                        exact,
                    });
                }
            }
        }
        Ok(scopes_from_notes(path, anchor, found))
    }

    /// Stage 2: each scope blamed at HEAD (through the blame cache, if any),
    /// in the order of the scopes.
    fn blame(&self, resolved: &Resolved) -> Result<Vec<Vec<BlameEntry>>, ReadError> {
        resolved
            .scopes
            .iter()
            .map(|scope| self.blame_lines(scope.file(), scope.blame_range()))
            .collect()
    }

    /// The route record of `path`, added when first asked for.
    fn route(&self, path: &str) -> std::cell::RefMut<'_, BlameRoute> {
        let mut routes = self.routes.borrow_mut();
        let at = match routes.iter().position(|r| r.path == path) {
            Some(at) => at,
            None => {
                routes.push(BlameRoute {
                    path: path.to_owned(),
                    carried_ahead: None,
                    blamed: None,
                });
                routes.len() - 1
            }
        };
        std::cell::RefMut::map(routes, |r| &mut r[at])
    }

    /// `lines` of `path` (all of it for `None`) blamed at HEAD, through the
    /// blame cache if any — or cut from the whole file's blame when stage 1
    /// already ran it, so that no scope costs a second process.
    fn blame_lines(
        &self,
        path: &str,
        lines: Option<LineRange>,
    ) -> Result<Vec<BlameEntry>, ReadError> {
        for (path, outcome) in self.carry_ahead.join() {
            self.route(&path).carried_ahead = outcome;
        }
        if let Some(whole) = self.file_blames.get(path) {
            return Ok(match lines {
                None => whole.clone(),
                Some(range) => clip_blame(whole, range),
            });
        }
        let options = BlameOptions {
            rev: Some(self.head.to_hex()),
            lines: lines.map(|r| (r.start, r.end)),
            engine: self.pipeline.engine,
        };
        let blamed =
            match &self.pipeline.blame_cache {
                Some(cache) => self.repo().blame_cached_outcome(path, &options, cache).map(
                    |(entries, outcome)| {
                        self.route(path).blamed = Some(outcome);
                        entries
                    },
                ),
                None => self.repo().blame(path, &options),
            };
        blamed.map_err(|source| ReadError::Blame {
            path: path.to_owned(),
            source,
        })
    }

    /// Stage 3: the notes of the blamed commits that the query admits
    /// ([`Run::admit`]).
    fn fetch_notes(
        &mut self,
        blames: &[Vec<BlameEntry>],
        query: &ReadQuery,
    ) -> Result<FetchedNotes, ReadError> {
        let mut commits: Vec<String> = Vec::new();
        let mut seen = HashSet::new();
        for entry in blames.iter().flatten() {
            let hex = entry.commit.to_hex();
            if seen.insert(hex.clone()) {
                commits.push(hex);
            }
        }
        self.load_notes(&commits)?;
        let fetched: Vec<Fetched> = commits
            .iter()
            .filter_map(|commit| self.admit(commit, query))
            .collect();
        if !self.notes_ref_exists {
            self.warnings.push(NO_NOTES_HINT.to_owned());
        }
        Ok(FetchedNotes {
            commits_examined: commits.len() as u32,
            fetched,
        })
    }

    /// The loaded note of `commit` when the query admits it: its commit is not
    /// before `--since` and its context level passes `--context-level`.
    fn admit(&mut self, commit: &str, query: &ReadQuery) -> Option<Fetched> {
        let annotation = Rc::clone(self.notes.get(commit)?.as_ref()?);
        let timestamp = annotation.timestamp_utc()?;
        let committed = self.commit_time(commit).unwrap_or(timestamp);
        if self.cutoff.is_some_and(|cutoff| committed < cutoff)
            || !query.context_level.admits(&annotation.context_level)
        {
            return None;
        }
        Some(Fetched {
            commit: commit.to_owned(),
            annotation,
            timestamp,
            committed,
        })
    }

    /// The notes whose cross-cutting concerns may mention the scopes: the
    /// fetched ones (blame's), then every other note this read loaded — the
    /// related annotations followed and the dependency scan's recent
    /// annotated commits — that the query admits, newest commit first. A
    /// concern is declared once, in the note of the commit that wrote it, so a
    /// member whose lines that commit no longer holds (or never touched) finds
    /// it only this way.
    fn concern_notes(&mut self, fetched: &[Fetched], query: &ReadQuery) -> Vec<Fetched> {
        let fetched_commits: HashSet<&str> = fetched.iter().map(|f| f.commit.as_str()).collect();
        let mut others: Vec<String> = self
            .notes
            .iter()
            .filter(|(commit, note)| note.is_some() && !fetched_commits.contains(commit.as_str()))
            .map(|(commit, _)| commit.clone())
            .collect();
        others.sort();
        let mut extra: Vec<Fetched> = others
            .iter()
            .filter_map(|commit| self.admit(commit, query))
            .collect();
        extra.sort_by(|a, b| b.committed.cmp(&a.committed).then(a.commit.cmp(&b.commit)));
        let mut all = fetched.to_vec();
        all.extend(extra);
        all
    }

    /// Stage 4: the regions of the query ([`match_regions`]), with a warning
    /// for every region left out because its lines cannot exist.
    fn match_regions(
        &mut self,
        resolved: &Resolved,
        blames: &[Vec<BlameEntry>],
        fetched: &[Fetched],
    ) -> Vec<Matched> {
        let Matches { matched, dropped } = match_regions(resolved, blames, fetched);
        self.warn_impossible_lines(fetched, &matched, dropped);
        matched
    }

    /// Stage 5: each matched region scored, with its related annotations
    /// followed up to `depth` hops.
    fn score(&mut self, matched: Vec<Matched>, fetched: &[Fetched], depth: u32) -> Scored {
        let mut related_hops = 0;
        let mut regions: Vec<ScoredRegion> = Vec::with_capacity(matched.len());
        for m in matched {
            let note = &fetched[m.note];
            let mut factors =
                self.factors(&note.annotation, note.committed, &m.region, m.match_type);
            if m.by_notes {
                factors.anchor_stability = score_anchor_stability(&m.region, None, m.match_type);
            }
            let changed_since = self.changed_since(note.committed, &m.others);
            let changed: u32 = changed_since.iter().map(|c| c.lines).sum();
            let span = m.region.lines.end.saturating_sub(m.region.lines.start) + 1;
            factors.anchor_stability *= score_staleness(changed, span);
            let (confidence_factors, confidence) = rounded(factors);
            let related = self.follow(&note.commit, &m.region, depth);
            related_hops += related.len() as u32;
            let (region, corrections) = corrections::correct(&note.annotation, m.region);
            regions.push(ScoredRegion {
                region,
                commit_sha: note.commit.clone(),
                timestamp: note.timestamp,
                commit_date: Some(note.committed),
                confidence: round3(corrections::confidence(confidence, &corrections)),
                confidence_factors,
                related,
                corrections,
                changed_since,
                focus: m.focus,
            });
        }
        Scored {
            regions,
            related_hops,
        }
    }

    /// Stage 7: the output around the ranked `regions`: what depends on the
    /// scopes, the cross-cutting concerns that mention them, the query's echo,
    /// the counts and every warning so far.
    fn assemble(
        &mut self,
        query: &ReadQuery,
        resolved: &Resolved,
        notes: &FetchedNotes,
        regions: Vec<ScoredRegion>,
        related_hops: u32,
    ) -> Result<ReadOutput, ReadError> {
        let dependencies_on_this = self.dependencies_on(resolved, &regions)?;
        let concern_notes = self.concern_notes(&notes.fetched, query);
        let cross_cutting = cross_cutting(resolved, &regions, &concern_notes);
        let regions_returned = regions.len() as u32;
        Ok(ReadOutput {
            schema: READ_SCHEMA_V1.to_owned(),
            query: echo(query, resolved, self.pipeline.config.default_max_regions),
            regions,
            dependencies_on_this,
            cross_cutting,
            decisions: Vec::new(),
            stats: ReadStats {
                commits_examined: notes.commits_examined,
                annotations_found: notes.fetched.len() as u32,
                regions_returned,
                related_hops,
                items_retired: 0,
            },
            trimmed: None,
            warnings: std::mem::take(&mut self.warnings),
        })
    }

    fn since_cutoff(
        &self,
        since: Option<&SinceFilter>,
    ) -> Result<Option<DateTime<Utc>>, ReadError> {
        match since {
            None => Ok(None),
            Some(SinceFilter::Date(date)) => Ok(Some(*date)),
            Some(SinceFilter::Sha(rev)) => {
                let commit = self
                    .repo()
                    .commit_info(rev)
                    .map_err(|_| ReadError::InvalidSince { value: rev.clone() })?;
                Ok(Some(commit.committer.time.to_utc()))
            }
        }
    }

    /// The file at HEAD and its outline; a missing grammar is a warning.
    fn file_at_head(&mut self, path: &str) -> Result<FileAtHead, ReadError> {
        let (blob, bytes) = match self.repo().file_with_id_at(&self.head.to_hex(), path) {
            Ok(found) => found,
            Err(gitctx::Error::PathNotFound { .. } | gitctx::Error::NotAFile { .. }) => {
                return Err(ReadError::FileNotFound {
                    path: path.to_owned(),
                });
            }
            Err(err) => return Err(ReadError::Git(err)),
        };
        let line_count = gitctx::count_lines(&bytes);
        let text = String::from_utf8_lossy(&bytes);
        let units = match self.outline_of(path, blob, &text) {
            Ok(units) => Some(units),
            Err(OutlineError::NoGrammar { extension, .. }) => {
                let language = extension.unwrap_or_else(|| format!("'{path}'"));
                let warning = format!(
                    "No tree-sitter grammar for {language}. Anchor resolution unavailable."
                );
                if !self.warnings.contains(&warning) {
                    self.warnings.push(warning);
                }
                None
            }
            Err(err) => {
                self.warnings.push(format!(
                    "Could not outline {path} ({err}). Anchor resolution unavailable."
                ));
                None
            }
        };
        self.outlines
            .insert(path.to_owned(), units.clone().map(Rc::new));
        Ok(FileAtHead {
            path: path.to_owned(),
            line_count,
            units,
            blank: FileAtHead::blank_lines(&bytes),
        })
    }

    /// Today's outline of `path`, cached (`None`: not a file at HEAD or no grammar).
    fn outline_at_head(&mut self, path: &str) -> Option<Rc<Vec<Unit>>> {
        if let Some(cached) = self.outlines.get(path) {
            return cached.clone();
        }
        let units = self
            .repo()
            .file_with_id_at(&self.head.to_hex(), path)
            .ok()
            .and_then(|(blob, bytes)| {
                self.outline_of(path, blob, &String::from_utf8_lossy(&bytes))
                    .ok()
            })
            .map(Rc::new);
        self.outlines.insert(path.to_owned(), units.clone());
        units
    }

    /// The outline of `path`, whose content at HEAD is the blob `blob`,
    /// `text`: through the outline cache when there is one.
    fn outline_of(
        &self,
        path: &str,
        blob: ObjectId,
        text: &str,
    ) -> Result<Vec<Unit>, OutlineError> {
        match &self.pipeline.outline_cache {
            Some(cache) => Ok(cache.outline(self.repo(), path, blob, text)?.0),
            None => outline::outline(path, text),
        }
    }

    /// The four confidence factors of `region`, of `annotation` on a commit
    /// dated `committed`, matched to the query as `matched`.
    fn factors(
        &mut self,
        annotation: &Annotation,
        committed: DateTime<Utc>,
        region: &RegionAnnotation,
        matched: MatchType,
    ) -> ConfidenceFactors {
        ConfidenceFactors {
            recency: score_recency(
                committed,
                self.head_time,
                self.pipeline.config.recency_half_life,
            ),
            context_level: score_context_level(&annotation.context_level),
            anchor_stability: self.stability(region, matched),
            provenance: score_provenance(&annotation.provenance.operation),
        }
    }

    /// The anchor-stability factor of `region` against today's outline, cached.
    fn stability(&mut self, region: &RegionAnnotation, matched: MatchType) -> f64 {
        let class = match matched {
            MatchType::FuzzyAnchor { .. } => 1,
            MatchType::LineOverlap { .. } => 2,
            _ => 0,
        };
        let key = (
            region.file.clone(),
            region.ast_anchor.name.clone(),
            region.ast_anchor.signature.clone(),
            class,
        );
        if let Some(score) = self.stability.get(&key) {
            return *score;
        }
        let units = self.outline_at_head(&region.file);
        let score = score_anchor_stability(region, units.as_deref().map(Vec::as_slice), matched);
        self.stability.insert(key, score);
        score
    }

    /// The date and subject of commit `id`, read in-process once per read.
    fn commit_meta(&mut self, id: ObjectId) -> Option<Rc<CommitMeta>> {
        if let Some(meta) = self.commits.get(&id) {
            return meta.clone();
        }
        let meta = self.repo().commit_info_by_id(id).ok().map(|info| {
            Rc::new(CommitMeta {
                time: info.committer.time.to_utc(),
                summary: info.summary,
            })
        });
        self.commits.insert(id, meta.clone());
        meta
    }

    /// The committer date of the commit `hex`.
    fn commit_time(&mut self, hex: &str) -> Option<DateTime<Utc>> {
        let id = hex.parse().ok()?;
        self.commit_meta(id).map(|meta| meta.time)
    }

    /// Staleness: of the `others` blame names for a region's lines today, the
    /// commits after `committed` (the annotated commit's date) that have no
    /// usable note, oldest first.
    fn changed_since(
        &mut self,
        committed: DateTime<Utc>,
        others: &[(ObjectId, u32)],
    ) -> Vec<UnannotatedChange> {
        let mut out: Vec<UnannotatedChange> = Vec::new();
        for &(id, lines) in others {
            let hex = id.to_hex();
            // Every blamed commit's note was looked up: `Some(None)` is none.
            if !matches!(self.notes.get(&hex), Some(None)) {
                continue;
            }
            let Some(meta) = self.commit_meta(id) else {
                continue;
            };
            if meta.time > committed {
                out.push(UnannotatedChange {
                    commit: hex,
                    date: Some(meta.time),
                    summary: meta.summary.clone(),
                    lines,
                });
            }
        }
        out.sort_by(|a, b| a.date.cmp(&b.date).then(a.commit.cmp(&b.commit)));
        out
    }

    /// Reads and parses the notes of `commits` not read yet; malformed ones are
    /// skipped with the spec's warning.
    fn load_notes(&mut self, commits: &[String]) -> Result<(), ReadError> {
        let wanted: Vec<ObjectId> = commits
            .iter()
            .filter(|c| !self.notes.contains_key(*c))
            .filter_map(|c| c.parse().ok())
            .collect();
        if wanted.is_empty() {
            return Ok(());
        }
        let read = self.repo().notes(NOTES_REF)?.read_many(&wanted)?;
        for id in &wanted {
            self.notes.insert(id.to_hex(), None);
        }
        for (id, bytes) in read.too_large {
            self.warnings.push(format!(
                "Skipping the annotation on commit {}: it is {bytes} bytes, over the limit of {} bytes",
                id.to_hex(),
                gitctx::MAX_NOTE_BYTES
            ));
        }
        let pending = crate::pending::read(self.repo(), &wanted)?;
        for (id, text) in read.found {
            let hex = id.to_hex();
            let mut parsed = Annotation::from_json(&text)
                .ok()
                .filter(|a| a.timestamp_utc().is_some());
            if let (Some(annotation), Some(corrections)) = (parsed.as_mut(), pending.get(&id)) {
                crate::pending::join(annotation, corrections);
            }
            match &parsed {
                None => self
                    .warnings
                    .push(format!("Skipping malformed annotation on commit {hex}")),
                Some(annotation) if annotation.schema != SCHEMA_V1 => {
                    self.warnings.push(format!(
                        "The annotation on commit {hex} declares \"$schema\": {:?}, not \"{SCHEMA_V1}\"; it is read as {SCHEMA_V1} and fields this version does not know are ignored",
                        annotation.schema
                    ));
                }
                Some(_) => {}
            }
            self.notes.insert(hex, parsed.map(Rc::new));
        }
        Ok(())
    }

    /// Warns about every region left out because its lines cannot exist: they
    /// start at 0, end before they start, or lie past the end of the file at
    /// the annotating commit. A region with possible lines that no longer
    /// survive is simply not current, which needs no warning.
    ///
    /// "Past the end" is judged against the file's size in bytes at that
    /// commit, read from the object header (a file of N bytes has at most N
    /// lines), so no old version of the file is read: a read may drop hundreds
    /// of regions that are merely not current, and reading each commit's file
    /// to count its lines would cost more than the blame. A region that ends a
    /// few lines past the end of a file is therefore not told apart from one
    /// whose lines were rewritten since. Only a region ending past the highest
    /// line blame saw survive from its commit is looked up at all, so a read
    /// whose regions are merely old costs nothing here.
    fn warn_impossible_lines(
        &mut self,
        fetched: &[Fetched],
        matched: &[Matched],
        dropped: Vec<Dropped>,
    ) {
        let mut warned: HashSet<(usize, usize)> =
            matched.iter().map(|m| (m.note, m.region_index)).collect();
        let mut sizes: HashMap<(String, String), Option<u64>> = HashMap::new();
        for drop in dropped {
            let note = &fetched[drop.note];
            let region = &note.annotation.regions[drop.region];
            if warned.contains(&(drop.note, drop.region)) {
                continue;
            }
            let lines = region.lines;
            let why = if lines.start == 0 {
                "start at line 0 (lines are 1-based)".to_owned()
            } else if lines.end < lines.start {
                "end before they start".to_owned()
            } else if lines.end <= drop.seen_lines {
                // The file had that many lines: the region is possible, only
                // not current. No need to look at the file.
                continue;
            } else {
                let key = (note.commit.clone(), region.file.clone());
                let repo = self.repo();
                let size = *sizes.entry(key).or_insert_with(|| {
                    repo.file_size_at(&note.commit, &region.file).ok().flatten()
                });
                match size {
                    Some(size) if u64::from(lines.end) > size => format!(
                        "lie past the end of the file, which has {size} bytes at that commit"
                    ),
                    _ => continue,
                }
            };
            warned.insert((drop.note, drop.region));
            self.warnings.push(format!(
                "Skipping region {}:{} of the annotation on commit {}: its lines {}–{} {why}",
                region.file,
                region.ast_anchor.name,
                &note.commit[..note.commit.len().min(7)],
                lines.start,
                lines.end
            ));
        }
    }

    /// Stage 5: the related annotations of a region, breadth first, up to `depth`
    /// hops, never visiting a (commit, anchor) pair twice.
    fn follow(
        &mut self,
        commit: &str,
        region: &RegionAnnotation,
        depth: u32,
    ) -> Vec<ResolvedRelated> {
        let mut out = Vec::new();
        if depth == 0 {
            return out;
        }
        let mut visited: HashSet<(String, String)> = HashSet::new();
        visited.insert((commit.to_owned(), region.ast_anchor.name.clone()));
        let mut queue: VecDeque<(ultragit_schema::RelatedAnnotation, u32)> = region
            .related_annotations
            .iter()
            .cloned()
            .map(|r| (r, 1))
            .collect();
        while let Some((link, hop)) = queue.pop_front() {
            let Some(target) = self.resolve_commit(&link.commit) else {
                continue; // a commit that is gone: skip it
            };
            if !visited.insert((target.clone(), link.anchor.clone())) {
                continue;
            }
            if self.load_notes(std::slice::from_ref(&target)).is_err() {
                continue;
            }
            let Some(Some(annotation)) = self.notes.get(&target).cloned() else {
                continue;
            };
            let Some(found) = annotation.regions.iter().find(|r| {
                matches!(
                    outline::match_name(&link.anchor, &r.ast_anchor.name),
                    Some(MatchKind::Exact | MatchKind::Unqualified)
                )
            }) else {
                continue;
            };
            let committed = self
                .commit_time(&target)
                .or_else(|| annotation.timestamp_utc())
                .unwrap_or(self.head_time);
            let factors = self.factors(&annotation, committed, found, MatchType::ExactAnchor);
            out.push(ResolvedRelated {
                commit: target.clone(),
                anchor: link.anchor.clone(),
                relationship: link.relationship.clone(),
                confidence: rounded(factors).1,
                intent: Some(corrections::intent(&annotation, found)),
            });
            if hop < depth {
                for next in &found.related_annotations {
                    queue.push_back((next.clone(), hop + 1));
                }
            }
        }
        out
    }

    /// The notes index, opened (and brought up to date) once per read.
    fn index(&mut self) -> Result<Rc<DepsIndex>, ReadError> {
        if let Some(index) = &self.index {
            return Ok(Rc::clone(index));
        }
        let index = Rc::new(DepsIndex::open(self.repo(), NOTES_REF)?);
        self.index = Some(Rc::clone(&index));
        Ok(index)
    }

    /// Removes the retired items from `regions` (see [`crate::decisions`]):
    /// those a later note on the same unit retires, found among the notes
    /// loaded so far and the retiring notes the index lists for the scopes'
    /// units (read only when there are any);
    /// returns how many items were withheld, the items of flagged regions
    /// included.
    fn retire(
        &mut self,
        query: &ReadQuery,
        resolved: &Resolved,
        regions: &mut [ScoredRegion],
    ) -> Result<u32, ReadError> {
        let flagged: u32 = regions
            .iter()
            .filter(|r| decisions::flagged(r))
            .map(decisions::items_of)
            .sum();
        if !self.notes_ref_exists || regions.is_empty() {
            return Ok(flagged);
        }
        // Every name the scopes' files go by: today's and those blame gives.
        let mut names: Vec<String> = Vec::new();
        for scope in &resolved.scopes {
            for name in std::iter::once(scope.file()).chain(
                self.blamed_paths
                    .get(scope.file())
                    .into_iter()
                    .flatten()
                    .map(String::as_str),
            ) {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_owned());
                }
            }
        }
        let index = self.index()?;
        // Retiring notes under any path: a former name of the file whose
        // lines no longer survive is not among the names blame gives.
        let (listed, other_paths): (Vec<String>, bool) = {
            let anchors: Vec<&str> = query.anchor.as_deref().into_iter().collect();
            let found = index.retiring(&anchors);
            let other = found
                .iter()
                .flat_map(|a| &a.regions)
                .any(|(file, _)| !names.iter().any(|n| n == file));
            (
                found.into_iter().map(|a| a.commit.to_hex()).collect(),
                other,
            )
        };
        if other_paths {
            // Then the file's former names, from its renames (one `git log`).
            let head = self.head.to_hex();
            for scope_file in resolved
                .scopes
                .iter()
                .map(|s| s.file().to_owned())
                .collect::<Vec<_>>()
            {
                for name in crate::lineage::names_of(self.repo(), &head, &index, &scope_file)? {
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
            }
        }
        self.load_notes(&listed)?;
        let mut retiring: Vec<(ObjectId, &RegionAnnotation)> = Vec::new();
        let notes: Vec<(ObjectId, Rc<Annotation>)> = self
            .notes
            .iter()
            .filter_map(|(commit, note)| Some((commit.parse().ok()?, Rc::clone(note.as_ref()?))))
            .filter(|(_, note): &(ObjectId, Rc<Annotation>)| {
                note.regions.iter().any(|r| !r.retires.is_empty())
            })
            .collect();
        for (commit, note) in &notes {
            for region in note.regions.iter().filter(|r| !r.retires.is_empty()) {
                retiring.push((*commit, region));
            }
        }
        if retiring.is_empty() {
            return Ok(flagged);
        }
        let mut descends: HashMap<(ObjectId, ObjectId), bool> = HashMap::new();
        let head = self.head;
        let mut withheld = 0;
        for scored in regions.iter_mut() {
            let Ok(item_commit) = scored.commit_sha.parse::<ObjectId>() else {
                continue;
            };
            let unit = query
                .anchor
                .clone()
                .unwrap_or_else(|| scored.region.ast_anchor.name.clone());
            let file = scored.region.file.clone();
            let mut texts: Vec<&str> = Vec::new();
            for (commit, region) in &retiring {
                let same_file = region.file == file || names.contains(&region.file);
                if *commit == item_commit
                    || !same_file
                    || !crate::index::anchors_match(&region.ast_anchor.name, &unit)
                {
                    continue;
                }
                let repo = self.repo();
                let mut is_ancestor = |a: ObjectId, d: ObjectId| {
                    *descends
                        .entry((a, d))
                        .or_insert_with(|| a == d || repo.is_ancestor(a, d).unwrap_or(false))
                };
                if is_ancestor(item_commit, *commit) && is_ancestor(*commit, head) {
                    texts.extend(region.retires.iter().map(String::as_str));
                }
            }
            if !texts.is_empty() && !decisions::flagged(scored) {
                withheld += decisions::remove_retired(scored, |text| {
                    texts
                        .iter()
                        .any(|t| ultragit_schema::same_item_text(t, text))
                });
            }
        }
        Ok(flagged + withheld)
    }

    fn resolve_commit(&self, rev: &str) -> Option<String> {
        if let Ok(id) = rev.parse::<ObjectId>() {
            return Some(id.to_hex());
        }
        self.repo().resolve_commit(rev).ok().map(|id| id.to_hex())
    }

    /// `dependencies_on_this`: the semantic dependencies annotated regions
    /// declare on a unit in scope, through the reverse dependency index
    /// ([`crate::index`]); newest annotated commit first, each (dependent
    /// region, nature, target) once. With `depsScanLimit` set, only the most
    /// recent that many annotated commits count. `regions` are the regions
    /// returned for the query: in a file without a grammar, the anchors they
    /// name are the units a line-range scope covers. Dependencies recorded
    /// under the file's former names count too (`DepsIndex::former_names`, from
    /// the names its blame gives: no process more, and nothing to look up
    /// when blame names no other path).
    fn dependencies_on(
        &mut self,
        resolved: &Resolved,
        regions: &[ScoredRegion],
    ) -> Result<Vec<DependencyEntry>, ReadError> {
        let limit = self.pipeline.config.deps_scan_limit;
        if limit == Some(0) || !self.notes_ref_exists {
            return Ok(Vec::new());
        }
        let index = self.index()?;
        // The notes whose cross-cutting concerns name a queried file, for
        // `concern_notes` (which looks at every note read so far).
        let mut concerning: Vec<String> = Vec::new();
        for path in &resolved.paths {
            concerning.extend(index.concerning(path).iter().map(|c| c.to_hex()));
        }
        self.load_notes(&concerning)?;
        let allowed: Option<HashSet<ObjectId>> =
            limit.map(|n| index.most_recent(n as usize).into_iter().collect());
        let mut found: Vec<IndexedDependency<'_>> = Vec::new();
        for scope in &resolved.scopes {
            let units = units_in_scope(scope, resolved, regions);
            let former = match self.blamed_paths.get(scope.file()) {
                Some(blamed) if !blamed.is_empty() => {
                    index.former_names(self.repo(), scope.file(), |_| Ok(blamed.clone()))?
                }
                _ => Vec::new(),
            };
            let mut candidates = index.dependents(scope.file(), None);
            for name in &former {
                candidates.extend(index.dependents(name, None));
            }
            found.extend(candidates.into_iter().filter(|dep| {
                allowed.as_ref().is_none_or(|a| a.contains(&dep.commit))
                    && units.covers(dep.target_anchor)
                    && !is_self(dep, scope, &former)
            }));
        }
        found.sort_by_key(|d| std::cmp::Reverse((d.commit_time, d.commit)));
        let mut out: Vec<DependencyEntry> = Vec::new();
        let mut seen = HashSet::new();
        for dep in found {
            let key = (
                dep.source_file,
                dep.source_anchor,
                dep.nature,
                dep.target_file,
                dep.target_anchor,
            );
            if seen.insert(key) {
                out.push(DependencyEntry {
                    file: dep.source_file.to_owned(),
                    anchor: dep.source_anchor.to_owned(),
                    nature: dep.nature.to_owned(),
                    commit: dep.commit.to_hex(),
                    target_file: dep.target_file.to_owned(),
                    target_anchor: dep.target_anchor.to_owned(),
                });
            }
        }
        Ok(out)
    }
}

/// A region's dependency on its own unit (under any of the file's names) is
/// not a dependency on this.
fn is_self(dep: &IndexedDependency<'_>, scope: &ResolvedScope, former: &[String]) -> bool {
    (dep.source_file == scope.file() || former.iter().any(|f| f == dep.source_file))
        && scope
            .anchor()
            .is_some_and(|a| outline::match_name(a, dep.source_anchor) == Some(MatchKind::Exact))
}

/// The units a scope covers, as dependency targets name them.
enum UnitsInScope<'a> {
    /// The whole file: every unit.
    All,
    /// These units (names as the outline or the notes give them).
    Named(Vec<&'a str>),
}

impl UnitsInScope<'_> {
    fn covers(&self, target_anchor: &str) -> bool {
        match self {
            UnitsInScope::All => true,
            UnitsInScope::Named(names) => names
                .iter()
                .any(|name| crate::index::anchors_match(target_anchor, name)),
        }
    }
}

/// The units in `scope`: its anchor; for a line range, the units of today's
/// outline overlapping it, or — in a file without a grammar — the anchors of
/// the returned regions of that file overlapping it; for the whole file,
/// every unit.
fn units_in_scope<'a>(
    scope: &'a ResolvedScope,
    resolved: &'a Resolved,
    regions: &'a [ScoredRegion],
) -> UnitsInScope<'a> {
    if let Some(anchor) = scope.anchor() {
        return UnitsInScope::Named(vec![anchor]);
    }
    let Some(range) = scope.echo.line_range else {
        return UnitsInScope::All;
    };
    let overlaps =
        |lines: &ultragit_schema::LineRange| lines.start <= range.end && lines.end >= range.start;
    UnitsInScope::Named(match resolved.units(scope.file()) {
        Some(units) => units
            .iter()
            .filter(|unit| unit.lines.start <= range.end && unit.lines.end >= range.start)
            .map(|unit| unit.qualified_name.as_str())
            .collect(),
        None => regions
            .iter()
            .filter(|r| r.region.file == scope.file() && overlaps(&r.region.lines))
            .map(|r| r.region.ast_anchor.name.as_str())
            .collect(),
    })
}

/// Cross-cutting concerns of the fetched annotations that bear on a queried
/// scope: a concern whose `file:anchor` names a unit the scope covers — the
/// whole file, the unit asked for, or a unit whose lines today overlap the
/// lines asked for (in a file without a grammar: the anchor of a returned
/// region there) — or that names only the file and was declared by a commit
/// whose regions this read returns for the file. A concern about other code
/// in the same file is not about this query.
fn cross_cutting(
    resolved: &Resolved,
    regions: &[ScoredRegion],
    fetched: &[Fetched],
) -> Vec<CrossCuttingEntry> {
    let names_unit = |queried: &str, anchor: &str| {
        matches!(
            outline::match_name(queried, anchor),
            Some(MatchKind::Exact | MatchKind::Unqualified)
        )
    };
    let mut out: Vec<CrossCuttingEntry> = Vec::new();
    for note in fetched {
        let returned = |file: &str| {
            regions
                .iter()
                .any(|r| r.commit_sha == note.commit && r.region.file == file)
        };
        for concern in &note.annotation.cross_cutting {
            let mentions = concern.regions.iter().any(|reference| {
                let (file, anchor) = reference.split_once(':').unwrap_or((reference, ""));
                let anchor = anchor.trim();
                resolved.scopes.iter().any(|scope| {
                    if file != scope.file() {
                        return false;
                    }
                    if anchor.is_empty() {
                        return scope.echo.line_range.is_none() && scope.anchor().is_none()
                            || returned(file);
                    }
                    if let Some(queried) = scope.anchor() {
                        return names_unit(queried, anchor);
                    }
                    let Some(range) = scope.echo.line_range else {
                        return true;
                    };
                    let overlaps =
                        |lines: &LineRange| lines.start <= range.end && lines.end >= range.start;
                    match resolved.units(file) {
                        Some(units) => units.iter().any(|u| {
                            overlaps(&LineRange {
                                start: u.lines.start,
                                end: u.lines.end,
                            }) && names_unit(&u.qualified_name, anchor)
                        }),
                        None => regions.iter().any(|r| {
                            r.region.file == file
                                && overlaps(&r.region.lines)
                                && names_unit(&r.region.ast_anchor.name, anchor)
                        }),
                    }
                })
            });
            let duplicate = out
                .iter()
                .any(|e| e.description == concern.description && e.regions == concern.regions);
            if mentions && !duplicate {
                out.push(CrossCuttingEntry {
                    description: concern.description.clone(),
                    regions: concern.regions.clone(),
                    nature: concern.nature.clone(),
                    commit: note.commit.clone(),
                });
            }
        }
    }
    out
}

/// The query as the output repeats it, with the scopes it resolved to.
fn echo(query: &ReadQuery, resolved: &Resolved, default_max: u32) -> QueryEcho {
    QueryEcho {
        files: resolved.paths.clone(),
        anchor: query.anchor.clone(),
        lines: query.lines,
        since: query.since.as_ref().map(|s| match s {
            SinceFilter::Date(d) => d.to_rfc3339(),
            SinceFilter::Sha(sha) => sha.clone(),
        }),
        tags: query.tags.clone().unwrap_or_default(),
        context_level: query.context_level,
        min_confidence: query.min_confidence,
        depth: query.depth,
        max_regions: query.max_regions.unwrap_or(default_max),
        max_tokens: query.max_tokens,
        scopes: resolved.scopes.iter().map(|s| s.echo.clone()).collect(),
        ambiguous_anchor: resolved.ambiguous,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(commit: u8, original: (u32, u32), fin: (u32, u32)) -> BlameEntry {
        BlameEntry {
            commit: format!("{commit:040}").parse().expect("40 hex digits"),
            original_path: "a.rs".to_owned(),
            original_start: original.0,
            original_end: original.1,
            final_start: fin.0,
            final_end: fin.1,
            boundary: false,
        }
    }

    #[test]
    fn clipping_a_whole_file_blame_to_a_range() {
        let whole = [
            entry(1, (1, 4), (1, 4)),
            entry(2, (10, 15), (5, 10)),
            entry(1, (5, 6), (11, 12)),
        ];
        let clipped = clip_blame(&whole, LineRange { start: 3, end: 7 });
        assert_eq!(
            clipped,
            [entry(1, (3, 4), (3, 4)), entry(2, (10, 12), (5, 7))]
        );
        assert_eq!(
            clip_blame(&whole, LineRange { start: 11, end: 11 }),
            [entry(1, (5, 5), (11, 11))]
        );
    }
}
