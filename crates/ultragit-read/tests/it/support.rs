//! Building annotated repositories, as the writing agent would leave them, and
//! reading them — each read three times, fresh (no cache), with blame and
//! outlines carried forward from caches filled at HEAD^, and again with the
//! caches that read left (served from them), which must all answer the same.

use gitctx::{BlameCache, BlameEngine, BlameOptions, Repo};
use serde_json::{Value, json};
use testkit::TestRepo;
use ultragit_read::{
    GitReadPipeline, OutlineCache, ReadConfig, ReadOutput, ReadPipeline, ReadQuery,
};
use ultragit_schema::{AstAnchor, Constraint, ConstraintSource, LineRange, RegionAnnotation};

/// Writes `note` on `commit` with gitctx, as the writing agent does.
pub fn annotate(repo: &TestRepo, commit: &str, note: &Value) {
    write_raw(repo, commit, &note.to_string());
}

/// Writes any text as the note of `commit`.
pub fn write_raw(repo: &TestRepo, commit: &str, text: &str) {
    let r = Repo::discover(repo.path()).unwrap();
    r.notes("refs/notes/ultragit")
        .unwrap()
        .write(commit.parse().unwrap(), text)
        .unwrap();
}

/// Commits `text` as `path` with `message` and annotates that commit with
/// `regions` (an inferred note of 2024-01-01); returns the commit.
pub fn commit_annotated(
    repo: &TestRepo,
    path: &str,
    text: &str,
    message: &str,
    regions: Vec<Value>,
) -> String {
    let commit = repo.commit_file(path, text, message);
    annotate(
        repo,
        &commit,
        &note(&commit, "2024-01-01T00:00:00Z", "inferred", regions),
    );
    commit
}

/// An `ultragit/v1` document.
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

/// A region with one inferred constraint, as the note schema writes it.
pub fn region(file: &str, kind: &str, name: &str, lines: (u32, u32), intent: &str) -> Value {
    let anchor = AstAnchor::new(kind, name);
    let mut region = RegionAnnotation::new(file, anchor, LineRange::new(lines.0, lines.1), intent);
    let constraint = format!("{name} keeps its contract");
    region.constraints = vec![Constraint::new(constraint, ConstraintSource::Inferred)];
    serde_json::to_value(region).expect("a region is JSON")
}

/// Runs `query` on `repo` with the repository's configuration; see
/// [`both_ways`].
pub fn read(repo: &TestRepo, query: &ReadQuery) -> ReadOutput {
    both_ways(repo, query, || pipeline(repo))
}

/// Runs `query` through `pipeline` without the blame and outline caches,
/// then — when HEAD has a parent where one of the query's files was — twice
/// more: through caches holding the blame and the outline of the query's
/// files at HEAD's first parent, which the read carries forward to HEAD
/// (`gitctx::blame_carry`, `outline::carry`), and through the caches as
/// that read left them (nothing carried or parsed again). Checks that all
/// answer the same; returns the answer.
pub fn both_ways(
    repo: &TestRepo,
    query: &ReadQuery,
    pipeline: impl Fn() -> GitReadPipeline,
) -> ReadOutput {
    let fresh = pipeline()
        .with_blame_cache(None)
        .with_outline_cache(None)
        .execute(query)
        .unwrap();
    if let Some((cache, outlines)) = warmed_at_parent(repo, query) {
        for run in ["carried from HEAD^", "served from the caches"] {
            let cached = pipeline()
                .with_blame_cache(Some(cache.clone()))
                .with_outline_cache(Some(outlines.clone()))
                .execute(query)
                .unwrap();
            assert_eq!(
                serde_json::to_value(&cached).unwrap(),
                serde_json::to_value(&fresh).unwrap(),
                "a read with blame and outlines {run} differs from one without the caches: \
                 {query:?}"
            );
        }
        std::fs::remove_dir_all(cache.dir()).unwrap();
        if outlines.dir().exists() {
            std::fs::remove_dir_all(outlines.dir()).unwrap();
        }
    }
    fresh
}

/// A new blame cache and a new outline cache (in the test repository's git
/// directory, which goes with them) holding the whole blame and the outline
/// of each of `query`'s files at HEAD's first parent; `None` when HEAD has
/// no parent or none of the files is a file there.
fn warmed_at_parent(repo: &TestRepo, query: &ReadQuery) -> Option<(BlameCache, OutlineCache)> {
    let git = Repo::discover(repo.path()).unwrap();
    let head = git.resolve_commit("HEAD").ok()?;
    let parent = *git.commit_info_by_id(head).unwrap().parents.first()?;
    let dir = repo.path().join(".git/test-blame-carried");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    let cache = BlameCache::new(dir);
    let options = BlameOptions {
        rev: Some(parent.to_hex()),
        lines: None,
        engine: BlameEngine::Cli,
    };
    let outlines = OutlineCache::new(repo.path().join(".git/test-outline-carried"));
    if outlines.dir().exists() {
        std::fs::remove_dir_all(outlines.dir()).unwrap();
    }
    let warmed = query
        .files
        .iter()
        .filter(|file| git.blame_cached(file, &options, &cache).is_ok())
        .inspect(|file| {
            let (blob, bytes) = git.file_with_id_at(&parent.to_hex(), file).unwrap();
            // A file without a grammar has no outline to cache.
            let _ = outlines.outline(&git, file, blob, &String::from_utf8_lossy(&bytes));
        })
        .count();
    (warmed > 0).then_some((cache, outlines))
}

/// The pipeline of `repo`.
pub fn pipeline(repo: &TestRepo) -> GitReadPipeline {
    GitReadPipeline::open(repo.path()).unwrap()
}

/// `query`'s answer from `pipeline` as JSON text, to compare answers by.
pub fn answer_json(pipeline: &GitReadPipeline, query: &ReadQuery) -> String {
    serde_json::to_string(&pipeline.execute(query).unwrap()).unwrap()
}

/// Asserts that `pipeline` answers every query as `reference` does; `when`
/// says in a failure what the repository or the caches were like.
pub fn assert_same_answers(
    pipeline: &GitReadPipeline,
    reference: &GitReadPipeline,
    queries: impl IntoIterator<Item = ReadQuery>,
    when: &str,
) {
    for query in queries {
        assert_eq!(
            answer_json(pipeline, &query),
            answer_json(reference, &query),
            "{when}: {query:?}"
        );
    }
}

/// Runs every query through `pipeline`, each of which must succeed (to fill
/// its caches, or to see what they leave behind).
pub fn read_all(pipeline: &GitReadPipeline, queries: impl IntoIterator<Item = ReadQuery>) {
    for query in queries {
        pipeline.execute(&query).unwrap();
    }
}

/// [`pipeline`] without the blame and outline caches: every read blames and
/// parses.
pub fn uncached(repo: &TestRepo) -> GitReadPipeline {
    pipeline(repo)
        .with_blame_cache(None)
        .with_outline_cache(None)
}

/// Runs `query` on `repo` with `config`; see [`both_ways`].
pub fn read_with(repo: &TestRepo, config: ReadConfig, query: &ReadQuery) -> ReadOutput {
    both_ways(repo, query, || {
        GitReadPipeline::with_config(Repo::discover(repo.path()).unwrap(), config)
    })
}

/// Runs `query` on `repo` with the default configuration as `change` leaves it.
pub fn read_configured(
    repo: &TestRepo,
    change: impl FnOnce(&mut ReadConfig),
    query: &ReadQuery,
) -> ReadOutput {
    let mut config = ReadConfig::default();
    change(&mut config);
    read_with(repo, config, query)
}

/// `(file, anchor name, start, end)` of every returned region, in order.
pub fn regions(output: &ReadOutput) -> Vec<(String, String, u32, u32)> {
    output
        .regions
        .iter()
        .map(|r| {
            (
                r.region.file.clone(),
                r.region.ast_anchor.name.clone(),
                r.region.lines.start,
                r.region.lines.end,
            )
        })
        .collect()
}

/// The anchor names of the returned regions.
pub fn names(output: &ReadOutput) -> Vec<String> {
    output
        .regions
        .iter()
        .map(|r| r.region.ast_anchor.name.clone())
        .collect()
}

/// The MQTT client of spec 003's examples, line for line:
///
/// ```text
///  1 pub struct MqttClient {
///  2     host: String,
///  3 }
///  4
///  5 impl MqttClient {
///  6     pub fn new(host: &str) -> Self {
///  7         MqttClient { host: host.to_owned() }
///  8     }
///  9
/// 10     pub fn connect(&self) -> bool {
/// 11         !self.host.is_empty()
/// 12     }
/// 13 }
/// 14
/// 15 pub fn parse(raw: &str) -> u32 {
/// 16     raw.len() as u32
/// 17 }
/// ```
pub const MQTT_V1: &str = "pub struct MqttClient {\n    host: String,\n}\n\nimpl MqttClient {\n    pub fn new(host: &str) -> Self {\n        MqttClient { host: host.to_owned() }\n    }\n\n    pub fn connect(&self) -> bool {\n        !self.host.is_empty()\n    }\n}\n\npub fn parse(raw: &str) -> u32 {\n    raw.len() as u32\n}\n";

/// The first commit's note on [`MQTT_V1`].
pub fn mqtt_v1_regions() -> Vec<Value> {
    vec![
        region(
            "src/mqtt.rs",
            "struct",
            "MqttClient",
            (1, 3),
            "holds the broker host",
        ),
        region(
            "src/mqtt.rs",
            "method",
            "MqttClient::new",
            (6, 8),
            "builds a client for a host",
        ),
        region(
            "src/mqtt.rs",
            "method",
            "MqttClient::connect",
            (10, 12),
            "connects when a host is set",
        ),
        region(
            "src/mqtt.rs",
            "function",
            "parse",
            (15, 17),
            "parses a frame length",
        ),
    ]
}

/// A repository whose one commit writes [`MQTT_V1`] as `src/mqtt.rs`,
/// annotated with [`mqtt_v1_regions`]; returns it and the commit.
pub fn mqtt_v1_repo() -> (TestRepo, String) {
    let repo = TestRepo::new();
    let c1 = commit_annotated(
        &repo,
        "src/mqtt.rs",
        MQTT_V1,
        "mqtt client",
        mqtt_v1_regions(),
    );
    (repo, c1)
}

/// [`mqtt_v1_repo`], then three header lines inserted above it and
/// `connect`'s body changed (annotated too, in the new coordinates).
pub fn shifted() -> (TestRepo, String, String) {
    let (repo, c1) = mqtt_v1_repo();
    let v2 = format!(
        "// MQTT client.\n// Connects to one broker.\n\n{}",
        MQTT_V1.replace(
            "!self.host.is_empty()",
            "!self.host.is_empty() && self.host.len() < 256"
        )
    );
    let c2 = repo.commit_file("src/mqtt.rs", &v2, "limit host length");
    annotate(
        &repo,
        &c2,
        &note(
            &c2,
            "2024-02-01T00:00:00Z",
            "enhanced",
            vec![region(
                "src/mqtt.rs",
                "method",
                "MqttClient::connect",
                (13, 15),
                "rejects hosts over 255 bytes",
            )],
        ),
    );
    (repo, c1, c2)
}

/// Commits `text` as `path` with `message`, authored and committed at `date`
/// (ISO 8601): a commit made then, whatever testkit's clock says.
pub fn commit_file_at(
    repo: &TestRepo,
    path: &str,
    text: &str,
    message: &str,
    date: &str,
) -> String {
    repo.write(path, text).stage(&[path]);
    repo.command()
        .args(["commit", "--quiet", "-m", message])
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .run()
        .expect("commit at a pinned date");
    repo.rev_parse("HEAD")
}

/// A new repository whose one commit writes `text` as `path`, annotated with
/// `regions` (see [`commit_annotated`]); returns it and the commit.
pub fn one_annotated_file(path: &str, text: &str, regions: Vec<Value>) -> (TestRepo, String) {
    let repo = TestRepo::new();
    let commit = commit_annotated(&repo, path, text, "first", regions);
    (repo, commit)
}
