//! Outlines remembered on disk, so that a read does not parse the file it
//! reads again — the largest cost of a read once blame is cached.
//!
//! One entry per file, `ultragit/cache/outline/<hash of the path>` in the
//! repository's common git directory: the outline of one version of the
//! file (its blob id), with the [`outline::Language::outline_version`] it
//! was made with. [`OutlineCache::outline`] gives the outline of a file whose
//! content is a given blob:
//! - the entry is of that blob: its units, nothing parsed
//!   ([`OutlineSource::Cached`]);
//! - the entry is of another blob (an older version, usually): the outline
//!   is carried forward from it ([`outline::carry`]: only the changed
//!   stretches of the file are parsed, and the result is exactly a full
//!   parse's, or the carry gives up), then stored ([`OutlineSource::Carried`]);
//! - otherwise the file is parsed, and the outline stored
//!   ([`OutlineSource::Parsed`]).
//!
//! The answer is always the outline a full parse of the content gives: a
//! cached one is keyed by the content's blob id and the grammar and rules
//! version; a carried one is exact by construction (see [`outline::carry`]
//! and its property test).
//!
//! **Best effort, never trusted.** Entries are read bounded
//! ([`MAX_ENTRY_BYTES`]), below the cache directory without following links
//! (`safe_io::Dir`), and decoded with every length and count checked: one
//! that is unreadable, damaged, of another format, version, grammar or path
//! (a hash collision), or whose lines lie beyond the file, is ignored and
//! rewritten. Writes go to a temporary file renamed into place, so
//! concurrent readers see an old or a new entry, never half of one. A cache
//! that cannot be written (a read-only repository) costs only speed; deleting
//! it is always safe.
//!
//! **Bounded.** An entry over [`MAX_ENTRY_BYTES`] is not written; the cache
//! keeps at most [`MAX_ENTRIES`] files, the least recently written removed
//! when a new one is added. [`OutlineCache::warm`] (the `post-commit` hook's
//! background `ultragit cache warm`) carries the entries of files changed at
//! HEAD forward to it — carrying only, never a full parse, so it stays cheap.
//!
//! **Format** (little-endian, str = u32 byte length then UTF-8):
//!
//! ```text
//! magic "UGOUTLIN" · format u32 · outline version (str) · path (str) · blob [20]
//! clean u8 · unit count u32 · units: kind u8 · name (str) · qualified name (str)
//!   · signature (str) · start u32 · end u32
//! top-level span count u32 · spans: start u32 · end u32 (nothing may follow)
//! ```

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use gitctx::{ObjectId, Repo};
use outline::{Language, LineSpan, Outline, OutlineError, Unit, UnitKind};
use safe_io::{Dir, FileKind};

use crate::index::Reader;

/// The largest entry read or written.
pub const MAX_ENTRY_BYTES: u64 = 16 * 1024 * 1024;
/// The most entries (files) the cache keeps.
pub const MAX_ENTRIES: usize = 1024;

const MAGIC: &[u8; 8] = b"UGOUTLIN";
/// The entry format; another one is ignored (and rewritten).
const FORMAT: u32 = 1;

/// Where outlines are remembered between reads (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlineCache {
    dir: PathBuf,
}

/// How [`OutlineCache::outline`] found an outline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutlineSource {
    /// The entry was of this content: nothing parsed.
    Cached,
    /// Carried forward from the entry of another version of the file.
    Carried,
    /// Parsed whole.
    Parsed,
}

/// What the cache holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutlineUsage {
    /// Entries (one per file).
    pub entries: u64,
    /// Their size.
    pub bytes: u64,
}

/// What [`OutlineCache::warm`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutlineWarmReport {
    /// Entries looked at (at most the limit given).
    pub considered: u64,
    /// Entries already of the file at HEAD.
    pub current: u64,
    /// Entries carried forward to the file at HEAD.
    pub carried: u64,
}

/// One decoded entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    version: String,
    path: String,
    blob: ObjectId,
    outline: Outline,
}

impl OutlineCache {
    /// A cache kept in `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> OutlineCache {
        OutlineCache { dir: dir.into() }
    }

    /// The directory the cache lives in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The outline of `path` whose content is the blob `blob` of `repo`,
    /// `text` (its bytes as UTF-8, invalid sequences replaced): from the
    /// cache, carried forward from the cached outline of another version of
    /// the file, or parsed; stored for the next call in the last two cases.
    /// Fails as [`outline::parse`] does (no grammar for the path).
    pub fn outline(
        &self,
        repo: &Repo,
        path: &str,
        blob: ObjectId,
        text: &str,
    ) -> Result<(Vec<Unit>, OutlineSource), OutlineError> {
        let Some(language) = Language::from_path(path) else {
            return Ok((outline::parse(path, text)?.units, OutlineSource::Parsed));
        };
        let version = language.outline_version();
        let entry = self.load(path, &version);
        if let Some(entry) = &entry
            && entry.blob == blob
            && fits(&entry.outline, text)
        {
            return Ok((entry.outline.units.clone(), OutlineSource::Cached));
        }
        let carried = entry.and_then(|entry| carried(repo, language, &entry, text));
        let (outline, source) = match carried {
            Some(outline) => (outline, OutlineSource::Carried),
            None => (outline::parse_for(language, text)?, OutlineSource::Parsed),
        };
        let entry = Entry {
            version,
            path: path.to_owned(),
            blob,
            outline,
        };
        self.store(&entry);
        Ok((entry.outline.units, source))
    }

    /// How many entries the cache holds, in how many bytes (zero when it
    /// does not exist yet). Best effort.
    pub fn usage(&self) -> OutlineUsage {
        let mut usage = OutlineUsage::default();
        for (_, _, bytes) in self.files() {
            usage.entries += 1;
            usage.bytes += bytes;
        }
        usage
    }

    /// Carries the entries of up to `max_paths` files (the most recently
    /// written first) forward to their content at `repo`'s HEAD, where it
    /// differs — carrying only ([`outline::carry`]), never parsing a file
    /// whole, so that the `post-commit` hook's warm-up stays cheap; an entry
    /// that cannot be carried is left for the next read. Best effort.
    pub fn warm(&self, repo: &Repo, max_paths: usize) -> OutlineWarmReport {
        let mut report = OutlineWarmReport::default();
        let mut files = self.files();
        files.sort_by_key(|(_, modified, _)| std::cmp::Reverse(*modified));
        let Ok(dir) = Dir::open(&self.dir) else {
            return report;
        };
        for (name, _, _) in files.into_iter().take(max_paths) {
            report.considered += 1;
            let Some(entry) =
                read_entry(&dir, &name).filter(|entry| entry_name(&entry.path) == name)
            else {
                continue;
            };
            let Some(language) = Language::from_path(&entry.path) else {
                continue;
            };
            if entry.version != language.outline_version() {
                continue;
            }
            let Ok((blob, bytes)) = repo.file_with_id_at("HEAD", &entry.path) else {
                continue;
            };
            if blob == entry.blob {
                report.current += 1;
                continue;
            }
            let text = String::from_utf8_lossy(&bytes);
            if let Some(outline) = carried(repo, language, &entry, &text) {
                report.carried += u64::from(self.store(&Entry {
                    blob,
                    outline,
                    ..entry
                }));
            }
        }
        report
    }

    /// The entry of `path` made with `version`, if there is a usable one.
    fn load(&self, path: &str, version: &str) -> Option<Entry> {
        read_entry(&Dir::open(&self.dir).ok()?, &entry_name(path))
            .filter(|entry| entry.path == path && entry.version == version)
    }

    /// Writes `entry`, keeping at most [`MAX_ENTRIES`] files; whether it
    /// was written (best effort: an unwritable cache only costs speed).
    fn store(&self, entry: &Entry) -> bool {
        let bytes = encode(entry);
        if bytes.len() as u64 > MAX_ENTRY_BYTES {
            return false;
        }
        let name = entry_name(&entry.path);
        let written = std::fs::create_dir_all(&self.dir)
            .ok()
            .and_then(|()| Dir::open(&self.dir).ok())
            .and_then(|dir| {
                let new = dir.kind(&name).ok()?.is_none();
                dir.write(&name, &bytes).ok()?;
                Some((dir, new))
            });
        match written {
            Some((dir, new)) => {
                if new {
                    prune(&dir);
                }
                true
            }
            None => false,
        }
    }

    /// Every entry file: its name, when it was written and its size.
    fn files(&self) -> Vec<(String, SystemTime, u64)> {
        let Ok(dir) = Dir::open(&self.dir) else {
            return Vec::new();
        };
        entry_files(&dir)
    }
}

/// The outline of `text` carried forward from `entry` (an outline of
/// another version of the file, read from the repository by its blob id).
fn carried(repo: &Repo, language: Language, entry: &Entry, text: &str) -> Option<Outline> {
    if !entry.outline.clean {
        return None;
    }
    let old = repo.blob(entry.blob).ok()??;
    let old = String::from_utf8_lossy(&old);
    if !fits(&entry.outline, &old) {
        return None;
    }
    outline::carry_for(language, &old, &entry.outline, text)
}

/// The entry in the file `name` of the cache directory `dir`, if it is one
/// (read bounded, never through a link).
fn read_entry(dir: &Dir, name: &str) -> Option<Entry> {
    decode(&dir.read_optional(name, MAX_ENTRY_BYTES).ok()??)
}

/// Whether every line of `outline` lies within `text`.
fn fits(outline: &Outline, text: &str) -> bool {
    let lines = gitctx::count_lines(text.as_bytes());
    outline
        .units
        .iter()
        .map(|unit| unit.lines)
        .chain(outline.top_level.iter().copied())
        .all(|span| span.start >= 1 && span.start <= span.end && span.end <= lines)
}

/// The entry files of the cache directory `dir` (temporary files, whose
/// names start with a dot, left out).
fn entry_files(dir: &Dir) -> Vec<(String, SystemTime, u64)> {
    dir.entries()
        .unwrap_or_default()
        .into_iter()
        .filter(|(_, kind)| *kind == FileKind::File)
        .filter_map(|(name, _)| name.into_string().ok())
        .filter(|name| !name.starts_with('.'))
        .filter_map(|name| {
            let meta = dir.open_file(&name).ok()?.metadata().ok()?;
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            Some((name, modified, meta.len()))
        })
        .collect()
}

/// Removes the least recently written entries beyond [`MAX_ENTRIES`].
fn prune(dir: &Dir) {
    let mut files = entry_files(dir);
    if files.len() <= MAX_ENTRIES {
        return;
    }
    files.sort_by_key(|(_, modified, _)| std::cmp::Reverse(*modified));
    for (name, _, _) in files.into_iter().skip(MAX_ENTRIES) {
        let _ = dir.remove_file(&name);
    }
}

/// The file name of `path`'s entry: 16 hex digits of its FNV-1a hash.
fn entry_name(path: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in path.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

fn encode(entry: &Entry) -> Vec<u8> {
    fn put_u32(out: &mut Vec<u8>, n: u32) {
        out.extend_from_slice(&n.to_le_bytes());
    }
    fn put_len(out: &mut Vec<u8>, n: usize) {
        put_u32(out, u32::try_from(n).unwrap_or(u32::MAX));
    }
    fn put_str(out: &mut Vec<u8>, text: &str) {
        put_len(out, text.len());
        out.extend_from_slice(text.as_bytes());
    }
    let outline = &entry.outline;
    let mut out = Vec::with_capacity(64 + outline.units.len() * 96);
    out.extend_from_slice(MAGIC);
    put_u32(&mut out, FORMAT);
    put_str(&mut out, &entry.version);
    put_str(&mut out, &entry.path);
    out.extend_from_slice(entry.blob.as_bytes());
    out.push(u8::from(outline.clean));
    put_len(&mut out, outline.units.len());
    for unit in &outline.units {
        let kind = UnitKind::ALL.iter().position(|k| *k == unit.kind);
        out.push(kind.and_then(|k| u8::try_from(k).ok()).unwrap_or(u8::MAX));
        put_str(&mut out, &unit.name);
        put_str(&mut out, &unit.qualified_name);
        put_str(&mut out, &unit.signature);
        put_u32(&mut out, unit.lines.start);
        put_u32(&mut out, unit.lines.end);
    }
    put_len(&mut out, outline.top_level.len());
    for span in &outline.top_level {
        put_u32(&mut out, span.start);
        put_u32(&mut out, span.end);
    }
    out
}

/// An entry, if `bytes` is one of this format, consistent to the last byte.
fn decode(bytes: &[u8]) -> Option<Entry> {
    let mut r = Reader(bytes);
    if r.take(MAGIC.len())? != MAGIC || r.u32()? != FORMAT {
        return None;
    }
    let version = r.str()?.to_owned();
    let path = r.str()?.to_owned();
    let blob = r.oid()?;
    let clean = match r.u8()? {
        0 => false,
        1 => true,
        _ => return None,
    };
    // A unit takes at least 1 + 3 × 4 + 2 × 4 bytes.
    let count = r.count(21)?;
    let mut units = Vec::with_capacity(count);
    for _ in 0..count {
        let kind = *UnitKind::ALL.get(usize::from(r.u8()?))?;
        let name = r.str()?.to_owned();
        let qualified_name = r.str()?.to_owned();
        let signature = r.str()?.to_owned();
        let lines = LineSpan {
            start: r.u32()?,
            end: r.u32()?,
        };
        units.push(Unit {
            kind,
            name,
            qualified_name,
            signature,
            lines,
        });
    }
    let count = r.count(8)?;
    let mut top_level = Vec::with_capacity(count);
    for _ in 0..count {
        top_level.push(LineSpan {
            start: r.u32()?,
            end: r.u32()?,
        });
    }
    r.0.is_empty().then_some(Entry {
        version,
        path,
        blob,
        outline: Outline {
            units,
            clean,
            top_level,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        let text = "/// Doc.\nfn a() {}\n\nimpl S {\n    fn b(&self) {}\n}\n";
        Entry {
            version: Language::Rust.outline_version(),
            path: "src/a b.rs".to_owned(),
            blob: "ab".repeat(20).parse().unwrap(),
            outline: outline::parse("src/a b.rs", text).unwrap(),
        }
    }

    #[test]
    fn entries_round_trip_and_damage_is_rejected() {
        let entry = entry();
        let bytes = encode(&entry);
        assert_eq!(decode(&bytes), Some(entry));
        for cut in [0, 8, 12, bytes.len() / 2, bytes.len() - 1] {
            assert_eq!(decode(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode(&longer), None, "trailing bytes");
        let mut other = bytes.clone();
        other[8] = 9;
        assert_eq!(decode(&other), None, "another format");
        // A huge count does not allocate: it is checked against the bytes.
        let mut counted = encode(&Entry {
            outline: Outline {
                units: Vec::new(),
                clean: true,
                top_level: Vec::new(),
            },
            ..self::entry()
        });
        let at = counted.len() - 8;
        counted[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(decode(&counted), None);
    }

    #[test]
    fn outlines_must_fit_their_text() {
        let outline = entry().outline;
        let text = "/// Doc.\nfn a() {}\n\nimpl S {\n    fn b(&self) {}\n}\n";
        assert!(fits(&outline, text));
        assert!(fits(&outline, text.trim_end()));
        assert!(!fits(&outline, "/// Doc.\nfn a() {}\n"));
    }

    #[test]
    fn the_least_recently_written_entries_beyond_the_limit_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let total = MAX_ENTRIES + 5;
        for i in 0..total {
            let path = dir.path().join(format!("{i:016x}"));
            std::fs::write(&path, b"x").unwrap();
            let when = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000 + i as u64);
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(when)
                .unwrap();
        }
        std::fs::write(dir.path().join(".tmp-entry"), b"x").unwrap();
        prune(&Dir::open(dir.path()).unwrap());
        let cache = OutlineCache::new(dir.path());
        assert_eq!(cache.usage().entries, MAX_ENTRIES as u64);
        for i in 0..total {
            let kept = dir.path().join(format!("{i:016x}")).exists();
            assert_eq!(kept, i >= 5, "entry {i}");
        }
        assert!(dir.path().join(".tmp-entry").exists(), "not an entry");
    }

    #[test]
    fn entry_names_are_stable_hashes() {
        assert_eq!(entry_name("src/lib.rs"), entry_name("src/lib.rs"));
        assert_ne!(entry_name("src/lib.rs"), entry_name("src/lib.rt"));
        assert_eq!(entry_name("").len(), 16);
        assert_eq!(entry_name(""), "cbf29ce484222325");
    }
}
