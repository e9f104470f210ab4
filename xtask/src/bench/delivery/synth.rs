//! `bench delivery --repo PATH --synthesize --file F...`: notes for a real
//! history that has none, so the delivery of decisions can be measured on
//! it (the first measurement on git/git's `diff.c`, made
//! reproducible).
//!
//! The clone at PATH is never written to. A shared local clone of it
//! (`git clone --shared`, objects borrowed through alternates) is made in the
//! fixtures directory, and there every non-merge commit HEAD reaches that
//! changed one of the files (`git log --no-merges -p -U0 -- F`, no rename
//! following) gets one synthetic `ultragit/v1` note:
//! - one region per function or method (the outline of the file *at that
//!   commit*) that a hunk of the commit's diff touches, with that unit's
//!   lines at the commit, its name as the anchor, and the commit's subject as
//!   the intent;
//! - one constraint per region: a sentence of the commit's own message body
//!   (8 to 60 words, from prose paragraphs: indented lines and trailer
//!   blocks are skipped), taken in turn, so a commit with more regions than
//!   sentences repeats them. A sentence an earlier commit already used is
//!   not used again, so every constraint text belongs to one commit; a commit
//!   with no sentence left gets regions without constraints.
//!
//! Because each constraint is a sentence of the commit's message, the
//! `git log` routes deliver it exactly when they hand over that message: the
//! comparison is the one an agent would face, the same facts either as
//! scored notes or as raw history. The clone gets a changed-path
//! commit-graph (the gold's blames and the log route are slow without one on
//! a long history). It is kept (keyed by the source's
//! HEAD, the files and [`SYNTH_VERSION`]) and reused by the next run.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};
use testkit::fast_import::{self, Commit};
use ultragit_schema::Annotation;

use super::git_text;
use super::gold::normalize;
use crate::fixtures::{self, hermetic};

/// Bumped whenever the notes this writes change, so a stale clone is not
/// reused.
const SYNTH_VERSION: u32 = 1;

/// Sentences shorter or longer than this many words are not constraints.
const MIN_WORDS: usize = 8;
const MAX_WORDS: usize = 60;
/// A version of a file larger than this is not outlined (its commit gets no
/// note).
const MAX_FILE_BYTES: usize = 8 << 20;

/// One commit of the log: its id, committer date, message and the new-side
/// line ranges of its hunks in the file.
struct Change {
    id: String,
    date: String,
    message: String,
    hunks: Vec<(u32, u32)>,
}

/// The clone of `source` with synthetic notes on the commits that changed
/// `files`, made (or reused) in the fixtures directory. Returns its path
/// and how many notes it holds.
pub(crate) fn synthesize(source: &Path, files: &[String]) -> Result<(PathBuf, usize), String> {
    if files.is_empty() {
        return Err("--synthesize needs the files to annotate: --file F (repeatable)".to_owned());
    }
    let head = git_text(source, &["rev-parse", "--verify", "HEAD^{commit}"])?;
    let head = head.trim();
    let key = format!("v{SYNTH_VERSION} {head} {}", files.join(" "));
    let name = source
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repo".to_owned());
    let dir = fixtures::dir(&format!("delivery-synth-{name}-{}", &head[..12]));
    let marker = dir.join(".complete");
    let repo = dir.join("repo");
    if let Ok(text) = fs::read_to_string(&marker)
        && let Some((cached, notes)) = text.rsplit_once('\n')
        && cached == key
        && let Ok(notes) = notes.parse()
        && repo.exists()
    {
        return Ok((repo, notes));
    }
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    eprintln!(
        "cloning {} into {} and writing synthetic notes for {}…",
        source.display(),
        repo.display(),
        files.join(", ")
    );
    let notes = clone_with_notes(source, head, files, &repo)?;
    fs::write(&marker, format!("{key}\n{notes}"))
        .map_err(|e| format!("{}: {e}", marker.display()))?;
    Ok((repo, notes))
}

/// Clones `source` at `head` into `repo` (which must not exist), gives the
/// clone a changed-path commit-graph and writes the synthetic notes of
/// `files` there. Returns how many notes it wrote.
fn clone_with_notes(
    source: &Path,
    head: &str,
    files: &[String],
    repo: &Path,
) -> Result<usize, String> {
    let parent = repo.parent().ok_or("the clone needs a parent directory")?;
    let target = repo.to_string_lossy().into_owned();
    let source_text = source.to_string_lossy().into_owned();
    hermetic(parent)
        .args(["clone", "--quiet", "--shared", &source_text, &target])
        .run()
        .map_err(|e| e.to_string())?;
    git_text(repo, &["checkout", "--quiet", "--detach", head])?;
    // Blame and `git log -L` over a long history: the gold and the log route
    // run them once per unit.
    git_text(
        repo,
        &["commit-graph", "write", "--reachable", "--changed-paths"],
    )?;
    let mut used = HashSet::new();
    let mut notes: Vec<(String, Value)> = Vec::new();
    for file in files {
        // Oldest first, so a sentence repeated later stays with the commit
        // that said it first.
        let mut changes = changes_of(repo, file)?;
        changes.reverse();
        for change in changes {
            let Some(note) = note_of(repo, file, &change, &mut used)? else {
                continue;
            };
            match notes.iter_mut().find(|(id, _)| *id == change.id) {
                Some((_, existing)) => {
                    let regions = note["regions"].as_array().cloned().unwrap_or_default();
                    if let Some(list) = existing["regions"].as_array_mut() {
                        list.extend(regions);
                    }
                }
                None => notes.push((change.id.clone(), note)),
            }
        }
    }
    for (id, note) in &notes {
        Annotation::from_json(&note.to_string())
            .map_err(|e| format!("the synthetic note of {id} does not parse: {e}"))?;
    }
    write_notes(repo, &notes)?;
    Ok(notes.len())
}

/// The non-merge commits HEAD reaches that changed `file`, newest first,
/// with the new-side ranges of their hunks.
fn changes_of(repo: &Path, file: &str) -> Result<Vec<Change>, String> {
    let log = git_text(
        repo,
        &[
            "log",
            "--no-merges",
            "-p",
            "-U0",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "--format=%x1e%H%x1f%cI%x1f%B%x1f",
            "--",
            file,
        ],
    )?;
    let mut changes = Vec::new();
    for record in log.split('\x1e').skip(1) {
        let mut fields = record.splitn(4, '\x1f');
        let (Some(id), Some(date), Some(message), Some(patch)) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if id.len() != 40 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let hunks = patch.lines().filter_map(hunk_range).collect();
        changes.push(Change {
            id: id.to_owned(),
            date: date.to_owned(),
            message: message.to_owned(),
            hunks,
        });
    }
    Ok(changes)
}

/// The new-side lines of a hunk header `@@ -a,b +c,d @@`: `c..=c+d-1`, or
/// just `c` (at least 1) for a hunk that only deletes.
fn hunk_range(line: &str) -> Option<(u32, u32)> {
    let rest = line.strip_prefix("@@ -")?;
    let plus = rest.split_whitespace().nth(1)?.strip_prefix('+')?;
    let (start, count) = match plus.split_once(',') {
        Some((s, c)) => (s.parse::<u32>().ok()?, c.parse::<u32>().ok()?),
        None => (plus.parse::<u32>().ok()?, 1),
    };
    Some(if count == 0 {
        (start.max(1), start.max(1))
    } else {
        (start, start + count - 1)
    })
}

/// The note of one change to `file`, or `None` when no hunk touches a
/// function or method.
fn note_of(
    repo: &Path,
    file: &str,
    change: &Change,
    used: &mut HashSet<String>,
) -> Result<Option<Value>, String> {
    if change.hunks.is_empty() {
        return Ok(None);
    }
    let Ok(text) = git_text(
        repo,
        &["cat-file", "blob", &format!("{}:{file}", change.id)],
    ) else {
        return Ok(None);
    };
    if text.len() > MAX_FILE_BYTES {
        return Ok(None);
    }
    let Ok(units) = outline::outline(file, &text) else {
        return Ok(None);
    };
    let mut touched: Vec<&outline::Unit> = units
        .iter()
        .filter(|u| {
            matches!(
                u.kind,
                outline::UnitKind::Function | outline::UnitKind::Method
            ) && change
                .hunks
                .iter()
                .any(|&(s, e)| s <= u.lines.end && u.lines.start <= e)
        })
        .collect();
    touched.sort_by_key(|u| u.lines.start);
    touched.dedup_by(|a, b| a.qualified_name == b.qualified_name);
    if touched.is_empty() {
        return Ok(None);
    }
    let subject = change.message.lines().next().unwrap_or_default().trim();
    let fresh: Vec<String> = sentences(&change.message)
        .into_iter()
        .filter(|s| used.insert(normalize(s)))
        .collect();
    let regions: Vec<Value> = touched
        .iter()
        .enumerate()
        .map(|(i, unit)| {
            let constraints: Vec<Value> = fresh
                .get(i % fresh.len().max(1))
                .map(|text| json!({"text": text, "source": "inferred"}))
                .into_iter()
                .collect();
            json!({
                "file": file,
                "ast_anchor": {"type": unit.kind.as_str(), "name": unit.qualified_name},
                "lines": {"start": unit.lines.start, "end": unit.lines.end},
                "intent": subject,
                "constraints": constraints,
                "tags": [],
            })
        })
        .collect();
    Ok(Some(json!({
        "$schema": "ultragit/v1",
        "commit": change.id,
        "timestamp": change.date,
        "task": null,
        "summary": subject,
        "context_level": "inferred",
        "regions": regions,
        "cross_cutting": [],
        "provenance": {"operation": "initial", "original_annotations_preserved": false},
    })))
}

/// The sentences of a message's body that can be constraints: from prose
/// paragraphs (no indented line, not a trailer block), 8 to 60 words.
fn sentences(message: &str) -> Vec<String> {
    let mut out = Vec::new();
    for paragraph in message.split("\n\n").skip(1) {
        let lines: Vec<&str> = paragraph.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.is_empty()
            || lines.iter().any(|l| l.starts_with([' ', '\t']))
            || lines.iter().all(|l| is_trailer(l))
        {
            continue;
        }
        let prose = normalize(&lines.join(" "));
        let mut start = 0;
        let bytes = prose.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            let ends = matches!(b, b'.' | b'?' | b'!')
                && bytes.get(i + 1).is_none_or(|&next| next == b' ');
            if ends {
                push_sentence(&mut out, &prose[start..=i]);
                start = i + 1;
            }
        }
        push_sentence(&mut out, &prose[start..]);
    }
    out
}

fn push_sentence(out: &mut Vec<String>, sentence: &str) {
    let sentence = sentence.trim();
    let words = sentence.split_whitespace().count();
    if (MIN_WORDS..=MAX_WORDS).contains(&words) {
        out.push(sentence.to_owned());
    }
}

/// `Signed-off-by: …`, `Helped-by: …`: a key without spaces, then `: `.
fn is_trailer(line: &str) -> bool {
    line.split_once(": ").is_some_and(|(key, _)| {
        !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    })
}

/// One commit on `refs/notes/ultragit` holding every note.
fn write_notes(repo: &Path, notes: &[(String, Value)]) -> Result<(), String> {
    let when = chrono::Utc::now().timestamp();
    let mut stream = String::new();
    Commit::notes(when).push_header(&mut stream);
    for (id, note) in notes {
        fast_import::push_note(&mut stream, id, &note.to_string());
    }
    stream.push('\n');
    let mut child = fast_import::spawn(hermetic(repo), Stdio::null())?;
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().ok_or("git fast-import has no stdin")?;
        stdin
            .write_all(stream.as_bytes())
            .map_err(|e| format!("writing to git fast-import: {e}"))?;
    }
    fast_import::finish(child)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(dir: &Path, text: &str, message: &str) {
        fs::write(dir.join("lib.c"), text).unwrap();
        let git = |args: &[&str]| {
            hermetic(dir)
                .env("GIT_AUTHOR_NAME", "A U Thor")
                .env("GIT_AUTHOR_EMAIL", "author@example.com")
                .env("GIT_COMMITTER_NAME", "A U Thor")
                .env("GIT_COMMITTER_EMAIL", "author@example.com")
                .args(args)
                .run()
                .unwrap();
        };
        git(&["add", "lib.c"]);
        git(&["commit", "--quiet", "-m", message]);
    }

    fn c_file(bodies: [&str; 3]) -> String {
        ["alpha", "beta", "gamma"]
            .iter()
            .zip(bodies)
            .map(|(name, body)| format!("int {name}(int x)\n{{\n\treturn {body};\n}}\n\n"))
            .collect()
    }

    #[test]
    fn every_commit_that_changed_a_function_gets_its_own_sentences() {
        let tmp = tempfile::tempdir().unwrap();
        let source = tmp.path().join("source");
        fs::create_dir(&source).unwrap();
        hermetic(&source)
            .args(["init", "--quiet", "--initial-branch=main"])
            .run()
            .unwrap();
        let first =
            "The three helpers start out trivial so that the callers can be wired up first.";
        let second =
            "Beta doubles its input because the caller in the parser counts pairs of tokens.";
        let third =
            "Alpha and gamma now add one so that the sentinel value zero is never returned.";
        commit(
            &source,
            &c_file(["x", "x", "x"]),
            &format!("lib: add the helpers\n\n{first}\n"),
        );
        commit(
            &source,
            &c_file(["x", "x * 2", "x"]),
            &format!(
                "lib: beta doubles\n\n{second} Too short here.\n\nSigned-off-by: A U Thor <author@example.com>\n"
            ),
        );
        commit(
            &source,
            &c_file(["x + 1", "x * 2", "x + 1"]),
            &format!("lib: no zero\n\n{first}\n\n{third}\n"),
        );
        let head = git_text(&source, &["rev-parse", "HEAD"]).unwrap();
        let clone = tmp.path().join("clone");
        let written =
            clone_with_notes(&source, head.trim(), &["lib.c".to_owned()], &clone).unwrap();
        assert_eq!(written, 3);
        // The source is left without notes.
        assert_eq!(
            git_text(&source, &["for-each-ref", "refs/notes"]).unwrap(),
            ""
        );

        let note = |rev: &str| -> Annotation {
            let text = git_text(&clone, &["notes", "--ref", "ultragit", "show", rev]).unwrap();
            Annotation::from_json(&text).unwrap()
        };
        let regions = |a: &Annotation| -> Vec<(String, Vec<String>)> {
            a.regions
                .iter()
                .map(|r| {
                    let texts = r.constraints.iter().map(|c| c.text.clone()).collect();
                    (r.ast_anchor.name.clone(), texts)
                })
                .collect()
        };
        let all = |names: &[&str], text: &str| -> Vec<(String, Vec<String>)> {
            names
                .iter()
                .map(|n| (n.to_string(), vec![text.to_owned()]))
                .collect()
        };
        assert_eq!(
            regions(&note("HEAD~2")),
            all(&["alpha", "beta", "gamma"], first)
        );
        assert_eq!(regions(&note("HEAD~1")), all(&["beta"], second));
        // The first sentence belongs to the commit that said it first.
        assert_eq!(regions(&note("HEAD")), all(&["alpha", "gamma"], third));
        let beta = &note("HEAD~1").regions[0];
        assert_eq!((beta.lines.start, beta.lines.end), (6, 9));
        assert_eq!(beta.intent, "lib: beta doubles");
    }

    #[test]
    fn hunk_ranges_of_changes_and_deletions() {
        assert_eq!(
            hunk_range("@@ -10,2 +12,3 @@ static int f(void)"),
            Some((12, 14))
        );
        assert_eq!(hunk_range("@@ -10 +12 @@"), Some((12, 12)));
        assert_eq!(hunk_range("@@ -10,2 +9,0 @@"), Some((9, 9)));
        assert_eq!(hunk_range("@@ -1,2 +0,0 @@"), Some((1, 1)));
        assert_eq!(hunk_range("+@@ not a header"), None);
    }

    #[test]
    fn sentences_come_from_prose_paragraphs_only() {
        let message = "diff: fix the thing\n\n\
            The rename detection looked at every pair of paths even when the limit was reached. \
            Short one.\n\
            Stop once the limit is hit, so that large merges do not stall the diff machinery.\n\n    \
            $ git diff --stat with an indented example that is long enough to count here\n\n\
            Signed-off-by: A U Thor <author@example.com>\n\
            Helped-by: Someone Else <else@example.com>\n";
        assert_eq!(
            sentences(message),
            vec![
                "The rename detection looked at every pair of paths even when the limit was reached."
                    .to_owned(),
                "Stop once the limit is hit, so that large merges do not stall the diff machinery."
                    .to_owned(),
            ]
        );
    }
}
