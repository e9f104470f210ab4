//! `cargo xtask bench corrections`: 1,000 corrections of one region of a
//! 3 MB note, in-process through `ultragit_notes::correct` (the code path
//! of `ultragit correct` and of the MCP server's `ultragit_correct`), each
//! timed. Target: ≤ 20 ms per correction, flat. Each is appended to the
//! commit's pending record, not to the note, so its cost does not follow the
//! note; the record itself grows with the corrections before it (at most
//! 1 MiB, by the caps), so the report prints the medians of the first and the
//! last hundred and judges both against the target. Then the one fold of all
//! 1,000 into the note.
//!
//! The fixture is made fresh each run in `target/bench-fixtures/corrections-run`:
//! one commit and a note of 1,500 regions with long reasoning (about 3 MB).

use std::time::{Duration, Instant};

use gitctx::{ObjectId, Repo};
use ultragit_notes::correct::{self, Change};
use ultragit_schema::{
    Annotation, AstAnchor, ContextLevel, CorrectionField, CorrectionTarget, LineRange,
    RegionAnnotation,
};

use super::{fmt, verdict};
use crate::fixtures::{dir, hermetic};

const REGIONS: usize = 1_500;
const CORRECTIONS: usize = 1_000;
const TARGET: Duration = Duration::from_millis(20);

pub(super) fn corrections() -> Result<(), String> {
    let work = dir("corrections-run");
    if work.exists() {
        std::fs::remove_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    }
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let git = |args: &[&str]| {
        hermetic(&work)
            .args(args)
            .env("GIT_AUTHOR_NAME", "Bench")
            .env("GIT_AUTHOR_EMAIL", "bench@example.invalid")
            .env("GIT_COMMITTER_NAME", "Bench")
            .env("GIT_COMMITTER_EMAIL", "bench@example.invalid")
            .run()
            .map_err(|e| e.to_string())
    };
    git(&["init", "--quiet", "--initial-branch=main"])?;
    git(&["commit", "--quiet", "--allow-empty", "-m", "one"])?;
    git(&["config", "user.name", "Bench"])?;
    git(&["config", "user.email", "bench@example.invalid"])?;
    let repo = Repo::discover(&work).map_err(|e| e.to_string())?;
    let head: ObjectId = repo.resolve("HEAD").map_err(|e| e.to_string())?;
    let mut note = Annotation::new(
        head.to_hex(),
        "2024-01-01T00:00:00Z",
        "A large commit.",
        ContextLevel::Inferred,
    );
    let reasoning =
        "Keeps the retry schedule in step with the broker's failover window. ".repeat(28);
    for i in 0..REGIONS {
        let mut region = RegionAnnotation::new(
            format!("src/m{:03}.rs", i / 20),
            AstAnchor::new("function", format!("f{i:04}")),
            LineRange::new(1, 20),
            format!("Does step {i} of the pipeline."),
        );
        region.reasoning = Some(reasoning.clone());
        note.regions.push(region);
    }
    let text = note.to_json();
    repo.notes(ultragit_notes::NOTES_REF)
        .and_then(|n| n.write(head, &text))
        .map_err(|e| e.to_string())?;
    println!(
        "corrections fixture: {} (one note of {} regions, {:.1} MB)",
        work.display(),
        REGIONS,
        text.len() as f64 / 1e6
    );

    let mut times = Vec::with_capacity(CORRECTIONS);
    for i in 0..CORRECTIONS {
        let change = Change::add(CorrectionField::Constraints, format!("Rule {i} holds."));
        let start = Instant::now();
        correct::correct(
            &repo,
            &head.to_hex(),
            CorrectionTarget::unit("src/m000.rs", "f0000"),
            &change,
            "found in review",
            "Bench <bench@example.invalid>",
        )
        .map_err(|e| format!("correction {i}: {e}"))?;
        times.push(start.elapsed());
    }
    let start = Instant::now();
    let folded = correct::fold_pending(&repo).map_err(|e| e.to_string())?;
    let fold = start.elapsed();
    if folded.corrections != CORRECTIONS {
        return Err(format!(
            "the fold moved {} corrections, not {CORRECTIONS}",
            folded.corrections
        ));
    }
    let median = |slice: &[Duration]| {
        let mut sorted = slice.to_vec();
        sorted.sort();
        sorted[sorted.len() / 2]
    };
    let all = median(&times);
    let first = median(&times[..100]);
    let last = median(&times[CORRECTIONS - 100..]);
    let max = times.iter().max().copied().unwrap_or_default();
    let total: Duration = times.iter().sum();
    println!(
        "  per correction, median of all {CORRECTIONS}: {}",
        fmt(all)
    );
    println!("  median of the first 100: {}", fmt(first));
    println!("  median of the last 100:  {}", fmt(last));
    println!("  slowest: {}; all {CORRECTIONS}: {}", fmt(max), fmt(total));
    println!(
        "  fold of all {CORRECTIONS} into the note (one rewrite): {}",
        fmt(fold)
    );
    // The record each correction rewrites grows with the corrections before
    // it (bounded by the caps), so "flat" is judged as the last hundred
    // staying within the target too; the ratio is printed to show the slope.
    println!(
        "  target ≤ {} per correction, the last hundred too: {} (median {}, last/first {:.2})",
        fmt(TARGET),
        verdict(all <= TARGET && last <= TARGET),
        fmt(all),
        last.as_secs_f64() / first.as_secs_f64().max(1e-9)
    );
    Ok(())
}
