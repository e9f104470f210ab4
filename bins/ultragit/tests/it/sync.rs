//! `ultragit sync`, `init --sync`, the `pre-push` hook, `export` and `import`
//! as processes, against clones of a bare remote on disk.

use std::path::Path;

use serde_json::{Value, json};
use testkit::{Team, TestRepo, assert_contains, assert_starts_with, bare_beside, bare_git};

use crate::support::{note, stdout, texts, ultragit, write_note};

/// `git push origin main` from `repo` (hooks run): it must succeed and print
/// nothing on stdout. Returns its stderr.
fn push(repo: &TestRepo) -> String {
    let push = repo
        .command()
        .args(["push", "origin", "main"])
        .run_unchecked()
        .unwrap();
    let stderr = String::from_utf8_lossy(&push.stderr).into_owned();
    assert!(push.status.success(), "{stderr}");
    assert!(
        push.stdout.is_empty(),
        "nothing of ours on git push's stdout"
    );
    stderr
}

fn annotation(commit: &str, name: &str, intent: &str) -> Value {
    note(
        commit,
        "2024-01-01T00:00:00Z",
        "inferred",
        "initial",
        "summary",
        vec![json!({
            "file": "src.txt",
            "ast_anchor": {"type": "function", "name": name},
            "lines": {"start": 1, "end": 2},
            "intent": intent,
            "reasoning": null,
            "constraints": [],
            "semantic_dependencies": [],
            "related_annotations": [],
            "tags": [],
            "risk_notes": null
        })],
        vec![],
    )
}

fn remote_notes(bare: &Path) -> Vec<String> {
    bare_git(bare, &["notes", "--ref=ultragit", "list"])
        .lines()
        .map(|l| l.split_whitespace().nth(1).unwrap_or("").to_owned())
        .collect()
}

fn show(repo: &TestRepo, commit: &str) -> Option<String> {
    let out = repo
        .command()
        .args(["notes", "--ref=ultragit", "show", commit])
        .run_unchecked()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn executable(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    let mut permissions = std::fs::metadata(path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(path, permissions).unwrap();
}

#[test]
fn sync_prints_what_it_did_both_ways() {
    let team = Team::new();
    let (c1, c2) = (&team.commits[0], &team.commits[1]);
    write_note(&team.a, c1, &annotation(c1, "f", "Why f.").to_string());
    let out = stdout(team.a.path(), &["sync"]);
    assert_eq!(
        out,
        "synced refs/notes/ultragit with 'origin' (the remote had no notes yet; pushed, creating the remote's notes ref)\n"
    );
    write_note(&team.b, c2, &annotation(c2, "g", "Why g.").to_string());
    let out = stdout(team.b.path(), &["sync", "origin"]);
    assert_eq!(
        out,
        "synced refs/notes/ultragit with 'origin' (1 new note from the remote, 0 joined with local ones; pushed)\n"
    );
    let out = stdout(team.a.path(), &["sync"]);
    assert_eq!(
        out,
        "synced refs/notes/ultragit with 'origin' (1 new note from the remote; the remote was up to date)\n"
    );
    let mut on_remote = remote_notes(&team.bare);
    on_remote.sort();
    let mut expected = vec![c1.clone(), c2.clone()];
    expected.sort();
    assert_eq!(on_remote, expected);
    // `read`-side tools see the synced note.
    let shown = stdout(team.a.path(), &["show", c2]);
    assert!(shown.contains("Why g."), "{shown}");
}

#[test]
fn sync_errors_are_one_clear_line() {
    let team = Team::new();
    let run = ultragit(team.a.path(), &["sync", "upstream"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error: there is no remote named 'upstream' in this repository (see `git remote -v`); name one with `ultragit sync <remote>`\n"
    );
    team.a
        .git(&["remote", "add", "gone", "/nonexistent/remote.git"]);
    let run = ultragit(team.a.path(), &["sync", "gone"]);
    assert_eq!(run.code, 1);
    assert_starts_with(&run.stderr, "error: could not reach the remote 'gone' (");
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}

#[test]
fn init_sync_is_idempotent() {
    let team = Team::new();
    let first = stdout(team.a.path(), &["init", "--sync"]);
    assert_contains(&first, "notes sync enabled with 'origin'");
    assert!(
        first.contains(
            "+refs/notes/ultragit:refs/notes/remotes/origin/ultragit on remote.origin.fetch (added)"
        ),
        "{first}"
    );
    assert!(first.contains("pre-push hook"), "{first}");
    let second = stdout(team.a.path(), &["init", "--sync", "--remote", "origin"]);
    assert!(second.contains("(already there)"), "{second}");
    assert!(second.contains("(already installed; updated)"), "{second}");
    let fetch = team.a.git(&["config", "--get-all", "remote.origin.fetch"]);
    assert_eq!(
        fetch
            .lines()
            .filter(|l| l.contains("refs/notes/ultragit"))
            .count(),
        1,
        "{fetch}"
    );
    let hook = std::fs::read_to_string(team.a.join(".git/hooks/pre-push")).unwrap();
    assert_eq!(hook.matches("# >>> ultragit pre-push >>>").count(), 1);
    assert_eq!(hook.matches("# <<< ultragit pre-push <<<").count(), 1);
    // The post-commit block is untouched by the pre-push one.
    let post = std::fs::read_to_string(team.a.join(".git/hooks/post-commit")).unwrap();
    assert_eq!(post.matches("# >>> ultragit post-commit >>>").count(), 1);

    let again = stdout(team.a.path(), &["sync", "--enable"]);
    assert!(again.contains("(already there)"), "{again}");

    let run = ultragit(team.a.path(), &["init", "--sync", "--remote", "nope"]);
    assert_eq!(run.code, 1);
    assert_contains(&run.stderr, "no remote named 'nope'");
    let run = ultragit(team.a.path(), &["init", "--remote", "origin"]);
    assert_eq!(run.code, 2, "--remote needs --sync: {run:?}");
}

#[test]
fn the_pre_push_hook_syncs_and_never_fails_the_push() {
    let team = Team::new();
    stdout(team.a.path(), &["sync", "--enable", "origin"]);
    let c1 = &team.commits[0];
    write_note(&team.a, c1, &annotation(c1, "f", "Why f.").to_string());
    // A new commit to push, made with plain git (no post-commit hook here).
    std::fs::remove_file(team.a.join(".git/hooks/post-commit")).ok();
    team.a.commit_file("more.txt", "more\n", "More");

    assert_contains(&push(&team.a), "ultragit: synced refs/notes/ultragit");
    assert_eq!(remote_notes(&team.bare), vec![c1.clone()]);

    // The remote now refuses notes: the user's push still succeeds.
    executable(
        &team.bare.join("hooks/update"),
        "#!/bin/sh\ncase \"$1\" in refs/notes/*) exit 1;; esac\nexit 0\n",
    );
    let c2 = &team.commits[1];
    write_note(&team.a, c2, &annotation(c2, "g", "Why g.").to_string());
    let head = team
        .a
        .commit_file("more.txt", "more and more\n", "More again");
    assert_contains(
        &push(&team.a),
        "warning: ultragit: the notes were not synced",
    );
    assert_eq!(bare_git(&team.bare, &["rev-parse", "main"]).trim(), head);
    assert_eq!(remote_notes(&team.bare), vec![c1.clone()]);

    // Pushing to another remote does not sync the notes there.
    let other = bare_beside(&team.b, "mirror.git");
    team.a
        .git(&["remote", "add", "mirror", other.to_str().unwrap()]);
    let push = team
        .a
        .command()
        .args(["push", "mirror", "main"])
        .run_unchecked()
        .unwrap();
    assert!(push.status.success());
    assert!(remote_notes(&other).is_empty());
}

#[test]
fn export_then_import_round_trips_into_a_fresh_clone() {
    let team = Team::new();
    let (c1, c2, c3) = (&team.commits[0], &team.commits[1], &team.commits[2]);
    write_note(&team.a, c1, &annotation(c1, "f", "Why f.").to_string());
    write_note(&team.a, c3, &annotation(c3, "h", "Why h.").to_string());
    write_note(&team.a, c2, "{broken");
    // B already annotated c3 differently: import joins them.
    write_note(&team.b, c3, &annotation(c3, "k", "Why k.").to_string());

    let file = team.a.join("notes.jsonl");
    let run = ultragit(team.a.path(), &["export", "-o", file.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        format!(
            "exported 2 notes to {} (1 malformed, as raw text)\n",
            file.display()
        )
    );
    assert_contains(&run.stderr, "exported as raw text");
    let text = std::fs::read_to_string(&file).unwrap();
    let lines = Value::Array(
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
    );
    // Newest first.
    let order = texts(&lines, "/commit");
    assert_eq!(order, [c3.as_str(), c2.as_str(), c1.as_str()]);
    assert_eq!(lines[1]["malformed"], json!(true));
    assert_eq!(lines[1]["raw"], json!("{broken"));
    assert_eq!(lines[2]["note"]["regions"][0]["intent"], json!("Why f."));
    // The same to stdout, and --since filters by commit date.
    assert_eq!(stdout(team.a.path(), &["export"]), text);
    assert_eq!(
        stdout(team.a.path(), &["export", "--since", "2030-01-01"]),
        ""
    );

    // A line for a commit B does not have, and one that is not JSON.
    let extra = format!(
        "{text}{}\nnot json\n",
        json!({"commit": "1".repeat(40), "note": annotation(&"1".repeat(40), "z", "z")})
    );
    let input = team.b.join("in.jsonl");
    std::fs::write(&input, extra).unwrap();
    let run = ultragit(team.b.path(), &["import", input.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        format!(
            "imported {}: 1 added, 1 merged with existing notes, 0 unchanged, 1 for unknown commits skipped, 2 invalid skipped\n",
            input.display()
        )
    );
    assert_contains(&run.stderr, "line 2: the note of commit");
    assert_contains(&run.stderr, "line 5: not an export line");
    let parsed = |repo: &TestRepo, commit: &str| {
        ultragit_schema::Annotation::from_json(&show(repo, commit).unwrap()).unwrap()
    };
    assert_eq!(parsed(&team.b, c1), parsed(&team.a, c1));
    assert_eq!(show(&team.b, c2), None);
    let joined: Value = serde_json::from_str(&show(&team.b, c3).unwrap()).unwrap();
    assert_eq!(texts(&joined["regions"], "/intent"), ["Why k.", "Why h."]);

    // Importing again changes nothing.
    let run = ultragit(team.b.path(), &["import", input.to_str().unwrap()]);
    assert_contains(
        &run.stdout,
        "0 added, 0 merged with existing notes, 2 unchanged",
    );

    let run = ultragit(team.b.path(), &["import", "/nonexistent.jsonl"]);
    assert_eq!(run.code, 1);
    assert_starts_with(&run.stderr, "error: cannot read /nonexistent.jsonl");
    let run = ultragit(team.b.path(), &["export", "--since", "yesterday"]);
    assert_eq!(run.code, 2);
}

#[test]
fn import_streams_past_a_line_longer_than_any_note() {
    let team = Team::new();
    let (c1, c2) = (&team.commits[0], &team.commits[1]);
    let line = |c: &str, intent: &str| {
        json!({"commit": c, "note": annotation(c, "f", intent)}).to_string()
    };
    // A 20 MB line (a 100 MB one behaves the same, only slower) between two
    // valid ones: it is read through in chunks, never held, and skipped.
    let input = team.b.join("in.jsonl");
    {
        use std::io::Write as _;
        let mut file = std::io::BufWriter::new(std::fs::File::create(&input).unwrap());
        writeln!(file, "{}", line(c1, "Why one.")).unwrap();
        let chunk = vec![b'x'; 1024 * 1024];
        file.write_all(b"{\"commit\":\"").unwrap();
        for _ in 0..20 {
            file.write_all(&chunk).unwrap();
        }
        file.write_all(b"\"}\n").unwrap();
        writeln!(file, "{}", line(c2, "Why two.")).unwrap();
    }
    let run = ultragit(team.b.path(), &["import", input.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_contains(&run.stdout, "2 added");
    assert_contains(&run.stdout, "1 invalid skipped");
    assert_contains(
        &run.stderr,
        "line 2: 20971533 bytes, longer than a note may be",
    );
    assert_contains(&show(&team.b, c2).unwrap(), "Why two.");
}

/// The empty tree: git knows it without it being written.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// In `b`, which plays the stranger: takes the remote's notes as they are,
/// makes a notes commit of `tree` on top of them and pushes it with plain git
/// (a fast-forward for the remote).
fn stranger_pushes_notes_tree(b: &TestRepo, tree: &str) {
    b.git(&[
        "fetch",
        "--quiet",
        "origin",
        "+refs/notes/ultragit:refs/notes/ultragit",
    ]);
    let commit = b.git_stdin(
        &[
            "commit-tree",
            tree,
            "-p",
            "refs/notes/ultragit",
            "-m",
            "crafted",
        ],
        "",
    );
    b.git(&["update-ref", "refs/notes/ultragit", &commit]);
    b.git(&["push", "--quiet", "origin", "refs/notes/ultragit"]);
}

fn local_notes(repo: &TestRepo) -> usize {
    repo.git(&["notes", "--ref=ultragit", "list"])
        .lines()
        .count()
}

#[test]
fn a_remote_can_never_take_local_notes_away() {
    let team = Team::new();
    let mut commits = team.commits.clone();
    commits.extend(team.a.commit_many(5, "more.txt"));
    for (i, c) in commits.iter().enumerate() {
        let text = annotation(c, "f", &format!("Why {i}.")).to_string();
        write_note(&team.a, c, &text);
    }
    stdout(team.a.path(), &["sync"]);
    assert_eq!(remote_notes(&team.bare).len(), 8);

    // The remote's notes emptied by a commit on top of them.
    stranger_pushes_notes_tree(&team.b, EMPTY_TREE);
    let out = stdout(team.a.path(), &["sync"]);
    assert_contains(&out, "8 local notes the remote no longer has kept");
    assert_eq!(local_notes(&team.a), 8);
    assert_eq!(remote_notes(&team.bare).len(), 8, "the union went back");

    // Again, with one local change first.
    let changed = annotation(&commits[0], "f", "Changed here.").to_string();
    write_note(&team.a, &commits[0], &changed);
    stranger_pushes_notes_tree(&team.b, EMPTY_TREE);
    let run = ultragit(team.a.path(), &["sync"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(local_notes(&team.a), 8);
    assert_contains(&show(&team.a, &commits[0]).unwrap(), "Changed here.");

    // Valid notes replaced by garbage, a 5 MB blob and a symbolic link.
    team.b.git(&[
        "fetch",
        "--quiet",
        "origin",
        "+refs/notes/ultragit:refs/notes/ultragit",
    ]);
    let blob = |text: &str| team.b.git_stdin(&["hash-object", "-w", "--stdin"], text);
    let garbage = blob("{garbage");
    let big = blob(&"x".repeat(5 * 1024 * 1024));
    let listing = team.b.git(&["ls-tree", "-r", "refs/notes/ultragit"]);
    let mut entries = Vec::new();
    for line in listing.lines() {
        let (meta, path) = line.split_once('\t').unwrap();
        let oid = meta.split_whitespace().nth(2).unwrap();
        let name: String = path.split('/').collect();
        let entry = if name == commits[1] {
            format!("100644 blob {garbage}\t{name}")
        } else if name == commits[2] {
            format!("100644 blob {big}\t{name}")
        } else if name == commits[3] {
            format!("120000 blob {oid}\t{name}")
        } else {
            format!("100644 blob {oid}\t{name}")
        };
        entries.push(entry);
    }
    let tree = team.b.git_stdin(&["mktree"], &(entries.join("\n") + "\n"));
    stranger_pushes_notes_tree(&team.b, &tree);
    let run = ultragit(team.a.path(), &["sync"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_contains(&run.stdout, "3 refused");
    for (commit, why) in [
        (&commits[1], "not a valid ultragit/v1 annotation"),
        (&commits[2], "over the limit"),
        (&commits[3], "a symbolic link"),
    ] {
        let short = &commit[..7];
        assert!(
            run.stderr.lines().any(|l| l
                .contains(&format!("commit {short}: refused the note from 'origin'"))
                && l.contains(why)),
            "{short} {why}: {}",
            run.stderr
        );
    }
    for (i, commit) in commits.iter().enumerate().skip(1) {
        let shown = stdout(team.a.path(), &["show", commit]);
        assert_contains(&shown, &format!("Why {i}."));
    }

    // doctor names what was refused.
    team.a.git(&["config", "ultragit.syncRemote", "origin"]);
    team.a.git(&[
        "config",
        "--add",
        "remote.origin.fetch",
        "+refs/notes/ultragit:refs/notes/remotes/origin/ultragit",
    ]);
    let doctor = ultragit(team.a.path(), &["doctor"]);
    let line = doctor
        .stdout
        .lines()
        .find(|l| l.contains("sync-refused"))
        .unwrap_or_else(|| panic!("{doctor:?}"));
    assert_contains(line, "3 notes on 'origin' were refused by sync");
}
