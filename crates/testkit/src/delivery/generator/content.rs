//! What the generator writes: item and intent sentences, function bodies
//! and their edits, commit messages.

use std::io::{BufRead, Write};

use super::Generator;
use crate::delivery::model::{Func, Line};
use crate::delivery::plan::{Item, Kind, RegionPlan};
use crate::delivery::words::{NOUNS, Slots, fill};

impl<'s, W: Write, R: BufRead> Generator<'s, W, R> {
    /// `template` with its slots filled: `{f}` and `{g}` the given names,
    /// `{n1}` and `{n2}` two different nouns, `{k}` a small number.
    pub(super) fn fill(&mut self, template: &str, f: &str, g: &str) -> String {
        let slots = self.slots();
        fill(template, f, g, slots)
    }

    /// Two different nouns and a small number for [`fill`].
    pub(super) fn slots(&mut self) -> Slots {
        let n1 = *self.rng.pick(NOUNS);
        let mut n2 = *self.rng.pick(NOUNS);
        while n2 == n1 {
            n2 = *self.rng.pick(NOUNS);
        }
        (n1, n2, 3 + self.rng.below(9))
    }

    /// A new item: `template` filled, its token appended.
    pub(super) fn item(&mut self, kind: Kind, template: &str, f: &str, g: &str) -> usize {
        let index = self.items.len();
        let token = format!("[d{:05}]", index + 1);
        let text = format!("{} {token}", self.fill(template, f, g));
        self.items.push(Item { token, text, kind });
        self.retired.push(false);
        index
    }

    pub(super) fn unique(&mut self) -> usize {
        let u = self.next_line;
        self.next_line += 1;
        u
    }

    /// A body statement, unique in the repository; a call of `call` when
    /// given.
    fn statement(&mut self, call: Option<usize>) -> String {
        let u = self.unique();
        let (a, b) = (3 + 2 * self.rng.below(1 << 14), 1 + self.rng.below(31));
        if let Some(g) = call {
            return format!(
                "    acc = acc.wrapping_add({}(acc >> {b})) ^ {u};",
                self.names[g]
            );
        }
        let noun = *self.rng.pick(NOUNS);
        match self.rng.below(9) {
            0 => format!("    acc = acc.wrapping_mul({a}).rotate_left({b}) ^ {u};"),
            1 => format!("    acc ^= (acc >> {b}).wrapping_add({u});"),
            2 => format!("    if acc % {a} == {b} {{ acc = acc.wrapping_add({u}); }}"),
            3 => format!(
                "    let t{u} = acc.count_ones() as u64 + {a}; acc = acc.wrapping_sub(t{u});"
            ),
            4 => format!("    acc = acc.saturating_sub({a}).max({u});"),
            5 => format!("    acc = if acc > {a} {{ acc - {b} }} else {{ acc + {u} }};"),
            6 => format!("    let {noun}_{u} = acc & 0x{a:x}; acc ^= {noun}_{u} << {b};"),
            7 => {
                format!("    // Step {u}: the low {b} bits feed the {noun} key, keep them stable.")
            }
            _ => format!("    acc = acc.wrapping_add({a}) ^ ({u} << {b}); // {noun} mix"),
        }
    }

    /// A fresh function body: its first line, `mids` statements, its last
    /// expression, all written by `commit`.
    pub(super) fn body(&mut self, mids: usize, commit: usize) -> Vec<Line> {
        let u = self.unique();
        let mut lines = vec![Line {
            text: format!("    let mut acc = x ^ 0x{u:x};"),
            origin: commit,
        }];
        for _ in 0..mids {
            let text = self.statement(None);
            lines.push(Line {
                text,
                origin: commit,
            });
        }
        let u = self.unique();
        lines.push(Line {
            text: format!("    acc.rotate_right({}) ^ {u}", 1 + u % 31),
            origin: commit,
        });
        lines
    }

    pub(super) fn signature(&self, f: usize) -> String {
        format!("pub fn {}(x: u64) -> u64", self.names[f])
    }

    /// `old` after a small edit by `commit` (a few lines changed, inserted
    /// or deleted; a call of `call` inserted when given). The first and last
    /// body lines stay.
    pub(super) fn small_edit(&mut self, old: &Func, commit: usize, call: Option<usize>) -> Func {
        let mut lines = old.lines.clone();
        let new = |text| Line {
            text,
            origin: commit,
        };
        // Statements are lines[2..len-2]; the `pub fn` line, the first body
        // line, the last expression and the brace stay.
        let mids = |lines: &Vec<Line>| lines.len() - 4;
        let op = self.rng.below(100);
        if op < 60 && mids(&lines) > 0 {
            let count = [1, 1, 2, 2, 3][self.rng.below(5)].min(mids(&lines));
            let at = 2 + self.rng.below(mids(&lines) - count + 1);
            for line in &mut lines[at..at + count] {
                *line = new(self.statement(None));
            }
        }
        if (35..90).contains(&op) || call.is_some() || mids(&lines) == 0 {
            let count = 1 + self.rng.below(4);
            let at = 2 + self.rng.below(mids(&lines) + 1);
            for i in 0..count {
                let text = self.statement(if i == 0 { call } else { None });
                lines.insert(at + i, new(text));
            }
        }
        if op >= 85 && mids(&lines) > 2 {
            for _ in 0..1 + self.rng.below(2) {
                let at = 2 + self.rng.below(mids(&lines));
                lines.remove(at);
            }
        }
        while lines.len() > 94 {
            let at = 2 + self.rng.below(mids(&lines));
            lines.remove(at);
        }
        Func { lines }
    }

    /// `old` rewritten by `commit`: every line between the `pub fn` line and
    /// the closing brace replaced.
    pub(super) fn rewrite(&mut self, old: &Func, commit: usize, call: Option<usize>) -> Func {
        let len = old.lines.len();
        let mids = 2 + self.rng.below((len - 4).clamp(4, 30));
        let mut body = self.body(mids, commit);
        if let Some(g) = call {
            let text = self.statement(Some(g));
            body.insert(
                1 + self.rng.below(mids),
                Line {
                    text,
                    origin: commit,
                },
            );
        }
        let mut lines = vec![old.lines[0].clone()];
        lines.extend(body);
        lines.push(old.lines[len - 1].clone());
        Func { lines }
    }

    /// A commit message: subject, body paragraph, then one line per item.
    pub(super) fn message(&self, subject: &str, body: &str, regions: &[RegionPlan]) -> String {
        let mut message = format!("{subject}\n\n{body}\n");
        if regions.iter().any(|r| !r.retires.is_empty()) {
            message.push_str(
                "\nThis supersedes an earlier rule on the same code; the rule that holds now is listed below.\n",
            );
        }
        let mut lines = String::new();
        for region in regions {
            for &(item, _) in &region.constraints {
                lines.push_str(&format!("Constraint: {}\n", self.items[item].text));
            }
            if let Some(item) = region.risk {
                lines.push_str(&format!("Risk: {}\n", self.items[item].text));
            }
            if let Some((_, _, item)) = &region.dependency {
                lines.push_str(&format!("Depends: {}\n", self.items[*item].text));
            }
        }
        if !lines.is_empty() {
            message.push('\n');
            message.push_str(&lines);
        }
        message
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delivery::DeliverySpec;
    use crate::delivery::words::{CHANGES, CONSTRAINTS, DEPENDENCIES, REWRITE, RISKS};

    #[test]
    fn every_template_makes_a_sentence_of_12_to_25_words() {
        let mut generator = Generator::new(
            Vec::new(),
            std::io::empty(),
            &DeliverySpec {
                files: 2,
                functions_per_file: 2,
                topics: 1,
                seed: 7,
            },
        );
        for (kind, templates) in [
            (Kind::Constraint, CONSTRAINTS),
            (Kind::Risk, RISKS),
            (Kind::Dependency, DEPENDENCIES),
        ] {
            for template in templates {
                let item = generator.item(kind, template, "parse_header_17", "load_cursor_3");
                let text = &generator.items[item].text;
                let words = text.split_whitespace().count();
                assert!((12..=25).contains(&words), "{words} words: {text}");
                assert!(!text.contains(['"', '\\', '{', '}']), "{text}");
            }
        }
        for (_, intent) in CHANGES.iter().chain([&REWRITE]) {
            let text = generator.fill(intent, "parse_header_17", "");
            let words = text.split_whitespace().count();
            assert!((15..=25).contains(&words), "{words} words: {text}");
            assert!(text.contains("parse_header_17"), "{text}");
        }
    }
}
