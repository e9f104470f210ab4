//! `main`'s own commits: direct unannotated changes, the `--no-ff` merges
//! of topics, and reverts.

use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::rc::Rc;

use super::Generator;
use crate::delivery::model::{Func, Line};
use crate::delivery::words::{CHORE_BODY, CHORES, NOUNS};
use crate::fast_import;

impl<'s, W: Write, R: BufRead> Generator<'s, W, R> {
    /// A direct, unannotated commit on `main` changing 1–2 functions no open
    /// topic holds.
    pub(super) fn chore(&mut self) -> Result<(), String> {
        let seq = self.subjects.len();
        let mut tree = self.main.clone();
        let mut chosen = Vec::new();
        for _ in 0..1 + self.rng.below(2) {
            for _ in 0..40 {
                let f = self.rng.below(self.names.len());
                if !chosen.contains(&f) && !self.held_by_others(None, f) {
                    chosen.push(f);
                    break;
                }
            }
        }
        if chosen.is_empty() {
            return Ok(());
        }
        for &f in &chosen {
            self.corpus.edits += 1;
            let new = self.small_edit(&tree.funcs[f].clone(), seq, None);
            tree.funcs[f] = Rc::new(new);
        }
        let name = self.names[chosen[0]].clone();
        let what = *self.rng.pick(CHORES);
        let subject = format!("{name}: {}", self.fill(what, &name, ""));
        let body = self.fill(CHORE_BODY, &name, "");
        let message = format!("{subject}\n\n{body}\n");
        let main = self.main.clone();
        self.main_mark = self.emit(
            "refs/heads/main",
            &message,
            Some((self.main_mark, &main)),
            None,
            &tree,
        )?;
        self.main = tree;
        self.remember_main();
        Ok(())
    }

    /// Merges topic `t` into `main` with a `--no-ff` merge commit.
    pub(super) fn merge(&mut self, t: usize) -> Result<(), String> {
        let topic = self.open.remove(t);
        let mut tree = self.main.clone();
        for f in 0..tree.funcs.len() {
            if !Rc::ptr_eq(&topic.tree.funcs[f], &topic.fork.funcs[f]) {
                if !Rc::ptr_eq(&self.main.funcs[f], &topic.fork.funcs[f]) {
                    return Err(format!(
                        "topic-{} and main both changed {} (a generator bug)",
                        topic.id, self.names[f]
                    ));
                }
                tree.funcs[f] = Rc::clone(&topic.tree.funcs[f]);
            }
        }
        for x in 0..tree.files.len() {
            if !Rc::ptr_eq(&topic.tree.files[x], &topic.fork.files[x]) {
                if !Rc::ptr_eq(&self.main.files[x], &topic.fork.files[x]) {
                    return Err(format!(
                        "topic-{} and main both changed file {x} (a generator bug)",
                        topic.id
                    ));
                }
                tree.files[x] = Rc::clone(&topic.tree.files[x]);
            }
        }
        let message = format!("Merge branch 'topic-{}'", topic.id);
        let main = self.main.clone();
        self.main_mark = self.emit(
            "refs/heads/main",
            &message,
            Some((self.main_mark, &main)),
            Some(topic.tip),
            &tree,
        )?;
        self.main = tree;
        self.remember_main();
        self.merges += 1;
        self.merged_topics += 1;
        self.revertible.extend(topic.revertible);
        Ok(())
    }

    /// Reverts on `main` the newest merged topic commit whose functions
    /// nobody changed since (preferring annotated ones); false when none
    /// qualifies.
    pub(super) fn revert(&mut self) -> Result<bool, String> {
        let noted: BTreeSet<usize> = self.notes.iter().map(|n| n.commit).collect();
        let found = (0..self.revertible.len()).rev().find(|&i| {
            let candidate = &self.revertible[i];
            noted.contains(&candidate.commit)
                && candidate.changed.iter().all(|(f, _, after)| {
                    Rc::ptr_eq(&self.main.funcs[*f], after) && !self.held_by_others(None, *f)
                })
        });
        let Some(i) = found else {
            return Ok(false);
        };
        let candidate = self.revertible.remove(i);
        let seq = self.subjects.len();
        let mut tree = self.main.clone();
        for (f, before, after) in &candidate.changed {
            let kept: std::collections::HashMap<&str, usize> = after
                .lines
                .iter()
                .map(|l| (l.text.as_str(), l.origin))
                .collect();
            let lines = before
                .lines
                .iter()
                .map(|l| Line {
                    text: l.text.clone(),
                    origin: kept.get(l.text.as_str()).copied().unwrap_or(seq),
                })
                .collect();
            tree.funcs[*f] = Rc::new(Func { lines });
            for (commit, items) in &self.regions_of[*f] {
                if *commit == candidate.commit {
                    for &item in items {
                        self.corpus
                            .reverted_away
                            .push(self.items[item].token.clone());
                    }
                }
            }
        }
        let ids =
            fast_import::get_marks(&mut self.out, &mut self.answers, &[candidate.commit + 1])?;
        let message = format!(
            "Revert \"{}\"\n\nThis reverts commit {}.\n\nIt broke the nightly {} run; back it out until it is fixed.\n",
            candidate.subject,
            ids[0],
            self.rng.pick(NOUNS)
        );
        let main = self.main.clone();
        self.main_mark = self.emit(
            "refs/heads/main",
            &message,
            Some((self.main_mark, &main)),
            None,
            &tree,
        )?;
        self.main = tree;
        self.remember_main();
        self.corpus.reverts += 1;
        Ok(true)
    }
}
