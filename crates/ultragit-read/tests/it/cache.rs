//! The blame cache under the pipeline: same answers with and without it, kept
//! in the repository's git directory, harmless when it cannot be written.

use ultragit_read::{GitReadPipeline, ReadPipeline, ReadQuery};

use crate::support::{MQTT_V1, pipeline, shifted};

fn queries() -> Vec<ReadQuery> {
    vec![
        ReadQuery::file("src/mqtt.rs").with_anchor("MqttClient::connect"),
        ReadQuery::file("src/mqtt.rs").with_anchor("parse"),
        ReadQuery::file("src/mqtt.rs"),
        ReadQuery::file("src/mqtt.rs").with_anchor("MqttClient::connect"),
        ReadQuery::file("src/mqtt.rs").with_lines(1, 4),
    ]
}

fn json(pipeline: &GitReadPipeline, query: &ReadQuery) -> String {
    serde_json::to_string(&pipeline.execute(query).unwrap()).unwrap()
}

#[test]
fn reads_through_the_cache_answer_as_reads_without_it() {
    let (repo, _, _) = shifted();
    let cached = pipeline(&repo);
    let cache_dir = repo.path().join(".git/ultragit/cache/blame");
    assert_eq!(
        cached.blame_cache().map(|c| c.dir()),
        Some(cache_dir.as_path())
    );
    let plain = pipeline(&repo).with_blame_cache(None);
    for query in queries() {
        assert_eq!(json(&cached, &query), json(&plain, &query), "{query:?}");
    }
    assert!(cache_dir.is_dir(), "the cache is kept in the git directory");
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        "",
        "the work tree is untouched"
    );

    // A new commit changes the answers; the cache does not hide it.
    repo.commit_file(
        "src/mqtt.rs",
        format!(
            "// MQTT client.\n// Connects to one broker.\n\n{}",
            MQTT_V1.replace("!self.host.is_empty()", "self.host.len() < 128")
        ),
        "tighten the limit",
    );
    let cached = pipeline(&repo);
    let plain = pipeline(&repo).with_blame_cache(None);
    for query in queries() {
        assert_eq!(json(&cached, &query), json(&plain, &query), "{query:?}");
    }
}

#[test]
fn without_the_cache_nothing_is_written() {
    let (repo, _, _) = shifted();
    let plain = pipeline(&repo).with_blame_cache(None);
    for query in queries() {
        plain.execute(&query).unwrap();
    }
    assert!(!repo.path().join(".git/ultragit/cache/blame").exists());
}

#[test]
fn a_cache_that_cannot_be_written_costs_nothing_but_speed() {
    let (repo, _, _) = shifted();
    std::fs::create_dir_all(repo.path().join(".git/ultragit")).unwrap();
    // A file where the cache directory would go.
    std::fs::write(repo.path().join(".git/ultragit/cache"), "in the way").unwrap();
    let cached = pipeline(&repo);
    let plain = pipeline(&repo).with_blame_cache(None);
    for query in queries() {
        assert_eq!(json(&cached, &query), json(&plain, &query), "{query:?}");
    }
    assert_eq!(
        std::fs::read_to_string(repo.path().join(".git/ultragit/cache")).unwrap(),
        "in the way"
    );
}
