//! A partial blame: what is known of one file's blame at one commit — the
//! final-line ranges blamed so far and their entries. The blame cache stores
//! one per (commit, path) ([`crate::blame_cache`]); carrying a blame forward
//! produces one ([`crate::blame_carry`]). It knows nothing of either: a leaf
//! below both, above [`crate::blame`].

use crate::blame::{BlameEntry, merge_adjacent};

/// What is known of one file's blame at one commit: the final-line ranges
/// blamed so far, and the entries covering them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Known {
    /// Disjoint, sorted, inclusive final-line ranges.
    pub covered: Vec<(u32, u32)>,
    /// Entries inside `covered`, sorted by `final_start`.
    pub entries: Vec<BlameEntry>,
}

impl Known {
    /// The parts of `start..=end` not yet covered, in order.
    pub fn gaps(&self, start: u32, end: u32) -> Vec<(u32, u32)> {
        let mut gaps = Vec::new();
        let mut next = start;
        for &(a, b) in &self.covered {
            if b < next {
                continue;
            }
            if a > end {
                break;
            }
            if a > next {
                gaps.push((next, a - 1));
            }
            next = b.saturating_add(1);
            if next > end {
                return gaps;
            }
        }
        if next <= end {
            gaps.push((next, end));
        }
        gaps
    }

    /// Adds freshly blamed `ranges` (disjoint from what is covered) and their
    /// entries.
    pub fn add(&mut self, ranges: &[(u32, u32)], entries: Vec<BlameEntry>) {
        self.covered.extend_from_slice(ranges);
        self.covered.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(self.covered.len());
        for &(a, b) in &self.covered {
            match merged.last_mut() {
                Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        self.covered = merged;
        self.entries.extend(entries);
        self.entries = merge_adjacent(std::mem::take(&mut self.entries));
    }

    /// The entries for `start..=end`, cut to it.
    pub fn clip(&self, start: u32, end: u32) -> Vec<BlameEntry> {
        self.entries
            .iter()
            .filter(|e| e.final_end >= start && e.final_start <= end)
            .map(|e| {
                let from = e.final_start.max(start);
                let to = e.final_end.min(end);
                let original_start = e.original_start + (from - e.final_start);
                BlameEntry {
                    commit: e.commit,
                    original_path: e.original_path.clone(),
                    original_start,
                    original_end: original_start + (to - from),
                    final_start: from,
                    final_end: to,
                    boundary: e.boundary,
                }
            })
            .collect()
    }

    /// Whether every covered line has exactly one entry and every entry lies
    /// in a covered range of a file of `len` lines.
    pub(crate) fn consistent(&self, len: u32) -> bool {
        let ranges_ok = self
            .covered
            .windows(2)
            .all(|w| w[0].1.saturating_add(1) < w[1].0)
            && self
                .covered
                .iter()
                .all(|&(a, b)| a >= 1 && a <= b && b <= len);
        if !ranges_ok {
            return false;
        }
        let mut line_counts = 0u64;
        let mut previous_end = 0u32;
        for e in &self.entries {
            if e.final_start == 0
                || e.final_start > e.final_end
                || e.final_start <= previous_end
                || e.original_start == 0
                || e.original_end < e.original_start
                || e.original_end - e.original_start != e.final_end - e.final_start
                || !self
                    .covered
                    .iter()
                    .any(|&(a, b)| a <= e.final_start && e.final_end <= b)
            {
                return false;
            }
            previous_end = e.final_end;
            line_counts += u64::from(e.final_end - e.final_start + 1);
        }
        let covered_lines: u64 = self
            .covered
            .iter()
            .map(|&(a, b)| u64::from(b - a + 1))
            .sum();
        line_counts == covered_lines
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An entry of commit `commit` (its byte repeated; 1 is the boundary)
    /// for final lines `fs..=fe`, which were lines from `os` in it.
    pub(crate) fn entry(commit: u8, fs: u32, fe: u32, os: u32) -> BlameEntry {
        BlameEntry {
            commit: format!("{commit:02x}").repeat(20).parse().unwrap(),
            original_path: "a b\\c".to_owned(),
            original_start: os,
            original_end: os + (fe - fs),
            final_start: fs,
            final_end: fe,
            boundary: commit == 1,
        }
    }

    #[test]
    fn gaps_are_the_uncovered_parts() {
        let known = Known {
            covered: vec![(5, 10), (20, 30)],
            entries: Vec::new(),
        };
        assert_eq!(known.gaps(1, 4), vec![(1, 4)]);
        assert_eq!(known.gaps(1, 5), vec![(1, 4)]);
        assert_eq!(known.gaps(5, 10), Vec::<(u32, u32)>::new());
        assert_eq!(known.gaps(7, 25), vec![(11, 19)]);
        assert_eq!(known.gaps(1, 40), vec![(1, 4), (11, 19), (31, 40)]);
        assert_eq!(known.gaps(31, 31), vec![(31, 31)]);
        assert_eq!(Known::default().gaps(3, 8), vec![(3, 8)]);
    }

    #[test]
    fn adding_merges_ranges_and_runs() {
        let mut known = Known::default();
        known.add(&[(1, 4)], vec![entry(2, 1, 4, 11)]);
        known.add(
            &[(5, 6), (9, 9)],
            vec![entry(2, 5, 6, 15), entry(3, 9, 9, 1)],
        );
        assert_eq!(known.covered, vec![(1, 6), (9, 9)]);
        assert_eq!(known.entries, vec![entry(2, 1, 6, 11), entry(3, 9, 9, 1)]);
        assert!(known.consistent(9));
        assert!(!known.consistent(8), "a covered line past the end");
        assert_eq!(
            known.clip(3, 9),
            vec![entry(2, 3, 6, 13), entry(3, 9, 9, 1)]
        );
        assert_eq!(known.clip(7, 8), Vec::new());
    }
}
