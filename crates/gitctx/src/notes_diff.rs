//! What changed between two commits of one notes ref: the commits whose note
//! was added, changed or removed. Caches derived from notes (ultragit's reverse
//! dependency index) update from it, reading only the notes that changed.
//!
//! Trees are compared in-process (`git2`), entering only the subtrees that
//! differ; flat and fanned-out paths are both joined into commit ids, so a note
//! that only moved between the two layouts is no change.

use crate::error::{Result, git};
use crate::notes::{Notes, NotesRead, read_blob};
use crate::notes_merge::changes;
use crate::oid::ObjectId;

/// One annotated commit whose note differs between two notes commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NoteChange {
    /// The annotated commit.
    pub target: ObjectId,
    /// The note's blob in the newer notes commit; `None`: the note was removed.
    pub blob: Option<ObjectId>,
}

impl Notes<'_> {
    /// The notes that differ between the notes commits `old` (`None`: no notes
    /// at all) and `new`, sorted by target. An error when either is not a commit
    /// of this repository (a caller holding a stale `old` starts from `None`).
    pub fn changes_between(&self, old: Option<ObjectId>, new: ObjectId) -> Result<Vec<NoteChange>> {
        let repo = &self.repo.inner;
        let tree_of = |id: ObjectId| {
            repo.find_commit(id.to_git())
                .and_then(|commit| commit.tree())
                .map_err(git("reading a notes commit"))
        };
        let old_tree = old.map(tree_of).transpose()?;
        let new_tree = tree_of(new)?;
        let mut out: Vec<NoteChange> = changes(repo, old_tree.as_ref(), &new_tree)?
            .into_iter()
            .map(|(target, change)| NoteChange {
                target,
                blob: change.new.map(|entry| ObjectId::from_git(entry.id)),
            })
            .collect();
        out.sort();
        Ok(out)
    }

    /// The text of the new note of every change that has one, in the order
    /// given; a note over [`crate::MAX_NOTE_BYTES`] is not loaded but listed in
    /// [`NotesRead::too_large`].
    pub fn read_changes(&self, changes: &[NoteChange]) -> Result<NotesRead> {
        let mut out = NotesRead::default();
        for change in changes {
            let Some(blob) = change.blob else { continue };
            match read_blob(&self.repo.inner, blob.to_git())? {
                Ok(text) => out.found.push((change.target, text)),
                Err(bytes) => out.too_large.push((change.target, bytes)),
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::Repo;

    fn repo() -> (tempfile::TempDir, Repo) {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path()).unwrap();
        let repo = Repo::open(dir.path()).unwrap();
        (dir, repo)
    }

    fn commit(repo: &Repo, name: &str) -> ObjectId {
        let inner = &repo.inner;
        let blob = inner.blob(name.as_bytes()).unwrap();
        let mut tree = inner.treebuilder(None).unwrap();
        tree.insert(name, blob, 0o100644).unwrap();
        let tree = inner.find_tree(tree.write().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        ObjectId::from_git(inner.commit(None, &sig, &sig, name, &tree, &[]).unwrap())
    }

    #[test]
    fn lists_added_changed_and_removed_notes() {
        let (_dir, repo) = repo();
        let (a, b, c) = (commit(&repo, "a"), commit(&repo, "b"), commit(&repo, "c"));
        let notes = repo.notes("refs/notes/test").unwrap();
        notes.write(a, "note a").unwrap();
        let first = notes.write(b, "note b").unwrap().notes_commit;
        notes.write(b, "note b, changed").unwrap();
        notes.remove(a).unwrap();
        let last = notes.write(c, "note c").unwrap().notes_commit;

        let all = notes.changes_between(None, first).unwrap();
        assert_eq!(all.iter().map(|c| c.target).collect::<Vec<_>>(), {
            let mut both = vec![a, b];
            both.sort();
            both
        });
        assert!(all.iter().all(|c| c.blob.is_some()));

        let changed = notes.changes_between(Some(first), last).unwrap();
        let mut expected = vec![(a, false), (b, true), (c, true)];
        expected.sort();
        assert_eq!(
            changed
                .iter()
                .map(|c| (c.target, c.blob.is_some()))
                .collect::<Vec<_>>(),
            expected
        );
        let read = notes.read_changes(&changed).unwrap();
        let mut texts: Vec<&str> = read.found.iter().map(|(_, t)| t.as_str()).collect();
        texts.sort();
        assert_eq!(texts, ["note b, changed", "note c"]);
        assert!(notes.changes_between(Some(last), last).unwrap().is_empty());
        let missing: ObjectId = "1111111111111111111111111111111111111111".parse().unwrap();
        assert!(notes.changes_between(Some(missing), last).is_err());
    }

    /// A notes commit whose tree holds `notes` (`path`, text) and `junk`
    /// (`path`, text) that no note can be.
    fn notes_commit(repo: &Repo, notes: &[(&str, &str)]) -> ObjectId {
        let inner = &repo.inner;
        let mut update = git2::build::TreeUpdateBuilder::new();
        for (path, text) in notes {
            let blob = inner.blob(text.as_bytes()).unwrap();
            update.upsert(*path, blob, git2::FileMode::Blob);
        }
        let empty = inner
            .find_tree(inner.treebuilder(None).unwrap().write().unwrap())
            .unwrap();
        let tree = inner
            .find_tree(update.create_updated(inner, &empty).unwrap())
            .unwrap();
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        ObjectId::from_git(inner.commit(None, &sig, &sig, "notes", &tree, &[]).unwrap())
    }

    #[test]
    fn only_differing_subtrees_count_and_layouts_are_no_change() {
        let (_dir, repo) = repo();
        let notes = repo.notes("refs/notes/test").unwrap();
        let a = "ab".repeat(20);
        let b = "cd".repeat(20);
        let c = "ce".repeat(20);
        let fanned = |id: &str| format!("{}/{}", &id[..2], &id[2..]);
        let deep = |id: &str| format!("{}/{}/{}", &id[..2], &id[2..4], &id[4..]);
        let flat = notes_commit(&repo, &[(&a, "A"), (&b, "B"), ("README", "not a note")]);
        let moved = notes_commit(
            &repo,
            &[
                (&fanned(&a), "A"),
                (&deep(&b), "B"),
                // A tree whose path is already a whole id holds no note.
                (&format!("{b}/{a}"), "junk"),
            ],
        );
        assert!(
            notes.changes_between(Some(flat), moved).unwrap().is_empty(),
            "only the layout changed"
        );
        let changed = notes_commit(
            &repo,
            &[(&fanned(&a), "A, changed"), (&deep(&b), "B"), (&c, "C")],
        );
        let found = notes.changes_between(Some(moved), changed).unwrap();
        let targets: Vec<(String, bool)> = found
            .iter()
            .map(|c| (c.target.to_hex(), c.blob.is_some()))
            .collect();
        assert_eq!(targets, [(a.clone(), true), (c.clone(), true)]);
        let back = notes.changes_between(Some(changed), flat).unwrap();
        let targets: Vec<(String, bool)> = back
            .iter()
            .map(|c| (c.target.to_hex(), c.blob.is_some()))
            .collect();
        assert_eq!(
            targets,
            [(a, true), (c, false)],
            "c removed, a changed back"
        );
    }
}
