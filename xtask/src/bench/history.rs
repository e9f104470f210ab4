//! `cargo xtask bench history` (also the last part of `bench read`):
//! `ultragit history FILE UNIT` on a merge-shaped history of about 2,000
//! commits with 1,000 notes, all on topic branches merged with `--no-ff`,
//! the file renamed on a topic of its own ([`fixtures::merge_history`]),
//! against `git log --follow` of the file (what a user would run, and what
//! `history` ran before it read the notes index). Warm: the notes index up to
//! date (a later `history` at the same notes); cold: the index deleted before
//! each run. The answer is checked against what the generator knows: every
//! annotated commit of the unit HEAD reaches, on any parent, under either
//! name.

use std::process::{Command, Stdio};

use gitctx::Repo;
use ultragit_read::history::{HistoryQuery, history};
use ultragit_read::{Answer, DepsIndex, Format, GitReadPipeline};

use super::{Case, build_ultragit, fmt, measure, report, succeed, verdict};
use crate::fixtures;

const WARM_TARGET_MS: f64 = 50.0;
const RUNS: usize = 20;

pub(super) fn history_bench() -> Result<(), String> {
    let fixture = fixtures::merge_history()?;
    let repo = Repo::open(&fixture.repo).map_err(|e| e.to_string())?;
    let pipeline = GitReadPipeline::open(&fixture.repo).map_err(|e| e.to_string())?;
    let query = HistoryQuery::file(fixture.file).with_anchor(fixture.anchor);
    let index_dir = DepsIndex::path(&repo)
        .parent()
        .expect("the index has a directory")
        .to_path_buf();
    let clear = || match std::fs::remove_dir_all(&index_dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("{}: {e}", index_dir.display())),
    };
    println!(
        "\nhistory: `ultragit history {} {}` on a merge-shaped history ({} commits, {} notes on \
         topic commits only, the file renamed from {} on a topic of its own)",
        fixture.file, fixture.anchor, fixture.commits, fixture.notes, fixture.former
    );

    clear()?;
    let answer = history(&pipeline, &query).map_err(|e| e.to_string())?;
    let before_rename = answer
        .entries
        .iter()
        .filter(|e| e.file == fixture.former)
        .count();
    let found = answer.annotated_commits;
    println!(
        "  found {found} of the {} annotated commits of the unit HEAD reaches ({before_rename} of \
         {} under the former name), {} more not in HEAD's history: {}",
        fixture.unit_commits,
        fixture.unit_commits_before_rename,
        answer.outside_history,
        verdict(
            found == fixture.unit_commits
                && before_rename as u32 == fixture.unit_commits_before_rename
        )
    );
    if found != fixture.unit_commits {
        return Err(format!(
            "history found {found} annotated commits, the generator made {}",
            fixture.unit_commits
        ));
    }

    let follow = Case {
        name: "git log --follow (all parents)".to_owned(),
        runs: RUNS,
        unit: "commits",
        f: Box::new(|| {
            let out = succeed(
                Command::new("git")
                    .current_dir(&fixture.repo)
                    .args(["log", "--follow", "--format=%H", "--", fixture.file])
                    .stdin(Stdio::null()),
                &"git",
                &"git log --follow",
            )?;
            Ok(out
                .stdout
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .count())
        }),
    };
    let run = |clear_first: bool| -> Result<usize, String> {
        if clear_first {
            clear()?;
        }
        let answer = history(&pipeline, &query).map_err(|e| e.to_string())?;
        Ok(answer.render(Format::Markdown).len())
    };
    let mut rows = vec![
        measure(follow)?,
        measure(Case {
            name: "ultragit history, in-process, warm".to_owned(),
            runs: RUNS,
            unit: "bytes",
            f: Box::new(|| run(false)),
        })?,
        measure(Case {
            name: "ultragit history, in-process, cold index".to_owned(),
            runs: 5,
            unit: "bytes",
            f: Box::new(|| run(true)),
        })?,
    ];
    let binary = build_ultragit();
    if let Ok(exe) = &binary {
        // The index as the in-process runs left it: warm.
        run(false)?;
        rows.push(measure(Case {
            name: "ultragit history (binary), warm".to_owned(),
            runs: RUNS,
            unit: "bytes",
            f: Box::new(|| {
                let out = succeed(
                    Command::new(exe)
                        .current_dir(&fixture.repo)
                        .args(["history", fixture.file, fixture.anchor])
                        .stdin(Stdio::null()),
                    &exe.display(),
                    &"ultragit history",
                )?;
                Ok(out.stdout.len())
            }),
        })?);
    }
    report(
        &format!(
            "history: `ultragit history {} {}`",
            fixture.file, fixture.anchor
        ),
        &rows,
        0,
    );
    if let Err(reason) = &binary {
        println!("  {:<46} {reason}", "ultragit history (binary)");
    }
    let warm: Vec<String> = rows
        .iter()
        .filter(|r| r.name.contains("warm"))
        .map(|r| {
            format!(
                "{} {} ({})",
                if r.name.contains("binary") {
                    "binary"
                } else {
                    "in-process"
                },
                fmt(r.median),
                verdict(r.median.as_secs_f64() * 1000.0 <= WARM_TARGET_MS)
            )
        })
        .collect();
    println!(
        "  target: warm within {WARM_TARGET_MS:.0} ms, every annotated commit found on any \
         parent: {}",
        warm.join(", ")
    );
    Ok(())
}
