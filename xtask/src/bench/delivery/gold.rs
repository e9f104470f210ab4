//! The gold set of `bench delivery`: which recorded items are *active* for a
//! unit at HEAD, which are *retired*, and which are not counted — computed
//! from git alone (`git blame --porcelain`, `git log`, `git rev-list`,
//! `git notes list`, `git cat-file --batch`) and the notes as
//! `serde_json::Value`, never through `ultragit-read`, so the read is held to
//! a second implementation of the rule rather than to itself.
//!
//! **The definition.** For a unit U at HEAD (file F, lines s..=e from the
//! outline):
//! - Blame U's lines at HEAD (`git blame --porcelain -L s,e HEAD -- F`; the
//!   units of a file in one process, one `-L` each): each line gives a commit
//!   C, its original path P and its original line o.
//! - For each such C with a note N(C) — its corrections being N(C)'s
//!   `corrections` plus the pending ones under
//!   `refs/notes/ultragit-corrections` (one JSON correction per line, a
//!   correction already in the note counted once) — a region R of N(C) is
//!   **live in U** when R.file == P for some blamed line of C in U, and R.lines
//!   holds that line's o or R.ast_anchor.name names U ("names": equal, or equal
//!   after taking the last segment after `::` or `.` of either).
//! - The items of a region are its constraints (their `text`), its
//!   `risk_notes` and its semantic dependencies (their `nature`), identified
//!   and matched by normalized text (trimmed, whitespace runs collapsed to one
//!   space).
//! - An item of a live region is **active** unless it is retired:
//!   (a) by a correction of N(C) that applies to R (its target has no file, or
//!   the target's file is R.file and it has no anchor or the anchor is
//!   R.ast_anchor.name), applied in timestamp order: `flag` retires every item
//!   of R; `remove` of `constraints` retires the constraint of that text;
//!   `set` of `risk_notes` retires the old risk and makes the new value the
//!   risk item; `add` to `constraints` adds an active item. A correction
//!   missing its reason, author or timestamp, or of an unknown kind, is
//!   ignored. (b) by a later note: a note N(C′) of a commit C′ ≠ C that HEAD
//!   reaches and C is an ancestor of, with a region naming U (its anchor names
//!   U, its file is F or a former name of F) whose `retires` (a list of
//!   strings) holds the item's text.
//! - **Retired for U**: every item of a region naming U (anchor names U, file
//!   F or a former name) in the note of a commit HEAD reaches that is not
//!   active for U. A text both active and retired counts as active. Former
//!   names of F are the other paths of `git log --follow --name-only
//!   --format= -- F`.
//! - Items of regions naming U under any other file (code moved in from
//!   another file: blame does not follow moves) are neither: they are counted
//!   as "not counted".
//!
//! Beside the definition, the gold keeps the retired items of live regions
//! that do not name U (a flagged region reached by its lines alone), as
//! information only: they are not in the retired set.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::fixtures::hermetic;

/// The notes ref of the annotations, and the one of pending corrections.
const NOTES_REF: &str = "refs/notes/ultragit";
const CORRECTIONS_REF: &str = "refs/notes/ultragit-corrections";

/// A unit at HEAD: its file, the name it is asked by, and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unit {
    pub file: String,
    pub name: String,
    pub start: u32,
    pub end: u32,
}

impl Unit {
    /// `file:name`, for reports.
    pub fn label(&self) -> String {
        format!("{}:{}", self.file, self.name)
    }
}

/// One item for one unit: its normalized text and where it came from.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub text: String,
    /// The commit whose note holds it (the first one found).
    pub commit: String,
    /// Whether every region it came through is under a former name of the
    /// unit's file (for an active item; false otherwise).
    pub renamed: bool,
    /// Why a retired item is retired (empty for an active one).
    pub why: String,
}

/// The gold of one unit.
#[derive(Debug)]
pub(crate) struct UnitGold {
    pub unit: Unit,
    pub active: Vec<Item>,
    pub retired: Vec<Item>,
    pub not_counted: Vec<Item>,
    /// Retired items of live regions that do not name the unit, neither
    /// active nor in `retired` (information only).
    pub retired_unnamed: Vec<Item>,
}

/// What the gold knows of the repository: HEAD's history and its notes.
pub(crate) struct History {
    dir: PathBuf,
    /// The commits HEAD reaches, in `git rev-list HEAD` order (newest first).
    commits: Vec<String>,
    index: HashMap<String, usize>,
    parents: Vec<Vec<usize>>,
    /// The notes of commits HEAD reaches, by commit index.
    notes: HashMap<usize, Note>,
    former: RefCell<HashMap<String, Vec<String>>>,
    ancestors: RefCell<HashMap<usize, Vec<u64>>>,
}

/// One note, as the gold reads it.
pub(crate) struct Note {
    /// The note's text as stored.
    pub raw: String,
    regions: Vec<Region>,
}

struct Region {
    file: String,
    anchor: String,
    start: u32,
    end: u32,
    /// Items after the note's corrections: still standing, and retired by
    /// a correction.
    standing: Vec<String>,
    corrected_away: Vec<(String, &'static str)>,
    /// Normalized `retires` texts.
    retires: Vec<String>,
}

impl Region {
    /// Every item, with why it is retired when a correction retired it.
    fn items(&self) -> impl Iterator<Item = (&String, Option<&'static str>)> {
        let standing = self.standing.iter().map(|t| (t, None));
        standing.chain(self.corrected_away.iter().map(|(t, why)| (t, Some(*why))))
    }
}

/// Trimmed, whitespace runs collapsed to one space.
pub(crate) fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The last segment of a name after `::` or `.`.
fn last_segment(name: &str) -> &str {
    let after_colons = name.rsplit("::").next().unwrap_or(name);
    after_colons.rsplit('.').next().unwrap_or(after_colons)
}

/// Whether the anchor name `anchor` names the unit called `unit`.
pub(crate) fn names(anchor: &str, unit: &str) -> bool {
    anchor == unit || last_segment(anchor) == last_segment(unit)
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    hermetic(dir)
        .args(args)
        .run_text()
        .map_err(|e| e.to_string())
}

impl History {
    /// Reads HEAD's history and every note of a commit it reaches.
    pub fn load(dir: &Path) -> Result<History, String> {
        let mut commits = Vec::new();
        let mut parent_ids = Vec::new();
        for line in git(dir, &["rev-list", "--parents", "HEAD"])?.lines() {
            let mut ids = line.split_whitespace();
            let Some(commit) = ids.next() else { continue };
            commits.push(commit.to_owned());
            parent_ids.push(ids.map(str::to_owned).collect::<Vec<_>>());
        }
        let index: HashMap<String, usize> = commits
            .iter()
            .enumerate()
            .map(|(i, c)| (c.clone(), i))
            .collect();
        let parents = parent_ids
            .iter()
            .map(|ps| ps.iter().filter_map(|p| index.get(p).copied()).collect())
            .collect();
        let texts = note_texts(dir, NOTES_REF, &index)?;
        let mut pending = note_texts(dir, CORRECTIONS_REF, &index)?;
        let mut notes = HashMap::new();
        for (commit, raw) in texts {
            // A note that is not JSON has no items.
            let Ok(value) = serde_json::from_str::<Value>(&raw) else {
                continue;
            };
            let pending: Vec<Value> = pending
                .remove(&commit)
                .map(|record| {
                    record
                        .lines()
                        .filter_map(|line| serde_json::from_str(line).ok())
                        .collect()
                })
                .unwrap_or_default();
            notes.insert(
                commit,
                Note {
                    regions: regions(&value, &pending),
                    raw,
                },
            );
        }
        Ok(History {
            dir: dir.to_owned(),
            commits,
            index,
            parents,
            notes,
            former: RefCell::new(HashMap::new()),
            ancestors: RefCell::new(HashMap::new()),
        })
    }

    /// How many commits HEAD reaches, and how many of them have a note.
    pub fn counts(&self) -> (usize, usize) {
        (self.commits.len(), self.notes.len())
    }

    /// `file` and the paths it had before renames, `file` first.
    pub fn names_of(&self, file: &str) -> Result<Vec<String>, String> {
        if let Some(names) = self.former.borrow().get(file) {
            return Ok(names.clone());
        }
        let mut names = vec![file.to_owned()];
        let log = git(
            &self.dir,
            &["log", "--follow", "--name-only", "--format=", "--", file],
        )?;
        for path in log.lines().map(str::trim).filter(|p| !p.is_empty()) {
            if !names.iter().any(|n| n == path) {
                names.push(path.to_owned());
            }
        }
        self.former
            .borrow_mut()
            .insert(file.to_owned(), names.clone());
        Ok(names)
    }

    /// The notes with a region under one of `names`, newest commit first,
    /// with their commits.
    pub fn notes_of_file<'a>(&'a self, names: &[String]) -> Vec<(&'a str, &'a Note)> {
        self.commits
            .iter()
            .enumerate()
            .filter_map(|(i, commit)| Some((commit.as_str(), self.notes.get(&i)?)))
            .filter(|(_, note)| note.regions.iter().any(|r| names.contains(&r.file)))
            .collect()
    }

    /// Every item text of the regions under one of `names`.
    pub fn items_of_file(&self, names: &[String]) -> BTreeSet<String> {
        self.notes
            .values()
            .flat_map(|note| &note.regions)
            .filter(|r| names.contains(&r.file))
            .flat_map(Region::items)
            .map(|(text, _)| text.clone())
            .collect()
    }

    /// The files at HEAD the most note regions name, most first (ties by
    /// path), at most `n`.
    pub fn most_annotated_files(&self, n: usize) -> Result<Vec<String>, String> {
        let tree = git(&self.dir, &["ls-tree", "-r", "--name-only", "HEAD"])?;
        let at_head: HashSet<&str> = tree.lines().collect();
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for region in self.notes.values().flat_map(|n| &n.regions) {
            if at_head.contains(region.file.as_str()) {
                *counts.entry(&region.file).or_default() += 1;
            }
        }
        let mut files: Vec<(&str, usize)> = counts.into_iter().collect();
        files.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        Ok(files
            .into_iter()
            .take(n)
            .map(|(f, _)| f.to_owned())
            .collect())
    }

    /// Whether commit `ancestor` is an ancestor of `commit` (both indices;
    /// a commit is not its own ancestor here).
    fn is_ancestor(&self, ancestor: usize, commit: usize) -> bool {
        let mut cache = self.ancestors.borrow_mut();
        let bits = cache.entry(commit).or_insert_with(|| {
            let mut bits = vec![0u64; self.commits.len().div_ceil(64)];
            let mut stack = self.parents[commit].clone();
            while let Some(c) = stack.pop() {
                if bits[c / 64] & (1 << (c % 64)) == 0 {
                    bits[c / 64] |= 1 << (c % 64);
                    stack.extend(&self.parents[c]);
                }
            }
            bits
        });
        bits[ancestor / 64] & (1 << (ancestor % 64)) != 0
    }

    /// The gold of every unit; the units of a file share one blame.
    pub fn gold(&self, units: &[Unit]) -> Result<Vec<UnitGold>, String> {
        let mut by_file: BTreeMap<&str, Vec<&Unit>> = BTreeMap::new();
        for unit in units {
            by_file.entry(&unit.file).or_default().push(unit);
        }
        let mut golds: HashMap<(String, String, u32), UnitGold> = HashMap::new();
        for (file, file_units) in by_file {
            let lines = self.blame(file, &file_units)?;
            for unit in file_units {
                let blamed: Vec<&Blamed> = lines
                    .iter()
                    .filter(|l| (unit.start..=unit.end).contains(&l.line))
                    .collect();
                let gold = self.unit_gold(unit, &blamed)?;
                golds.insert((unit.file.clone(), unit.name.clone(), unit.start), gold);
            }
        }
        Ok(units
            .iter()
            .map(|u| {
                golds
                    .remove(&(u.file.clone(), u.name.clone(), u.start))
                    .expect("every unit has its gold")
            })
            .collect())
    }

    /// `git blame --porcelain` of the units' lines at HEAD, one `-L` each.
    fn blame(&self, file: &str, units: &[&Unit]) -> Result<Vec<Blamed>, String> {
        let mut args = vec!["blame".to_owned(), "--porcelain".to_owned()];
        for unit in units {
            args.push("-L".to_owned());
            args.push(format!("{},{}", unit.start, unit.end));
        }
        args.extend(["HEAD", "--", file].map(str::to_owned));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Ok(parse_porcelain(&git(&self.dir, &args)?))
    }

    fn unit_gold(&self, unit: &Unit, blamed: &[&Blamed]) -> Result<UnitGold, String> {
        let names_of_file = self.names_of(&unit.file)?;
        let named = |r: &Region| names(&r.anchor, &unit.name);
        // The later notes that may retire an item: (commit, retired texts).
        let retiring: Vec<(usize, &Vec<String>)> = self
            .notes
            .iter()
            .flat_map(|(&c, note)| note.regions.iter().map(move |r| (c, r)))
            .filter(|(_, r)| !r.retires.is_empty() && named(r))
            .filter(|(_, r)| names_of_file.contains(&r.file))
            .map(|(c, r)| (c, &r.retires))
            .collect();

        let mut by_commit: BTreeMap<usize, Vec<(&str, u32)>> = BTreeMap::new();
        for line in blamed {
            if let Some(&c) = self.index.get(&line.commit) {
                by_commit
                    .entry(c)
                    .or_default()
                    .push((&line.path, line.original));
            }
        }
        let mut active: BTreeMap<String, Item> = BTreeMap::new();
        let mut retired: BTreeMap<String, Item> = BTreeMap::new();
        let mut retired_unnamed: BTreeMap<String, Item> = BTreeMap::new();
        let item = |text: &str, c: usize, renamed: bool, why: &str| Item {
            text: text.to_owned(),
            commit: self.commits[c].clone(),
            renamed,
            why: why.to_owned(),
        };
        for (&c, lines) in &by_commit {
            let Some(note) = self.notes.get(&c) else {
                continue;
            };
            for region in &note.regions {
                let live = lines.iter().any(|&(path, original)| {
                    region.file == path
                        && ((region.start..=region.end).contains(&original) || named(region))
                });
                if !live {
                    continue;
                }
                let renamed = region.file != unit.file;
                for text in &region.standing {
                    let later = retiring.iter().find(|(c2, texts)| {
                        *c2 != c && texts.contains(text) && self.is_ancestor(c, *c2)
                    });
                    if let Some((c2, _)) = later {
                        let why = format!("retired by the note of {}", &self.commits[*c2][..7]);
                        retired
                            .entry(text.clone())
                            .or_insert_with(|| item(text, c, false, &why));
                    } else {
                        active
                            .entry(text.clone())
                            .and_modify(|i| i.renamed &= renamed)
                            .or_insert_with(|| item(text, c, renamed, ""));
                    }
                }
                if !named(region) {
                    for (text, why) in &region.corrected_away {
                        retired_unnamed
                            .entry(text.clone())
                            .or_insert_with(|| item(text, c, false, why));
                    }
                }
            }
        }
        // Newest commit first, so a text in several notes is reported with
        // its newest one.
        let mut not_counted: BTreeMap<String, Item> = BTreeMap::new();
        for c in 0..self.commits.len() {
            let Some(note) = self.notes.get(&c) else {
                continue;
            };
            for region in note.regions.iter().filter(|r| named(r)) {
                let (target, superseded) = if names_of_file.contains(&region.file) {
                    (&mut retired, "its region is not live in the unit")
                } else {
                    (&mut not_counted, "")
                };
                for (text, why) in region.items() {
                    target
                        .entry(text.clone())
                        .or_insert_with(|| item(text, c, false, why.unwrap_or(superseded)));
                }
            }
        }
        retired.retain(|text, _| !active.contains_key(text));
        not_counted.retain(|text, _| !active.contains_key(text) && !retired.contains_key(text));
        retired_unnamed.retain(|text, _| !active.contains_key(text) && !retired.contains_key(text));
        Ok(UnitGold {
            unit: unit.clone(),
            active: active.into_values().collect(),
            retired: retired.into_values().collect(),
            not_counted: not_counted.into_values().collect(),
            retired_unnamed: retired_unnamed.into_values().collect(),
        })
    }
}

/// The text of every note under `notes_ref` of a commit in `index`, by
/// commit index (`git notes list`, then `git cat-file --batch`).
fn note_texts(
    dir: &Path,
    notes_ref: &str,
    index: &HashMap<String, usize>,
) -> Result<HashMap<usize, String>, String> {
    let exists = hermetic(dir)
        .args(["rev-parse", "--verify", "--quiet", notes_ref])
        .run_unchecked()
        .map_err(|e| e.to_string())?
        .status
        .success();
    if !exists {
        return Ok(HashMap::new());
    }
    let list = git(dir, &["notes", &format!("--ref={notes_ref}"), "list"])?;
    let mut wanted = Vec::new();
    for line in list.lines() {
        if let Some((blob, commit)) = line.split_once(' ')
            && let Some(&c) = index.get(commit.trim())
        {
            wanted.push((blob.to_owned(), c));
        }
    }
    let stdin: String = wanted.iter().map(|(blob, _)| format!("{blob}\n")).collect();
    let out = hermetic(dir)
        .args(["cat-file", "--batch"])
        .stdin(stdin)
        .run()
        .map_err(|e| e.to_string())?
        .stdout;
    let mut texts = HashMap::new();
    let mut rest = &out[..];
    for (blob, c) in wanted {
        let newline = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or("cat-file --batch: output ends early")?;
        let header = String::from_utf8_lossy(&rest[..newline]).into_owned();
        let size: usize = match header.split(' ').collect::<Vec<_>>()[..] {
            [id, "blob", size] if id == blob => size
                .parse()
                .map_err(|_| format!("cat-file --batch: bad header {header:?}"))?,
            _ => return Err(format!("cat-file --batch: unexpected header {header:?}")),
        };
        let body = rest
            .get(newline + 1..newline + 1 + size)
            .ok_or("cat-file --batch: output ends early")?;
        texts.insert(c, String::from_utf8_lossy(body).into_owned());
        rest = rest.get(newline + 2 + size..).unwrap_or_default();
    }
    Ok(texts)
}

/// A blamed line at HEAD.
struct Blamed {
    commit: String,
    path: String,
    original: u32,
    line: u32,
}

/// The lines of `git blame --porcelain` output. A group's header is
/// `COMMIT ORIGINAL FINAL [COUNT]`; `filename` follows it the first time a
/// commit is seen (and every time for a commit with several paths), so the
/// last path seen of each commit is its lines' path.
fn parse_porcelain(text: &str) -> Vec<Blamed> {
    let mut paths: HashMap<String, String> = HashMap::new();
    let mut current: Option<(String, u32, u32)> = None;
    let mut lines = Vec::new();
    for line in text.lines() {
        if line.starts_with('\t') {
            if let Some((commit, original, final_line)) = current.take() {
                let path = paths.get(&commit).cloned().unwrap_or_default();
                lines.push(Blamed {
                    commit,
                    path,
                    original,
                    line: final_line,
                });
            }
        } else if let Some(path) = line.strip_prefix("filename ") {
            if let Some((commit, ..)) = &current {
                paths.insert(commit.clone(), path.to_owned());
            }
        } else {
            let fields: Vec<&str> = line.split(' ').collect();
            if let [commit, original, final_line, ..] = fields[..]
                && (fields.len() == 3 || fields.len() == 4)
                && commit.len() >= 40
                && commit.bytes().all(|b| b.is_ascii_hexdigit())
                && let (Ok(original), Ok(final_line)) = (original.parse(), final_line.parse())
            {
                current = Some((commit.to_owned(), original, final_line));
            }
        }
    }
    lines
}

/// A correction, as the gold applies it.
struct Correction<'a> {
    file: Option<&'a str>,
    anchor: Option<&'a str>,
    kind: &'a str,
    field: Option<&'a str>,
    value: Option<String>,
    when: Option<DateTime<Utc>>,
}

impl<'a> Correction<'a> {
    /// `None` for a malformed correction: no reason, author or timestamp, or
    /// a kind that is not `flag`, `set`, `add` or `remove`.
    fn read(value: &'a Value) -> Option<Correction<'a>> {
        let text = |key: &str| value.get(key).and_then(Value::as_str);
        let present = |key: &str| text(key).is_some_and(|t| !t.trim().is_empty());
        if !(present("reason") && present("author") && present("timestamp")) {
            return None;
        }
        let kind = text("kind")?;
        if !["flag", "set", "add", "remove"].contains(&kind) {
            return None;
        }
        let target = value.get("target");
        let target_text = |key: &str| target.and_then(|t| t.get(key)).and_then(Value::as_str);
        Some(Correction {
            file: target_text("file"),
            anchor: target_text("anchor"),
            kind,
            field: text("field"),
            value: text("value").map(normalize),
            when: DateTime::parse_from_rfc3339(text("timestamp")?)
                .ok()
                .map(|t| t.with_timezone(&Utc)),
        })
    }

    fn applies_to(&self, file: &str, anchor: &str) -> bool {
        match self.file {
            None => true,
            Some(f) => f == file && self.anchor.is_none_or(|a| a == anchor),
        }
    }
}

/// The regions of a note, with its corrections (and the `pending` ones)
/// applied.
fn regions(note: &Value, pending: &[Value]) -> Vec<Region> {
    let mut corrections: Vec<&Value> = note
        .get("corrections")
        .and_then(Value::as_array)
        .map(|c| c.iter().collect())
        .unwrap_or_default();
    for correction in pending {
        if !corrections.contains(&correction) {
            corrections.push(correction);
        }
    }
    let mut corrections: Vec<Correction> = corrections
        .into_iter()
        .filter_map(Correction::read)
        .collect();
    // Stable: equal (or unreadable) times keep the note's order.
    corrections.sort_by_key(|c| c.when);
    let Some(regions) = note.get("regions").and_then(Value::as_array) else {
        return Vec::new();
    };
    regions
        .iter()
        .filter_map(|r| region(r, &corrections))
        .collect()
}

fn region(value: &Value, corrections: &[Correction]) -> Option<Region> {
    let file = value.get("file")?.as_str()?.to_owned();
    let anchor = value.get("ast_anchor")?.get("name")?.as_str()?.to_owned();
    let lines = value.get("lines")?;
    let line = |key: &str| {
        lines
            .get(key)
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
    };
    let (start, end) = (line("start")?, line("end")?);
    let texts = |list: &str, key: Option<&str>| -> Vec<String> {
        value
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|entry| match key {
                Some(key) => entry.get(key)?.as_str(),
                None => entry.as_str(),
            })
            .map(normalize)
            .filter(|t| !t.is_empty())
            .collect()
    };
    let mut constraints = texts("constraints", Some("text"));
    let mut risk = value
        .get("risk_notes")
        .and_then(Value::as_str)
        .map(normalize)
        .filter(|t| !t.is_empty());
    let dependencies = texts("semantic_dependencies", Some("nature"));
    let mut corrected_away = Vec::new();
    let mut flagged = false;
    for c in corrections.iter().filter(|c| c.applies_to(&file, &anchor)) {
        let value = c.value.clone().filter(|v| !v.is_empty());
        match (c.kind, c.field, value) {
            ("flag", ..) => flagged = true,
            ("remove", Some("constraints"), Some(v)) if constraints.contains(&v) => {
                constraints.retain(|t| *t != v);
                corrected_away.push((v, "removed by a correction"));
            }
            ("add", Some("constraints"), Some(v)) if !constraints.contains(&v) => {
                constraints.push(v);
            }
            ("set", Some("risk_notes"), Some(v)) => {
                if let Some(old) = risk.replace(v.clone())
                    && old != v
                {
                    corrected_away.push((old, "replaced by a correction"));
                }
            }
            _ => {}
        }
    }
    let mut standing: Vec<String> = constraints.into_iter().chain(risk).collect();
    standing.extend(dependencies);
    if flagged {
        let flagged = standing.drain(..).map(|t| (t, "its region is flagged"));
        corrected_away.extend(flagged);
    }
    // A text removed and later added again stands.
    corrected_away.retain(|(t, _)| !standing.contains(t));
    Some(Region {
        file,
        anchor,
        start,
        end,
        standing,
        corrected_away,
        retires: texts("retires", None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_compare_last_segments() {
        assert!(names("Client::connect", "connect"));
        assert!(names("connect", "net::Client::connect"));
        assert!(names("Outer.Inner.run", "Inner::run"));
        assert!(!names("connect", "disconnect"));
    }

    #[test]
    fn normalize_collapses_whitespace() {
        assert_eq!(normalize("  a\n\tb  c "), "a b c");
    }

    #[test]
    fn corrections_retire_and_add_items() {
        let note: Value = serde_json::from_str(
            r#"{"regions": [
                {"file": "a.rs", "ast_anchor": {"type": "function", "name": "f"},
                 "lines": {"start": 1, "end": 3},
                 "constraints": [{"text": "keep  A"}, {"text": "keep B"}],
                 "risk_notes": "old risk",
                 "semantic_dependencies": [{"file": "b.rs", "anchor": "g", "nature": "calls g"}]},
                {"file": "a.rs", "ast_anchor": {"type": "function", "name": "h"},
                 "lines": {"start": 5, "end": 6}, "constraints": [{"text": "h rule"}]}
             ],
             "corrections": [
                {"target": {"file": "a.rs", "anchor": "f"}, "kind": "remove", "field": "constraints",
                 "value": "keep A", "reason": "r", "author": "a", "timestamp": "2025-01-01T00:00:00Z"},
                {"target": {"file": "a.rs", "anchor": "f"}, "kind": "set", "field": "risk_notes",
                 "value": "new risk", "reason": "r", "author": "a", "timestamp": "2025-01-02T00:00:00Z"},
                {"target": {"file": "a.rs", "anchor": "h"}, "kind": "flag",
                 "reason": "", "author": "a", "timestamp": "2025-01-02T00:00:00Z"}
             ]}"#,
        )
        .expect("valid JSON");
        let pending: Value = serde_json::from_str(
            r#"{"target": {"file": "a.rs", "anchor": "f"}, "kind": "add", "field": "constraints",
                "value": "added C", "reason": "r", "author": "a", "timestamp": "2025-01-03T00:00:00Z"}"#,
        )
        .expect("valid JSON");
        let regions = regions(&note, &[pending]);
        assert_eq!(
            regions[0].standing,
            ["keep B", "added C", "new risk", "calls g"]
        );
        assert_eq!(
            regions[0].corrected_away,
            [
                ("keep A".to_owned(), "removed by a correction"),
                ("old risk".to_owned(), "replaced by a correction")
            ]
        );
        // The flag has no reason: ignored.
        assert_eq!(regions[1].standing, ["h rule"]);
    }

    #[test]
    fn porcelain_keeps_each_commits_path() {
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        let text = format!(
            "{a} 3 1 2\nauthor x\nfilename old.rs\n\tline\n{a} 4 2\n\tline\n\
             {b} 1 3 1\nauthor y\nsummary s\nfilename new.rs\n\tline\n"
        );
        let lines = parse_porcelain(&text);
        let seen: Vec<(&str, &str, u32, u32)> = lines
            .iter()
            .map(|l| (&l.commit[..1], l.path.as_str(), l.original, l.line))
            .collect();
        assert_eq!(
            seen,
            [
                ("a", "old.rs", 3, 1),
                ("a", "old.rs", 4, 2),
                ("b", "new.rs", 1, 3)
            ]
        );
    }
}
