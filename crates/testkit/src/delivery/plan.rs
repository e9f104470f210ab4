//! Plans: the items, regions, notes and corrections the generator has
//! decided on, and the topics it keeps open.

use std::rc::Rc;

use super::model::{Func, Tree};

/// Which kind of item a token names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Constraint,
    Risk,
    Dependency,
}

#[derive(Debug)]
pub(super) struct Item {
    pub(super) token: String,
    pub(super) text: String,
    pub(super) kind: Kind,
}

#[derive(Debug)]
pub(super) struct RegionPlan {
    pub(super) file: String,
    pub(super) func: usize,
    pub(super) lines: (usize, usize),
    pub(super) intent: String,
    pub(super) reasoning: String,
    pub(super) constraints: Vec<(usize, &'static str)>,
    pub(super) risk: Option<usize>,
    pub(super) dependency: Option<(String, String, usize)>,
    pub(super) tags: Vec<&'static str>,
    pub(super) retires: Vec<String>,
}

impl RegionPlan {
    pub(super) fn items(&self) -> Vec<usize> {
        let mut items: Vec<usize> = self.constraints.iter().map(|c| c.0).collect();
        items.extend(self.risk);
        items.extend(self.dependency.as_ref().map(|d| d.2));
        items
    }
}

#[derive(Debug)]
pub(super) enum CorrectionPlan {
    /// Remove constraint `item` of region `region`.
    Remove { region: usize, item: usize },
    /// Flag region `region`.
    Flag { region: usize },
}

#[derive(Debug)]
pub(super) struct NotePlan {
    pub(super) commit: usize,
    pub(super) summary: String,
    pub(super) task: Option<String>,
    pub(super) enhanced: bool,
    pub(super) regions: Vec<RegionPlan>,
    pub(super) corrections: Vec<CorrectionPlan>,
}

/// What a topic is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Purpose {
    Changes,
    /// Rename file `file` to `to`.
    Rename {
        file: usize,
        to: String,
    },
    /// Move function `func` to the end of file `to`.
    Move {
        func: usize,
        to: usize,
    },
}

#[derive(Debug)]
pub(super) struct Topic {
    pub(super) id: usize,
    pub(super) purpose: Purpose,
    pub(super) fork: Tree,
    pub(super) tree: Tree,
    /// The mark of the topic's tip (its fork point before its first commit).
    pub(super) tip: usize,
    pub(super) planned: usize,
    pub(super) made: usize,
    /// Functions it changed (nobody else touches them until it is merged).
    pub(super) held: Vec<usize>,
    /// Files whose path or order it changes.
    pub(super) held_files: Vec<usize>,
    /// Its commits that could be reverted once merged.
    pub(super) revertible: Vec<Revertible>,
}

/// A topic commit a revert could undo: its subject and, per function, the
/// version before and after it.
#[derive(Debug)]
pub(super) struct Revertible {
    pub(super) commit: usize,
    pub(super) subject: String,
    pub(super) changed: Vec<(usize, Rc<Func>, Rc<Func>)>,
}
