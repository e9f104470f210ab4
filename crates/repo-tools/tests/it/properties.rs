//! Property tests of the parsers that read untrusted text: the `##` branch
//! header of `git status --porcelain=v1 --branch` (branch names come from the
//! repository) and workspace-relative paths (from the model).

use proptest::prelude::*;
use repo_tools::git_status_summary::parse_branch;
use repo_tools::paths::normalize;

/// Checks what [`parse_branch`] returns for `raw`.
fn check_branch(raw: &str) {
    let first = raw.split('\n').next().unwrap_or_default();
    if let Some(name) = parse_branch(raw) {
        assert!(!name.is_empty());
        assert!(!name.contains(' ') && !name.contains("..."), "{name:?}");
        assert!(first.contains(name.as_str()), "{name:?} not in {first:?}");
    }
}

fn header() -> impl Strategy<Value = String> {
    let name = "[a-zA-Z0-9/._\\-]{0,12}|[^ \n]{0,12}";
    let prefix = prop_oneof![
        Just("## "),
        Just("## No commits yet on "),
        Just("## Initial commit on "),
        Just("##"),
        Just(""),
    ];
    let upstream = prop_oneof![
        Just(String::new()),
        Just("...origin/main".to_owned()),
        Just("... [gone]".to_owned()),
        Just(" [ahead 1, behind 2]".to_owned()),
        "[^\n]{0,16}".prop_map(String::from),
    ];
    let rest = prop_oneof![
        Just(""),
        Just("\n M a.txt\n"),
        Just("\r\n?? b\n"),
        Just("\n## other\n")
    ];
    (prefix, name, upstream, rest).prop_map(|(p, n, u, r)| format!("{p}{n}{u}{r}"))
}

proptest! {
    #[test]
    fn parse_branch_never_panics(raw in any::<String>()) {
        check_branch(&raw);
    }

    #[test]
    fn parse_branch_reads_header_shaped_text(raw in header()) {
        check_branch(&raw);
    }

    #[test]
    fn normalized_paths_stay_in_the_workspace(input in "([a-zA-Z.:\\\\/ ]|\\.\\.|\\.git|\\.GIT|C:){0,12}|.{0,40}") {
        if let Ok(rel) = normalize(&input) {
            let text = rel.as_str();
            prop_assert!(!text.starts_with('/') && !text.contains('\\') && !text.contains('\0'));
            for part in text.split('/').filter(|_| !text.is_empty()) {
                prop_assert!(!part.is_empty() && part != "." && part != "..", "{text:?}");
                prop_assert!(!part.eq_ignore_ascii_case(".git"), "{text:?}");
            }
            if !text.is_empty() {
                prop_assert_eq!(normalize(text), Ok(rel));
            }
        }
    }
}

#[test]
fn large_status_output_is_read_in_linear_time() {
    let long_name = format!("## {}\n", "b".repeat(1024 * 1024));
    assert_eq!(parse_branch(&long_name).map(|n| n.len()), Some(1024 * 1024));
    for raw in [
        format!("## {}", "...".repeat(350_000)),
        format!("## {}", " ".repeat(1024 * 1024)),
        "\n".repeat(1024 * 1024),
        format!("## main\n{}", " M a\n".repeat(200_000)),
        "## No commits yet on ".repeat(50_000),
    ] {
        check_branch(&raw);
    }
    assert_eq!(
        parse_branch(&format!("## main\n{}", "## x\n".repeat(200_000))).as_deref(),
        Some("main")
    );
}
