//! The blame and outline caches under the pipeline: same answers with and
//! without them, kept in the repository's git directory, harmless when they
//! cannot be written, never trusted or read through links.

use gitctx::Repo;
use testkit::TestRepo;
use ultragit_read::{OutlineCache, OutlineSource, ReadPipeline, ReadQuery};

use crate::support::{
    MQTT_V1, answer_json, assert_same_answers, commit_annotated, pipeline, read_all, region,
    shifted, uncached,
};

fn queries() -> Vec<ReadQuery> {
    vec![
        ReadQuery::file("src/mqtt.rs").with_anchor("MqttClient::connect"),
        ReadQuery::file("src/mqtt.rs").with_anchor("parse"),
        ReadQuery::file("src/mqtt.rs"),
        ReadQuery::file("src/mqtt.rs").with_anchor("MqttClient::connect"),
        ReadQuery::file("src/mqtt.rs").with_lines(1, 4),
    ]
}

/// The client with a tighter host limit, two comment lines above it, and
/// `tail` after it.
fn tightened(tail: &str) -> String {
    format!(
        "// MQTT client.\n// Connects to one broker.\n\n{}{tail}",
        MQTT_V1.replace("!self.host.is_empty()", "self.host.len() < 128")
    )
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
    assert_same_answers(&cached, &plain, queries(), "at the fixture's HEAD");
    assert!(cache_dir.is_dir(), "the cache is kept in the git directory");
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        "",
        "the work tree is untouched"
    );

    // A new commit changes the answers; the cache does not hide it.
    repo.commit_file("src/mqtt.rs", tightened(""), "tighten the limit");
    let cached = pipeline(&repo);
    let plain = pipeline(&repo).with_blame_cache(None);
    assert_same_answers(&cached, &plain, queries(), "after a new commit");
}

#[test]
fn without_the_cache_nothing_is_written() {
    let (repo, _, _) = shifted();
    read_all(&uncached(&repo), queries());
    assert!(!repo.path().join(".git/ultragit/cache/blame").exists());
    assert!(!repo.path().join(".git/ultragit/cache/outline").exists());
}

#[test]
fn a_cache_that_cannot_be_written_costs_nothing_but_speed() {
    let (repo, _, _) = shifted();
    std::fs::create_dir_all(repo.path().join(".git/ultragit")).unwrap();
    // A file where the cache directory would go.
    std::fs::write(repo.path().join(".git/ultragit/cache"), "in the way").unwrap();
    let cached = pipeline(&repo);
    let plain = pipeline(&repo).with_blame_cache(None);
    assert_same_answers(
        &cached,
        &plain,
        queries(),
        "with a cache that cannot be written",
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join(".git/ultragit/cache")).unwrap(),
        "in the way"
    );
}

/// The outline of `path` at `rev` through `cache`, and how it was found.
fn outline_at(
    cache: &OutlineCache,
    repo: &TestRepo,
    rev: &str,
    path: &str,
) -> (Vec<outline::Unit>, OutlineSource) {
    let git = Repo::discover(repo.path()).unwrap();
    let (blob, bytes) = git.file_with_id_at(rev, path).unwrap();
    cache
        .outline(&git, path, blob, &String::from_utf8_lossy(&bytes))
        .unwrap()
}

/// The outline of `path` at `rev`, parsed whole.
fn parsed_at(repo: &TestRepo, rev: &str, path: &str) -> Vec<outline::Unit> {
    let text = repo.git(&["show", &format!("{rev}:{path}")]);
    outline::outline(path, &format!("{text}\n")).unwrap()
}

/// A file of `n` documented functions; `edited` has a longer body.
fn functions(n: usize, edited: Option<usize>) -> String {
    (0..n)
        .map(|i| {
            let body = if edited == Some(i) {
                format!("    let y = x * {i};\n    y + 1")
            } else {
                format!("    x + {i}")
            };
            format!("/// Step {i}.\npub fn step_{i}(x: u32) -> u32 {{\n{body}\n}}\n")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn outlines_are_parsed_once_then_served_then_carried_to_new_versions() {
    let repo = TestRepo::new();
    let c1 = repo.commit_file("src/steps.rs", functions(12, None), "steps");
    let c2 = repo.commit_file("src/steps.rs", functions(12, Some(5)), "edit step 5");
    let read = pipeline(&repo);
    let cache = read.outline_cache().unwrap().clone();
    assert_eq!(cache.dir(), repo.path().join(".git/ultragit/cache/outline"));
    let path = "src/steps.rs";
    let (units, how) = outline_at(&cache, &repo, &c1, path);
    assert_eq!(
        (units, how),
        (parsed_at(&repo, &c1, path), OutlineSource::Parsed)
    );
    let (units, how) = outline_at(&cache, &repo, &c1, path);
    assert_eq!(
        (units, how),
        (parsed_at(&repo, &c1, path), OutlineSource::Cached)
    );
    // c2 changes one function: carried from c1's entry.
    let (units, how) = outline_at(&cache, &repo, &c2, path);
    assert_eq!(
        (units, how),
        (parsed_at(&repo, &c2, path), OutlineSource::Carried)
    );
    let (_, how) = outline_at(&cache, &repo, &c2, path);
    assert_eq!(how, OutlineSource::Cached);
    assert_eq!(cache.usage().entries, 1, "one entry per file");
    // Back to the older version: carried back the same way.
    let (units, how) = outline_at(&cache, &repo, &c1, path);
    assert_eq!(
        (units, how),
        (parsed_at(&repo, &c1, path), OutlineSource::Carried)
    );
    // A small file whose every unit changed is parsed whole.
    let (repo, c1, c2) = shifted();
    outline_at(&cache, &repo, &c1, "src/mqtt.rs");
    let (units, how) = outline_at(&cache, &repo, &c2, "src/mqtt.rs");
    assert_eq!(
        (units, how),
        (parsed_at(&repo, &c2, "src/mqtt.rs"), OutlineSource::Parsed)
    );
    // Files without a grammar are not cached.
    repo.commit_file("notes.txt", "plain\n", "notes");
    let git = Repo::discover(repo.path()).unwrap();
    let (blob, bytes) = git.file_with_id_at("HEAD", "notes.txt").unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(cache.outline(&git, "notes.txt", blob, &text).is_err());
    assert_eq!(cache.usage().entries, 2);
}

#[test]
fn damaged_or_foreign_outline_entries_are_ignored_and_rewritten() {
    let (repo, _, c2) = shifted();
    let cache = OutlineCache::new(repo.path().join(".git/outlines"));
    let expected = parsed_at(&repo, &c2, "src/mqtt.rs");
    outline_at(&cache, &repo, &c2, "src/mqtt.rs");
    let entry = std::fs::read_dir(cache.dir())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let good = std::fs::read(&entry).unwrap();
    let damaged: [Vec<u8>; 4] = [
        good[..good.len() - 3].to_vec(),
        [good.as_slice(), b"x"].concat(),
        b"not an entry".to_vec(),
        Vec::new(),
    ];
    for bytes in damaged {
        std::fs::write(&entry, &bytes).unwrap();
        let (units, how) = outline_at(&cache, &repo, &c2, "src/mqtt.rs");
        assert_eq!((units, how), (expected.clone(), OutlineSource::Parsed));
        assert_eq!(std::fs::read(&entry).unwrap(), good, "rewritten");
    }
    // An entry whose lines lie beyond the file (a long outline recorded
    // under a short file's blob) is not served.
    let c3 = repo.commit_file("src/mqtt.rs", "fn one() {}\n", "shrink");
    let git = Repo::discover(repo.path()).unwrap();
    let (short, _) = git.file_with_id_at(&c3, "src/mqtt.rs").unwrap();
    let (_, long) = git.file_with_id_at(&c2, "src/mqtt.rs").unwrap();
    cache
        .outline(&git, "src/mqtt.rs", short, &String::from_utf8_lossy(&long))
        .unwrap();
    let (units, how) = outline_at(&cache, &repo, &c3, "src/mqtt.rs");
    assert_eq!(
        (units, how),
        (parsed_at(&repo, &c3, "src/mqtt.rs"), OutlineSource::Parsed)
    );
}

#[test]
fn outline_entries_are_never_written_or_read_through_links() {
    let (repo, _, c2) = shifted();
    let outside = repo.path().join(".git/elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    let cache_dir = repo.path().join(".git/outlines");
    std::fs::create_dir_all(&cache_dir).unwrap();
    outline_at(&OutlineCache::new(&cache_dir), &repo, &c2, "src/mqtt.rs");
    let name = std::fs::read_dir(&cache_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name();
    // The entry replaced by a link to a valid entry elsewhere.
    std::fs::rename(cache_dir.join(&name), outside.join(&name)).unwrap();
    std::os::unix::fs::symlink(outside.join(&name), cache_dir.join(&name)).unwrap();
    let (_, how) = outline_at(&OutlineCache::new(&cache_dir), &repo, &c2, "src/mqtt.rs");
    assert_eq!(how, OutlineSource::Parsed, "the linked entry is not read");
}

#[test]
fn reads_answer_the_same_with_the_outline_cache_cold_carried_and_warm() {
    let (repo, _, _) = shifted();
    let plain = uncached(&repo);
    let cached = pipeline(&repo);
    assert_same_answers(&cached, &plain, queries(), "with the outline cache cold");
    assert!(repo.path().join(".git/ultragit/cache/outline").is_dir());
    repo.commit_file(
        "src/mqtt.rs",
        tightened("\n/// Added.\npub fn close() {}\n"),
        "add close",
    );
    let plain = uncached(&repo);
    let cached = pipeline(&repo);
    assert_same_answers(
        &cached,
        &plain,
        queries(),
        "with outline entries carried to a new commit",
    );
}

#[test]
fn warming_carries_outline_entries_to_head() {
    let repo = TestRepo::new();
    let c1 = repo.commit_file("src/steps.rs", functions(12, None), "steps");
    repo.commit_file("src/steps.rs", functions(12, Some(7)), "edit step 7");
    let git = Repo::discover(repo.path()).unwrap();
    let cache = OutlineCache::new(repo.path().join(".git/outlines"));
    outline_at(&cache, &repo, &c1, "src/steps.rs");
    let report = cache.warm(&git, 10);
    assert_eq!(
        (report.considered, report.current, report.carried),
        (1, 0, 1)
    );
    let (units, how) = outline_at(&cache, &repo, "HEAD", "src/steps.rs");
    assert_eq!(
        (units, how),
        (
            parsed_at(&repo, "HEAD", "src/steps.rs"),
            OutlineSource::Cached
        )
    );
    let report = cache.warm(&git, 10);
    assert_eq!(
        (report.considered, report.current, report.carried),
        (1, 1, 0)
    );
    assert_eq!(
        OutlineCache::new(repo.path().join(".git/none"))
            .warm(&git, 10)
            .considered,
        0
    );
}

/// A read after new commits carries the cached blame forward to HEAD (on a
/// thread of its own, as it starts): HEAD's blame of the whole file is then
/// in the cache, exactly what `git blame` says, though the read asked only
/// for the anchor's lines; the answers are those of a read without the
/// cache — a query naming a missing file included.
#[test]
fn a_read_after_new_commits_carries_the_cached_blame_ahead() {
    use gitctx::{BlameEngine, BlameOptions, CacheOutcome};
    let (repo, _, _) = shifted();
    let cached = pipeline(&repo);
    let cache = cached.blame_cache().unwrap().clone();
    let anchor = ReadQuery::file("src/mqtt.rs").with_anchor("MqttClient::connect");
    // The whole file blamed (and cached) at the older HEAD.
    answer_json(&cached, &ReadQuery::file("src/mqtt.rs"));
    let mut text = std::fs::read_to_string(repo.path().join("src/mqtt.rs")).unwrap();
    for n in 0..3 {
        text.push_str(&format!("// appended {n}\n"));
        repo.commit_file("src/mqtt.rs", &text, &format!("append {n}"));
    }
    let whole = BlameOptions {
        rev: None,
        lines: None,
        engine: BlameEngine::Cli,
    };
    let git = Repo::discover(repo.path()).unwrap();
    let read = answer_json(&cached, &anchor);
    // Carried ahead: the whole file is known at HEAD (the read itself asked
    // only for the anchor's lines), without a process.
    let (entries, outcome) = git
        .blame_cached_outcome("src/mqtt.rs", &whole, &cache)
        .unwrap();
    assert_eq!(outcome, CacheOutcome::default(), "HEAD's blame is cached");
    assert_eq!(entries, git.blame("src/mqtt.rs", &whole).unwrap());
    assert_eq!(read, answer_json(&uncached(&repo), &anchor));

    let missing = ReadQuery {
        files: vec!["src/mqtt.rs".to_owned(), "src/gone.rs".to_owned()],
        ..ReadQuery::file("src/mqtt.rs")
    };
    assert_eq!(
        cached.execute(&missing).map_err(|e| e.to_string()),
        uncached(&repo).execute(&missing).map_err(|e| e.to_string())
    );
}

/// A read for an anchor blames the lines its definition seems to span while
/// the file is parsed (`speculate`): the read's own blame then finds them
/// cached, or blames only the lines the guess missed (here a `where` clause
/// ends the guess early) — and answers as a read without the caches.
#[test]
fn anchor_reads_blame_ahead_and_complete_a_short_guess() {
    let text = "pub fn simple(x: u32) -> u32 {\n    x + 1\n}\n\npub fn generic<T>(\n    x: T,\n) -> T\nwhere\n    T: Clone,\n{\n    x.clone()\n}\n";
    let repo = TestRepo::new();
    let regions = vec![
        region("src/lib.rs", "function", "simple", (1, 3), "Adds one."),
        region(
            "src/lib.rs",
            "function",
            "generic",
            (5, 12),
            "Clones its input.",
        ),
    ];
    commit_annotated(&repo, "src/lib.rs", text, "first", regions);
    let changed = text.replace("x.clone()", "x.clone() // owned");
    repo.commit_file("src/lib.rs", changed, "second");
    let cached = pipeline(&repo);
    let plain = uncached(&repo);
    // (anchor, git blame processes ahead of the read, and by the read).
    for (anchor, ahead, after) in [("generic", 1, 1), ("simple", 1, 0)] {
        let query = ReadQuery::file("src/lib.rs").with_anchor(anchor);
        let (output, routes) = cached.execute_traced(&query).unwrap();
        assert_eq!(
            serde_json::to_string(&output).unwrap(),
            answer_json(&plain, &query),
            "{anchor}"
        );
        let [route] = routes.as_slice() else {
            panic!("one route for one file: {routes:?}")
        };
        let processes = |o: &Option<gitctx::CacheOutcome>| o.as_ref().map(|o| o.git_processes);
        assert_eq!(
            processes(&route.carried_ahead),
            Some(ahead),
            "{anchor}: {route:?}"
        );
        assert_eq!(processes(&route.blamed), Some(after), "{anchor}: {route:?}");
    }
}
