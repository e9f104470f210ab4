//! `cargo xtask bench delivery`: how many of the decisions recorded for the
//! code an agent is about to edit reach it within a token budget, and how
//! many retired ones do — deterministic, no model.
//!
//! For each function unit at HEAD, the gold set ([`gold`], computed from git
//! and the notes alone, never through `ultragit-read`) says which items
//! (constraints, risk notes, semantic dependencies) are *active* for it and
//! which are *retired*. Each route then hands over text at 400, 800 and 2,000
//! tokens and unbudgeted (tokens: bytes / 4 rounded up), and an item is
//! *delivered* when its normalized text appears in the route's normalized
//! output:
//! - `read`: `ultragit read FILE UNIT [--max-tokens N]` (markdown), the
//!   release binary in the benchmark, the library in the test; and as a
//!   secondary line `read --format json`.
//! - `git log -L`: `git log --format=%B -s -L s,e:FILE`, cut to N×4 bytes.
//! - `git log -- PATH`: `git log --format=%B -- FILE`, cut to N×4 bytes.
//! - `all notes of the file`: the text of every note (of a commit HEAD
//!   reaches) with a region in the file or under a former name, newest
//!   commit first, concatenated, cut to N×4 bytes.
//!
//! Per route and budget: the recall of active items (delivered over all,
//! over all units; the primary figure), the same over units with at most 15
//! active items, the precision (delivered active items over the items of the
//! file's notes found in the output), the retired items delivered (errors),
//! the median tokens per query, and the units with recall 1 and 0. The
//! misses of `read` are sorted into cut by the budget (the unbudgeted read
//! delivers it), lost by a rename (every region it came through is under a
//! former name of the file) and lost by scope (the rest, with how many of
//! them a read without the default cap of 20 regions delivers), and up to
//! 10 cases where the gold and the unbudgeted read disagree are printed.
//!
//! - `cargo xtask bench delivery`: the full generated corpus
//!   (`testkit::delivery`, about 3,000 commits), generated once into the
//!   fixtures directory; `--small` for the test's corpus.
//! - `cargo xtask bench delivery --repo PATH [--file F]... [--unit NAME]...`:
//!   any local clone with notes: the function and method units of the given
//!   files (default: the 10 files at HEAD that the most note regions name),
//!   or only those named; `--densest N` keeps the N of them with the most
//!   active items. Items are matched by text, so they need no tokens.
//! - `... --repo PATH --synthesize --file F...`: a clone of PATH (which is
//!   left alone) with a synthetic note on every commit that changed the
//!   files, its constraints sentences of the commit's own message
//!   ([`synth`]), for a real history nobody has annotated.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use testkit::delivery::{DeliveryCorpus, DeliverySpec, generate_delivery};
use ultragit_read::{GitReadPipeline, ReadPipeline, ReadQuery, format_json, format_markdown};

use super::{build_ultragit, verdict};
use crate::fixtures::{self, hermetic};

mod gold;
mod synth;
#[cfg(test)]
mod tests;

use gold::{History, Item, Unit, UnitGold, normalize};

/// Bumped whenever the corpus generator or its marker changes, so a stale
/// corpus is not reused.
const CORPUS_VERSION: u32 = 2;

/// The budgets every route is measured at; `None` is unbudgeted.
const BUDGETS: [Option<u32>; 4] = [Some(400), Some(800), Some(2_000), None];
const B400: usize = 0;
const B800: usize = 1;
const B2000: usize = 2;
const UNBUDGETED: usize = 3;

/// Units with at most this many active items make the second recall.
const SMALL_UNIT: usize = 15;
/// A unit with at least this many active items is a dense one.
const DENSE_UNIT: usize = 20;
/// The cap on regions of the read that tells misses by the default cap
/// from the other misses by scope.
const UNCAPPED: u32 = 10_000;
/// How many disagreements between the gold and the read are printed.
const SHOWN_DISAGREEMENTS: usize = 10;

/// The targets.
const SMALL_RECALL_AT_800: f64 = 0.9;
const RATIO_TO_GIT_LOG_AT_800: f64 = 3.0;
const RECALL_AT_2000: f64 = 0.9;
const DENSITY_MEDIAN: f64 = 5.0;
const DENSE_SHARE: f64 = 0.10;

/// A way of handing an agent the decisions of a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Route {
    Read,
    ReadJson,
    LogL,
    LogPath,
    Notes,
}

impl Route {
    const ALL: [Route; 5] = [
        Route::Read,
        Route::ReadJson,
        Route::LogL,
        Route::LogPath,
        Route::Notes,
    ];

    fn label(self) -> &'static str {
        match self {
            Route::Read => "read",
            Route::ReadJson => "read --format json",
            Route::LogL => "git log -L",
            Route::LogPath => "git log -- PATH",
            Route::Notes => "all notes of the file",
        }
    }
}

fn budget_label(budget: Option<u32>) -> String {
    match budget {
        Some(2_000) => "2,000".to_owned(),
        Some(n) => n.to_string(),
        None => "unbudgeted".to_owned(),
    }
}

/// How the read route runs: in-process (the test) or as the release binary
/// (the benchmark).
pub(crate) enum Reader {
    InProcess(Box<GitReadPipeline>),
    Binary(PathBuf),
}

impl Reader {
    /// The read of `unit` within `budget`, rendered as markdown or JSON. A
    /// read that fails delivers nothing: `Err` says why.
    fn read(
        &self,
        repo: &Path,
        unit: &Unit,
        budget: Option<u32>,
        json: bool,
        max_regions: Option<u32>,
    ) -> Result<String, String> {
        match self {
            Reader::InProcess(pipeline) => {
                let mut query = ReadQuery::file(unit.file.as_str()).with_anchor(unit.name.as_str());
                query.max_tokens = budget;
                query.max_regions = max_regions;
                let output = pipeline.execute(&query).map_err(|e| e.to_string())?;
                Ok(if json {
                    format_json(&output, false)
                } else {
                    format_markdown(&output, false)
                })
            }
            Reader::Binary(exe) => {
                let mut command = Command::new(exe);
                command
                    .current_dir(repo)
                    .args(["read", &unit.file, &unit.name])
                    .stdin(Stdio::null());
                if let Some(n) = budget {
                    command.args(["--max-tokens", &n.to_string()]);
                }
                if json {
                    command.args(["--format", "json"]);
                }
                if let Some(n) = max_regions {
                    command.args(["--max-regions", &n.to_string()]);
                }
                let out = command
                    .output()
                    .map_err(|e| format!("could not run {}: {e}", exe.display()))?;
                if !out.status.success() {
                    return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
                }
                Ok(String::from_utf8_lossy(&out.stdout).into_owned())
            }
        }
    }
}

/// `text` cut to `budget` × 4 bytes (at a character boundary).
fn cut(text: &str, budget: Option<u32>) -> &str {
    let Some(n) = budget else { return text };
    let mut end = text.len().min(n as usize * 4);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

fn tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// Finds which of many texts occur in a text: each pattern is keyed by its
/// first 8 bytes, and every 8-byte window of the text is looked up (shorter
/// patterns are searched one by one).
struct Matcher {
    patterns: Vec<String>,
    by_prefix: HashMap<u64, Vec<usize>>,
    short: Vec<usize>,
}

const KEY: usize = 8;

fn key(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes[..KEY].try_into().expect("a key is 8 bytes"))
}

impl Matcher {
    fn new(patterns: Vec<String>) -> Matcher {
        let mut by_prefix: HashMap<u64, Vec<usize>> = HashMap::new();
        let mut short = Vec::new();
        for (i, p) in patterns.iter().enumerate() {
            if p.len() < KEY {
                short.push(i);
            } else {
                by_prefix.entry(key(p.as_bytes())).or_default().push(i);
            }
        }
        Matcher {
            patterns,
            by_prefix,
            short,
        }
    }

    /// The indices of the patterns that occur in `text`.
    fn find(&self, text: &str) -> HashSet<usize> {
        let bytes = text.as_bytes();
        let mut found: HashSet<usize> = self
            .short
            .iter()
            .copied()
            .filter(|&i| text.contains(self.patterns[i].as_str()))
            .collect();
        for start in 0..(bytes.len() + 1).saturating_sub(KEY) {
            if let Some(candidates) = self.by_prefix.get(&key(&bytes[start..])) {
                for &i in candidates {
                    if bytes[start..].starts_with(self.patterns[i].as_bytes()) {
                        found.insert(i);
                    }
                }
            }
        }
        found
    }
}

/// The figures of one route at one budget.
#[derive(Debug, Default, Clone)]
pub(crate) struct Tally {
    pub active: usize,
    pub delivered: usize,
    pub small_active: usize,
    pub small_delivered: usize,
    /// Items of the file's notes found in the outputs (active ones included).
    pub items_found: usize,
    pub retired_delivered: usize,
    pub tokens: Vec<usize>,
    pub units_full: usize,
    pub units_zero: usize,
    /// Queries that failed (the read route only).
    pub errors: usize,
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

impl Tally {
    pub fn recall(&self) -> f64 {
        ratio(self.delivered, self.active)
    }

    pub fn small_recall(&self) -> f64 {
        ratio(self.small_delivered, self.small_active)
    }

    fn precision(&self) -> Option<f64> {
        (self.items_found > 0).then(|| ratio(self.delivered, self.items_found))
    }

    fn median_tokens(&self) -> usize {
        let mut tokens = self.tokens.clone();
        tokens.sort_unstable();
        tokens.get(tokens.len() / 2).copied().unwrap_or(0)
    }
}

/// Why the read missed active items.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Misses {
    pub cut: usize,
    pub renamed: usize,
    pub scope: usize,
    /// Of `scope`, the ones a read without the default cap on regions
    /// (`--max-regions` [`UNCAPPED`]) delivers.
    pub capped: usize,
}

/// A case where the unbudgeted read and the gold disagree.
#[derive(Debug)]
pub(crate) struct Disagreement {
    pub unit: String,
    pub commit: String,
    pub text: String,
    pub what: &'static str,
    /// Why the gold retired it (empty for an active item).
    pub why: String,
}

/// Everything measured.
pub(crate) struct Evaluation {
    pub golds: Vec<UnitGold>,
    pub tallies: Vec<(Route, [Tally; 4])>,
    pub misses: [Misses; 4],
    pub disagreements: Vec<Disagreement>,
    /// Items retired in live regions that do not name the unit (outside the
    /// definition's retired set), delivered by the read at each budget.
    pub unnamed_retired_delivered: [usize; 4],
    pub read_errors: Vec<String>,
}

impl Evaluation {
    pub fn tally(&self, route: Route, budget: usize) -> &Tally {
        &self
            .tallies
            .iter()
            .find(|(r, _)| *r == route)
            .expect("the route was measured")
            .1[budget]
    }
}

/// Runs `routes` for every unit of `golds` and scores them against the gold.
pub(crate) fn evaluate(
    repo: &Path,
    history: &History,
    golds: Vec<UnitGold>,
    reader: &Reader,
    routes: &[Route],
) -> Result<Evaluation, String> {
    let mut tallies: Vec<(Route, [Tally; 4])> =
        routes.iter().map(|&r| (r, Default::default())).collect();
    let mut misses = [Misses::default(); 4];
    let mut disagreements = Vec::new();
    let mut unnamed_retired_delivered = [0; 4];
    let mut read_errors = Vec::new();
    let mut by_file: BTreeMap<&str, Vec<&UnitGold>> = BTreeMap::new();
    for gold in &golds {
        by_file.entry(&gold.unit.file).or_default().push(gold);
    }
    for (file, file_golds) in by_file {
        let names = history.names_of(file)?;
        let mut universe = history.items_of_file(&names);
        for gold in &file_golds {
            let items = gold.active.iter().chain(&gold.retired);
            universe.extend(items.chain(&gold.retired_unnamed).map(|i| i.text.clone()));
        }
        let universe: Vec<String> = universe.into_iter().collect();
        let index: HashMap<&str, usize> = universe
            .iter()
            .enumerate()
            .map(|(i, t)| (t.as_str(), i))
            .collect();
        let matcher = Matcher::new(universe.clone());
        let indices = |items: &[Item]| -> Vec<usize> {
            items.iter().map(|i| index[i.text.as_str()]).collect()
        };
        // The routes whose output is the file's, whoever asks: found once.
        let mut per_file: HashMap<Route, Vec<(HashSet<usize>, usize)>> = HashMap::new();
        for &route in routes {
            let whole = match route {
                Route::LogPath => git_text(repo, &["log", "--format=%B", "--", file])?,
                Route::Notes => history
                    .notes_of_file(&names)
                    .iter()
                    .map(|(_, note)| format!("{}\n", note.raw))
                    .collect(),
                _ => continue,
            };
            let found = BUDGETS
                .iter()
                .map(|&b| {
                    let text = cut(&whole, b);
                    (matcher.find(&normalize(text)), tokens(text))
                })
                .collect();
            per_file.insert(route, found);
        }
        for gold in file_golds {
            let unit = &gold.unit;
            let active = indices(&gold.active);
            let retired = indices(&gold.retired);
            let unnamed = indices(&gold.retired_unnamed);
            let mut log_l = None;
            let mut read_found: Vec<HashSet<usize>> = Vec::new();
            for (route, route_tallies) in &mut tallies {
                for (b, &budget) in BUDGETS.iter().enumerate() {
                    let (found, spent) = match route {
                        Route::Read | Route::ReadJson => {
                            let json = *route == Route::ReadJson;
                            match reader.read(repo, unit, budget, json, None) {
                                Ok(text) => (matcher.find(&normalize(&text)), tokens(&text)),
                                Err(reason) => {
                                    route_tallies[b].errors += 1;
                                    read_errors.push(format!(
                                        "{} ({}, {}): {reason}",
                                        unit.label(),
                                        route.label(),
                                        budget_label(budget)
                                    ));
                                    (HashSet::new(), 0)
                                }
                            }
                        }
                        Route::LogL => {
                            if log_l.is_none() {
                                let range = format!("{},{}:{}", unit.start, unit.end, file);
                                log_l = Some(git_text(
                                    repo,
                                    &["log", "--format=%B", "-s", "-L", &range],
                                )?);
                            }
                            let text = cut(log_l.as_deref().expect("set above"), budget);
                            (matcher.find(&normalize(text)), tokens(text))
                        }
                        Route::LogPath | Route::Notes => per_file[route][b].clone(),
                    };
                    let tally = &mut route_tallies[b];
                    let delivered = active.iter().filter(|i| found.contains(i)).count();
                    tally.active += active.len();
                    tally.delivered += delivered;
                    if active.len() <= SMALL_UNIT {
                        tally.small_active += active.len();
                        tally.small_delivered += delivered;
                    }
                    tally.items_found += found.len();
                    tally.retired_delivered += retired.iter().filter(|i| found.contains(i)).count();
                    tally.tokens.push(spent);
                    if !active.is_empty() {
                        tally.units_full += usize::from(delivered == active.len());
                        tally.units_zero += usize::from(delivered == 0);
                    }
                    if *route == Route::Read {
                        unnamed_retired_delivered[b] +=
                            unnamed.iter().filter(|i| found.contains(i)).count();
                        read_found.push(found);
                    }
                }
            }
            if read_found.len() == BUDGETS.len() {
                let whole = &read_found[UNBUDGETED];
                // What the unbudgeted read misses by scope, asked again
                // without the cap on regions.
                let by_scope = gold
                    .active
                    .iter()
                    .zip(&active)
                    .any(|(item, i)| !whole.contains(i) && !item.renamed);
                let uncapped = if by_scope {
                    reader
                        .read(repo, unit, None, false, Some(UNCAPPED))
                        .map(|text| matcher.find(&normalize(&text)))
                        .unwrap_or_default()
                } else {
                    HashSet::new()
                };
                for (b, found) in read_found.iter().enumerate() {
                    for (item, i) in gold.active.iter().zip(&active) {
                        if found.contains(i) {
                            continue;
                        }
                        if whole.contains(i) {
                            misses[b].cut += 1;
                        } else if item.renamed {
                            misses[b].renamed += 1;
                        } else {
                            misses[b].scope += 1;
                            misses[b].capped += usize::from(uncapped.contains(i));
                        }
                    }
                }
                let missed = gold
                    .active
                    .iter()
                    .zip(&active)
                    .filter(|(_, i)| !whole.contains(i));
                let wrong = gold
                    .retired
                    .iter()
                    .zip(&retired)
                    .filter(|(_, i)| whole.contains(i));
                for (what, (item, _)) in missed
                    .map(|m| ("active missed", m))
                    .chain(wrong.map(|w| ("retired delivered", w)))
                {
                    disagreements.push(Disagreement {
                        unit: unit.label(),
                        commit: item.commit[..item.commit.len().min(7)].to_owned(),
                        text: item.text.clone(),
                        what,
                        why: item.why.clone(),
                    });
                }
            }
        }
    }
    Ok(Evaluation {
        golds,
        tallies,
        misses,
        disagreements,
        unnamed_retired_delivered,
        read_errors,
    })
}

fn git_text(dir: &Path, args: &[&str]) -> Result<String, String> {
    hermetic(dir)
        .args(args)
        .run_text()
        .map_err(|e| e.to_string())
}

/// The outline units of `file` at HEAD.
fn outline_at_head(dir: &Path, file: &str) -> Result<Vec<outline::Unit>, String> {
    let text = git_text(dir, &["show", &format!("HEAD:{file}")])?;
    outline::outline(file, &text).map_err(|e| format!("{file}: {e}"))
}

/// The corpus's units with their lines at HEAD; units the outline lacks are
/// named in the second list.
fn corpus_units(corpus: &Corpus) -> Result<(Vec<Unit>, Vec<String>), String> {
    let mut outlines: HashMap<&str, Vec<outline::Unit>> = HashMap::new();
    let mut units = Vec::new();
    let mut missing = Vec::new();
    for (file, name) in &corpus.units {
        if !outlines.contains_key(file.as_str()) {
            outlines.insert(file, outline_at_head(&corpus.repo, file)?);
        }
        match outlines[file.as_str()]
            .iter()
            .find(|u| u.name == *name || u.qualified_name == *name)
        {
            Some(u) => units.push(Unit {
                file: file.clone(),
                name: name.clone(),
                start: u.lines.start,
                end: u.lines.end,
            }),
            None => missing.push(format!("{file}:{name}")),
        }
    }
    Ok((units, missing))
}

/// The function and method units of `files` at HEAD, by qualified name.
fn function_units(dir: &Path, files: &[String]) -> Result<Vec<Unit>, String> {
    let mut units = Vec::new();
    for file in files {
        for u in outline_at_head(dir, file)? {
            if matches!(
                u.kind,
                outline::UnitKind::Function | outline::UnitKind::Method
            ) {
                units.push(Unit {
                    file: file.clone(),
                    name: u.qualified_name,
                    start: u.lines.start,
                    end: u.lines.end,
                });
            }
        }
    }
    Ok(units)
}

/// What the command line asked for.
enum Target {
    Corpus {
        spec: DeliverySpec,
        name: &'static str,
    },
    Repo {
        path: PathBuf,
        files: Vec<String>,
        /// Only these units (by name), when any are given.
        units: Vec<String>,
        /// Measure a clone of `path` with synthetic notes ([`synth`]).
        synthesize: bool,
        /// Only the units with the most active items, this many.
        densest: Option<usize>,
    },
}

fn parse(args: &[String]) -> Result<Target, String> {
    let usage = || {
        "usage: cargo xtask bench delivery [--small | --repo PATH [--synthesize] [--file FILE]... \
         [--unit NAME]... [--densest N]]"
            .to_owned()
    };
    let mut small = false;
    let mut synthesize = false;
    let mut repo = None;
    let mut files = Vec::new();
    let mut units = Vec::new();
    let mut densest = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--small" => small = true,
            "--synthesize" => synthesize = true,
            "--repo" => repo = Some(PathBuf::from(args.next().ok_or_else(usage)?)),
            "--file" => files.push(args.next().ok_or_else(usage)?.clone()),
            "--unit" => units.push(args.next().ok_or_else(usage)?.clone()),
            "--densest" => {
                let n = args.next().ok_or_else(usage)?;
                densest = Some(
                    n.parse::<usize>()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| format!("--densest needs a count above 0, not {n:?}"))?,
                );
            }
            _ => return Err(usage()),
        }
    }
    match repo {
        Some(path) if !small => Ok(Target::Repo {
            path: fs::canonicalize(&path).map_err(|e| format!("{}: {e}", path.display()))?,
            files,
            units,
            synthesize,
            densest,
        }),
        None if files.is_empty() && units.is_empty() && !synthesize && densest.is_none() => {
            Ok(if small {
                Target::Corpus {
                    spec: DeliverySpec::small(),
                    name: "small",
                }
            } else {
                Target::Corpus {
                    spec: DeliverySpec::full(),
                    name: "full",
                }
            })
        }
        _ => Err(usage()),
    }
}

pub(super) fn delivery(args: &[String]) -> Result<(), String> {
    let target = parse(args)?;
    let started = Instant::now();
    let (repo, history, units, corpus) = match &target {
        Target::Corpus { spec, name } => {
            let corpus = cached_corpus(spec, name)?;
            let history = History::load(&corpus.repo)?;
            let (units, missing) = corpus_units(&corpus)?;
            println!(
                "\ndelivery: the {name} generated corpus ({} commits, {} merges, {} notes, {} \
                 units; {} renames, {} moves, {} reverts, {} rewrites)",
                corpus.commits,
                corpus.merges,
                corpus.notes,
                corpus.units.len(),
                corpus.renames.len(),
                corpus.moves.len(),
                corpus.reverts,
                corpus.rewrites
            );
            if !missing.is_empty() {
                println!(
                    "  {} units of the generator are not in HEAD's outline, left out: {}",
                    missing.len(),
                    missing.join(", ")
                );
            }
            (corpus.repo.clone(), history, units, Some(corpus))
        }
        Target::Repo {
            path,
            files,
            units: only,
            synthesize,
            ..
        } => {
            let path = if *synthesize {
                let (clone, notes) = synth::synthesize(path, files)?;
                println!(
                    "\ndelivery: {} synthetic notes (one sentence of the commit's message per \
                     function it changed) in {}",
                    notes,
                    clone.display()
                );
                clone
            } else {
                path.clone()
            };
            let path = &path;
            let history = History::load(path)?;
            let files = if files.is_empty() {
                history.most_annotated_files(10)?
            } else {
                files.clone()
            };
            let mut units = function_units(path, &files)?;
            if !only.is_empty() {
                units.retain(|u| only.iter().any(|name| gold::names(name, &u.name)));
                if units.is_empty() {
                    return Err(format!(
                        "no function of {} is called {}",
                        files.join(", "),
                        only.join(" or ")
                    ));
                }
            }
            let (commits, notes) = history.counts();
            println!(
                "\ndelivery: {} ({commits} commits HEAD reaches, {notes} of them noted), {} \
                 function units of {} files: {}",
                path.display(),
                units.len(),
                files.len(),
                files.join(", ")
            );
            (path.clone(), history, units, None)
        }
    };
    let mut golds = history.gold(&units)?;
    if let Target::Repo {
        densest: Some(n), ..
    } = &target
    {
        // Most active items first; ties by the order of the outline.
        golds.sort_by_key(|g| std::cmp::Reverse(g.active.len()));
        golds.truncate(*n);
        println!(
            "  the {} units with the most active items: {}",
            golds.len(),
            golds
                .iter()
                .map(|g| format!("{} ({})", g.unit.name, g.active.len()))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let gold_time = started.elapsed();
    if let Some(corpus) = &corpus {
        let check = cross_check(corpus, &golds);
        for line in &check.lines {
            println!("  {line}");
        }
        for (token, unit) in check.active_retired.iter().take(SHOWN_DISAGREEMENTS) {
            println!("    active in gold though the generator retired it: {token} in {unit}");
        }
        for (unit, gold, model) in check.unlike_model.iter().take(SHOWN_DISAGREEMENTS) {
            println!("    {unit}: active only in gold {gold:?}, only in the model {model:?}");
        }
    }
    // The release binary, as an agent runs it; the library when it cannot
    // be built (the figures are the same, only slower to get).
    let reader = match build_ultragit() {
        Ok(exe) => Reader::Binary(exe),
        Err(reason) => {
            println!("  release binary {reason}; the read route runs in-process");
            let pipeline = GitReadPipeline::open(&repo).map_err(|e| e.to_string())?;
            Reader::InProcess(Box::new(pipeline))
        }
    };
    let routes_started = Instant::now();
    let evaluation = evaluate(&repo, &history, golds, &reader, &Route::ALL)?;
    println!(
        "  (gold in {:.1} s, routes in {:.1} s)",
        gold_time.as_secs_f64(),
        routes_started.elapsed().as_secs_f64()
    );
    print!(
        "{}",
        report(
            &evaluation,
            matches!(target, Target::Corpus { name: "full", .. })
        )
    );
    Ok(())
}

/// The density of the gold: the median of active items per unit and the
/// share of units with at least [`DENSE_UNIT`].
pub(crate) fn density(golds: &[UnitGold]) -> (f64, f64) {
    let mut counts: Vec<usize> = golds.iter().map(|g| g.active.len()).collect();
    counts.sort_unstable();
    let median = match counts.len() {
        0 => 0.0,
        n if n % 2 == 1 => counts[n / 2] as f64,
        n => (counts[n / 2 - 1] + counts[n / 2]) as f64 / 2.0,
    };
    let dense = counts.iter().filter(|&&c| c >= DENSE_UNIT).count();
    (median, ratio(dense, counts.len()))
}

/// The report: density, one line per route and budget, the read's misses,
/// the disagreements and the targets. `full`: the density targets apply.
pub(crate) fn report(evaluation: &Evaluation, full: bool) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let golds = &evaluation.golds;
    let (median, dense) = density(golds);
    let total = |f: fn(&UnitGold) -> usize| golds.iter().map(f).sum::<usize>();
    let _ = writeln!(
        out,
        "  density: {} units, median {median} active items per unit, {:.1}% of units with >= \
         {DENSE_UNIT}; {} active, {} retired, {} not counted (moved from another file)",
        golds.len(),
        dense * 100.0,
        total(|g| g.active.len()),
        total(|g| g.retired.len()),
        total(|g| g.not_counted.len()),
    );
    let unnamed = total(|g| g.retired_unnamed.len());
    if unnamed > 0 {
        let _ = writeln!(
            out,
            "  beside the definition: {unnamed} items retired in live regions that do not name \
             their unit; the read delivers {} / {} / {} / {} of them (400 / 800 / 2,000 / \
             unbudgeted)",
            evaluation.unnamed_retired_delivered[B400],
            evaluation.unnamed_retired_delivered[B800],
            evaluation.unnamed_retired_delivered[B2000],
            evaluation.unnamed_retired_delivered[UNBUDGETED],
        );
    }
    let _ = writeln!(
        out,
        "  {:<22} {:>10} {:>7} {:>9} {:>9} {:>8} {:>7} {:>9} {:>9}",
        "route",
        "budget",
        "recall",
        "<=15 act",
        "precision",
        "retired",
        "tokens",
        "recall=1",
        "recall=0"
    );
    for (route, tallies) in &evaluation.tallies {
        for (tally, &budget) in tallies.iter().zip(&BUDGETS) {
            let precision = tally
                .precision()
                .map_or("-".to_owned(), |p| format!("{p:.3}"));
            let small = if tally.small_active == 0 {
                "-".to_owned()
            } else {
                format!("{:.3}", tally.small_recall())
            };
            let errors = if tally.errors > 0 {
                format!("  ({} queries failed)", tally.errors)
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  {:<22} {:>10} {:>7.3} {:>9} {:>9} {:>8} {:>7} {:>9} {:>9}{errors}",
                route.label(),
                budget_label(budget),
                tally.recall(),
                small,
                precision,
                tally.retired_delivered,
                tally.median_tokens(),
                tally.units_full,
                tally.units_zero,
            );
        }
    }
    let _ = writeln!(out, "  read misses:");
    for (m, &b) in evaluation.misses.iter().zip(&BUDGETS) {
        let _ = writeln!(
            out,
            "    at {:>10}: {} cut by budget, {} lost by a rename, {} lost by scope ({} of them \
             delivered with --max-regions {UNCAPPED})",
            budget_label(b),
            m.cut,
            m.renamed,
            m.scope,
            m.capped
        );
    }
    let shown = &evaluation.disagreements;
    let _ = writeln!(
        out,
        "  gold and the unbudgeted read disagree on {} items{}",
        shown.len(),
        if shown.is_empty() { "" } else { ":" }
    );
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for d in shown {
        let why = if d.why.starts_with("retired by the note of") {
            "retired by a later note"
        } else if d.why.is_empty() {
            d.what
        } else {
            &d.why
        };
        *reasons.entry(why).or_default() += 1;
    }
    if !reasons.is_empty() {
        let reasons: Vec<String> = reasons
            .iter()
            .map(|(why, n)| format!("{n} {why}"))
            .collect();
        let _ = writeln!(out, "    by the gold's reason: {}", reasons.join(", "));
    }
    for d in sample(shown, SHOWN_DISAGREEMENTS) {
        let mut text = d.text.clone();
        if text.chars().count() > 80 {
            text = text.chars().take(79).collect::<String>() + "…";
        }
        let why = if d.why.is_empty() {
            String::new()
        } else {
            format!(" ({})", d.why)
        };
        let _ = writeln!(out, "    {} {} {}{why}: {text}", d.what, d.unit, d.commit);
    }
    if !evaluation.read_errors.is_empty() {
        let _ = writeln!(
            out,
            "  {} read queries failed, first: {}",
            evaluation.read_errors.len(),
            evaluation.read_errors[0]
        );
    }
    for line in targets(evaluation, full) {
        let _ = writeln!(out, "  {line}");
    }
    out
}

/// At most `n` of `disagreements`, half of them (or more, when there are
/// fewer of the other kind) active items missed, one unit at a time, the
/// rest retired items delivered, one reason at a time, so every kind shows.
fn sample(disagreements: &[Disagreement], n: usize) -> Vec<&Disagreement> {
    let mut missed: BTreeMap<&str, Vec<&Disagreement>> = BTreeMap::new();
    let mut retired: BTreeMap<&str, Vec<&Disagreement>> = BTreeMap::new();
    for d in disagreements {
        if d.why.is_empty() {
            missed.entry(&d.unit).or_default().push(d);
        } else {
            let why = d.why.split(" of ").next().unwrap_or_default();
            retired.entry(why).or_default().push(d);
        }
    }
    let missed = round_robin(missed.into_values().collect());
    let retired = round_robin(retired.into_values().collect());
    let from_missed = missed.len().min(n - retired.len().min(n / 2));
    let mut picked: Vec<&Disagreement> = missed.into_iter().take(from_missed).collect();
    picked.extend(retired.into_iter().take(n - picked.len()));
    picked
}

/// The first of each group, then the second of each, and so on.
fn round_robin<T>(groups: Vec<Vec<T>>) -> Vec<T> {
    let mut queues: Vec<std::vec::IntoIter<T>> = groups.into_iter().map(Vec::into_iter).collect();
    let mut out = Vec::new();
    loop {
        let before = out.len();
        out.extend(queues.iter_mut().filter_map(Iterator::next));
        if out.len() == before {
            return out;
        }
    }
}

/// The targets with their verdicts.
pub(crate) fn targets(evaluation: &Evaluation, full: bool) -> Vec<String> {
    let read = |b| evaluation.tally(Route::Read, b);
    let git_log = [Route::LogL, Route::LogPath]
        .iter()
        .map(|&r| evaluation.tally(r, B800).recall())
        .fold(0.0, f64::max);
    let small = read(B800).small_recall();
    let at_800 = read(B800).recall();
    let at_2000 = read(B2000).recall();
    let retired: Vec<usize> = (0..BUDGETS.len())
        .map(|b| read(b).retired_delivered)
        .collect();
    let small_line = if read(B800).small_active == 0 {
        format!(
            "target: at 800 tokens, recall over units with <= {SMALL_UNIT} active >= \
             {SMALL_RECALL_AT_800}: no such unit (n/a)"
        )
    } else {
        format!(
            "target: at 800 tokens, recall over units with <= {SMALL_UNIT} active >= \
             {SMALL_RECALL_AT_800}: {small:.3} ({})",
            verdict(small >= SMALL_RECALL_AT_800)
        )
    };
    let mut lines = vec![
        small_line,
        format!(
            "target: at 800 tokens, recall >= {RATIO_TO_GIT_LOG_AT_800}x the better git log \
             route ({git_log:.3}): {at_800:.3} ({}{})",
            verdict(at_800 >= RATIO_TO_GIT_LOG_AT_800 * git_log && at_800 > 0.0),
            if RATIO_TO_GIT_LOG_AT_800 * git_log > 1.0 {
                format!(
                    "; unreachable here, a recall of {:.2}; the read misses {:.3}, git log {:.3}",
                    RATIO_TO_GIT_LOG_AT_800 * git_log,
                    1.0 - at_800,
                    1.0 - git_log
                )
            } else {
                String::new()
            }
        ),
        format!(
            "target: at 2,000 tokens, recall >= {RECALL_AT_2000}: {at_2000:.3} ({})",
            verdict(at_2000 >= RECALL_AT_2000)
        ),
        format!(
            "target: no retired item delivered by read at any budget: {} ({})",
            retired
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(" / "),
            verdict(retired.iter().all(|&n| n == 0))
        ),
    ];
    if full {
        let (median, dense) = density(&evaluation.golds);
        lines.push(format!(
            "target: density median >= {DENSITY_MEDIAN} active items per unit and >= {:.0}% of \
             units with >= {DENSE_UNIT}: {median}, {:.1}% ({})",
            DENSE_SHARE * 100.0,
            dense * 100.0,
            verdict(median >= DENSITY_MEDIAN && dense >= DENSE_SHARE)
        ));
    }
    lines
}

/// The gold held to what the generator knows: no token it retired is active.
pub(crate) struct CrossCheck {
    /// `(token, unit)` of every retired token the gold holds active.
    pub active_retired: Vec<(String, String)>,
    /// Units whose active tokens differ from the generator's model of them:
    /// `(unit, only in gold, only in the model)`.
    pub unlike_model: Vec<(String, Vec<String>, Vec<String>)>,
    pub lines: Vec<String>,
}

/// The `[dNNNNN]` tokens in `text`.
fn tokens_in(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices("[d").filter_map(|(at, _)| {
        let token = text.get(at..at + 8)?;
        let digits = &token[2..7];
        (digits.bytes().all(|b| b.is_ascii_digit()) && token.ends_with(']')).then_some(token)
    })
}

pub(crate) fn cross_check(corpus: &Corpus, golds: &[UnitGold]) -> CrossCheck {
    let holding = |items: fn(&UnitGold) -> &Vec<Item>, token: &str| -> Vec<String> {
        golds
            .iter()
            .filter(|g| items(g).iter().any(|i| i.text.contains(token)))
            .map(|g| g.unit.label())
            .collect()
    };
    let mut active_retired = Vec::new();
    let mut lines = Vec::new();
    for (what, tokens) in [
        ("retired by a note", &corpus.retired_by_note),
        ("retired by a correction", &corpus.retired_by_correction),
        ("rewritten away", &corpus.rewritten_away),
        ("moved away", &corpus.moved_away),
        ("reverted away", &corpus.reverted_away),
    ] {
        let mut active = 0;
        let mut retired = 0;
        for token in tokens {
            let units = holding(|g| &g.active, token);
            if !units.is_empty() {
                active += 1;
                active_retired.extend(units.into_iter().map(|u| (token.clone(), u)));
            }
            retired += usize::from(!holding(|g| &g.retired, token).is_empty());
        }
        lines.push(format!(
            "gold against the generator: of {} tokens {what}, {active} active in gold ({}), \
             {retired} retired",
            tokens.len(),
            verdict(active == 0)
        ));
    }
    let model: HashMap<String, &Vec<String>> = corpus
        .units
        .iter()
        .zip(&corpus.modelled_active)
        .map(|((file, name), tokens)| (format!("{file}:{name}"), tokens))
        .collect();
    let mut unlike_model = Vec::new();
    for gold in golds {
        let label = gold.unit.label();
        let modelled: BTreeSet<&str> = model
            .get(&label)
            .map(|t| t.iter().map(String::as_str).collect())
            .unwrap_or_default();
        let found: BTreeSet<&str> = gold
            .active
            .iter()
            .flat_map(|i| tokens_in(&i.text))
            .collect();
        if found != modelled {
            let only = |a: &BTreeSet<&str>, b: &BTreeSet<&str>| -> Vec<String> {
                a.difference(b).map(|t| (*t).to_owned()).collect()
            };
            unlike_model.push((label, only(&found, &modelled), only(&modelled, &found)));
        }
    }
    lines.push(format!(
        "gold against the generator's line-origin model: the same active tokens on {} of {} \
         units ({})",
        golds.len() - unlike_model.len(),
        golds.len(),
        verdict(unlike_model.is_empty())
    ));
    CrossCheck {
        active_retired,
        unlike_model,
        lines,
    }
}

/// What the benchmark keeps of a generated corpus (cached beside it).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Corpus {
    pub repo: PathBuf,
    pub commits: usize,
    pub merges: usize,
    pub notes: usize,
    pub units: Vec<(String, String)>,
    pub renames: Vec<(String, String)>,
    pub moves: Vec<(String, String, String)>,
    pub reverts: usize,
    pub rewrites: usize,
    pub retired_by_note: Vec<String>,
    pub retired_by_correction: Vec<String>,
    pub rewritten_away: Vec<String>,
    pub moved_away: Vec<String>,
    pub reverted_away: Vec<String>,
    pub modelled_active: Vec<Vec<String>>,
}

impl From<DeliveryCorpus> for Corpus {
    fn from(c: DeliveryCorpus) -> Corpus {
        Corpus {
            repo: c.repo,
            commits: c.commits,
            merges: c.merges,
            notes: c.notes,
            units: c.units,
            renames: c.renames,
            moves: c.moves,
            reverts: c.reverts,
            rewrites: c.rewrites,
            retired_by_note: c.retired_by_note,
            retired_by_correction: c.retired_by_correction,
            rewritten_away: c.rewritten_away,
            moved_away: c.moved_away,
            reverted_away: c.reverted_away,
            modelled_active: c.modelled_active,
        }
    }
}

/// The marker of a complete corpus: its spec and what the generator said.
#[derive(serde::Serialize, serde::Deserialize)]
struct Marker {
    spec: String,
    corpus: Corpus,
}

/// The corpus of `spec`, generated into the fixtures directory the first
/// time.
fn cached_corpus(spec: &DeliverySpec, name: &str) -> Result<Corpus, String> {
    let dir = fixtures::dir(&format!("delivery-{name}-v{CORPUS_VERSION}"));
    let marker = dir.join(".complete");
    if let Ok(text) = fs::read_to_string(&marker)
        && let Ok(cached) = serde_json::from_str::<Marker>(&text)
        && cached.spec == format!("{spec:?}")
        && cached.corpus.repo.exists()
    {
        return Ok(cached.corpus);
    }
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let repo = dir.join("repo");
    eprintln!("generating {} ({name} delivery corpus)…", repo.display());
    let corpus = Corpus::from(generate_delivery(&repo, spec)?);
    git_text(&repo, &["repack", "-a", "-d", "-f", "--quiet"])?;
    let cached = Marker {
        spec: format!("{spec:?}"),
        corpus,
    };
    let text = serde_json::to_string(&cached).expect("a corpus serializes");
    fs::write(&marker, text).map_err(|e| format!("{}: {e}", marker.display()))?;
    Ok(cached.corpus)
}
