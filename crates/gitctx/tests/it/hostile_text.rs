//! Text from the repository that gitctx parses: file contents that look like
//! diff syntax (hunk headers, `diff --git`, `\ No newline`), huge lines, binary
//! bytes, and file names that look like commit ids or hold newlines. Whatever a
//! commit holds, diffs and logs never panic and stay proportional to it.

use gitctx::{DiffOptions, LineKind, count_lines};
use proptest::prelude::*;
use proptest::test_runner::Config;
use testkit::TestRepo;

use crate::open;

/// Commits `old` then `new` as `f.txt` and checks the typed and unified diff of
/// the second commit against them.
fn check_diff(old: &[u8], new: &[u8]) {
    let repo = TestRepo::new();
    repo.commit_file("f.txt", old, "old");
    repo.commit_file("f.txt", new, "new");
    let diff = open(&repo)
        .diff_commit("HEAD", &DiffOptions::default())
        .unwrap();
    if old == new {
        assert!(diff.files.is_empty());
        return;
    }
    assert_eq!(diff.files.len(), 1);
    let file = &diff.files[0];
    assert_eq!(file.path(), "f.txt");
    if !file.binary {
        assert!(file.additions <= count_lines(new));
        assert!(file.deletions <= count_lines(old));
        let (mut added, mut removed) = (0, 0);
        for hunk in &file.hunks {
            assert!(
                hunk.header.len() <= old.len() + new.len(),
                "{}",
                hunk.header
            );
            for line in &hunk.lines {
                match line.kind {
                    LineKind::Added => added += 1,
                    LineKind::Removed => removed += 1,
                    LineKind::Context => {}
                }
            }
        }
        assert_eq!((added, removed), (file.additions, file.deletions));
    }
    // Every byte shows at most once per side, a replaced invalid byte as three,
    // each line with a one-byte prefix; headers are small.
    let unified = diff.to_unified();
    let bound = 4 * (old.len() + new.len()) + 128 * (file.hunks.len() + 4);
    assert!(unified.len() <= bound, "{} > {bound}", unified.len());
    let numstat = diff.numstat();
    assert_eq!(numstat.len(), 1);
    assert_eq!(
        numstat[0].additions,
        (!file.binary).then_some(file.additions)
    );
}

/// File content made of lines that look like diff syntax, and anything else.
fn diffish() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        Just(b"@@ -1,2 +1,3 @@ fn main() {".to_vec()),
        Just(b"@@ @@".to_vec()),
        Just(b"@@".to_vec()),
        Just(b"diff --git a/f.txt b/f.txt".to_vec()),
        Just(b"--- a/f.txt".to_vec()),
        Just(b"+++ b/f.txt".to_vec()),
        Just(b"\\ No newline at end of file".to_vec()),
        Just(b"fn f() { @@ -9 +9 @@ }".to_vec()),
        Just(b"\r".to_vec()),
        Just(vec![0xff, 0xfe]),
        prop::collection::vec(any::<u8>(), 0..16),
        "[a-z +\\-@]{0,12}".prop_map(String::into_bytes),
    ];
    (prop::collection::vec(line, 0..24), any::<bool>()).prop_map(|(lines, final_newline)| {
        let mut text = lines.join(&b'\n');
        if final_newline {
            text.push(b'\n');
        }
        text
    })
}

proptest! {
    // Each case is a real repository with two commits.
    #![proptest_config(Config::with_cases(24))]

    #[test]
    fn diffs_of_any_content_never_panic(old in diffish(), new in diffish()) {
        check_diff(&old, &new);
    }
}

#[test]
fn adversarial_contents_diff_within_bounds() {
    let megabyte_line = "x".repeat(1024 * 1024);
    let headers = "@@ -1 +1 @@\n".repeat(50_000);
    let no_newline = "\\ No newline at end of file\n".repeat(10_000);
    let carriage = "a\rb\r".repeat(100_000);
    let cases: [(&[u8], &[u8]); 5] = [
        (b"short\n", megabyte_line.as_bytes()),
        (b"", headers.as_bytes()),
        (headers.as_bytes(), no_newline.as_bytes()),
        (carriage.as_bytes(), b"a\nb\n"),
        (b"text\n", b"bin\0ary\n"),
    ];
    for (old, new) in cases {
        check_diff(old, new);
    }
}

#[test]
fn log_paths_reads_hostile_file_names() {
    let repo = TestRepo::new();
    let sha_like = "1111111111111111111111111111111111111111";
    let names = ["\u{1}", "\nz", sha_like, "a b", "tab\there"];
    for name in names {
        repo.write(name, "x\n");
    }
    let first = repo.commit_all("hostile names");
    repo.write(sha_like, "changed\n");
    let second = repo.commit_all("change the sha-like file");
    let paths: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let log = open(&repo).log_paths("HEAD", &paths, 10).unwrap();
    let ids: Vec<String> = log.iter().map(|(id, _)| id.to_hex()).collect();
    assert_eq!(ids, [second, first]);
    assert_eq!(log[0].1, [sha_like]);
    assert_eq!(log[1].1, ["\u{1}", "\nz", sha_like, "a b", "tab\there"]);
}

proptest! {
    #[test]
    fn tag_names_parse_exactly_or_not_at_all(name in "v?[0-9.]{0,30}|.{0,30}") {
        if let Some(version) = gitctx::Version::parse_tag(&name) {
            prop_assert_eq!(version.to_string(), name.strip_prefix('v').unwrap_or(&name));
        }
    }
}

#[test]
fn tag_names_at_the_edge_of_u64() {
    let max = format!("v{}.0.0", u64::MAX);
    let version = gitctx::Version::parse_tag(&max).unwrap();
    assert_eq!(version.major, u64::MAX);
    assert_eq!(version.bump(gitctx::Bump::Major), None);
    assert_eq!(
        version.bump(gitctx::Bump::Minor).unwrap().to_string(),
        format!("{}.1.0", u64::MAX)
    );
    assert_eq!(
        gitctx::Version::parse_tag(&format!("v1{}.0.0", u64::MAX)),
        None
    );
    assert_eq!(
        gitctx::Version::parse_tag(&format!("v{}", "9.".repeat(100_000))),
        None
    );
}
