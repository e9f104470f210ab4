//! Stage 4, *match regions*: the regions of the fetched notes that concern a
//! scope, in today's lines, with a warning for those whose lines cannot exist.

use std::collections::{HashMap, HashSet};

use gitctx::BlameEntry;

use crate::regions::{Dropped, Fetched, Matched, Matches, match_regions};
use crate::scope::Resolved;

use super::Run;

impl Run<'_> {
    /// Stage 4: the regions of the query ([`match_regions`]), with a warning
    /// for every region left out because its lines cannot exist.
    pub(super) fn match_regions(
        &mut self,
        resolved: &Resolved,
        blames: &[Vec<BlameEntry>],
        fetched: &[Fetched],
    ) -> Vec<Matched> {
        let Matches { matched, dropped } = match_regions(resolved, blames, fetched);
        self.warn_impossible_lines(fetched, &matched, dropped);
        matched
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
    pub(super) fn warn_impossible_lines(
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
}
