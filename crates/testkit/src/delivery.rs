//! A generated merge-shaped history with `ultragit/v1` notes, for the
//! decision-delivery benchmark: how many of the active decisions of each
//! function at HEAD reach an agent, and that no retired one does.
//!
//! (First version: topics of one commit each, merged with `--no-ff`; the
//! realistic shape follows.)

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::json;

use crate::fast_import::{self, Commit};
use crate::{EPOCH, TICK, hermetic_git};

/// The size of a generated corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliverySpec {
    /// Rust files at the start.
    pub files: usize,
    /// Top-level functions in each file at the start.
    pub functions_per_file: usize,
    /// Topic branches merged into `main`.
    pub topics: usize,
    /// The seed of the generator's PRNG.
    pub seed: u64,
}

impl DeliverySpec {
    /// A corpus for tests: a few hundred commits.
    pub fn small() -> Self {
        DeliverySpec {
            files: 6,
            functions_per_file: 8,
            topics: 75,
            seed: 0x2545_f491_4f6c_dd1d,
        }
    }

    /// The benchmark's corpus: about 3,000 commits.
    pub fn full() -> Self {
        DeliverySpec {
            files: 36,
            functions_per_file: 10,
            topics: 660,
            seed: 0x9e37_79b9_7f4a_7c15,
        }
    }
}

/// What [`generate_delivery`] made.
#[derive(Debug, Clone)]
pub struct DeliveryCorpus {
    /// A non-bare repository, its work tree checked out at `main` (clean).
    pub repo: PathBuf,
    /// All commits, merges included.
    pub commits: usize,
    pub merges: usize,
    pub notes: usize,
    /// Every function unit at HEAD: (file at HEAD, function name).
    pub units: Vec<(String, String)>,
    /// `(from, to)` file renames made.
    pub renames: Vec<(String, String)>,
    /// `(function, from file, to file)` moves made.
    pub moves: Vec<(String, String, String)>,
    pub reverts: usize,
    pub rewrites: usize,
    /// Tokens the generator retired with a later note's `retires`.
    pub retired_by_note: Vec<String>,
    /// Tokens the generator retired with a correction (`remove` or `flag`).
    pub retired_by_correction: Vec<String>,
    /// Tokens of items whose unit was rewritten wholesale afterwards.
    pub rewritten_away: Vec<String>,
}

/// Generates the corpus of `spec` in `dir` (empty or missing).
pub fn generate_delivery(dir: &Path, spec: &DeliverySpec) -> Result<DeliveryCorpus, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    hermetic_git(dir)
        .args(["init", "--quiet", "--initial-branch=main"])
        .run()
        .map_err(|e| e.to_string())?;
    let mut child = fast_import::spawn(hermetic_git(dir), Stdio::piped())?;
    let stdin = child.stdin.take().expect("stdin was piped");
    let stdout = child.stdout.take().expect("stdout was piped");
    let mut out = std::io::BufWriter::new(stdin);
    let mut answers = std::io::BufReader::new(stdout);
    let result = simple(&mut out, &mut answers, spec);
    drop(out);
    fast_import::finish(child)?;
    let (commits, merges, notes, units) = result?;
    hermetic_git(dir)
        .args(["reset", "--quiet", "--hard", "main"])
        .run()
        .map_err(|e| e.to_string())?;
    Ok(DeliveryCorpus {
        repo: dir.to_path_buf(),
        commits,
        merges,
        notes,
        units,
        renames: Vec::new(),
        moves: Vec::new(),
        reverts: 0,
        rewrites: 0,
        retired_by_note: Vec::new(),
        retired_by_correction: Vec::new(),
        rewritten_away: Vec::new(),
    })
}

type Simple = (usize, usize, usize, Vec<(String, String)>);

fn simple(
    out: &mut impl std::io::Write,
    answers: &mut impl std::io::BufRead,
    spec: &DeliverySpec,
) -> Result<Simple, String> {
    let io = |e: std::io::Error| format!("writing to git fast-import: {e}");
    let paths: Vec<String> = (0..spec.files).map(|f| format!("src/m{f}.rs")).collect();
    let mut bodies: Vec<Vec<Vec<String>>> = (0..spec.files)
        .map(|f| {
            (0..spec.functions_per_file)
                .map(|g| vec![format!("    let mut acc = x ^ {};", f * 1000 + g)])
                .collect()
        })
        .collect();
    let render = |bodies: &[Vec<String>], f: usize| {
        let mut text = String::new();
        let mut ranges = Vec::new();
        let mut line = 1;
        for (g, body) in bodies.iter().enumerate() {
            let _ = writeln!(text, "pub fn f{f}_{g}(x: u64) -> u64 {{");
            for l in body {
                text.push_str(l);
                text.push('\n');
            }
            text.push_str("    acc\n}\n\n");
            ranges.push((line, line + body.len() + 2));
            line += body.len() + 4;
        }
        (text, ranges)
    };
    let mut tick = 0i64;
    let mut mark = 0usize;
    let mut stream = String::new();
    let files: Vec<(String, String)> = (0..spec.files)
        .map(|f| (paths[f].clone(), render(&bodies[f], f).0))
        .collect();
    mark += 1;
    Commit::main(EPOCH, "Start the project")
        .marked(mark)
        .push(&mut stream, &files);
    let mut main = mark;
    let mut noted = Vec::new();
    let mut merges = 0;
    for topic in 0..spec.topics {
        let f = topic % spec.files;
        let g = (topic * 7) % spec.functions_per_file;
        bodies[f][g].push(format!("    acc = acc.wrapping_mul(31) ^ {topic};"));
        let (text, ranges) = render(&bodies[f], f);
        tick += 1;
        mark += 1;
        let message = format!("f{f}_{g}: mix in topic {topic}");
        Commit::on("refs/heads/topic", EPOCH + tick * TICK, &message)
            .marked(mark)
            .parents(Some(main), None)
            .push(&mut stream, &[(paths[f].clone(), text.clone())]);
        noted.push((mark, EPOCH + tick * TICK, f, g, ranges[g], topic));
        tick += 1;
        mark += 1;
        let message = format!("Merge branch 'topic-{topic}'");
        Commit::main(EPOCH + tick * TICK, &message)
            .marked(mark)
            .parents(Some(main), Some(mark - 1))
            .push(&mut stream, &[(paths[f].clone(), text)]);
        main = mark;
        merges += 1;
        out.write_all(stream.as_bytes()).map_err(io)?;
        stream.clear();
    }
    let marks: Vec<usize> = noted.iter().map(|n| n.0).collect();
    let ids = fast_import::get_marks(out, answers, &marks)?;
    tick += 1;
    Commit::notes(EPOCH + tick * TICK).push_header(&mut stream);
    for (n, id) in noted.iter().zip(&ids) {
        let (m, when, f, g, (start, end), topic) = *n;
        let timestamp = rfc3339(when);
        let name = format!("f{f}_{g}");
        let note = json!({
            "$schema": "ultragit/v1",
            "commit": id,
            "timestamp": timestamp,
            "task": null,
            "summary": format!("Mix topic {topic} into {name}."),
            "context_level": "enhanced",
            "regions": [{
                "file": paths[f],
                "ast_anchor": {"type": "function", "name": name, "signature": format!("pub fn {name}(x: u64) -> u64")},
                "lines": {"start": start, "end": end},
                "intent": format!("Mix topic {topic} into {name}."),
                "constraints": [{"text": format!("Callers of {name} must not rely on its old value [d{:05}]", topic + 1), "source": "author"}],
            }],
            "cross_cutting": [],
            "provenance": {"operation": "initial", "original_annotations_preserved": false}
        });
        fast_import::push_note(&mut stream, &format!(":{m}"), &note.to_string());
    }
    stream.push('\n');
    out.write_all(stream.as_bytes()).map_err(io)?;
    out.flush().map_err(io)?;
    let units = (0..spec.files)
        .flat_map(|f| (0..spec.functions_per_file).map(move |g| (f, g)))
        .map(|(f, g)| (paths[f].clone(), format!("f{f}_{g}")))
        .collect();
    Ok((1 + 2 * spec.topics, merges, noted.len(), units))
}

/// `when` (seconds since the epoch) as RFC 3339 in UTC, e.g.
/// `2024-01-01T00:00:00Z`.
fn rfc3339(when: i64) -> String {
    let days = when.div_euclid(86_400);
    let secs = when.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// The proleptic Gregorian date of `days` since 1970-01-01 (Howard
/// Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_of_the_epoch_and_a_leap_day() {
        assert_eq!(rfc3339(EPOCH), "2024-01-01T00:00:00Z");
        assert_eq!(rfc3339(EPOCH + 59 * 86_400 + 3_661), "2024-02-29T01:01:01Z");
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    }
}
