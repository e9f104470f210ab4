//! The repository's commit-graph, as far as reads care: whether it carries
//! changed-path Bloom filters, and writing one that does.
//!
//! Why: with changed-path Bloom filters in the commit-graph, `git blame` and
//! `git log -- PATH` (one path; what the read pipeline runs when a file's
//! blame or renames are not cached) skip the commits that do not touch the
//! file without opening their trees. A fresh clone has no commit-graph, and
//! the one `git gc` writes by default has no filters; once a graph has them,
//! later writes without `--changed-paths` (`git gc`, `git maintenance`,
//! `git commit-graph write --reachable`) keep them (checked with git 2.47:
//! git carries the setting of the graph it replaces).
//!
//! **Detection** reads only the headers of git's files, never a whole graph
//! (graphs of large repositories are hundreds of MiB): the 8-byte header
//! (`CGPH`, version 1, hash version, number of chunks, number of base graphs)
//! and the chunk table after it (one 4-byte id and 8-byte offset per chunk,
//! ended by an id of zero) — at most [`HEADER_LIMIT`] bytes of each file. A
//! graph has changed paths when its table lists both the `BIDX` (Bloom
//! index) and `BDAT` (Bloom data) chunks. As git does, the single file
//! `objects/info/commit-graph` is used when it exists, else the split chain
//! `objects/info/commit-graphs/commit-graph-chain` and the
//! `graph-<hash>.graph` files it names, which has changed paths only when
//! every one of its files does.
//!
//! The objects directory is the one of the common directory (linked worktrees
//! share it). A repository that borrows objects through alternates may also
//! use their graphs; only its own is looked at. Anything that cannot be read
//! or does not parse — a link (never followed), a truncated or foreign file —
//! counts as no commit-graph: the answer only decides whether to suggest or
//! write one, and writing one is always safe.
//!
//! With any commit-graph (filters or not), the reachability walks
//! ([`Repo::unreachable_from`], [`Repo::unreachable_from_refs`], which
//! `history`, `deps`, remap and doctor ask) are `git rev-list --stdin`, which
//! reads commits from the graph where libgit2's walk inflates each one: on
//! git's own history (82,000 commits, 1,116 annotated ones on `diff.c`)
//! `ultragit history diff.c` went from 861 ms to 128 ms. Without a graph the
//! walk stays in-process.

use std::io::Read as _;
use std::path::Path;
use std::process::Output;

use safe_io::Dir;

use crate::error::Result;
use crate::repo::Repo;

/// The most bytes read of a graph file: its header and the largest chunk
/// table the header can announce (255 chunks and the terminating entry).
pub const HEADER_LIMIT: u64 = 8 + 12 * 256;

/// The most bytes read of `commit-graph-chain` (one hash a line; real chains
/// have a handful of lines).
const CHAIN_LIMIT: u64 = 64 * 1024;

/// What the repository's commit-graph holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitGraph {
    /// No commit-graph, or none that could be read.
    None,
    /// A commit-graph without changed-path Bloom filters (in a split chain:
    /// in at least one of its files).
    WithoutChangedPaths,
    /// A commit-graph whose every file has changed-path Bloom filters.
    WithChangedPaths,
}

impl CommitGraph {
    /// Whether path-limited history walks can use Bloom filters.
    pub fn has_changed_paths(self) -> bool {
        self == CommitGraph::WithChangedPaths
    }
}

/// The commit-graph below the objects directory `objects`.
pub fn commit_graph_in(objects: &Path) -> CommitGraph {
    let Ok(dir) = Dir::open(objects) else {
        return CommitGraph::None;
    };
    if let Some(header) = read_header(&dir, "info/commit-graph") {
        return match has_changed_paths(&header) {
            Some(true) => CommitGraph::WithChangedPaths,
            Some(false) => CommitGraph::WithoutChangedPaths,
            None => CommitGraph::None,
        };
    }
    chain(&dir)
}

/// The split chain's answer: `None` when there is no chain or a file of it
/// cannot be read.
fn chain(objects: &Dir) -> CommitGraph {
    let Ok(Some(text)) =
        objects.read_optional("info/commit-graphs/commit-graph-chain", CHAIN_LIMIT)
    else {
        return CommitGraph::None;
    };
    let text = String::from_utf8_lossy(&text);
    let mut layers = 0;
    let mut all = true;
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        // A hash, nothing else: never a path.
        if !matches!(line.len(), 40 | 64) || !line.bytes().all(|b| b.is_ascii_hexdigit()) {
            return CommitGraph::None;
        }
        let Some(header) = read_header(objects, &format!("info/commit-graphs/graph-{line}.graph"))
        else {
            return CommitGraph::None;
        };
        match has_changed_paths(&header) {
            Some(changed) => all &= changed,
            None => return CommitGraph::None,
        }
        layers += 1;
    }
    match (layers, all) {
        (0, _) => CommitGraph::None,
        (_, true) => CommitGraph::WithChangedPaths,
        (_, false) => CommitGraph::WithoutChangedPaths,
    }
}

/// The first [`HEADER_LIMIT`] bytes of the graph file `rel` (fewer when it is
/// shorter); `None` when it does not exist or cannot be read.
fn read_header(objects: &Dir, rel: &str) -> Option<Vec<u8>> {
    let file = objects.open_file(rel).ok()?;
    let mut bytes = Vec::new();
    file.take(HEADER_LIMIT).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// Whether the graph file starting with `header` lists both Bloom chunks;
/// `None` when it is not a commit-graph file git 2.x writes (signature,
/// version 1, a table that fits and ends with a zero id).
fn has_changed_paths(header: &[u8]) -> Option<bool> {
    let (fixed, table) = header.split_at_checked(8)?;
    if &fixed[..4] != b"CGPH" || fixed[4] != 1 {
        return None;
    }
    let chunks = usize::from(fixed[6]);
    let mut ids = table
        .chunks_exact(12)
        .take(chunks + 1)
        .map(|entry| &entry[..4]);
    let mut bidx = false;
    let mut bdat = false;
    for _ in 0..chunks {
        match ids.next()? {
            [0, 0, 0, 0] => return None,
            b"BIDX" => bidx = true,
            b"BDAT" => bdat = true,
            _ => {}
        }
    }
    (ids.next()? == [0, 0, 0, 0]).then_some(bidx && bdat)
}

impl Repo {
    /// What the repository's own commit-graph holds (see the module docs).
    pub fn commit_graph(&self) -> CommitGraph {
        commit_graph_in(&self.common_dir().join("objects"))
    }

    /// Whether git reads a commit-graph here: `core.commitGraph`, as git
    /// resolves it (every config file git reads, so one process), true when
    /// unset.
    pub fn commit_graph_enabled(&self) -> Result<bool> {
        let cmd = self
            .git()
            .args(["config", "--type=bool", "--get", "core.commitGraph"]);
        let output: Output = cmd.run_unchecked()?;
        match output.status.code() {
            Some(0) => Ok(String::from_utf8_lossy(&output.stdout).trim() != "false"),
            // Unset.
            Some(1) => Ok(true),
            _ => Err(cmd.failure(&output)),
        }
    }

    /// Writes a commit-graph of every reachable commit with changed-path
    /// Bloom filters (`git commit-graph write --reachable --changed-paths`),
    /// replacing the one there. Takes seconds on a large history; git keeps
    /// the filters in its later writes.
    pub fn write_commit_graph(&self) -> Result<()> {
        self.git()
            .args(["commit-graph", "write", "--reachable", "--changed-paths"])
            .run()
            .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A graph header with `ids` in its table, ended by a zero id.
    fn header(ids: &[&[u8; 4]]) -> Vec<u8> {
        let mut bytes = b"CGPH".to_vec();
        bytes.extend([1, 1, u8::try_from(ids.len()).unwrap(), 0]);
        for (i, id) in ids.iter().copied().chain([&[0u8; 4]]).enumerate() {
            bytes.extend(*id);
            bytes.extend((100 + 8 * i as u64).to_be_bytes());
        }
        bytes
    }

    #[test]
    fn bloom_chunks_are_read_from_the_table() {
        let plain = header(&[b"OIDF", b"OIDL", b"CDAT", b"GDA2"]);
        let bloom = header(&[b"OIDF", b"OIDL", b"CDAT", b"GDA2", b"BIDX", b"BDAT"]);
        assert_eq!(has_changed_paths(&plain), Some(false));
        assert_eq!(has_changed_paths(&bloom), Some(true));
        // One of the two is not enough.
        assert_eq!(has_changed_paths(&header(&[b"OIDF", b"BIDX"])), Some(false));
        // Bytes after the table (the chunks themselves) are not looked at.
        let mut longer = bloom.clone();
        longer.extend(b"BIDXBDAT");
        assert_eq!(has_changed_paths(&longer), Some(true));
    }

    #[test]
    fn what_is_not_a_graph_header_is_none() {
        let bloom = header(&[b"OIDF", b"BIDX", b"BDAT"]);
        let mut foreign = bloom.clone();
        foreign[..4].copy_from_slice(b"PACK");
        let mut version = bloom.clone();
        version[4] = 2;
        // A zero id before the announced count, or none where it should end.
        let early = header(&[b"OIDF", b"\0\0\0\0", b"BDAT"]);
        let mut unterminated = bloom.clone();
        unterminated[6] = 2;
        for bad in [
            &b""[..],
            b"CGPH",
            &bloom[..bloom.len() - 12],
            &foreign,
            &version,
            &early,
            &unterminated,
        ] {
            assert_eq!(has_changed_paths(bad), None, "{bad:?}");
        }
        // The largest table a header can announce fits in the limit.
        let many: Vec<[u8; 4]> = (0..255u8).map(|i| [b'X', b'X', b'X', i.max(1)]).collect();
        let refs: Vec<&[u8; 4]> = many.iter().collect();
        assert_eq!(header(&refs).len() as u64, HEADER_LIMIT);
        assert_eq!(has_changed_paths(&header(&refs)), Some(false));
    }
}
