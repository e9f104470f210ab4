//! The crate as an outside project uses it: only the public API (and testkit to
//! make a repository).

use testkit::TestRepo;

#[test]
fn an_outside_project_reads_context_through_the_public_api() {
    let lib = "pub fn answer() -> u32 {\n    42\n}\n";
    let repo = TestRepo::with_commit(&[("src/lib.rs", lib)], "answer");
    let commit = repo.rev_parse("HEAD");
    let note = format!(
        r#"{{"$schema":"ultragit/v1","commit":"{commit}","timestamp":"2024-01-01T00:00:00Z","task":null,
        "summary":"answer","context_level":"enhanced","cross_cutting":[],
        "provenance":{{"operation":"initial","original_annotations_preserved":false}},
        "regions":[{{"file":"src/lib.rs","ast_anchor":{{"type":"function","name":"answer"}},
        "lines":{{"start":1,"end":3}},"intent":"The answer the protocol expects.",
        "constraints":[{{"text":"Must stay 42: clients hard-code it.","source":"author"}}]}}]}}"#
    );
    gitctx::Repo::discover(repo.path())
        .unwrap()
        .notes(ultragit_read::NOTES_REF)
        .unwrap()
        .write(commit.parse().unwrap(), &note)
        .unwrap();

    use ultragit_read::{Format, GitReadPipeline, ReadPipeline, ReadQuery};
    let pipeline = GitReadPipeline::open(repo.path()).expect("a repository");
    let query = ReadQuery::file("src/lib.rs").with_anchor("answer");
    let output = pipeline.execute(&query).expect("a read");
    assert_eq!(output.regions.len(), 1);
    assert_eq!(
        output.regions[0].region.intent,
        "The answer the protocol expects."
    );
    let markdown = ultragit_read::render(&output, Format::Markdown, false);
    assert!(
        markdown.contains(": The answer the protocol expects.\n"),
        "{markdown}"
    );
    assert!(
        markdown.contains("## Constraints\n\n- Must stay 42: clients hard-code it. (`"),
        "{markdown}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&ultragit_read::format_json(&output, false)).unwrap();
    assert_eq!(json["$schema"], "ultragit-read/v1");
    assert_eq!(json["regions"][0]["confidence"], 1.0);

    // A pipeline is a trait object, so a project can substitute its own.
    let boxed: Box<dyn ReadPipeline> = Box::new(pipeline);
    let err = boxed
        .execute(&ReadQuery::file("src/missing.rs"))
        .unwrap_err();
    assert_eq!(err.body().error.code.as_str(), "file_not_found");
}
