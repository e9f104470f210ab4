//! The model: trees of functions whose lines know the commit that wrote them.

use std::collections::BTreeSet;
use std::rc::Rc;

/// One line of a function and the commit (by sequence number) that last
/// wrote it, as blame would say.
#[derive(Debug, Clone)]
pub(super) struct Line {
    pub(super) text: String,
    pub(super) origin: usize,
}

/// One version of a function: its `pub fn` line, body, closing brace.
#[derive(Debug)]
pub(super) struct Func {
    pub(super) lines: Vec<Line>,
}

impl Func {
    pub(super) fn origins(&self) -> BTreeSet<usize> {
        self.lines.iter().map(|l| l.origin).collect()
    }
}

/// One version of a file's path and function order.
#[derive(Debug)]
pub(super) struct FileState {
    pub(super) path: String,
    pub(super) order: Vec<usize>,
}

/// The content of one commit. Versions are shared (`Rc`), so whether a
/// side changed something is whether its pointer differs.
#[derive(Debug, Clone)]
pub(super) struct Tree {
    pub(super) funcs: Vec<Rc<Func>>,
    pub(super) files: Vec<Rc<FileState>>,
}

impl Tree {
    pub(super) fn file_of(&self, f: usize) -> usize {
        self.files
            .iter()
            .position(|file| file.order.contains(&f))
            .expect("every function is in a file")
    }

    pub(super) fn render(&self, file: usize) -> String {
        let mut text = String::new();
        for (k, &f) in self.files[file].order.iter().enumerate() {
            if k > 0 {
                text.push('\n');
            }
            for line in &self.funcs[f].lines {
                text.push_str(&line.text);
                text.push('\n');
            }
        }
        text
    }

    /// The 1-based inclusive line range of `f` in its file.
    pub(super) fn range(&self, f: usize) -> (usize, usize) {
        let mut line = 1;
        for &g in &self.files[self.file_of(f)].order {
            let len = self.funcs[g].lines.len();
            if g == f {
                return (line, line + len - 1);
            }
            line += len + 1;
        }
        unreachable!("file_of found the function")
    }

    /// Whether `file` differs between the two trees (path, order or a
    /// function's version).
    pub(super) fn file_differs(&self, other: &Tree, file: usize) -> bool {
        let (a, b) = (&self.files[file], &other.files[file]);
        if !Rc::ptr_eq(a, b) && (a.path != b.path || a.order != b.order) {
            return true;
        }
        a.order
            .iter()
            .any(|&f| !Rc::ptr_eq(&self.funcs[f], &other.funcs[f]))
    }
}
