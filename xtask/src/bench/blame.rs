//! `cargo xtask bench blame`: `gitctx` blame, both engines, against `git blame
//! --porcelain` on the blame fixture.

use gitctx::{BlameEngine, BlameOptions, Repo};

use super::{Case, git_version, measure, report};
use crate::fixtures;

/// `gitctx` blame, both engines, against `git blame --porcelain` on the same range,
/// on a generated file of ~8,000 lines with 1,600 commits.
pub(super) fn blame() -> Result<(), String> {
    let fixture = fixtures::blame()?;
    let repo = Repo::open(&fixture.repo).map_err(|e| e.to_string())?;
    let git_version = git_version(&repo)?;
    println!(
        "blame fixture: {} ({}: {} lines, {} commits; {})",
        fixture.repo.display(),
        fixture.file,
        fixture.lines,
        fixture.commits,
        git_version.trim()
    );
    let mid = fixture.lines / 2;
    let ranges = [
        (Some((mid, mid + 314)), "a 315-line range"),
        (None, "whole file"),
    ];
    for (lines, label) in ranges {
        let mut rows = Vec::new();
        rows.push(measure(git_blame(&repo, fixture.file, lines, 10))?);
        for (engine, runs) in [(BlameEngine::Cli, 10), (BlameEngine::Libgit2, 3)] {
            let options = BlameOptions {
                rev: None,
                lines,
                engine,
            };
            let repo = &repo;
            let file = fixture.file;
            rows.push(measure(Case {
                name: format!("gitctx blame ({engine:?})"),
                runs,
                unit: "entries",
                f: Box::new(move || {
                    repo.blame(file, &options)
                        .map(|entries| entries.len())
                        .map_err(|e| e.to_string())
                }),
            })?);
        }
        report(&format!("blame, {label}"), &rows, 0);
    }
    Ok(())
}

/// `git blame --porcelain [-L START,END] HEAD -- FILE`, counting blame groups the
/// way `gitctx` does, so the output columns compare.
pub(super) fn git_blame<'a>(
    repo: &'a Repo,
    file: &'a str,
    lines: Option<(u32, u32)>,
    runs: usize,
) -> Case<'a> {
    let range = lines.map(|(s, e)| format!("{s},{e}"));
    Case {
        name: match &range {
            Some(r) => format!("git blame --porcelain -L {r}"),
            None => "git blame --porcelain".to_owned(),
        },
        runs,
        unit: "entries",
        f: Box::new(move || {
            let mut cmd = repo.git().args(["blame", "--porcelain"]);
            if let Some(r) = &range {
                cmd = cmd.arg("-L").arg(r);
            }
            let out = cmd
                .args(["HEAD", "--", file])
                .run()
                .map_err(|e| e.to_string())?;
            Ok(out
                .stdout
                .split(|&b| b == b'\n')
                .filter(|l| {
                    l.len() > 41 && l[40] == b' ' && l.iter().filter(|&&c| c == b' ').count() == 3
                })
                .count())
        }),
    }
}
