//! `cargo xtask bench reply-memory`: the peak memory of the release `git-agent
//! commit-msg` process when the model's reply is huge.
//!
//! The design's target: a 100 MB model reply fails with a clear error under
//! 100 MB of peak RSS (before the reply limit, it held 1.8 GB). The model is
//! `testkit`'s fake Responses server on 127.0.0.1, which writes a 100 MB reply
//! block by block without holding it; the repository is a small temporary one
//! with one staged change. Cases, each run [`RUNS`] times after one warm-up:
//!
//! 1. a valid 36-byte answer: the reference, what the process costs anyway;
//! 2. a 100 MB answer with its `Content-Length` declared (refused before the
//!    body is read);
//! 3. the same 100 MB chunked, without a `Content-Length` (refused at the first
//!    chunk past the 16 MiB limit, so up to 16 MiB is read);
//! 4. a 12 MB answer twice — under the limit, so it is read, parsed, traced
//!    (capped) and sent back (clipped) in the repair request, and then refused
//!    again: the most a reply the limit lets through costs.
//!
//! **How peak RSS is measured.** The kernel keeps each process's high-water mark
//! of resident memory and, when a parent reaps a child, folds it into the
//! parent's `RUSAGE_CHILDREN` record: `ru_maxrss` there is the largest peak of
//! any descendant reaped so far (git-agent's own git processes included, which
//! are far smaller). So each run goes through a helper process of its own
//! (`bench --peak-rss PROGRAM ARGS…`, this binary again): the helper starts
//! `git-agent`, waits for it, and reads `getrusage(RUSAGE_CHILDREN)`, whose only
//! child was that one run. This is exact, including the last instant before
//! exit, which polling `/proc/<pid>/status` for `VmHWM` could miss; and it needs
//! no `unsafe` (`nix` wraps the call). The benchmark's own memory (the fake
//! server, cargo) never counts. Linux reports `ru_maxrss` in KiB.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use testkit::{FakeLlm, Flavor, Reply, TestRepo};

use super::{build_release, fmt, verdict};

/// The hidden `bench --peak-rss PROGRAM ARGS…` helper.
pub(super) const PEAK_RSS: &str = "--peak-rss";

const RUNS: usize = 5;
const TARGET_MIB: f64 = 100.0;
/// 100 MB of reply text.
const HUGE: usize = 100_000_000;
/// The valid answer of the reference case.
const MESSAGE: &str = "fix(net): retry connect three times";

/// One run's result, as the helper reports it.
struct Run {
    peak_kib: u64,
    code: i32,
    stderr: String,
    elapsed: Duration,
}

/// The helper: runs `args[0] args[1..]` (in this process's directory and
/// environment), waits, and prints one JSON line: the children's peak RSS in
/// KiB, the exit code, the child's stderr and stdout sizes and its stderr.
pub(super) fn peak_rss(args: &[String]) -> Result<(), String> {
    let (program, rest) = args
        .split_first()
        .ok_or_else(|| format!("usage: cargo xtask bench {PEAK_RSS} PROGRAM [ARGS…]"))?;
    let started = Instant::now();
    let out = Command::new(program)
        .args(rest)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("could not run {program}: {e}"))?;
    let elapsed = started.elapsed();
    // `output()` has reaped the child: its peak is in our children's record now.
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .map_err(|e| format!("getrusage: {e}"))?;
    let line = json!({
        "peak_kib": usage.max_rss(),
        "code": out.status.code().unwrap_or(-1),
        "stdout_bytes": out.stdout.len(),
        "stderr_bytes": out.stderr.len(),
        "stderr": String::from_utf8_lossy(&out.stderr[..out.stderr.len().min(4096)]),
        "elapsed_ms": elapsed.as_secs_f64() * 1000.0,
    });
    println!("{line}");
    Ok(())
}

/// One case: the replies each run consumes and what a run must end with.
struct Case {
    name: &'static str,
    replies: fn() -> Vec<Reply>,
    /// The exit code and a fragment of stderr (empty: stderr must be empty).
    expect: (i32, &'static str),
    /// Whether the 100 MB target applies.
    huge: bool,
}

const CASES: &[Case] = &[
    Case {
        name: "a valid 36-byte answer",
        replies: || vec![Reply::text(MESSAGE)],
        expect: (0, ""),
        huge: false,
    },
    Case {
        name: "a 100 MB answer, Content-Length declared",
        replies: || vec![Reply::repeated_text("x", HUGE)],
        expect: (1, "was larger than 16 MiB"),
        huge: true,
    },
    Case {
        name: "a 100 MB answer, chunked (no length)",
        replies: || vec![Reply::repeated_text("x", HUGE).chunked()],
        expect: (1, "was larger than 16 MiB"),
        huge: true,
    },
    Case {
        name: "a 12 MB answer twice (read, repaired, refused)",
        replies: || {
            let answer = || Reply::repeated_text("Here is more commentary.\n", 480_000);
            vec![answer(), answer()]
        },
        expect: (1, "still invalid after one repair pass"),
        huge: false,
    },
];

pub(super) fn reply_memory() -> Result<(), String> {
    let git_agent = build_release("git-agent")?;
    let helper = std::env::current_exe().map_err(|e| format!("where is xtask? {e}"))?;
    let repo = TestRepo::with_staged_change();
    let home = tempfile::tempdir().map_err(|e| format!("a temporary home: {e}"))?;
    println!(
        "reply-memory: peak RSS of `git-agent commit-msg` (release: {}) answering the fake \
         Responses server on 127.0.0.1; one staged change in a temporary repository; \
         getrusage(RUSAGE_CHILDREN) in a helper process per run",
        git_agent.display()
    );
    println!(
        "  {:<48} {:>4} {:>10} {:>10} {:>8} {:>10}  outcome",
        "reply", "runs", "median", "max", "ratio", "time"
    );
    let mut reference = None;
    let mut verdicts = Vec::new();
    for (index, case) in CASES.iter().enumerate() {
        let script: Vec<Reply> = (0..=RUNS).flat_map(|_| (case.replies)()).collect();
        let server = FakeLlm::start(Flavor::OpenAiResponses, script);
        let mut runs = Vec::with_capacity(RUNS + 1);
        for _ in 0..=RUNS {
            let run = run_once(&helper, &git_agent, repo.path(), home.path(), &server)?;
            check(case, &run)?;
            runs.push(run);
        }
        // The first run warmed the page cache.
        let runs = &runs[1..];
        let mut peaks: Vec<u64> = runs.iter().map(|r| r.peak_kib).collect();
        peaks.sort_unstable();
        let mut times: Vec<Duration> = runs.iter().map(|r| r.elapsed).collect();
        times.sort();
        let median = mib(peaks[peaks.len() / 2]);
        let max = mib(peaks[peaks.len() - 1]);
        let base = *reference.get_or_insert(median);
        let outcome = match runs[0].code {
            0 => "exit 0, the message on stdout".to_owned(),
            code => format!(
                "exit {code}: {}",
                first_line(&runs[0].stderr)
                    .chars()
                    .take(60)
                    .collect::<String>()
            ),
        };
        let note = if index == 0 { " (reference)" } else { "" };
        println!(
            "  {:<48} {:>4} {:>6.1} MiB {:>6.1} MiB {:>7.2}x {:>10}  {outcome}{note}",
            case.name,
            runs.len(),
            median,
            max,
            median / base,
            fmt(times[times.len() / 2]),
        );
        if case.huge {
            verdicts.push(format!(
                "{} {max:.1} MiB ({})",
                if case.name.contains("chunked") {
                    "chunked"
                } else {
                    "with Content-Length"
                },
                verdict(max < TARGET_MIB)
            ));
        }
    }
    println!(
        "  target: a 100 MB reply fails with a clear error under {TARGET_MIB:.0} MB of peak RSS \
         (the worst of {RUNS} runs): {}",
        verdicts.join(", ")
    );
    Ok(())
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// One `git-agent commit-msg` through the helper, hermetic: no host OpenAI or
/// Codex settings, a key for the fake server only.
fn run_once(
    helper: &Path,
    git_agent: &Path,
    repo: &Path,
    home: &Path,
    server: &FakeLlm,
) -> Result<Run, String> {
    let mut cmd = Command::new(helper);
    testkit::isolate(&mut cmd);
    cmd.current_dir(repo)
        .args(["bench", PEAK_RSS])
        .arg(git_agent)
        .arg("commit-msg")
        .env("HOME", home)
        .env("CODEX_HOME", home)
        .env("OPENAI_API_KEY", "sk-bench-not-a-real-key")
        .env("OPENAI_BASE_URL", server.base_url())
        .stdin(Stdio::null());
    let out = cmd
        .output()
        .map_err(|e| format!("could not run {}: {e}", helper.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let report: Value = text
        .lines()
        .last()
        .and_then(|line| serde_json::from_str(line).ok())
        .ok_or_else(|| {
            format!(
                "the {PEAK_RSS} helper failed ({}): {}{}",
                out.status,
                text.trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            )
        })?;
    let number = |key: &str| report[key].as_f64().unwrap_or(-1.0);
    // A failure shows at most 4 KiB of an answer, plus the error and a pointer
    // to the trace.
    if number("stderr_bytes") > 8192.0 || number("stdout_bytes") > 8192.0 {
        return Err(format!(
            "git-agent printed {} bytes on stdout and {} on stderr: model text was not clipped",
            number("stdout_bytes"),
            number("stderr_bytes")
        ));
    }
    Ok(Run {
        peak_kib: report["peak_kib"].as_u64().unwrap_or(0),
        code: report["code"].as_i64().unwrap_or(-1) as i32,
        stderr: report["stderr"].as_str().unwrap_or("").to_owned(),
        elapsed: Duration::from_secs_f64(number("elapsed_ms").max(0.0) / 1000.0),
    })
}

/// A run must end as its case says, or the figure means nothing.
fn check(case: &Case, run: &Run) -> Result<(), String> {
    let (code, fragment) = case.expect;
    let stderr_ok = if fragment.is_empty() {
        run.stderr.is_empty()
    } else {
        run.stderr.contains(fragment)
    };
    if run.code != code || !stderr_ok || run.peak_kib == 0 {
        return Err(format!(
            "{}: expected exit {code} with {fragment:?} on stderr, got exit {} (peak {} KiB): {}",
            case.name, run.code, run.peak_kib, run.stderr
        ));
    }
    Ok(())
}
