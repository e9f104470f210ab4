//! `cargo xtask`: project automation in Rust (matklad's cargo-xtask pattern).
//!
//! - `cargo xtask golden [--accept]`: runs the workspace's tests with insta in
//!   check mode and fails on snapshot drift, on pending `.snap.new` files and on
//!   snapshot files no test uses any more. `--accept` rewrites drifted snapshots and
//!   deletes unreferenced ones — read them with `git diff` before committing.
//! - `cargo xtask bench [NAME]`: builds itself in release mode, generates any
//!   missing fixture repositories under `target/bench-fixtures/`, runs the named
//!   benchmark (or all) and prints medians, ratios against the reference and the
//!   design's targets. `blame`: the blame engines against `git blame`. `read`:
//!   `ultragit read` (in-process, and as the release binary)
//!   against `git blame` over the same lines, the cost of `dependencies_on_this`,
//!   and the git processes one read starts on a long and a short history.
//!   `annotate`: the turns and input and output tokens per commit under 300
//!   changed lines against a scripted model on 127.0.0.1 that reads what it
//!   needs, then emits, before issue 17 (`8431e9a^`'s release binary, built once
//!   under `target/bench-baseline/`) and now; our own time to annotate a
//!   10-file, 300-line commit against `testkit`'s fake model (which answers at
//!   once), phase by phase; and the `post-commit` hook `ultragit init` installs
//!   (the release binary): the time until it returns, what its blame-cache
//!   warm-up line adds, and `git commit` with it against without it.
//!   `commit-msg`: git-agent's context preparation for a 10,000-line staged
//!   change dominated by `package-lock.json` (target 150 ms) against `git diff
//!   --cached`, phase by phase, and the first request it sends to the fake model:
//!   under 96 KiB, every hand-written file's diff in it, the lockfile summarized.
//!   `reply-memory`: the peak RSS of the release `git-agent commit-msg` answering
//!   a 100 MB reply (target under 100 MB), against a valid reply.
//! - `cargo xtask conformance [mcp]`: the `llm` crate and every binary against
//!   llama.cpp's server and a tiny model on loopback, and `ultragit mcp` driven
//!   by the official Python MCP SDK. See `conformance.rs`.
//!
//! Every benchmark is described in its module under `bench/`, the targets in
//! `../shared/DESIGN.md`. **Last recorded figures** (2-core machine, git
//! 2.47.3, medians; machines and load move them, so re-run before comparing):
//! - `blame`: the table in `gitctx::blame`.
//! - `read` (8,185-line file changed by 1,701 annotated commits, release
//!   binary): `read src/engine.rs f_104` cold 2.17 s (1.52× `git blame -L`,
//!   which took 1.43 s in that run; 1.20× and 1.09× in the two runs before —
//!   the cold path had not changed, its ratio moves with the machine's load),
//!   warm 37.8 ms; the whole file cold 1.12× `git blame`, warm 226 ms; after 1
//!   new commit 44.1 ms and after 20 new commits 86.2 ms (target 150 ms; 180.6
//!   ms while `git diff-tree` diffed the steps, inflating each 420 KB loose blob
//!   twice), all equal to reads without the caches. Processes: a cold read
//!   starts `git --version` and one `git blame`, the same on 1,701 and 301
//!   notes; a warm one and a carried one none (target: at most 2).
//! - `pulled`: what the carry's cost model gained, in `gitctx::blame_carry`.
//! - `annotate`: median 2 turns (target 4) and 6,227 input tokens in a 128k
//!   window (target 6,000: missed since issue 30 offers all six read tools and
//!   `decline_annotation` on every request; 5,921 before); the release binary
//!   before issue 17 needed 5 turns and 14,200; in an 8k window 8,005, not
//!   judged. Our own time for a 10-file, 300-line commit 37.0 ms (target 100
//!   ms); the post-commit hook returns in 12.3 ms (target 50 ms).
//! - `commit-msg`: 28–44 ms (34.9 ms last) against 150 ms; the first request
//!   71 KiB against 96 KiB, all 20 hand-written files with diff text in it.
//! - `backfill`: concurrency 8 against 1, 7.8× (target ≥ 6×); our own time per
//!   commit 16.9 ms (target < 30 ms).
//! - `sync`: 10,000 notes, fast-forward 1.20× and merge-plus-push 4.37× a plain
//!   `git fetch` (most of the latter is `git push` itself).
//! - `deps` (10,000 notes): `ultragit deps` warm 18.7 ms (target 50); an index
//!   update after one new note 5.7 ms in-process (target 20); one journal fold
//!   40 ms; cold build 0.22 s; `dependencies_on_this` adds 3.8 ms, against
//!   7.9 ms for the old scan of the 500 most recent notes on a 500-note
//!   repository (the target, judged without slack) and 22.6 ms on the
//!   10,000-note one, where the scan found 1 of the 30 dependents the index
//!   finds: ratio 0.49 (0.77 under heavy load).
//! - `history` (2,107 commits, 1,004 notes on topic commits, a rename, an
//!   unmerged topic): 59 of 59 annotated commits found, 16 under the former
//!   name; in-process warm 26.6 ms, cold index 38.0 ms, binary warm 42.2 ms
//!   (target 50 ms); `git log --follow` of the file 16.7 ms.
//! - `delivery`: its corpus (`testkit::delivery`) has 2,990 commits, 700
//!   `--no-ff` merges and 1,494 notes; a small corpus runs as a test.
//!
//! Depends on `gitctx` (hardened git processes, the blame engines under test),
//! `ultragit-read` (the read pipeline under test), `ultragit-annotate`, `llm` and
//! `agent` (the writing agent under test, its provider and trace sink),
//! `git-agent-core` (the commit-message task under test), `testkit` (the fake LLM
//! server), `tokio` (the agents' runtime), `serde_json` (the fake's script and
//! the requests it records), `ultragit-schema` (the notes the fixtures carry),
//! `outline` (the fixtures' function ranges), `chrono` (the notes'
//! timestamps) and `nix` (`getrusage` for peak memory, without `unsafe`).

// xtask is a developer tool: printing is its interface.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod bench;
mod conformance;
mod fixtures;
mod golden;

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <task>

tasks:
  golden [--accept]   run every snapshot suite; fail on drift (--accept updates)
  bench [NAME]        run benchmarks (names: blame, read, annotate, commit-msg,
                      reply-memory, backfill, sync, deps; none: all)
                      and print medians, ratios and targets (release build; the
                      first run generates fixtures under target/bench-fixtures/)
  conformance [mcp]   install llama.cpp's server and a tiny model (reused), run
                      the llm crate and every binary against it on 127.0.0.1,
                      and drive `ultragit mcp` with the Python MCP SDK
                      (`mcp`: only that check, no model)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("golden") => golden::run(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        Some("conformance") => conformance::run(&args[1..]),
        Some("-h" | "--help" | "help") => {
            print!("{USAGE}");
            Ok(())
        }
        _ => Err(format!("unknown or missing task\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (the parent of this crate's directory).
fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// `cargo`, as the one that runs us.
fn cargo() -> std::process::Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    cmd.current_dir(workspace_root());
    cmd
}
