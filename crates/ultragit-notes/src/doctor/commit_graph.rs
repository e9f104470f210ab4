//! The commit-graph check: whether path-limited history walks can skip the
//! commits that do not touch a file (changed-path Bloom filters, see
//! `gitctx::commit_graph`). Without them reads are right, only slower when
//! their caches miss: a warning, repaired by writing one (safe: git replaces
//! its graph atomically and keeps the filters from then on).

use super::{Check, Doctor, Finding, Repair};
use crate::error::NotesError;

/// What to run by hand.
pub(super) const WRITE: &str = "git commit-graph write --reachable --changed-paths";

impl Doctor<'_> {
    pub(super) fn commit_graph(&self) -> Result<Finding, NotesError> {
        let id = "commit-graph";
        let graph = self.repo.commit_graph();
        if graph.has_changed_paths() {
            return Ok(Check::ok(
                id,
                "the commit-graph has changed-path Bloom filters: git blame and git log -- PATH \
                 skip the commits that do not touch the file",
            )
            .into());
        }
        if !self.repo.commit_graph_enabled()? {
            return Ok(Check::ok(
                id,
                "core.commitGraph is false: git reads no commit-graph here (your setting)",
            )
            .into());
        }
        if self.repo.head()?.commit().is_none() {
            return Ok(Check::ok(id, "no commits yet: nothing to graph").into());
        }
        let what = match graph {
            gitctx::CommitGraph::None => "there is no commit-graph (a fresh clone has none)",
            _ => {
                "the commit-graph has no changed-path Bloom filters (the one git gc writes by default)"
            }
        };
        Ok(Finding {
            check: Check::warn(
                id,
                format!(
                    "{what}: git blame and git log -- PATH, which a read runs when its caches \
                     miss, open every commit's trees"
                ),
            )
            .with_fix(format!("{WRITE} (or ultragit doctor --fix)")),
            repair: Some(Repair::CommitGraph),
        })
    }

    /// Writes the commit-graph with changed-path Bloom filters.
    pub(super) fn write_commit_graph(&self) -> Result<String, NotesError> {
        self.repo.write_commit_graph()?;
        Ok(format!(
            "wrote a commit-graph with changed-path Bloom filters ({WRITE}); git gc and git \
             maintenance keep them"
        ))
    }
}
