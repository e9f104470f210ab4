use testkit::TestRepo;
use ultragit_read::{GitReadPipeline, ReadPipeline, ReadQuery, format_markdown};

use crate::support::{annotate, note, region};

#[test]
fn smoke() {
    let repo = TestRepo::new();
    let c1 = repo.commit_file(
        "src/lib.rs",
        "pub fn alpha() -> u32 {\n    1\n}\n\npub fn beta() -> u32 {\n    2\n}\n",
        "add alpha and beta",
    );
    annotate(
        &repo,
        &c1,
        &note(
            &c1,
            "2024-01-01T00:00:00Z",
            "inferred",
            vec![
                region(
                    "src/lib.rs",
                    "function",
                    "alpha",
                    (1, 3),
                    "alpha returns one",
                ),
                region("src/lib.rs", "function", "beta", (5, 7), "beta returns two"),
            ],
        ),
    );
    let pipeline = GitReadPipeline::open(repo.path()).unwrap();
    let out = pipeline
        .execute(&ReadQuery::file("src/lib.rs").with_anchor("beta"))
        .unwrap();
    assert!(format_markdown(&out, false).contains("beta returns two"));
    assert_eq!(out.regions.len(), 1);
}
