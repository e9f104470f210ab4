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
