//! Snapshots of what the model is shown.

#[test]
fn definitions() {
    insta::assert_json_snapshot!("definitions", repo_tools::definitions());
}
