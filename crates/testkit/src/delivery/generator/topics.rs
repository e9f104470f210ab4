//! Topic branches: starting one (changes, a rename or a move), choosing
//! the functions its next commit changes, and making that commit.

use std::io::{BufRead, Write};
use std::rc::Rc;

use super::Generator;
use crate::delivery::TOPIC_REF;
use crate::delivery::model::{FileState, Func, Line, Tree};
use crate::delivery::plan::{Kind, NotePlan, Purpose, Revertible, Topic};
use crate::delivery::words::{CHANGES, REASONS, REWRITE, fill};

impl<'s, W: Write, R: BufRead> Generator<'s, W, R> {
    pub(super) fn start_topic(&mut self) {
        let id = self.next_topic;
        self.next_topic += 1;
        let mut purpose = Purpose::Changes;
        if self.renames_wanted.first().is_some_and(|&at| id >= at)
            && let Some(p) = self.plan_rename()
        {
            self.renames_wanted.remove(0);
            purpose = p;
        } else if self.moves_wanted.first().is_some_and(|&at| id >= at)
            && let Some(p) = self.plan_move()
        {
            self.moves_wanted.remove(0);
            purpose = p;
        }
        let (fork_mark, fork) = if purpose == Purpose::Changes && self.rng.percent(30) {
            let back = self.rng.below(self.recent.len());
            self.recent[back].clone()
        } else {
            (self.main_mark, self.main.clone())
        };
        let (planned, held, held_files) = match &purpose {
            Purpose::Changes => (1 + self.rng.below(4), vec![], vec![]),
            Purpose::Rename { file, .. } => (1, vec![], vec![*file]),
            Purpose::Move { func, to } => (1, vec![*func], vec![fork.file_of(*func), *to]),
        };
        self.open.push(Topic {
            id,
            purpose,
            tree: fork.clone(),
            fork,
            tip: fork_mark,
            planned,
            made: 0,
            held,
            held_files,
            revertible: Vec::new(),
        });
    }

    fn plan_rename(&mut self) -> Option<Purpose> {
        let files: Vec<usize> = (0..self.main.files.len())
            .filter(|&x| !self.file_held(x))
            .collect();
        if files.is_empty() {
            return None;
        }
        let file = files[self.rng.below(files.len())];
        let to = self.new_path();
        Some(Purpose::Rename { file, to })
    }

    fn plan_move(&mut self) -> Option<Purpose> {
        for _ in 0..50 {
            let func = self.rng.below(self.names.len());
            let from = self.main.file_of(func);
            let to = self.rng.below(self.main.files.len());
            if to == from
                || self.main.files[from].order.len() < 3
                || self.held_by_others(None, func)
                || self.file_held(from)
                || self.file_held(to)
            {
                continue;
            }
            return Some(Purpose::Move { func, to });
        }
        None
    }

    /// Whether topic `t` may change `f`: it already holds it, or nobody else
    /// does and `main` has not changed it since the fork.
    fn may_change(&self, t: usize, f: usize) -> bool {
        let topic = &self.open[t];
        topic.held.contains(&f)
            || (!self.held_by_others(Some(t), f)
                && Rc::ptr_eq(&topic.fork.funcs[f], &self.main.funcs[f]))
    }

    /// Up to 1–3 functions for the next commit of topic `t`, in at most two
    /// files.
    fn choose_functions(&mut self, t: usize) -> Vec<usize> {
        let want = match self.rng.below(100) {
            0..55 => 1,
            55..85 => 2,
            _ => 3,
        };
        let mut chosen: Vec<usize> = Vec::new();
        let mut files: Vec<usize> = Vec::new();
        for i in 0..want {
            for _ in 0..40 {
                let held = &self.open[t].held;
                let f = if i == 0 && !held.is_empty() && self.rng.percent(40) {
                    held[self.rng.below(held.len())]
                } else if i > 0 && self.rng.percent(65) {
                    let order = self.open[t].tree.files[files[0]].order.clone();
                    let sums: Vec<f64> = order
                        .iter()
                        .scan(0.0, |s, &g| {
                            *s += self.weight[g];
                            Some(*s)
                        })
                        .collect();
                    order[self.rng.weighted(&sums)]
                } else {
                    let heat = std::mem::take(&mut self.heat);
                    let f = self.rng.weighted(&heat);
                    self.heat = heat;
                    f
                };
                if chosen.contains(&f) || !self.may_change(t, f) {
                    continue;
                }
                let file = self.open[t].tree.file_of(f);
                if files.len() == 2 && !files.contains(&file) {
                    continue;
                }
                if !files.contains(&file) {
                    files.push(file);
                }
                chosen.push(f);
                break;
            }
        }
        if chosen.is_empty() {
            let n = self.names.len();
            let start = self.rng.below(n);
            chosen.extend(
                (0..n)
                    .map(|k| (start + k) % n)
                    .find(|&f| self.may_change(t, f)),
            );
        }
        chosen
    }

    /// The active items of `f` in `tree`: from commits that wrote one of
    /// its lines, not retired.
    pub(super) fn active_items(&self, tree: &Tree, f: usize) -> Vec<usize> {
        let origins = tree.funcs[f].origins();
        self.regions_of[f]
            .iter()
            .filter(|(commit, _)| origins.contains(commit))
            .flat_map(|(_, items)| items.iter().copied())
            .filter(|&i| !self.retired[i])
            .collect()
    }

    /// The next commit of topic `t`.
    pub(super) fn topic_commit(&mut self, t: usize) -> Result<(), String> {
        match self.open[t].purpose.clone() {
            Purpose::Rename { file, to } => return self.rename_commit(t, file, &to),
            Purpose::Move { func, to } => return self.move_commit(t, func, to),
            Purpose::Changes => {}
        }
        let seq = self.subjects.len();
        let chosen = self.choose_functions(t);
        if chosen.is_empty() {
            return Err("no function is free to change (a generator bug)".to_owned());
        }
        let annotated = self.rng.percent(85);
        let mut tree = self.open[t].tree.clone();
        let mut regions = Vec::new();
        let mut changed = Vec::new();
        let mut subject = String::new();
        let mut body = String::new();
        let mut any_rewrite = false;
        let mut planned = Vec::new();
        for (k, &f) in chosen.iter().enumerate() {
            let name = self.names[f].clone();
            let edit = self.edit_function(&mut tree, f, seq, annotated);
            any_rewrite |= edit.rewrite;
            let callee = edit.callee;
            changed.push((f, edit.old, edit.new));
            let (what, intent) = self.change_templates(f, edit.rewrite);
            // The subject and the intent speak of the same things.
            let slots = self.slots();
            let what = fill(what, &name, "", slots);
            let intent = fill(intent, &name, "", slots);
            if k == 0 {
                subject = format!("{name}: {what}");
                body.push_str(&intent);
                body.push(' ');
                let reason = *self.rng.pick(REASONS);
                body.push_str(&self.fill(reason, &name, ""));
            } else {
                body.push_str(&format!(" It also touches {name} to {what}."));
            }
            planned.push((f, intent, callee));
        }
        // Regions once every function is edited: an edit above `f` in the
        // same file moves its lines.
        if annotated {
            for (f, intent, callee) in planned {
                regions.push(self.region(&tree, f, intent, callee, true));
            }
        }
        let held = &mut self.open[t].held;
        for &f in &chosen {
            if !held.contains(&f) {
                held.push(f);
            }
        }
        let message = self.message(&subject, &body, &regions);
        let from = self.open[t].tip;
        let parent = self.open[t].tree.clone();
        let mark = self.emit(TOPIC_REF, &message, Some((from, &parent)), None, &tree)?;
        let topic = &mut self.open[t];
        topic.tip = mark;
        topic.tree = tree;
        topic.made += 1;
        let mut plain = !any_rewrite;
        if annotated {
            let note = self.note(seq, &subject, regions);
            plain &=
                note.corrections.is_empty() && note.regions.iter().all(|r| r.retires.is_empty());
            self.notes.push(note);
        }
        if plain {
            self.open[t].revertible.push(Revertible {
                commit: seq,
                subject,
                changed,
            });
        }
        Ok(())
    }

    /// Edits `f` in `tree` for commit `seq`: a whole-body rewrite now and
    /// then, else a small edit; when `annotated`, sometimes with a call of
    /// another function (the region's dependency).
    fn edit_function(&mut self, tree: &mut Tree, f: usize, seq: usize, annotated: bool) -> Edit {
        // About 5% of edits in all: short functions get rewritten, long
        // ones mostly trimmed (`small_edit` keeps them under ~90 lines).
        let rewrite = self.rng.percent(if tree.funcs[f].lines.len() < 25 {
            12
        } else {
            2
        });
        self.corpus.edits += 1;
        let dependency = annotated && self.rng.percent(30);
        let callee = if dependency {
            let heat = std::mem::take(&mut self.heat);
            let mut g = self.rng.weighted(&heat);
            while g == f {
                g = self.rng.weighted(&heat);
            }
            self.heat = heat;
            Some(g)
        } else {
            None
        };
        let old = Rc::clone(&tree.funcs[f]);
        let new = if rewrite {
            self.rewrite(&old, seq, callee)
        } else {
            self.small_edit(&old, seq, callee)
        };
        if rewrite {
            self.corpus.rewrites += 1;
            let before = old.origins();
            let after = new.origins();
            let gone: Vec<usize> = self.regions_of[f]
                .iter()
                .filter(|(c, _)| before.contains(c) && !after.contains(c))
                .flat_map(|(_, items)| items.iter().copied())
                .collect();
            for i in gone {
                self.corpus.rewritten_away.push(self.items[i].token.clone());
            }
        }
        let new = Rc::new(new);
        tree.funcs[f] = Rc::clone(&new);
        Edit {
            old,
            new,
            rewrite,
            callee,
        }
    }

    /// The subject and intent templates of a change to `f`: [`REWRITE`]
    /// for a rewrite, else an entry of [`CHANGES`].
    fn change_templates(&mut self, f: usize, rewrite: bool) -> (&'static str, &'static str) {
        if rewrite {
            REWRITE
        } else {
            // Not what the function's previous change did.
            let mut change = self.rng.below(CHANGES.len());
            while Some(change) == self.last_change[f] {
                change = self.rng.below(CHANGES.len());
            }
            self.last_change[f] = Some(change);
            CHANGES[change]
        }
    }

    fn rename_commit(&mut self, t: usize, file: usize, to: &str) -> Result<(), String> {
        let mut tree = self.open[t].tree.clone();
        let from = tree.files[file].path.clone();
        tree.files[file] = Rc::new(FileState {
            path: to.to_owned(),
            order: tree.files[file].order.clone(),
        });
        let message = format!(
            "Rename {from} to {to}\n\nThe module outgrew its old name; no code changes, only the path.\n"
        );
        let parent = self.open[t].tree.clone();
        let mark = self.emit(
            TOPIC_REF,
            &message,
            Some((self.open[t].tip, &parent)),
            None,
            &tree,
        )?;
        self.corpus.renames.push((from, to.to_owned()));
        let topic = &mut self.open[t];
        topic.tip = mark;
        topic.tree = tree;
        topic.made += 1;
        Ok(())
    }

    fn move_commit(&mut self, t: usize, func: usize, to: usize) -> Result<(), String> {
        let seq = self.subjects.len();
        let mut tree = self.open[t].tree.clone();
        let from = tree.file_of(func);
        let before = self.active_items(&tree, func);
        for &i in &before {
            self.corpus.moved_away.push(self.items[i].token.clone());
        }
        let moved = Func {
            lines: tree.funcs[func]
                .lines
                .iter()
                .map(|l| Line {
                    text: l.text.clone(),
                    origin: seq,
                })
                .collect(),
        };
        tree.funcs[func] = Rc::new(moved);
        let mut source = tree.files[from].order.clone();
        source.retain(|&g| g != func);
        tree.files[from] = Rc::new(FileState {
            path: tree.files[from].path.clone(),
            order: source,
        });
        let mut target = tree.files[to].order.clone();
        target.push(func);
        tree.files[to] = Rc::new(FileState {
            path: tree.files[to].path.clone(),
            order: target,
        });
        let name = self.names[func].clone();
        let (from_path, to_path) = (tree.files[from].path.clone(), tree.files[to].path.clone());
        let intent = format!(
            "Move {name} from {from_path} to {to_path}, next to its only callers, without changing a line of its body."
        );
        let mut region = self.region(&tree, func, intent, None, false);
        // A fresh constraint saying why it lives here now.
        let template = "{f} now lives beside its callers in this module; moving it back would reintroduce the import cycle";
        let item = self.item(Kind::Constraint, template, &name, "");
        region.constraints.insert(0, (item, "author"));
        if let Some(entry) = self.regions_of[func].last_mut() {
            entry.1 = region.items();
        }
        let subject = format!("Move {name} from {from_path} to {to_path}");
        let body = "Only its callers in the new module use it, and keeping it in the old one forced an import cycle.";
        let message = self.message(&subject, body, std::slice::from_ref(&region));
        let parent = self.open[t].tree.clone();
        let mark = self.emit(
            TOPIC_REF,
            &message,
            Some((self.open[t].tip, &parent)),
            None,
            &tree,
        )?;
        let note = NotePlan {
            commit: seq,
            summary: format!("Move {name} to {to_path} beside its callers."),
            task: None,
            enhanced: true,
            regions: vec![region],
            corrections: Vec::new(),
        };
        self.notes.push(note);
        self.corpus.moves.push((name, from_path, to_path));
        let topic = &mut self.open[t];
        topic.tip = mark;
        topic.tree = tree;
        topic.made += 1;
        topic.held.push(func);
        Ok(())
    }
}

/// One function's edit by a topic commit.
struct Edit {
    /// The version before.
    old: Rc<Func>,
    /// The version after.
    new: Rc<Func>,
    /// Whether it was a whole-body rewrite.
    rewrite: bool,
    /// The function the new version calls (the region's dependency).
    callee: Option<usize>,
}
