//! Shared helpers.

use gitctx::{ObjectId, Repo};
use testkit::TestRepo;
use ultragit_notes::NOTES_REF;
use ultragit_schema::Annotation;

/// The object id spelled `hex`.
pub fn id(hex: &str) -> ObjectId {
    hex.parse().unwrap()
}

/// The repository of a test repo.
pub fn open(repo: &TestRepo) -> Repo {
    Repo::discover(repo.path()).unwrap()
}

/// Writes `annotation` as its commit's note as it is (no validation).
pub fn write_note(repo: &TestRepo, annotation: &Annotation) {
    open(repo)
        .notes(NOTES_REF)
        .unwrap()
        .write(id(&annotation.commit), &annotation.to_json())
        .unwrap();
}

/// The note of `commit`, which must parse as `ultragit/v1`.
pub fn read_note(repo: &TestRepo, commit: &str) -> Option<Annotation> {
    let text = open(repo)
        .notes(NOTES_REF)
        .unwrap()
        .read(id(commit))
        .unwrap()?;
    Some(Annotation::from_json(&text).expect("every written note parses"))
}
