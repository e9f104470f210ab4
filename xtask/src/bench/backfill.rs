//! `cargo xtask bench backfill`: `ultragit backfill` (the release binary) on a
//! history of 200 commits, against `testkit`'s fake writing agent on 127.0.0.1.
//!
//! Every commit rewrites `src/lib.rs`; the fake (`testkit::annotator` with the
//! file given) emits one region at its first turn and sums up at its second, so
//! one annotation is two model calls. Two servers: one answering each call
//! after 300 ms (the model's latency), one at once.
//!
//! 1. 300 ms, concurrency 1 against concurrency 8: the speed-up of the pool
//!    (target: at least 6×). Our own time per commit is also derived here: the
//!    wall time minus the 200 × 2 × 300 ms the model makes a sequential run wait.
//! 2. 0 ms, concurrency 1 (and 8): the whole run is then our own time (process
//!    start, selection, gather, the agent loop over loopback HTTP, the note's
//!    compare-and-swap store, and the fake's own JSON work, which only
//!    overstates it); per commit, target under 30 ms.
//!
//! The notes ref is deleted between runs, so each run annotates all 200 commits;
//! each run's summary line is checked.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use testkit::{FAKE_MODEL, FakeLlm, Flavor, TestRepo, annotator};

use super::{build_ultragit, fmt, row, verdict};

const COMMITS: usize = 200;
const LATENCY: Duration = Duration::from_millis(300);
const CALLS_PER_COMMIT: u32 = 2;
const SPEEDUP_TARGET: f64 = 6.0;
const OWN_TARGET_MS: f64 = 30.0;
const FILE: &str = "src/lib.rs";

pub(super) fn backfill() -> Result<(), String> {
    let exe = match build_ultragit() {
        Ok(exe) => exe,
        Err(reason) => {
            println!("\nbackfill: {reason}");
            return Ok(());
        }
    };
    let repo = TestRepo::new();
    let edits: Vec<(String, String)> = (0..COMMITS)
        .map(|i| {
            (
                format!("Tune value to {i}"),
                format!("/// The tuned value.\npub fn value() -> u32 {{\n    {i}\n}}\n"),
            )
        })
        .collect();
    repo.import_commits(FILE, &edits);
    let slow = FakeLlm::start(Flavor::OpenAiChat, Vec::new());
    slow.respond_with(annotator(LATENCY, Some(FILE)));
    let fast = FakeLlm::start(Flavor::OpenAiChat, Vec::new());
    fast.respond_with(annotator(Duration::ZERO, Some(FILE)));
    for (key, value) in [
        ("ultragit.provider", "openai-chat"),
        ("ultragit.model", FAKE_MODEL),
        ("ultragit.apiKeyEnv", "none"),
    ] {
        repo.git(&["config", key, value]);
    }
    println!(
        "\nbackfill fixture: {COMMITS} commits rewriting {FILE}; the fake model makes \
         {CALLS_PER_COMMIT} calls per commit"
    );

    let run = |server: &FakeLlm, concurrency: u32| -> Result<Duration, String> {
        repo.git(&["config", "ultragit.baseUrl", &server.base_url()]);
        reset(&repo)?;
        let start = Instant::now();
        let out = Command::new(&exe)
            .args(["backfill", "--concurrency", &concurrency.to_string()])
            .current_dir(repo.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("could not run {}: {e}", exe.display()))?;
        let elapsed = start.elapsed();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let expected = format!("backfill: {COMMITS} annotated, 0 skipped, 0 failed");
        if !out.status.success() || !stdout.starts_with(&expected) {
            return Err(format!(
                "ultragit backfill --concurrency {concurrency} did not annotate every commit \
                 ({}): {stdout}{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(elapsed)
    };

    let sequential = run(&slow, 1)?;
    let pooled: Vec<Duration> = (0..3).map(|_| run(&slow, 8)).collect::<Result<_, _>>()?;
    let own_1: Vec<Duration> = (0..3).map(|_| run(&fast, 1)).collect::<Result<_, _>>()?;
    let own_8 = run(&fast, 8)?;

    let rows = [
        row(
            "300 ms model, concurrency 1",
            vec![sequential],
            COMMITS,
            "commits",
        ),
        row("300 ms model, concurrency 8", pooled, COMMITS, "commits"),
        row("0 ms model, concurrency 1", own_1, COMMITS, "commits"),
        row("0 ms model, concurrency 8", vec![own_8], COMMITS, "commits"),
    ];
    super::report(
        &format!(
            "backfill: release `ultragit backfill` over {COMMITS} commits (fake model on 127.0.0.1)"
        ),
        &rows,
        0,
    );
    let speedup = rows[0].median.as_secs_f64() / rows[1].median.as_secs_f64();
    println!(
        "  concurrency 8 against 1 with a 300 ms model: {speedup:.1}x faster; target at least \
         {SPEEDUP_TARGET:.0}x: {}",
        verdict(speedup >= SPEEDUP_TARGET)
    );
    let waiting = LATENCY * CALLS_PER_COMMIT * COMMITS as u32;
    let derived = sequential.saturating_sub(waiting) / COMMITS as u32;
    let measured = rows[2].median / COMMITS as u32;
    println!(
        "  our own time per commit: {} with a 0 ms model (the whole run / {COMMITS}); {} as the \
         300 ms sequential run minus {} of model waiting; target under {OWN_TARGET_MS:.0} ms: {}",
        fmt(measured),
        fmt(derived),
        fmt(waiting),
        verdict(measured.as_secs_f64() * 1000.0 < OWN_TARGET_MS)
    );
    println!(
        "  requests served: {} by the 300 ms fake, {} by the 0 ms fake",
        slow.requests().len(),
        fast.requests().len()
    );
    Ok(())
}

/// Forgets every note (and failure) of the previous run.
fn reset(repo: &TestRepo) -> Result<(), String> {
    let _ = repo
        .command()
        .args(["update-ref", "-d", "refs/notes/ultragit"])
        .run_unchecked();
    let log = repo.path().join(".git/ultragit/failed.log");
    if Path::new(&log).exists() {
        std::fs::remove_file(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    }
    Ok(())
}
