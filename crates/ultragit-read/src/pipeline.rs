//! The seven stages of spec 003 §4, run by [`GitReadPipeline`].
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
//! **Processes.** At most one `git blame` per resolved scope; notes, commits,
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

use std::collections::{HashMap, HashSet, VecDeque};
use std::rc::Rc;

use chrono::{DateTime, Utc};
use gitctx::{BlameCache, BlameEngine, BlameEntry, BlameOptions, ObjectId, Repo};
use outline::{MatchKind, OutlineError, Unit};
use ultragit_schema::{
    Annotation, ConfidenceFactors, CrossCuttingEntry, DependencyEntry, LineRange, QueryEcho,
    READ_SCHEMA_V1, ReadOutput, ReadStats, RegionAnnotation, ResolvedRelated, SCHEMA_V1, ScopeEcho,
    ScoredRegion,
};

use crate::config::ReadConfig;
use crate::error::ReadError;
use crate::query::{ReadQuery, SinceFilter, validate_range};
use crate::score::{
    MatchType, compute_confidence, score_anchor_stability, score_context_level, score_provenance,
    score_recency,
};
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
}

/// One resolved query scope (spec 003 §4.2 `ResolvedScope`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedScope {
    pub file: String,
    /// Today's lines; `None` for the whole file.
    pub line_range: Option<LineRange>,
    /// The unit the anchor resolved to.
    pub anchor_name: Option<String>,
    pub anchor_type: Option<String>,
    pub anchor_signature: Option<String>,
    /// One of several units the anchor matched.
    pub ambiguous: bool,
    /// The anchor as asked (used to match regions by name, even when it could not
    /// be resolved because the file has no grammar).
    pub query_anchor: Option<String>,
}

/// A file at HEAD: its text and outline.
struct FileAtHead {
    path: String,
    line_count: u32,
    /// `None`: no grammar for this file.
    units: Option<Vec<Unit>>,
}

/// A note that passed the filters.
struct Fetched {
    commit: String,
    annotation: Rc<Annotation>,
    timestamp: DateTime<Utc>,
}

/// A region matched to a scope, its lines already in today's coordinates.
struct Matched {
    region: RegionAnnotation,
    /// Index into the fetched annotations.
    note: usize,
    /// Index of the region in its annotation.
    region_index: usize,
    match_type: MatchType,
    /// The region's lines as written (its commit's coordinates), for dedup.
    original: LineRange,
}

/// A region of a scope's file that matched nothing: its lines are impossible or
/// no longer survive (told apart by [`Run::warn_impossible_lines`]).
struct Dropped {
    note: usize,
    region: usize,
    /// The highest line of the annotating commit's file that blame saw
    /// survive: the file had at least this many lines, so a region ending
    /// there or before is possible.
    seen_lines: u32,
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
    notes_ref_exists: bool,
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
        GitReadPipeline {
            repo,
            config,
            engine: BlameEngine::default(),
            blame_cache,
        }
    }

    /// Uses another blame engine (benchmarks compare them).
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
        validate_query(query)?;
        let first = query.files[0].clone();
        let head = match self.repo.resolve_commit("HEAD") {
            Ok(id) => id,
            Err(gitctx::Error::UnbornHead { .. }) => {
                return Err(ReadError::FileNotFound { path: first });
            }
            Err(err) => return Err(ReadError::Git(err)),
        };
        let head_time = self.repo.commit_info_by_id(head)?.committer.time.to_utc();
        let notes_ref_exists = self.repo.notes(NOTES_REF)?.tip()?.is_some();
        let mut run = Run {
            pipeline: self,
            head,
            head_time,
            warnings: Vec::new(),
            notes: HashMap::new(),
            outlines: HashMap::new(),
            stability: HashMap::new(),
            notes_ref_exists,
        };
        run.execute(query)
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

    fn execute(&mut self, query: &ReadQuery) -> Result<ReadOutput, ReadError> {
        let cutoff = self.since_cutoff(query.since.as_ref())?;

        // Stage 1: scopes.
        let mut scopes = Vec::new();
        let mut files = Vec::new();
        let mut ambiguous = false;
        let paths = dedup(&query.files);
        let mut first_miss = None;
        for path in &paths {
            let file = self.file_at_head(path)?;
            match self.resolve_scope(&file, query) {
                Ok(resolved) => {
                    ambiguous |= resolved.iter().any(|s| s.ambiguous);
                    scopes.extend(resolved);
                }
                // With several files, an anchor needs to exist in one of them only:
                // the others are left out, with a warning.
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

        // Stage 2: blame, once per scope.
        let mut blames = Vec::with_capacity(scopes.len());
        for scope in &scopes {
            let options = BlameOptions {
                rev: Some(self.head.to_hex()),
                lines: scope.line_range.map(|r| (r.start, r.end)),
                engine: self.pipeline.engine,
            };
            let blamed = match &self.pipeline.blame_cache {
                Some(cache) => self.repo().blame_cached(&scope.file, &options, cache),
                None => self.repo().blame(&scope.file, &options),
            };
            let entries = blamed.map_err(|source| ReadError::Blame {
                path: scope.file.clone(),
                source,
            })?;
            blames.push(entries);
        }

        // Stage 3: notes of the blamed commits, filtered.
        let mut commits: Vec<String> = Vec::new();
        let mut seen = HashSet::new();
        for entry in blames.iter().flatten() {
            let hex = entry.commit.to_hex();
            if seen.insert(hex.clone()) {
                commits.push(hex);
            }
        }
        self.load_notes(&commits)?;
        let mut fetched: Vec<Fetched> = Vec::new();
        for commit in &commits {
            let Some(Some(annotation)) = self.notes.get(commit) else {
                continue;
            };
            let Some(timestamp) = annotation.timestamp_utc() else {
                continue;
            };
            if cutoff.is_some_and(|cutoff| timestamp < cutoff) {
                continue;
            }
            if !query.context_level.admits(&annotation.context_level) {
                continue;
            }
            fetched.push(Fetched {
                commit: commit.clone(),
                annotation: Rc::clone(annotation),
                timestamp,
            });
        }
        if !self.notes_ref_exists {
            self.warnings.push(NO_NOTES_HINT.to_owned());
        }

        // Stage 4: regions of the query.
        let mut matched: Vec<Matched> = Vec::new();
        let mut dropped: Vec<Dropped> = Vec::new();
        for (scope, entries) in scopes.iter().zip(&blames) {
            let units = files
                .iter()
                .find(|f| f.path == scope.file)
                .and_then(|f| f.units.as_deref());
            filter_regions(scope, entries, units, &fetched, &mut matched, &mut dropped);
        }
        let matched = dedup_matches(matched);
        self.warn_impossible_lines(&fetched, &matched, dropped);

        // Stages 5 and 6: follow references, score, rank and cut.
        let mut related_hops = 0;
        let mut scored: Vec<ScoredRegion> = Vec::new();
        for m in matched {
            let note = &fetched[m.note];
            let factors = ConfidenceFactors {
                recency: score_recency(
                    note.timestamp,
                    self.head_time,
                    self.pipeline.config.recency_half_life,
                ),
                context_level: score_context_level(&note.annotation.context_level),
                anchor_stability: self.stability(&m.region, m.match_type),
                provenance: score_provenance(&note.annotation.provenance.operation),
            };
            let related = self.follow(&note.commit, &m.region, query.depth);
            related_hops += related.len() as u32;
            scored.push(ScoredRegion {
                region: m.region,
                commit_sha: note.commit.clone(),
                timestamp: note.timestamp,
                confidence: compute_confidence(&factors),
                confidence_factors: factors,
                related,
            });
        }
        sort_by_confidence(&mut scored);
        scored.retain(|r| r.confidence >= query.min_confidence);
        if let Some(tags) = &query.tags {
            let wanted: Vec<String> = tags.iter().map(|t| t.trim().to_lowercase()).collect();
            scored.retain(|r| {
                r.region
                    .tags
                    .iter()
                    .any(|t| wanted.contains(&t.trim().to_lowercase()))
            });
        }
        let cap = query
            .max_regions
            .unwrap_or(self.pipeline.config.default_max_regions) as usize;
        scored.truncate(cap);
        group_by_file(&mut scored, &paths);

        // Stage 7: assembly.
        let dependencies_on_this = self.dependencies_on(&scopes, &files)?;
        let cross_cutting = cross_cutting(&scopes, &fetched);
        let mut output = ReadOutput {
            schema: READ_SCHEMA_V1.to_owned(),
            query: echo(
                query,
                &scopes,
                ambiguous,
                self.pipeline.config.default_max_regions,
            ),
            regions: scored,
            dependencies_on_this,
            cross_cutting,
            stats: ReadStats {
                commits_examined: commits.len() as u32,
                annotations_found: fetched.len() as u32,
                regions_returned: 0,
                related_hops,
            },
            trimmed: None,
            warnings: std::mem::take(&mut self.warnings),
        };
        output.stats.regions_returned = output.regions.len() as u32;
        if let Some(budget) = query.max_tokens {
            trim::trim_to_budget(&mut output, budget, query.format, query.verbose);
            group_by_file(&mut output.regions, &paths);
        }
        Ok(output)
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
        let bytes = match self.repo().file_at(&self.head.to_hex(), path) {
            Ok(bytes) => bytes,
            Err(gitctx::Error::PathNotFound { .. } | gitctx::Error::NotAFile { .. }) => {
                return Err(ReadError::FileNotFound {
                    path: path.to_owned(),
                });
            }
            Err(err) => return Err(ReadError::Git(err)),
        };
        let line_count = gitctx::count_lines(&bytes);
        let text = String::from_utf8_lossy(&bytes);
        let units = match outline::outline(path, &text) {
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
        })
    }

    /// Today's outline of `path`, cached (`None`: not a file at HEAD or no grammar).
    fn outline_at_head(&mut self, path: &str) -> Option<Rc<Vec<Unit>>> {
        if let Some(cached) = self.outlines.get(path) {
            return cached.clone();
        }
        let units = self
            .repo()
            .file_at_opt(&self.head.to_hex(), path)
            .ok()
            .flatten()
            .and_then(|bytes| outline::outline(path, &String::from_utf8_lossy(&bytes)).ok())
            .map(Rc::new);
        self.outlines.insert(path.to_owned(), units.clone());
        units
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

    /// Stage 1 for one file.
    fn resolve_scope(
        &mut self,
        file: &FileAtHead,
        query: &ReadQuery,
    ) -> Result<Vec<ResolvedScope>, ReadError> {
        let whole = ResolvedScope {
            file: file.path.clone(),
            line_range: None,
            anchor_name: None,
            anchor_type: None,
            anchor_signature: None,
            ambiguous: false,
            query_anchor: query.anchor.clone(),
        };
        if let Some(lines) = query.lines {
            if lines.end > file.line_count {
                return Err(ReadError::LineRangeOutOfBounds {
                    start: lines.start,
                    end: lines.end,
                    len: file.line_count,
                });
            }
            return Ok(vec![ResolvedScope {
                line_range: Some(lines),
                ..whole
            }]);
        }
        let Some(anchor) = &query.anchor else {
            return Ok(vec![whole]);
        };
        let Some(units) = &file.units else {
            // No grammar: regions are matched by name over the whole file.
            return Ok(vec![whole]);
        };
        let resolution = outline::resolve_anchor(units, anchor).map_err(|err| match err {
            outline::AnchorError::NotFound { available, .. } => ReadError::AnchorNotFound {
                path: file.path.clone(),
                anchor: anchor.clone(),
                available,
            },
            outline::AnchorError::EmptyQuery => {
                ReadError::InvalidArgument("The anchor is empty".to_owned())
            }
        })?;
        if let Some(warning) = &resolution.warning {
            self.warnings.push(format!("{}: {warning}", file.path));
        }
        Ok(resolution
            .units
            .iter()
            .map(|unit| ResolvedScope {
                file: file.path.clone(),
                line_range: Some(LineRange {
                    start: unit.lines.start,
                    end: unit.lines.end.min(file.line_count.max(unit.lines.start)),
                }),
                anchor_name: Some(unit.qualified_name.clone()),
                anchor_type: Some(unit.kind.as_str().to_owned()),
                anchor_signature: Some(unit.signature.clone()),
                ambiguous: resolution.ambiguous,
                query_anchor: Some(anchor.clone()),
            })
            .collect())
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
        for (id, text) in read.found {
            let hex = id.to_hex();
            let parsed = Annotation::from_json(&text)
                .ok()
                .filter(|a| a.timestamp_utc().is_some());
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
            let timestamp = annotation.timestamp_utc().unwrap_or(self.head_time);
            let factors = ConfidenceFactors {
                recency: score_recency(
                    timestamp,
                    self.head_time,
                    self.pipeline.config.recency_half_life,
                ),
                context_level: score_context_level(&annotation.context_level),
                anchor_stability: self.stability(found, MatchType::ExactAnchor),
                provenance: score_provenance(&annotation.provenance.operation),
            };
            out.push(ResolvedRelated {
                commit: target.clone(),
                anchor: link.anchor.clone(),
                relationship: link.relationship.clone(),
                confidence: compute_confidence(&factors),
                intent: Some(found.intent.clone()),
            });
            if hop < depth {
                for next in &found.related_annotations {
                    queue.push_back((next.clone(), hop + 1));
                }
            }
        }
        out
    }

    fn resolve_commit(&self, rev: &str) -> Option<String> {
        if let Ok(id) = rev.parse::<ObjectId>() {
            return Some(id.to_hex());
        }
        self.repo().resolve_commit(rev).ok().map(|id| id.to_hex())
    }

    /// `dependencies_on_this`: semantic dependencies declared by the regions of the
    /// most recent `depsScanLimit` annotated commits that point at a queried scope.
    fn dependencies_on(
        &mut self,
        scopes: &[ResolvedScope],
        files: &[FileAtHead],
    ) -> Result<Vec<DependencyEntry>, ReadError> {
        let limit = self.pipeline.config.deps_scan_limit as usize;
        if limit == 0 || !self.notes_ref_exists {
            return Ok(Vec::new());
        }
        let recent = self.recent_annotated(limit)?;
        self.load_notes(&recent)?;
        let mut out: Vec<DependencyEntry> = Vec::new();
        let mut seen = HashSet::new();
        for commit in &recent {
            let Some(Some(annotation)) = self.notes.get(commit) else {
                continue;
            };
            for region in &annotation.regions {
                for dep in &region.semantic_dependencies {
                    let Some(scope) = scopes.iter().find(|s| depends_on(dep, s, files)) else {
                        continue;
                    };
                    let is_self = region.file == scope.file
                        && scope.anchor_name.as_deref().is_some_and(|a| {
                            outline::match_name(a, &region.ast_anchor.name)
                                == Some(MatchKind::Exact)
                        });
                    if is_self {
                        continue;
                    }
                    let key = (
                        region.file.clone(),
                        region.ast_anchor.name.clone(),
                        dep.nature.clone(),
                        dep.file.clone(),
                        dep.anchor.clone(),
                    );
                    if seen.insert(key) {
                        out.push(DependencyEntry {
                            file: region.file.clone(),
                            anchor: region.ast_anchor.name.clone(),
                            nature: dep.nature.clone(),
                            commit: commit.clone(),
                            target_file: dep.file.clone(),
                            target_anchor: dep.anchor.clone(),
                        });
                    }
                }
            }
        }
        Ok(out)
    }

    /// The annotated commits, newest commit time first, at most `limit`.
    fn recent_annotated(&self, limit: usize) -> Result<Vec<String>, ReadError> {
        let notes = self.repo().notes(NOTES_REF)?.list()?;
        let mut dated: Vec<(i64, String)> = notes
            .iter()
            .filter_map(|entry| {
                let info = self.repo().commit_info_by_id(entry.target).ok()?;
                Some((info.committer.time.seconds, entry.target.to_hex()))
            })
            .collect();
        dated.sort_by(|a, b| b.cmp(a));
        dated.truncate(limit);
        Ok(dated.into_iter().map(|(_, hex)| hex).collect())
    }
}

/// Stage 4 for one scope: the regions of the blamed commits' notes that concern
/// it, with their lines moved to today's coordinates.
fn filter_regions(
    scope: &ResolvedScope,
    entries: &[BlameEntry],
    units: Option<&[Unit]>,
    fetched: &[Fetched],
    out: &mut Vec<Matched>,
    dropped: &mut Vec<Dropped>,
) {
    let mut by_commit: HashMap<String, Vec<&BlameEntry>> = HashMap::new();
    for entry in entries {
        by_commit
            .entry(entry.commit.to_hex())
            .or_default()
            .push(entry);
    }
    let named = fetched
        .iter()
        .filter(|note| by_commit.contains_key(&note.commit))
        .flat_map(|note| &note.annotation.regions)
        .any(|region| {
            matches!(
                name_match(scope, region),
                Some(MatchKind::Exact | MatchKind::Unqualified)
            )
        });
    for (index, note) in fetched.iter().enumerate() {
        let Some(entries) = by_commit.get(&note.commit) else {
            continue;
        };
        for (region_index, region) in note.annotation.regions.iter().enumerate() {
            let same_file =
                region.file == scope.file || entries.iter().any(|e| e.original_path == region.file);
            if !same_file {
                continue;
            }
            if region.lines.start == 0 || region.lines.end < region.lines.start {
                dropped.push(Dropped {
                    note: index,
                    region: region_index,
                    seen_lines: 0,
                });
                continue;
            }
            let surviving = surviving_lines(region, entries);
            // A fuzzy name counts only when no region of this scope matches by
            // name exactly (exact > unqualified > fuzzy, as for scopes): `encode`
            // is two edits from `decode` but is not about it.
            let name_match = name_match(scope, region)
                .filter(|kind| !matches!(kind, MatchKind::Fuzzy { .. }) || !named);
            let not_current = Dropped {
                note: index,
                region: region_index,
                seen_lines: entries.iter().map(|e| e.original_end).max().unwrap_or(0),
            };
            let (match_type, today) = match (name_match, &scope.query_anchor, scope.line_range) {
                (Some(kind), _, range) => {
                    let Some(today) = surviving.or(range) else {
                        dropped.push(not_current);
                        continue;
                    };
                    (anchor_match(kind), today)
                }
                (None, Some(_), Some(_)) | (None, None, Some(_)) => {
                    let Some(today) = surviving else {
                        dropped.push(not_current);
                        continue;
                    };
                    let len = region.lines.end - region.lines.start + 1;
                    let kept = count_surviving(region, entries);
                    let overlap_ratio = f64::from(kept) / f64::from(len);
                    (MatchType::LineOverlap { overlap_ratio }, today)
                }
                // An anchor that could not be resolved (no grammar) matches by name
                // only.
                (None, Some(_), None) => continue,
                (None, None, None) => {
                    let Some(today) = surviving else {
                        dropped.push(not_current);
                        continue;
                    };
                    (MatchType::WholeFile, today)
                }
            };
            let mut region = region.clone();
            let original = region.lines;
            region.lines = widen_to_unit(&region, today, units);
            out.push(Matched {
                region,
                note: index,
                region_index,
                match_type,
                original,
            });
        }
    }
}

/// How a region's anchor name matches the scope: against the unit the anchor
/// resolved to (so `B::run` does not match the scope of `A::run`), or the anchor as
/// asked when it could not be resolved.
fn name_match(scope: &ResolvedScope, region: &RegionAnnotation) -> Option<MatchKind> {
    let target = scope
        .anchor_name
        .as_deref()
        .or(scope.query_anchor.as_deref())?;
    outline::match_name(target, &region.ast_anchor.name)
}

/// Blame only knows the lines a commit itself last changed; lines of the region
/// that an older commit wrote are attributed to that one. When today's outline has
/// the region's unit (by name) around those lines, the unit's range is the
/// region's today; otherwise the span of its surviving lines is.
fn widen_to_unit(region: &RegionAnnotation, today: LineRange, units: Option<&[Unit]>) -> LineRange {
    let Some(units) = units else {
        return today;
    };
    units
        .iter()
        .filter(|unit| unit.lines.start <= today.start && unit.lines.end >= today.end)
        .filter(|unit| {
            matches!(
                outline::match_name(&region.ast_anchor.name, &unit.qualified_name),
                Some(MatchKind::Exact | MatchKind::Unqualified)
            )
        })
        .min_by_key(|unit| unit.lines.end - unit.lines.start)
        .map(|unit| LineRange {
            start: unit.lines.start,
            end: unit.lines.end,
        })
        .unwrap_or(today)
}

/// Today's span of the region's lines that survive in this commit's blame
/// entries (judged in the commit's own coordinates).
fn surviving_lines(region: &RegionAnnotation, entries: &[&BlameEntry]) -> Option<LineRange> {
    let mut span: Option<LineRange> = None;
    for entry in entries.iter().filter(|e| e.original_path == region.file) {
        let start = region.lines.start.max(entry.original_start);
        let end = region.lines.end.min(entry.original_end);
        if start > end {
            continue;
        }
        let (Some(from), Some(to)) = (entry.to_final(start), entry.to_final(end)) else {
            continue;
        };
        span = Some(match span {
            None => LineRange {
                start: from,
                end: to,
            },
            Some(s) => LineRange {
                start: s.start.min(from),
                end: s.end.max(to),
            },
        });
    }
    span
}

fn count_surviving(region: &RegionAnnotation, entries: &[&BlameEntry]) -> u32 {
    entries
        .iter()
        .filter(|e| e.original_path == region.file)
        .map(|e| {
            let start = region.lines.start.max(e.original_start);
            let end = region.lines.end.min(e.original_end);
            if start > end { 0 } else { end - start + 1 }
        })
        .sum()
}

fn anchor_match(kind: MatchKind) -> MatchType {
    match kind {
        MatchKind::Exact => MatchType::ExactAnchor,
        MatchKind::Unqualified => MatchType::UnqualifiedAnchor,
        MatchKind::Fuzzy { distance } => MatchType::FuzzyAnchor { distance },
    }
}

/// The same region matched by several scopes (an ambiguous anchor, two files of
/// one commit) is kept once, with its best match.
fn dedup_matches(matched: Vec<Matched>) -> Vec<Matched> {
    let mut best: Vec<Matched> = Vec::with_capacity(matched.len());
    let mut index: HashMap<(usize, String, String, u32, u32), usize> = HashMap::new();
    for m in matched {
        // The note index stands for the commit: one note per commit.
        let key = (
            m.note,
            m.region.file.clone(),
            m.region.ast_anchor.name.clone(),
            m.original.start,
            m.original.end,
        );
        match index.get(&key) {
            Some(&i) if m.match_type.rank() < best[i].match_type.rank() => best[i] = m,
            Some(_) => {}
            None => {
                index.insert(key, best.len());
                best.push(m);
            }
        }
    }
    best
}

/// Best first; ties newest first, then by file and anchor, so output is stable.
pub(crate) fn sort_by_confidence(regions: &mut [ScoredRegion]) {
    regions.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then(b.timestamp.cmp(&a.timestamp))
            .then(a.region.file.cmp(&b.region.file))
            .then(a.region.ast_anchor.name.cmp(&b.region.ast_anchor.name))
            .then(a.region.lines.start.cmp(&b.region.lines.start))
    });
}

/// Multi-file output groups regions by file, in the order the files were asked
/// for (spec 003 §4.10); within a file the confidence order stays. Regions of a
/// file that was renamed since they were written sort with the file they were
/// found in last.
pub(crate) fn group_by_file(regions: &mut [ScoredRegion], files: &[String]) {
    if files.len() < 2 {
        return;
    }
    let rank = |file: &str| files.iter().position(|f| f == file).unwrap_or(files.len());
    regions.sort_by_key(|r| rank(&r.region.file));
}

/// Does `dep` point at `scope`? Same file, and: the scope's anchor (by name), or
/// for a line range a unit of today's outline overlapping it, or for the whole
/// file anything.
fn depends_on(
    dep: &ultragit_schema::SemanticDependency,
    scope: &ResolvedScope,
    files: &[FileAtHead],
) -> bool {
    if dep.file != scope.file {
        return false;
    }
    if let Some(anchor) = scope
        .anchor_name
        .as_deref()
        .or(scope.query_anchor.as_deref())
    {
        return matches!(
            outline::match_name(&dep.anchor, anchor),
            Some(MatchKind::Exact | MatchKind::Unqualified)
        );
    }
    let Some(range) = scope.line_range else {
        return true;
    };
    let units = files
        .iter()
        .find(|f| f.path == scope.file)
        .and_then(|f| f.units.as_ref());
    let Some(units) = units else {
        return true;
    };
    units.iter().any(|unit| {
        unit.lines.start <= range.end
            && unit.lines.end >= range.start
            && matches!(
                outline::match_name(&dep.anchor, &unit.qualified_name),
                Some(MatchKind::Exact | MatchKind::Unqualified)
            )
    })
}

/// Cross-cutting concerns of the fetched annotations that mention a queried
/// scope (`file:anchor`, or just `file` for whole-file and line queries).
fn cross_cutting(scopes: &[ResolvedScope], fetched: &[Fetched]) -> Vec<CrossCuttingEntry> {
    let mut out: Vec<CrossCuttingEntry> = Vec::new();
    for note in fetched {
        for concern in &note.annotation.cross_cutting {
            let mentions = concern.regions.iter().any(|reference| {
                let (file, anchor) = reference.split_once(':').unwrap_or((reference, ""));
                scopes.iter().any(|scope| {
                    file == scope.file
                        && match scope
                            .anchor_name
                            .as_deref()
                            .or(scope.query_anchor.as_deref())
                        {
                            None => true,
                            Some(queried) => {
                                anchor.is_empty()
                                    || matches!(
                                        outline::match_name(queried, anchor),
                                        Some(MatchKind::Exact | MatchKind::Unqualified)
                                    )
                            }
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

fn echo(
    query: &ReadQuery,
    scopes: &[ResolvedScope],
    ambiguous: bool,
    default_max: u32,
) -> QueryEcho {
    QueryEcho {
        files: dedup(&query.files),
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
        scopes: scopes
            .iter()
            .map(|s| ScopeEcho {
                file: s.file.clone(),
                line_range: s.line_range,
                anchor_name: s.anchor_name.clone(),
                anchor_type: s.anchor_type.clone(),
                anchor_signature: s.anchor_signature.clone(),
                ambiguous: s.ambiguous,
            })
            .collect(),
        ambiguous_anchor: ambiguous,
    }
}

fn dedup(files: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for file in files {
        let file = file.trim_start_matches("./").to_owned();
        if !out.contains(&file) {
            out.push(file);
        }
    }
    out
}
