//! `read_file`.

use serde_json::{Value, json};
use testkit::TestRepo;

use crate::{assert_capped, call, call_with, code, data, hint, limited, symlink};

fn read(repo: &TestRepo, args: Value) -> Value {
    call(repo.path(), "read_file", args)
}

fn numbered(range: std::ops::RangeInclusive<usize>) -> String {
    range.map(|n| format!("{n}| line {n}\n")).collect()
}

fn repo() -> TestRepo {
    let fifty: String = (1..=50).map(|n| format!("line {n}\n")).collect();
    let repo = TestRepo::with_commit(
        &[
            ("src/fifty.txt", &fifty),
            ("no-newline.txt", "a\nb"),
            ("empty.txt", ""),
            ("bin.dat", "abc\0def\n"),
        ],
        "files",
    );
    repo.write("untracked.md", "# draft\n");
    repo
}

#[test]
fn reads_numbered_lines_and_ranges() {
    let repo = repo();
    let env = read(
        &repo,
        json!({"path": "src/fifty.txt", "start_line": 3, "end_line": 5}),
    );
    assert_eq!(
        data(&env),
        &json!({
            "path": "src/fifty.txt",
            "start_line": 3,
            "end_line": 5,
            "total_lines": 50,
            "text": "3| line 3\n4| line 4\n5| line 5\n"
        })
    );
    assert_eq!(env["truncated"], false);
    let env = read(&repo, json!({"path": "src\\fifty.txt"}));
    assert_eq!(data(&env)["text"], numbered(1..=50));
    let env = read(
        &repo,
        json!({"path": "src/fifty.txt", "start_line": 49, "end_line": 80}),
    );
    assert_eq!(data(&env)["text"], numbered(49..=50));
    assert_eq!(data(&env)["end_line"], 50);
    let env = read(&repo, json!({"path": "no-newline.txt"}));
    assert_eq!(data(&env)["text"], "1| a\n2| b\n");
    assert_eq!(data(&env)["total_lines"], 2);
    let env = read(&repo, json!({"path": "empty.txt"}));
    assert_eq!(data(&env)["text"], "");
    assert_eq!(data(&env)["total_lines"], 0);
    assert_eq!(data(&env)["end_line"], Value::Null);
    // Untracked working-tree files are readable too.
    let env = read(&repo, json!({"path": "untracked.md"}));
    assert_eq!(data(&env)["text"], "1| # draft\n");
}

#[test]
fn long_reads_say_where_to_continue() {
    let repo = repo();
    let limits = limited(|l| l.max_lines = 20);
    let env = call_with(
        repo.path(),
        limits,
        "read_file",
        json!({"path": "src/fifty.txt", "start_line": 11}),
    );
    assert_eq!(data(&env)["text"], numbered(11..=30));
    assert_eq!(data(&env)["end_line"], 30);
    assert_eq!(data(&env)["total_lines"], 50);
    assert_eq!(data(&env)["next_start_line"], 31);
    assert_capped(&env, "lines", 40, 20, "start_line 31");
    // A range that fits the line cap exactly is complete.
    let env = call_with(
        repo.path(),
        limits,
        "read_file",
        json!({"path": "src/fifty.txt", "start_line": 31, "end_line": 50}),
    );
    assert_eq!(env["truncated"], false);

    let limits = limited(|l| l.max_bytes = 200);
    let env = call_with(
        repo.path(),
        limits,
        "read_file",
        json!({"path": "src/fifty.txt"}),
    );
    assert_eq!(env["truncation"]["limit"], "bytes");
    let next = data(&env)["next_start_line"].as_u64().unwrap() as usize;
    assert_eq!(data(&env)["text"], numbered(1..=next - 1));
    assert!(env["data"].to_string().len() <= 200, "{env}");

    // One line longer than the byte cap is cut, and the next read starts after it.
    repo.write("wide.txt", format!("{}\nshort\n", "w".repeat(1000)));
    let env = call_with(
        repo.path(),
        limits,
        "read_file",
        json!({"path": "wide.txt"}),
    );
    let text = data(&env)["text"].as_str().unwrap();
    assert!(text.starts_with("1| www") && text.len() < 200, "{text}");
    assert_eq!(data(&env)["next_start_line"], 2);
    assert!(hint(&env).contains("line 1 is longer"));
}

#[test]
fn failures_have_stable_codes() {
    let repo = repo();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret\n").unwrap();
    symlink(&outside.path().join("secret.txt"), &repo.join("leak.txt"));
    symlink(outside.path(), &repo.join("leakdir"));
    symlink(&repo.join("src/fifty.txt"), &repo.join("inside.txt"));
    let absolute = repo.join("src/fifty.txt").to_str().unwrap().to_owned();
    let cases = [
        (json!({"path": "bin.dat"}), "NOT_TEXT"),
        (json!({"path": "missing.txt"}), "NOT_FOUND"),
        (json!({"path": "src/fifty.txt/x"}), "NOT_FOUND"),
        (json!({"path": "src"}), "NOT_A_FILE"),
        (json!({"path": "."}), "NOT_A_FILE"),
        (json!({"path": absolute}), "INVALID_ARGUMENT"),
        (json!({"path": "../x"}), "INVALID_ARGUMENT"),
        (json!({"path": "C:\\x.txt"}), "INVALID_ARGUMENT"),
        (json!({"path": "\\\\server\\share\\x"}), "INVALID_ARGUMENT"),
        (json!({"path": ".git/config"}), "INVALID_ARGUMENT"),
        (json!({"path": "leak.txt"}), "INVALID_ARGUMENT"),
        (json!({"path": "leakdir/secret.txt"}), "INVALID_ARGUMENT"),
        (json!({"path": ""}), "INVALID_ARGUMENT"),
        (json!({}), "INVALID_ARGUMENT"),
        (
            json!({"path": "src/fifty.txt", "start_line": 0}),
            "INVALID_ARGUMENT",
        ),
        (
            json!({"path": "src/fifty.txt", "start_line": 5, "end_line": 4}),
            "INVALID_ARGUMENT",
        ),
        (
            json!({"path": "src/fifty.txt", "start_line": 51}),
            "INVALID_ARGUMENT",
        ),
        (
            json!({"path": "src/fifty.txt", "start_line": 1.5}),
            "INVALID_ARGUMENT",
        ),
    ];
    for (args, expected) in cases {
        let env = read(&repo, args.clone());
        assert_eq!(code(&env), expected, "{args}");
    }
    let env = read(&repo, json!({"path": "inside.txt", "end_line": 1}));
    assert_eq!(data(&env)["text"], "1| line 1\n");
}

#[test]
fn ignored_untracked_files_are_refused_but_tracked_and_untracked_ones_are_read() {
    let repo = repo();
    repo.write(".gitignore", "*.env\nsecrets/\n")
        .write("app.env", "API_KEY=sk-do-not-show\n");
    repo.write("secrets/token.txt", "t0ken\n")
        .write("kept.env", "tracked anyway\n");
    repo.stage(&[".gitignore"]);
    repo.git(&["add", "-f", "kept.env"]);
    for path in ["app.env", "secrets/token.txt"] {
        let env = read(&repo, json!({"path": path}));
        assert_eq!(code(&env), "IGNORED", "{path}: {env}");
        assert!(!env.to_string().contains("sk-do-not-show"));
    }
    assert_eq!(
        data(&read(&repo, json!({"path": "kept.env"})))["text"],
        "1| tracked anyway\n"
    );
    assert_eq!(
        data(&read(&repo, json!({"path": "untracked.md"})))["text"],
        "1| # draft\n"
    );
}

#[test]
fn files_over_the_read_limit_are_refused_before_reading() {
    let repo = repo();
    // Sparse: the size is known without writing it.
    let file = std::fs::File::create(repo.join("huge.log")).unwrap();
    file.set_len(repo_tools::read_file::MAX_FILE_BYTES + 1)
        .unwrap();
    let env = read(&repo, json!({"path": "huge.log", "end_line": 1}));
    assert_eq!(code(&env), "TOO_LARGE", "{env}");
    file.set_len(repo_tools::read_file::MAX_FILE_BYTES).unwrap();
    // At the limit it is read (all NUL here, so binary).
    let env = read(&repo, json!({"path": "huge.log", "end_line": 1}));
    assert_eq!(code(&env), "NOT_TEXT", "{env}");
}
