//! Blame carried and blamed ahead of a read (see the [module docs](super)),
//! and the record of how each file's blame was found.

use gitctx::{BlameCache, BlameEngine, BlameOptions, ObjectId, Repo};

use crate::query::ReadQuery;
use crate::speculate;

use super::Run;

/// How many of the files a query names have their cached blame carried to
/// HEAD ahead of the read (see the module docs).
pub const CARRY_AHEAD_FILES: usize = 8;

/// How a read found the blame of one file: what
/// [`GitReadPipeline::execute_traced`](super::GitReadPipeline::execute_traced) reports, for `ultragit read
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
pub(super) enum Ahead {
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
pub(super) struct CarryAhead(std::cell::Cell<Option<std::thread::JoinHandle<CarryOutcomes>>>);

impl CarryAhead {
    /// Nothing carried ahead.
    pub(super) fn none() -> CarryAhead {
        CarryAhead(std::cell::Cell::new(None))
    }

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
    pub(super) fn pending(&self) -> bool {
        let handle = self.0.take();
        let pending = handle.is_some();
        self.0.set(handle);
        pending
    }

    /// Waits for the carrying to end; what it did, the first time.
    pub(super) fn join(&self) -> CarryOutcomes {
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

impl Run<'_> {
    /// Starts carrying the cached blames of the files `query` names forward
    /// to HEAD, when the blame cache is in use with git's blame (the only
    /// engine whose blames are carried).
    pub(super) fn carry_ahead(&mut self, query: &ReadQuery) {
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
}

#[cfg(test)]
mod tests {
    use gitctx::{CacheOutcome, CarryWalk, CostStop};

    use super::*;

    fn route(carried_ahead: Option<CacheOutcome>, blamed: Option<CacheOutcome>) -> BlameRoute {
        BlameRoute {
            path: "src/lib.rs".to_owned(),
            carried_ahead,
            blamed,
        }
    }

    #[test]
    fn a_route_served_from_the_cache_says_no_process_ran() {
        let text = route(None, Some(CacheOutcome::default())).describe();
        assert_eq!(
            text,
            "src/lib.rs: served from the cache at HEAD (blamed or carried there before); no git blame run"
        );
        assert_eq!(
            route(None, None).describe(),
            "src/lib.rs: not carried (nothing cached at HEAD, and no cached blame of the file met its lines); blamed without the cache"
        );
    }

    #[test]
    fn a_carried_route_names_its_walk_and_the_cost_models_stop() {
        let from: ObjectId = "ab".repeat(20).parse().expect("40 hex digits");
        let carried = CacheOutcome {
            carried_from: Some((from, 12)),
            carry: Some(CarryWalk {
                commits: 12,
                diffs: 3,
                met: 40,
                own: 2,
                unknown: 5,
                over_budget: false,
                stopped_by_cost: Some(CostStop {
                    spent_ms: 30,
                    predicted_ms: 900,
                    blame_ms: 400,
                }),
            }),
            git_processes: 0,
        };
        let blamed = CacheOutcome {
            git_processes: 1,
            ..CacheOutcome::default()
        };
        let text = route(Some(carried), Some(blamed)).describe();
        assert!(
            text.starts_with("src/lib.rs: carried from abababab (12 commits back): 12 commits walked, 3 diffs, 40 lines met a cached blame, 2 decided by the walk, 5 left to git (stopped by the cost model: after 30 ms"),
            "{text}"
        );
        assert!(
            text.ends_with("; 1 git blame run for the lines not known"),
            "{text}"
        );
    }
}
