//! Fitting diff text into a byte budget so that every file gets its fair share.
//!
//! A plain "first N bytes of the diff" budget lets one big file hide every file
//! after it. Here each file's unified diff is a unit: when everything fits,
//! everything is shown; otherwise the budget is shared out water-filling style —
//! files smaller than an equal share are shown whole, and what they leave is
//! shared among the rest, each cut at a line boundary with a marker saying how
//! much is missing and how to ask for it. With so many files that an equal share
//! would be uselessly small, the files with the most changed lines get a
//! minimum share and the others are listed as omitted (their paths and
//! statistics are always in the path list).

use gitctx::FileDiff;

/// The smallest useful share of one file (a header and a few hunk lines).
pub const MIN_SHARE: usize = 640;

/// One file's place in a fitted diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// The whole diff of the file is in the text.
    Whole,
    /// The first `shown` of `total` lines are in the text.
    Cut { shown: usize, total: usize },
    /// Not in the text at all.
    Omitted,
}

/// A diff fitted into a budget.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fitted {
    /// The text, files in their original order.
    pub text: String,
    /// Per file (same order as the input): how much of it is shown.
    pub shown: Vec<(String, Shown)>,
    /// For each cut file, the text that did not fit (for a focus section).
    pub rest: Vec<(String, String)>,
}

impl Fitted {
    /// Paths cut short or left out.
    pub fn incomplete(&self) -> impl Iterator<Item = &str> {
        self.shown
            .iter()
            .filter(|(_, s)| *s != Shown::Whole)
            .map(|(p, _)| p.as_str())
    }

    /// Every file is shown whole.
    pub fn is_complete(&self) -> bool {
        self.shown.iter().all(|(_, s)| *s == Shown::Whole)
    }
}

/// The unified diff text of one file.
pub fn file_text(file: &FileDiff) -> String {
    let mut out = String::new();
    file.write_unified(&mut out);
    out
}

/// Fits the diffs of `files` into `budget` bytes; the cut markers name `tool` as
/// the way to read the rest (a task without tools passes `None`).
pub fn fit(files: &[&FileDiff], budget: usize, tool: Option<&str>) -> Fitted {
    let texts: Vec<(String, String)> = files
        .iter()
        .map(|f| (f.path().to_owned(), file_text(f)))
        .collect();
    let churn: Vec<u32> = files.iter().map(|f| f.changed_lines()).collect();
    fit_texts(&texts, &churn, budget, tool)
}

/// [`fit`] over ready texts: `(path, unified text)` and each file's changed lines.
pub(crate) fn fit_texts(
    texts: &[(String, String)],
    churn: &[u32],
    budget: usize,
    tool: Option<&str>,
) -> Fitted {
    let sizes: Vec<usize> = texts.iter().map(|(_, t)| t.len()).collect();
    let allowance = shares(&sizes, churn, budget, MIN_SHARE);
    let mut fitted = Fitted::default();
    for (i, (path, text)) in texts.iter().enumerate() {
        match allowance[i] {
            Some(room) if room >= text.len() => {
                fitted.text.push_str(text);
                fitted.shown.push((path.clone(), Shown::Whole));
            }
            Some(room) => {
                let (head, tail) = cut_at_line(text, room);
                let total = text.lines().count();
                let shown = head.lines().count();
                fitted.text.push_str(head);
                let how = tool.map_or(String::new(), |tool| {
                    format!("; call {tool} with paths [\"{path}\"] for it")
                });
                fitted.text.push_str(&format!(
                    "[… {} more lines of the diff of {path} not shown{how}]\n",
                    total - shown
                ));
                fitted
                    .shown
                    .push((path.clone(), Shown::Cut { shown, total }));
                fitted.rest.push((path.clone(), tail.to_owned()));
            }
            None => fitted.shown.push((path.clone(), Shown::Omitted)),
        }
    }
    fitted
}

/// How many bytes of each of `sizes` fit into `budget`: all of each when
/// everything fits; otherwise water-filling — the smallest first, each taking
/// what it needs up to an equal share of what is left. When an equal share
/// would be under `min_share`, only the `budget / min_share` items with the
/// highest `priority` (ties: the earlier item) get any room; the others get
/// `None`.
pub fn shares(
    sizes: &[usize],
    priority: &[u32],
    budget: usize,
    min_share: usize,
) -> Vec<Option<usize>> {
    if sizes.iter().sum::<usize>() <= budget {
        return sizes.iter().map(|&size| Some(size)).collect();
    }
    let mut allowance: Vec<Option<usize>> = vec![None; sizes.len()];
    // Which items get any room: all of them, or those of highest priority
    // when an equal share would be below the minimum.
    let mut candidates: Vec<usize> = (0..sizes.len()).collect();
    let most = (budget / min_share.max(1)).max(1);
    if candidates.len() > most {
        let rank = |i: usize| priority.get(i).copied().unwrap_or(0);
        candidates.sort_by(|&a, &b| rank(b).cmp(&rank(a)).then(a.cmp(&b)));
        candidates.truncate(most);
    }
    candidates.sort_by_key(|&i| sizes[i]);
    let mut left = budget;
    let mut remaining = candidates.len();
    for &i in &candidates {
        let share = left / remaining.max(1);
        let take = sizes[i].min(share);
        allowance[i] = Some(take);
        left -= take;
        remaining -= 1;
    }
    allowance
}

/// Splits `text` at the last line end within `max` bytes (never mid-line; a
/// first line longer than `max` is cut at a character boundary).
pub fn cut_at_line(text: &str, max: usize) -> (&str, &str) {
    if text.len() <= max {
        return (text, "");
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(nl) => text.split_at(nl + 1),
        None => text.split_at(end),
    }
}

#[cfg(test)]
mod tests;
