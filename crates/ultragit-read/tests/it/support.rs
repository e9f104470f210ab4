//! Building annotated repositories.

use gitctx::Repo;
use serde_json::{Value, json};
use testkit::TestRepo;

/// Writes `note` (an `ultragit/v1` document) on `commit`, as the writing agent does.
pub fn annotate(repo: &TestRepo, commit: &str, note: &Value) {
    let r = Repo::discover(repo.path()).unwrap();
    r.notes("refs/notes/ultragit")
        .unwrap()
        .write(commit.parse().unwrap(), &note.to_string())
        .unwrap();
}

/// A note with the given regions (and optional cross-cutting concerns).
pub fn note(commit: &str, timestamp: &str, level: &str, regions: Vec<Value>) -> Value {
    json!({
        "$schema": "ultragit/v1",
        "commit": commit,
        "timestamp": timestamp,
        "task": null,
        "summary": "test annotation",
        "context_level": level,
        "regions": regions,
        "cross_cutting": [],
        "provenance": {"operation": "initial", "original_annotations_preserved": false}
    })
}

/// A region.
pub fn region(file: &str, kind: &str, name: &str, lines: (u32, u32), intent: &str) -> Value {
    json!({
        "file": file,
        "ast_anchor": {"type": kind, "name": name},
        "lines": {"start": lines.0, "end": lines.1},
        "intent": intent,
        "constraints": [{"text": format!("{name} must stay pure"), "source": "inferred"}]
    })
}
