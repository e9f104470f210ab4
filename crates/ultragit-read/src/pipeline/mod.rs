//! The seven stages of spec 003 §4, run by [`GitReadPipeline`]: one module
//! each (`resolve`, `blame`, `notes`, `matching`, `scoring`, then ranking in
//! `rank`, the retired items in `retire`, and `assemble`, trimmed
//! by [`crate::trim`]), each returning a typed value the next one takes. The
//! per-read caches they share (notes, outlines, commit dates) are the
//! private `Run`; `ahead` runs blame ahead of the read.
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

use std::collections::HashMap;
use std::rc::Rc;

use chrono::{DateTime, Utc};
use gitctx::{BlameCache, BlameEngine, BlameEntry, ObjectId, Repo};
use outline::Unit;
use ultragit_schema::{Annotation, ReadOutput};

use crate::config::ReadConfig;
use crate::decisions;
use crate::error::ReadError;
use crate::index::DepsIndex;
use crate::outline_cache::OutlineCache;
use crate::query::{ReadQuery, validate_range};
use crate::rank::{cap, group_by_file, rank};
use crate::trim;

mod ahead;
mod assemble;
mod blame;
mod matching;
mod notes;
mod resolve;
mod retire;
mod scoring;

use ahead::CarryAhead;
pub use ahead::{BlameRoute, CARRY_AHEAD_FILES};

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
    pub(super) fn repo(&self) -> &Repo {
        &self.pipeline.repo
    }

    /// The state of one query at today's HEAD; an unborn HEAD has no file
    /// `first` (the first file asked for).
    pub(super) fn start<'p>(
        pipeline: &'p GitReadPipeline,
        first: &str,
    ) -> Result<Run<'p>, ReadError> {
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
            carry_ahead: CarryAhead::none(),
            routes: std::cell::RefCell::new(Vec::new()),
        })
    }

    /// The stages of spec 003 §4, in order; each returns what the next needs.
    pub(super) fn execute(&mut self, query: &ReadQuery) -> Result<ReadOutput, ReadError> {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(query: &ReadQuery) -> String {
        match validate_query(query) {
            Err(ReadError::InvalidArgument(message)) => message,
            other => panic!("expected an invalid argument, got {other:?}"),
        }
    }

    #[test]
    fn queries_the_stages_cannot_answer_are_refused_before_any_git_work() {
        let mut query = ReadQuery::file("src/lib.rs");
        assert!(validate_query(&query).is_ok());
        query.files.clear();
        assert!(refused(&query).starts_with("No file given"));
        let mut query = ReadQuery::file("src/lib.rs").with_anchor("  ");
        assert_eq!(refused(&query), "The anchor is empty");
        query.anchor = None;
        query.min_confidence = 1.5;
        assert!(refused(&query).contains("between 0 and 1"));
        query.min_confidence = 0.5;
        query.max_regions = Some(0);
        assert_eq!(refused(&query), "--max-regions must be at least 1");
    }
}
