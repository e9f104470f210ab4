//! Outlines carried forward: the outline of a new version of a file from the
//! outline of an older one, parsing only what changed.
//!
//! **How.** The older outline's top-level units (those inside no other
//! unit's lines) make *blocks*: all the lines of a unit, with its members,
//! widened to the top-level syntax nodes they lie in
//! ([`Outline::top_level`]: a C `#ifdef` block, a C++ `extern "C" { … }`),
//! so that a block always starts and ends between top-level nodes, where a
//! parser starting afresh is in the state the whole file's parse was in;
//! blocks sharing a line are one. Each block's exact text is looked
//! for in the new text (by line hashes, then compared byte for byte), and
//! the largest set of blocks found in the same order, without overlapping,
//! is kept. Blocks kept that follow each other in the old text with the same
//! text between them make a *stretch*: a verbatim copy of old text, whose
//! units are the old ones moved to their new lines. What lies between two
//! stretches (the *gap*, perhaps empty) is parsed alone, as one *window*
//! with the whole block before it and the whole block after it (or the start
//! or end of the file), and its units moved by the window's offset.
//!
//! **Exact, or nothing.** A window is only used when it parses without a
//! syntax error and its two neighbouring blocks come out of it exactly as
//! they were (same units: kinds, names, signatures, lines): a gap that
//! changes how its neighbours parse — a doc comment, attribute, decorator or
//! `export` added above a unit, an unterminated comment or string, an
//! indented line that continues a Python body, a `#define` continued by a
//! backslash — shows there. The neighbour it changed is then dropped from
//! the kept blocks (its lines join the gap) and the window parsed again. The
//! carry gives up (`None`: parse the whole file) when the windows to parse
//! would come to more than half of the new file; for Go, whose names all
//! start with the file's `package` clause (context outside any block); and
//! when the old outline does not look like one this crate made (units out of
//! order or beyond the text).
//!
//! The older outline must come from a source that parsed without a syntax
//! error ([`Outline::clean`]): units tree-sitter recovered from an error
//! depend on the whole file. A carried outline is one of a clean parse again
//! (its windows parsed cleanly, between top-level nodes), with its
//! top-level nodes, so carries chain.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::ops::Range;

use tree_sitter::Parser;

use crate::extract::{parse_with, parser};
use crate::{Language, LineSpan, Outline, Unit};

/// Positions of a block's rarest line tried in the new text.
const MAX_PROBES: usize = 64;
/// Places in the new text kept per block (identical blocks repeat).
const MAX_PLACES: usize = 8;

/// The outline of `new_text`, carried from `old`, the outline of `old_text`
/// in the language of `path` — or `None` when it cannot be made exactly
/// without parsing the whole file. When it is `Some`, it equals
/// [`parse`](crate::parse)`(path, new_text)`.
///
/// The old top-level units found verbatim in the new text keep their units,
/// moved to their new lines; each changed stretch is parsed alone with the
/// whole units around it, and used only when it parses without a syntax
/// error and leaves those units exactly as they were (a doc comment,
/// attribute, decorator or `export` added above a unit, or an unterminated
/// comment or string, shows there; the unit then joins the stretch). `None`
/// when the stretches to parse come to more than half the new file, for Go
/// (every name starts with the file's `package` clause), and for an old
/// outline with syntax errors.
///
/// `old` must be what [`parse`](crate::parse) (or a carry) made of
/// `old_text`; one with syntax errors is never carried (`None`).
pub fn carry(path: &str, old_text: &str, old: &Outline, new_text: &str) -> Option<Outline> {
    carry_for(Language::from_path(path)?, old_text, old, new_text)
}

/// [`carry`] with the language given.
pub fn carry_for(
    language: Language,
    old_text: &str,
    old: &Outline,
    new_text: &str,
) -> Option<Outline> {
    // `package store` qualifies every Go name: context outside any block.
    if language == Language::Go || !old.clean {
        return None;
    }
    let old_lines = Lines::new(old_text);
    let blocks = blocks(old, old_lines.count())?;
    if old_text == new_text {
        return Some(old.clone());
    }
    let new = Lines::new(new_text);
    let chain = matched(&old_lines, &new, &blocks);
    let budget = new.count() / 2;
    Carrier {
        language,
        old: old_lines,
        new,
        blocks,
        outline: old,
        parser: None,
        spent: 0,
        budget,
        windows: HashMap::new(),
    }
    .run(chain)
}

/// A text's lines: where each starts (and the text's end), and their hashes.
struct Lines<'t> {
    text: &'t str,
    /// Byte offset of each line's start, then the text's length.
    starts: Vec<usize>,
    hashes: Vec<u64>,
}

impl<'t> Lines<'t> {
    /// Lines end after each `\n` (as tree-sitter counts rows); a last line
    /// without one counts too.
    fn new(text: &'t str) -> Lines<'t> {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(i, b)| b == b'\n' && i + 1 < text.len())
                .map(|(i, _)| i + 1),
        );
        if !text.is_empty() {
            starts.push(text.len());
        }
        let hashes = starts
            .windows(2)
            .map(|w| {
                let mut hasher = DefaultHasher::new();
                text[w[0]..w[1]].hash(&mut hasher);
                hasher.finish()
            })
            .collect();
        Lines {
            text,
            starts,
            hashes,
        }
    }

    fn count(&self) -> usize {
        self.starts.len() - 1
    }

    /// The text of lines `range` (0-based, end excluded).
    fn slice(&self, range: Range<usize>) -> &'t str {
        &self.text[self.starts[range.start]..self.starts[range.end]]
    }
}

/// A top-level unit of the old outline with its members, widened to the
/// top-level nodes it lies in (and any unit sharing one of their lines).
#[derive(Debug)]
struct Block {
    /// Its lines in the old text (0-based, end excluded).
    lines: Range<usize>,
    /// Its units, as indices into the old outline.
    units: Range<usize>,
}

/// The blocks of an outline of a `line_count`-line text; `None` when the
/// units or top-level spans are not in source order or lie beyond the text.
fn blocks(outline: &Outline, line_count: usize) -> Option<Vec<Block>> {
    let top = outline
        .top_level
        .iter()
        .map(|span| lines_of(*span, line_count))
        .collect::<Option<Vec<_>>>()?;
    if top.windows(2).any(|w| w[1].start < w[0].end) {
        return None;
    }
    if outline
        .units
        .windows(2)
        .any(|w| w[1].lines.start < w[0].lines.start)
    {
        return None;
    }
    let mut blocks: Vec<Block> = Vec::new();
    let mut t = 0;
    for (i, unit) in outline.units.iter().enumerate() {
        let mut lines = lines_of(unit.lines, line_count)?;
        // Widened to the top-level nodes it overlaps (they are disjoint and
        // in order).
        while t < top.len() && top[t].end <= lines.start {
            t += 1;
        }
        let mut j = t;
        while j < top.len() && top[j].start < lines.end {
            lines = lines.start.min(top[j].start)..lines.end.max(top[j].end);
            j += 1;
        }
        match blocks.last_mut() {
            Some(block) if lines.start < block.lines.end => {
                block.lines = block.lines.start.min(lines.start)..block.lines.end.max(lines.end);
                block.units.end = i + 1;
            }
            _ => blocks.push(Block {
                lines,
                units: i..i + 1,
            }),
        }
    }
    Some(blocks)
}

/// A span's lines, 0-based with the end excluded; `None` when it is empty
/// or beyond a `line_count`-line text.
fn lines_of(span: LineSpan, line_count: usize) -> Option<Range<usize>> {
    let start = (span.start as usize).checked_sub(1)?;
    let end = span.end as usize;
    (start < end && end <= line_count).then_some(start..end)
}

/// A block kept in the new text, or the start or end of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Anchor {
    /// 0 for the file's start, `k + 1` for block `k`, `blocks + 1` for the
    /// file's end.
    id: usize,
    /// Its lines in the old text (empty for the file's start and end).
    old_start: usize,
    len: usize,
    /// Where its lines start in the new text.
    new_start: usize,
}

impl Anchor {
    fn old_end(self) -> usize {
        self.old_start + self.len
    }

    fn new_end(self) -> usize {
        self.new_start + self.len
    }

    fn new_lines(self) -> Range<usize> {
        self.new_start..self.new_end()
    }

    fn old_lines(self) -> Range<usize> {
        self.old_start..self.old_end()
    }

    /// How far its lines moved.
    fn shift(self) -> i64 {
        self.new_start as i64 - self.old_start as i64
    }
}

/// The file's start, the largest set of blocks found verbatim in the new
/// text in their old order without overlapping (by lines), and the file's
/// end.
fn matched(old: &Lines<'_>, new: &Lines<'_>, blocks: &[Block]) -> Vec<Anchor> {
    let mut index: HashMap<u64, Vec<usize>> = HashMap::new();
    for (line, hash) in new.hashes.iter().enumerate() {
        index.entry(*hash).or_default().push(line);
    }
    // Every place each block's text stands in the new text (a few at most).
    let mut places: Vec<(usize, usize)> = Vec::new();
    for (k, block) in blocks.iter().enumerate() {
        let mut rarest: Option<(usize, &Vec<usize>)> = None;
        for line in block.lines.clone() {
            let Some(found) = index.get(&old.hashes[line]) else {
                rarest = None;
                break;
            };
            if rarest.is_none_or(|(_, best)| found.len() < best.len()) {
                rarest = Some((line - block.lines.start, found));
            }
        }
        let Some((offset, found)) = rarest else {
            continue;
        };
        let text = old.slice(block.lines.clone());
        let len = block.lines.len();
        places.extend(
            found
                .iter()
                .take(MAX_PROBES)
                .filter_map(|&at| at.checked_sub(offset))
                .filter(|&start| {
                    start + len <= new.count() && new.slice(start..start + len) == text
                })
                .take(MAX_PLACES)
                .map(|start| (k, start)),
        );
    }
    // The heaviest chain (most lines) of places increasing in block and in
    // new position without overlap: a Fenwick tree of the best chain ending
    // at or before each new line.
    let mut best = PrefixMax::new(new.count() + 1);
    let mut chains: Vec<(usize, Option<usize>)> = Vec::with_capacity(places.len());
    let mut i = 0;
    while i < places.len() {
        let k = places[i].0;
        let same = places[i..].iter().take_while(|p| p.0 == k).count();
        for &(_, start) in &places[i..i + same] {
            let before = best.query(start);
            chains.push((
                before.map_or(0, |(w, _)| w) + blocks[k].lines.len(),
                before.map(|(_, p)| p),
            ));
        }
        for (j, &(_, start)) in places[i..i + same].iter().enumerate() {
            best.update(start + blocks[k].lines.len(), (chains[i + j].0, i + j));
        }
        i += same;
    }
    let mut picked = Vec::new();
    let mut at = best.query(new.count()).map(|(_, p)| p);
    while let Some(p) = at {
        picked.push(p);
        at = chains[p].1;
    }
    let mut anchors = vec![Anchor {
        id: 0,
        old_start: 0,
        len: 0,
        new_start: 0,
    }];
    anchors.extend(picked.iter().rev().map(|&p| {
        let (k, new_start) = places[p];
        Anchor {
            id: k + 1,
            old_start: blocks[k].lines.start,
            len: blocks[k].lines.len(),
            new_start,
        }
    }));
    anchors.push(Anchor {
        id: blocks.len() + 1,
        old_start: old.count(),
        len: 0,
        new_start: new.count(),
    });
    anchors
}

/// Prefix maxima of (chain weight, place) over positions `0..len`.
struct PrefixMax {
    tree: Vec<Option<(usize, usize)>>,
}

impl PrefixMax {
    fn new(len: usize) -> PrefixMax {
        PrefixMax {
            tree: vec![None; len + 1],
        }
    }

    /// Offers `value` at `position`.
    fn update(&mut self, position: usize, value: (usize, usize)) {
        let mut i = position + 1;
        while i < self.tree.len() {
            if self.tree[i].is_none_or(|old| value.0 > old.0) {
                self.tree[i] = Some(value);
            }
            i += i & i.wrapping_neg();
        }
    }

    /// The best value at positions `0..=position`.
    fn query(&self, position: usize) -> Option<(usize, usize)> {
        let mut i = (position + 1).min(self.tree.len() - 1);
        let mut out: Option<(usize, usize)> = None;
        while i > 0 {
            if let Some(value) = self.tree[i]
                && out.is_none_or(|o| value.0 > o.0)
            {
                out = Some(value);
            }
            i -= i & i.wrapping_neg();
        }
        out
    }
}

/// What parsing one window told.
#[derive(Debug, Clone)]
enum Verdict {
    /// The neighbours came out as they were: the gap's units and top-level
    /// spans (new lines).
    Gap(Vec<Unit>, Vec<LineSpan>),
    /// The neighbour before (`first`) and/or after (`second`) came out
    /// otherwise.
    Changed { first: bool, second: bool },
    /// The window has a syntax error.
    Error,
}

struct Carrier<'a> {
    language: Language,
    old: Lines<'a>,
    new: Lines<'a>,
    blocks: Vec<Block>,
    outline: &'a Outline,
    parser: Option<Parser>,
    /// Lines parsed so far, and the most that may be.
    spent: usize,
    budget: usize,
    /// Verdicts by the ids of the window's two anchors.
    windows: HashMap<(usize, usize), Verdict>,
}

impl Carrier<'_> {
    /// Parses the gaps between stretches, drops the blocks a gap changes, and
    /// repeats until every window agrees; then puts the outline together.
    fn run(mut self, mut chain: Vec<Anchor>) -> Option<Outline> {
        loop {
            let gaps: Vec<usize> = (0..chain.len() - 1)
                .filter(|&i| !self.joined(chain[i], chain[i + 1]))
                .collect();
            let cost: usize = gaps
                .iter()
                .filter(|&&i| !self.windows.contains_key(&(chain[i].id, chain[i + 1].id)))
                .map(|&i| chain[i + 1].new_end() - chain[i].new_start)
                .sum();
            if self.spent + cost > self.budget {
                return None;
            }
            let mut dropped = vec![false; chain.len()];
            for &i in &gaps {
                let (a, b) = (chain[i], chain[i + 1]);
                let verdict = match self.windows.get(&(a.id, b.id)) {
                    Some(verdict) => verdict.clone(),
                    None => {
                        let verdict = self.window(a, b)?;
                        self.windows.insert((a.id, b.id), verdict.clone());
                        verdict
                    }
                };
                let (first, second) = match verdict {
                    Verdict::Gap(..) => continue,
                    Verdict::Changed { first, second } => (first, second),
                    Verdict::Error => (true, true),
                };
                // The file's start and end cannot be dropped: a window from
                // one to the other with an error is the whole file's.
                let first = first && i > 0;
                let second = second && i + 1 < chain.len() - 1;
                if !first && !second {
                    return None;
                }
                dropped[i] |= first;
                dropped[i + 1] |= second;
            }
            if !dropped.contains(&true) {
                return Some(self.assemble(&chain));
            }
            let mut keep = dropped.iter().map(|d| !d);
            chain.retain(|_| keep.next().unwrap_or(true));
        }
    }

    /// Whether `b` follows `a` in the new text as in the old: the next block,
    /// with the same text between them.
    fn joined(&self, a: Anchor, b: Anchor) -> bool {
        b.id == a.id + 1
            && b.new_start - a.new_end() == b.old_start - a.old_end()
            && self.old.slice(a.old_end()..b.old_start) == self.new.slice(a.new_end()..b.new_start)
    }

    /// The old units of `anchor`'s block, moved to its new lines.
    fn units(&self, anchor: Anchor) -> Vec<Unit> {
        let Some(block) = anchor.id.checked_sub(1).and_then(|k| self.blocks.get(k)) else {
            return Vec::new();
        };
        self.outline.units[block.units.clone()]
            .iter()
            .map(|unit| shifted_unit(unit, anchor.shift()))
            .collect()
    }

    /// The old top-level spans within old lines `lines`, moved `by` lines.
    fn spans(&self, lines: Range<usize>, by: i64) -> Vec<LineSpan> {
        let top = &self.outline.top_level;
        // The first span starting at or after the first line.
        let first = top.partition_point(|span| (span.start as usize) <= lines.start);
        top[first..]
            .iter()
            .take_while(|span| (span.start as usize) <= lines.end)
            .filter(|span| within(&span_lines(**span), &lines))
            .map(|span| shifted(*span, by))
            .collect()
    }

    /// Parses the lines from `a`'s first to `b`'s last alone and judges
    /// them; `None` when the grammar cannot be loaded or the parse fails.
    fn window(&mut self, a: Anchor, b: Anchor) -> Option<Verdict> {
        let lines = a.new_start..b.new_end();
        self.spent += lines.len();
        let text = self.new.slice(lines.clone());
        let parser = match &mut self.parser {
            Some(parser) => parser,
            None => self.parser.insert(parser(self.language).ok()?),
        };
        let parsed = parse_with(parser, self.language, text).ok()?;
        if !parsed.clean {
            return Some(Verdict::Error);
        }
        let by = lines.start as i64;
        let gap = a.new_end()..b.new_start;
        let (mut first, mut second) = (false, false);
        let mut sort = |span: LineSpan| {
            let span = span_lines(span);
            if within(&span, &a.new_lines()) {
                Some(0)
            } else if within(&span, &gap) {
                Some(1)
            } else if within(&span, &b.new_lines()) {
                Some(2)
            } else {
                first |= overlaps(&span, &a.new_lines());
                second |= overlaps(&span, &b.new_lines());
                None
            }
        };
        let mut units: [Vec<Unit>; 3] = Default::default();
        for unit in parsed.units.iter().map(|unit| shifted_unit(unit, by)) {
            if let Some(part) = sort(unit.lines) {
                units[part].push(unit);
            }
        }
        let mut spans: [Vec<LineSpan>; 3] = Default::default();
        for span in parsed.top_level.iter().map(|span| shifted(*span, by)) {
            if let Some(part) = sort(span) {
                spans[part].push(span);
            }
        }
        first |= units[0] != self.units(a) || spans[0] != self.spans(a.old_lines(), a.shift());
        second |= units[2] != self.units(b) || spans[2] != self.spans(b.old_lines(), b.shift());
        Some(if first || second {
            Verdict::Changed { first, second }
        } else {
            let [_, units, _] = units;
            let [_, spans, _] = spans;
            Verdict::Gap(units, spans)
        })
    }

    /// The outline: each kept block's units moved, each gap's units between;
    /// the top-level spans likewise, with those between joined blocks.
    fn assemble(&self, chain: &[Anchor]) -> Outline {
        let mut units = Vec::with_capacity(self.outline.units.len());
        let mut top_level = Vec::with_capacity(self.outline.top_level.len());
        for (i, &a) in chain.iter().enumerate() {
            units.extend(self.units(a));
            top_level.extend(self.spans(a.old_lines(), a.shift()));
            let Some(&b) = chain.get(i + 1) else {
                continue;
            };
            if self.joined(a, b) {
                top_level.extend(self.spans(a.old_end()..b.old_start, a.shift()));
            } else if let Some(Verdict::Gap(inside, spans)) = self.windows.get(&(a.id, b.id)) {
                units.extend(inside.iter().cloned());
                top_level.extend(spans.iter().copied());
            }
        }
        Outline {
            units,
            clean: true,
            top_level,
        }
    }
}

/// A span's lines, 0-based with the end excluded.
fn span_lines(span: LineSpan) -> Range<usize> {
    (span.start as usize).saturating_sub(1)..span.end as usize
}

/// `span` moved down `by` lines (up, when negative).
fn shifted(span: LineSpan, by: i64) -> LineSpan {
    let line = |n: u32| u32::try_from(i64::from(n) + by).unwrap_or(u32::MAX);
    LineSpan {
        start: line(span.start),
        end: line(span.end),
    }
}

/// `unit` moved down `by` lines (up, when negative).
fn shifted_unit(unit: &Unit, by: i64) -> Unit {
    Unit {
        lines: shifted(unit.lines, by),
        ..unit.clone()
    }
}

fn within(span: &Range<usize>, outer: &Range<usize>) -> bool {
    outer.start <= span.start && span.end <= outer.end
}

fn overlaps(span: &Range<usize>, other: &Range<usize>) -> bool {
    span.start < other.end && other.start < span.end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rust(source: &str) -> Outline {
        crate::parse_for(Language::Rust, source).unwrap()
    }

    #[test]
    fn lines_end_after_newlines() {
        assert_eq!(Lines::new("").count(), 0);
        assert_eq!(Lines::new("a").count(), 1);
        assert_eq!(Lines::new("a\n").count(), 1);
        assert_eq!(Lines::new("a\n\nb").count(), 3);
        let lines = Lines::new("a\r\nb\n");
        assert_eq!(lines.slice(1..2), "b\n");
    }

    #[test]
    fn blocks_group_members_and_shared_lines() {
        let source = "struct A; struct B;\nimpl A {\n    fn f() {}\n}\n\nfn g() {}\n";
        let outline = rust(source);
        let blocks = blocks(&outline, Lines::new(source).count()).unwrap();
        let lines: Vec<_> = blocks.iter().map(|b| b.lines.clone()).collect();
        assert_eq!(lines, [0..1, 1..4, 5..6]);
        assert_eq!(blocks[1].units, 2..4);
    }

    #[test]
    fn blocks_take_the_top_level_nodes_they_lie_in() {
        let source = "int a;\n#ifdef X\n#define A 1\n\nint f(void) { return 0; }\n#endif\n/*\n * c\n */\nint g(void)\n{\n}\n";
        let outline = crate::parse_for(Language::C, source).unwrap();
        let blocks = blocks(&outline, Lines::new(source).count()).unwrap();
        let lines: Vec<_> = blocks.iter().map(|b| b.lines.clone()).collect();
        assert_eq!(lines, [1..6, 6..12], "g takes the comment above it");
        assert_eq!(blocks[0].units, 0..2);
    }

    #[test]
    fn prefix_maxima() {
        let mut best = PrefixMax::new(10);
        assert_eq!(best.query(9), None);
        best.update(3, (5, 0));
        best.update(6, (2, 1));
        best.update(7, (9, 2));
        assert_eq!(best.query(2), None);
        assert_eq!(best.query(5), Some((5, 0)));
        assert_eq!(best.query(6), Some((5, 0)));
        assert_eq!(best.query(9), Some((9, 2)));
    }

    #[test]
    fn an_edit_inside_one_function_parses_that_function_only() {
        let body =
            |i: usize| format!("/// Doc {i}.\npub fn f{i}(x: u32) -> u32 {{\n    x + {i}\n}}\n");
        let old: String = (0..40).map(body).collect::<Vec<_>>().join("\n");
        let new = old.replace("x + 17", "x * 17 + 1");
        let outline = rust(&old);
        let carried = carry("src/lib.rs", &old, &outline, &new);
        assert_eq!(carried, Some(rust(&new)));
        // Three blocks (the function and its neighbours) of four lines, and
        // the blank lines between them.
        let old_lines = Lines::new(&old);
        let new_lines = Lines::new(&new);
        let blocks = blocks(&outline, old_lines.count()).unwrap();
        let chain = matched(&old_lines, &new_lines, &blocks);
        assert_eq!(chain.len(), 2 + 39, "every other block is found");
        let mut carrier = Carrier {
            language: Language::Rust,
            old: old_lines,
            new: new_lines,
            blocks,
            outline: &outline,
            parser: None,
            spent: 0,
            budget: usize::MAX,
            windows: HashMap::new(),
        };
        for i in 0..chain.len() - 1 {
            if !carrier.joined(chain[i], chain[i + 1]) {
                carrier.window(chain[i], chain[i + 1]).unwrap();
            }
        }
        assert_eq!(carrier.spent, 14);
    }
}
