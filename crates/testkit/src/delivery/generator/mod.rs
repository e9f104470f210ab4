//! The generator: its state, the run from the initial commit to the notes,
//! and writing commits to `git fast-import`.

mod content;
mod main_line;
mod notes;
mod topics;

use std::io::{BufRead, Write};
use std::rc::Rc;

use super::model::{FileState, Func, Line, Tree};
use super::plan::{Item, NotePlan, Revertible, Topic};
use super::rng::Rng;
use super::words::{FILE_WORDS, NOUNS, VERBS};
use super::{DeliveryCorpus, DeliverySpec, ZIPF};
use crate::fast_import::{self, Commit};
use crate::{EPOCH, TICK};

/// One corpus being generated: the PRNG, the model of `main` and of the
/// open topics, the notes planned so far, and the `git fast-import`
/// process's input (`out`) and answers.
pub(super) struct Generator<'s, W: Write, R: BufRead> {
    pub(super) out: W,
    answers: R,
    rng: Rng,
    spec: &'s DeliverySpec,
    names: Vec<String>,
    /// Running sums of each function's edit weight (Zipf over a shuffled
    /// rank).
    heat: Vec<f64>,
    weight: Vec<f64>,
    /// Each commit's subject, by sequence number.
    subjects: Vec<String>,
    merges: usize,
    notes: Vec<NotePlan>,
    items: Vec<Item>,
    retired: Vec<bool>,
    /// Per function: the commits whose notes have a region on it and that
    /// region's items.
    regions_of: Vec<Vec<(usize, Vec<usize>)>>,
    /// Per function: the entry of [`CHANGES`](super::words::CHANGES) its last topic change used.
    last_change: Vec<Option<usize>>,
    next_line: usize,
    main: Tree,
    main_mark: usize,
    /// `main`'s last few commits (mark, tree), oldest first.
    recent: Vec<(usize, Tree)>,
    open: Vec<Topic>,
    next_topic: usize,
    merged_topics: usize,
    revertible: Vec<Revertible>,
    used_words: Vec<bool>,
    renames_wanted: Vec<usize>,
    moves_wanted: Vec<usize>,
    reverts_wanted: Vec<usize>,
    corpus: DeliveryCorpus,
}

impl<'s, W: Write, R: BufRead> Generator<'s, W, R> {
    pub(super) fn new(out: W, answers: R, spec: &'s DeliverySpec) -> Self {
        let mut rng = Rng::new(spec.seed);
        let count = spec.files * spec.functions_per_file;
        let names = (0..count)
            .map(|i| format!("{}_{}_{i}", rng.pick(VERBS), rng.pick(NOUNS)))
            .collect();
        // A shuffled rank per function; weight 1 / (rank + 2)^ZIPF.
        let mut rank: Vec<usize> = (0..count).collect();
        for i in (1..count).rev() {
            rank.swap(i, rng.below(i + 1));
        }
        let weight: Vec<f64> = rank
            .iter()
            .map(|&r| 1.0 / ((r + 2) as f64).powf(ZIPF))
            .collect();
        let heat = weight
            .iter()
            .scan(0.0, |sum, w| {
                *sum += w;
                Some(*sum)
            })
            .collect();
        let at = |fraction: usize| (spec.topics * fraction / 100).max(1);
        let large = spec.topics >= 300;
        let renames_wanted = if large {
            vec![at(22), at(48), at(74)]
        } else {
            vec![at(25), at(60)]
        };
        let moves_wanted = if large {
            vec![at(33), at(57), at(83)]
        } else {
            vec![at(40), at(70)]
        };
        let reverts_wanted = if large {
            vec![at(15), at(35), at(55), at(75), at(92)]
        } else {
            vec![at(30), at(55), at(85)]
        };
        Generator {
            out,
            answers,
            rng,
            spec,
            names,
            heat,
            weight,
            subjects: Vec::new(),
            merges: 0,
            notes: Vec::new(),
            items: Vec::new(),
            retired: Vec::new(),
            regions_of: vec![Vec::new(); count],
            last_change: vec![None; count],
            next_line: 1,
            main: Tree {
                funcs: Vec::new(),
                files: Vec::new(),
            },
            main_mark: 0,
            recent: Vec::new(),
            open: Vec::new(),
            next_topic: 0,
            merged_topics: 0,
            revertible: Vec::new(),
            used_words: vec![false; FILE_WORDS.len()],
            renames_wanted,
            moves_wanted,
            reverts_wanted,
            corpus: DeliveryCorpus::default(),
        }
    }

    pub(super) fn run(&mut self) -> Result<DeliveryCorpus, String> {
        self.initial()?;
        while self.merged_topics < self.spec.topics {
            while self.next_topic < self.spec.topics
                && (self.open.is_empty() || (self.open.len() < 3 && self.rng.percent(45)))
            {
                self.start_topic();
            }
            let t = self.rng.below(self.open.len());
            if self.open[t].made < self.open[t].planned {
                self.topic_commit(t)?;
            } else {
                for _ in 0..[0, 0, 1, 1, 2][self.rng.below(5)] {
                    self.chore()?;
                }
                self.merge(t)?;
                if self
                    .reverts_wanted
                    .first()
                    .is_some_and(|&at| self.merged_topics >= at)
                    && self.revert()?
                {
                    self.reverts_wanted.remove(0);
                }
            }
        }
        let marks: Vec<usize> = self.notes.iter().map(|n| n.commit + 1).collect();
        let ids = fast_import::get_marks(&mut self.out, &mut self.answers, &marks)?;
        self.write_notes(&ids)?;
        self.finish_corpus();
        Ok(std::mem::take(&mut self.corpus))
    }

    fn write(&mut self, text: &str) -> Result<(), String> {
        self.out
            .write_all(text.as_bytes())
            .map_err(|e| format!("writing to git fast-import: {e}"))
    }

    /// Writes commit number `self.subjects.len()` on `refname` with
    /// `message`, first parent `from` (a mark; its tree `parent`), second
    /// parent `merge`, and the tree `tree`. Returns its mark.
    fn emit(
        &mut self,
        refname: &str,
        message: &str,
        from: Option<(usize, &Tree)>,
        merge: Option<usize>,
        tree: &Tree,
    ) -> Result<usize, String> {
        let seq = self.subjects.len();
        let mark = seq + 1;
        let when = EPOCH + seq as i64 * TICK;
        let mut text = String::new();
        Commit::on(refname, when, message)
            .marked(mark)
            .parents(from.map(|f| f.0), merge)
            .push_header(&mut text);
        for file in 0..tree.files.len() {
            let path = &tree.files[file].path;
            match from {
                Some((_, parent)) if !tree.file_differs(parent, file) => {}
                Some((_, parent)) if parent.files[file].path != *path => {
                    fast_import::push_delete(&mut text, &parent.files[file].path);
                    fast_import::push_file(&mut text, path, &tree.render(file));
                }
                _ => fast_import::push_file(&mut text, path, &tree.render(file)),
            }
        }
        text.push('\n');
        self.write(&text)?;
        self.subjects
            .push(message.lines().next().unwrap_or_default().to_owned());
        Ok(mark)
    }

    /// The initial commit on `main`: every file, unannotated.
    fn initial(&mut self) -> Result<(), String> {
        let spec = self.spec;
        let mut funcs = Vec::new();
        for f in 0..spec.files * spec.functions_per_file {
            let mids = 3 + self.rng.below(16);
            let mut lines = vec![Line {
                text: format!("{} {{", self.signature(f)),
                origin: 0,
            }];
            lines.extend(self.body(mids, 0));
            lines.push(Line {
                text: "}".to_owned(),
                origin: 0,
            });
            funcs.push(Rc::new(Func { lines }));
        }
        let files = (0..spec.files)
            .map(|i| {
                let path = self.new_path();
                Rc::new(FileState {
                    path,
                    order: (i * spec.functions_per_file..(i + 1) * spec.functions_per_file)
                        .collect(),
                })
            })
            .collect();
        let tree = Tree { funcs, files };
        let message = format!(
            "Start the service: {} modules\n\nThe first cut of every module, moved over from the prototype.\n",
            spec.files
        );
        self.main_mark = self.emit("refs/heads/main", &message, None, None, &tree)?;
        self.main = tree;
        self.remember_main();
        Ok(())
    }

    /// A file path not used before.
    fn new_path(&mut self) -> String {
        let free: Vec<usize> = (0..FILE_WORDS.len())
            .filter(|&w| !self.used_words[w])
            .collect();
        if free.is_empty() {
            let k = self.unique();
            return format!("src/{}_{k}.rs", self.rng.pick(FILE_WORDS));
        }
        let w = free[self.rng.below(free.len())];
        self.used_words[w] = true;
        format!("src/{}.rs", FILE_WORDS[w])
    }

    fn remember_main(&mut self) {
        self.recent.push((self.main_mark, self.main.clone()));
        if self.recent.len() > 6 {
            self.recent.remove(0);
        }
    }

    fn held_by_others(&self, t: Option<usize>, f: usize) -> bool {
        self.open
            .iter()
            .enumerate()
            .any(|(i, topic)| Some(i) != t && topic.held.contains(&f))
    }

    fn file_held(&self, file: usize) -> bool {
        self.open
            .iter()
            .any(|topic| topic.held_files.contains(&file))
    }
}
