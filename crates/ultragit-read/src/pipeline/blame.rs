//! Stage 2, *blame*: each scope blamed at HEAD, through the blame cache.

use gitctx::{BlameEntry, BlameOptions};
use ultragit_schema::LineRange;

use crate::error::ReadError;
use crate::regions::clip_blame;
use crate::scope::Resolved;

use super::Run;
use super::ahead::BlameRoute;

impl Run<'_> {
    /// Stage 2: each scope blamed at HEAD (through the blame cache, if any),
    /// in the order of the scopes; the other paths each blame names (the
    /// file's former names) are remembered for the later stages.
    pub(super) fn blame(&mut self, resolved: &Resolved) -> Result<Vec<Vec<BlameEntry>>, ReadError> {
        let blames = resolved
            .scopes
            .iter()
            .map(|scope| self.blame_lines(scope.file(), scope.blame_range()))
            .collect::<Result<Vec<_>, _>>()?;
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
        Ok(blames)
    }

    /// The route record of `path`, added when first asked for.
    pub(super) fn route(&self, path: &str) -> std::cell::RefMut<'_, BlameRoute> {
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
    pub(super) fn blame_lines(
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use ultragit_schema::LineRange;

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
