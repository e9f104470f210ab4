//! The delivery corpus (`testkit::delivery`), small spec.

use std::path::Path;

use testkit::{DeliverySpec, generate_delivery};

fn git(dir: &Path, args: &[&str]) -> String {
    gitctx::GitCommand::new(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args(args)
        .run_text()
        .unwrap_or_else(|e| panic!("git {args:?}: {e}"))
}

#[test]
fn the_small_corpus_is_deterministic_and_fsck_clean() {
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    let a = generate_delivery(&one.path().join("repo"), &DeliverySpec::small()).unwrap();
    let b = generate_delivery(&two.path().join("repo"), &DeliverySpec::small()).unwrap();
    assert_eq!(
        git(&a.repo, &["rev-parse", "main"]),
        git(&b.repo, &["rev-parse", "main"])
    );
    assert_eq!(
        git(&a.repo, &["rev-parse", "refs/notes/ultragit"]),
        git(&b.repo, &["rev-parse", "refs/notes/ultragit"])
    );
    git(&a.repo, &["fsck", "--strict", "--no-progress"]);
    assert_eq!(git(&a.repo, &["status", "--porcelain"]), "");
    let count: usize = git(&a.repo, &["rev-list", "--all", "--count"])
        .trim()
        .parse()
        .unwrap();
    assert_eq!(count, a.commits + 1, "every commit and the notes commit");
    let merges: usize = git(&a.repo, &["rev-list", "--merges", "--count", "main"])
        .trim()
        .parse()
        .unwrap();
    assert_eq!(merges, a.merges);
    assert!(a.merges > 0);
}
