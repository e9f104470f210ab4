//! Notes: planning a commit's regions, items, retirements and corrections,
//! writing the notes commit, and the corpus's own account of it.

use std::io::{BufRead, Write};

use serde_json::{Value, json};

use super::Generator;
use crate::delivery::corrector;
use crate::delivery::date::rfc3339;
use crate::delivery::model::Tree;
use crate::delivery::plan::{CorrectionPlan, Kind, NotePlan, RegionPlan};
use crate::delivery::words::{
    CONSTRAINTS, DEPENDENCIES, FLAG_REASONS, NOUNS, REASONS, REMOVE_REASONS, RISKS, TAGS,
};
use crate::fast_import::{self, Commit};
use crate::{EPOCH, TICK};

impl<'s, W: Write, R: BufRead> Generator<'s, W, R> {
    /// The region of `f` (changed in `tree`) for the commit being made;
    /// retiring an earlier item of `f` now and then when `may_retire`.
    pub(super) fn region(
        &mut self,
        tree: &Tree,
        f: usize,
        intent: String,
        callee: Option<usize>,
        may_retire: bool,
    ) -> RegionPlan {
        let seq = self.subjects.len();
        let name = self.names[f].clone();
        let enhanced = self.rng.percent(80);
        let mut retires = Vec::new();
        let mut constraints = Vec::new();
        let earlier = self.active_items(tree, f);
        if may_retire && !earlier.is_empty() && self.rng.percent(6) {
            let constraints_only: Vec<usize> = earlier
                .iter()
                .copied()
                .filter(|&i| self.items[i].kind == Kind::Constraint)
                .collect();
            let pool = if constraints_only.is_empty() || self.rng.percent(20) {
                &earlier
            } else {
                &constraints_only
            };
            let old = pool[self.rng.below(pool.len())];
            retires.push(self.items[old].text.clone());
            self.retired[old] = true;
            self.corpus
                .retired_by_note
                .push(self.items[old].token.clone());
        }
        let count = if self.rng.percent(30) { 2 } else { 1 };
        for _ in 0..count {
            let template = *self.rng.pick(CONSTRAINTS);
            let item = self.item(Kind::Constraint, template, &name, "");
            let source = if enhanced && self.rng.percent(85) {
                "author"
            } else {
                "inferred"
            };
            constraints.push((item, source));
        }
        let risk = self.rng.percent(40).then(|| {
            let template = *self.rng.pick(RISKS);
            self.item(Kind::Risk, template, &name, "")
        });
        let dependency = callee.map(|g| {
            let template = *self.rng.pick(DEPENDENCIES);
            let callee = self.names[g].clone();
            let item = self.item(Kind::Dependency, template, &name, &callee);
            let file = tree.files[tree.file_of(g)].path.clone();
            (file, callee, item)
        });
        let mut tags = vec![*self.rng.pick(TAGS)];
        if self.rng.percent(30) {
            let second = *self.rng.pick(TAGS);
            if second != tags[0] {
                tags.push(second);
            }
        }
        let reason = *self.rng.pick(REASONS);
        let reasoning = self.fill(reason, &name, "");
        let plan = RegionPlan {
            file: tree.files[tree.file_of(f)].path.clone(),
            func: f,
            lines: tree.range(f),
            intent,
            reasoning,
            constraints,
            risk,
            dependency,
            tags,
            retires,
        };
        self.regions_of[f].push((seq, plan.items()));
        plan
    }

    /// The note of commit `seq`, corrections decided.
    pub(super) fn note(&mut self, seq: usize, subject: &str, regions: Vec<RegionPlan>) -> NotePlan {
        let mut corrections = Vec::new();
        if self.rng.percent(3) {
            let region = self.rng.below(regions.len());
            if self.rng.percent(50) {
                let constraints = &regions[region].constraints;
                let item = constraints[self.rng.below(constraints.len())].0;
                corrections.push(CorrectionPlan::Remove { region, item });
                self.retire_by_correction(item);
            } else {
                corrections.push(CorrectionPlan::Flag { region });
                for item in regions[region].items() {
                    self.retire_by_correction(item);
                }
            }
        }
        let (_, what) = subject.split_once(": ").unwrap_or(("", subject));
        let mut summary = format!("{}{}", what[..1].to_uppercase(), &what[1..]);
        let names: Vec<&str> = regions
            .iter()
            .map(|r| self.names[r.func].as_str())
            .collect();
        summary.push_str(&format!(" in {}.", names.join(" and ")));
        let task = self
            .rng
            .percent(25)
            .then(|| format!("Ticket {}: {what}", 100 + self.rng.below(900)));
        NotePlan {
            commit: seq,
            summary,
            task,
            enhanced: self.rng.percent(80),
            regions,
            corrections,
        }
    }

    fn retire_by_correction(&mut self, item: usize) {
        self.retired[item] = true;
        self.corpus
            .retired_by_correction
            .push(self.items[item].token.clone());
    }

    pub(super) fn write_notes(&mut self, ids: &[String]) -> Result<(), String> {
        let when = EPOCH + self.subjects.len() as i64 * TICK;
        let mut text = String::new();
        Commit::notes(when).push_header(&mut text);
        self.write(&text)?;
        for (note, id) in self.notes.iter().zip(ids) {
            let json = self.note_json(note, id).to_string();
            let mut text = String::new();
            fast_import::push_note(&mut text, &format!(":{}", note.commit + 1), &json);
            self.out
                .write_all(text.as_bytes())
                .map_err(|e| format!("writing to git fast-import: {e}"))?;
        }
        self.write("\n")?;
        self.out
            .flush()
            .map_err(|e| format!("writing to git fast-import: {e}"))
    }

    fn note_json(&self, note: &NotePlan, id: &str) -> Value {
        let when = EPOCH + note.commit as i64 * TICK;
        let regions: Vec<Value> = note
            .regions
            .iter()
            .map(|r| {
                let name = &self.names[r.func];
                let mut region = json!({
                    "file": r.file,
                    "ast_anchor": {"type": "function", "name": name, "signature": self.signature(r.func)},
                    "lines": {"start": r.lines.0, "end": r.lines.1},
                    "intent": r.intent,
                    "reasoning": r.reasoning,
                    "constraints": r.constraints.iter().map(|&(i, source)| json!({"text": self.items[i].text, "source": source})).collect::<Vec<_>>(),
                    "tags": r.tags,
                });
                if let Some(i) = r.risk {
                    region["risk_notes"] = json!(self.items[i].text);
                }
                if let Some((file, anchor, i)) = &r.dependency {
                    region["semantic_dependencies"] =
                        json!([{"file": file, "anchor": anchor, "nature": self.items[*i].text}]);
                }
                if !r.retires.is_empty() {
                    region["retires"] = json!(r.retires);
                }
                region
            })
            .collect();
        let mut value = json!({
            "$schema": "ultragit/v1",
            "commit": id,
            "timestamp": rfc3339(when),
            "task": note.task,
            "summary": note.summary,
            "context_level": if note.enhanced { "enhanced" } else { "inferred" },
            "regions": regions,
            "cross_cutting": [],
            "provenance": {"operation": "initial", "original_annotations_preserved": false},
        });
        if !note.corrections.is_empty() {
            let stamp = rfc3339(when + 3 * 86_400);
            let corrections: Vec<Value> = note
                .corrections
                .iter()
                .enumerate()
                .map(|(k, c)| {
                    let pick = |list: &[&str]| {
                        list[(note.commit + k) % list.len()]
                            .replace("{n1}", NOUNS[note.commit % NOUNS.len()])
                    };
                    match c {
                        CorrectionPlan::Remove { region, item } => {
                            let r = &note.regions[*region];
                            json!({
                                "target": {"file": r.file, "anchor": self.names[r.func]},
                                "kind": "remove",
                                "field": "constraints",
                                "value": self.items[*item].text,
                                "reason": pick(REMOVE_REASONS),
                                "author": corrector(),
                                "timestamp": stamp,
                            })
                        }
                        CorrectionPlan::Flag { region } => {
                            let r = &note.regions[*region];
                            json!({
                                "target": {"file": r.file, "anchor": self.names[r.func]},
                                "kind": "flag",
                                "reason": pick(FLAG_REASONS),
                                "author": corrector(),
                                "timestamp": stamp,
                            })
                        }
                    }
                })
                .collect();
            value["corrections"] = json!(corrections);
        }
        value
    }

    pub(super) fn finish_corpus(&mut self) {
        let corpus = &mut self.corpus;
        corpus.commits = self.subjects.len();
        corpus.merges = self.merges;
        corpus.notes = self.notes.len();
        corpus.items = self.items.len();
        let mut units = Vec::new();
        let mut active = Vec::new();
        for file in &self.main.files {
            for &f in &file.order {
                units.push((file.path.clone(), self.names[f].clone()));
                let origins = self.main.funcs[f].origins();
                let mut tokens: Vec<String> = self.regions_of[f]
                    .iter()
                    .filter(|(c, _)| origins.contains(c))
                    .flat_map(|(_, items)| items.iter())
                    .filter(|&&i| !self.retired[i])
                    .map(|&i| self.items[i].token.clone())
                    .collect();
                tokens.sort();
                active.push(tokens);
            }
        }
        corpus.units = units;
        corpus.modelled_active = active;
    }
}
