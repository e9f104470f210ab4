//! The `^^^` block parser: every rule, table-driven.

use code_commit_core::parse::{Action, Block, ParseError, parse};

/// One line per block (`W line path content` / `D line path`) or per error, so a
/// table row reads like the response it describes.
fn render(result: &Result<Vec<Block>, Vec<ParseError>>) -> Vec<String> {
    match result {
        Ok(blocks) => blocks
            .iter()
            .map(|b| match &b.action {
                Action::Write(content) => format!("W {} {} {content:?}", b.line, b.path),
                Action::Delete => format!("D {} {}", b.line, b.path),
            })
            .collect(),
        Err(errors) => errors
            .iter()
            .map(|e| match e {
                ParseError::NoBlocks => "no blocks".to_owned(),
                ParseError::EmptyPath { line } => format!("empty path {line}"),
                ParseError::DecoratedPath { path, line } => format!("decorated {line} {path}"),
                ParseError::UnterminatedBeforeHeader {
                    path,
                    line,
                    next_line,
                } => format!("unterminated {line} {path} before {next_line}"),
                ParseError::UnterminatedAtEnd { path, line } => {
                    format!("unterminated {line} {path} at end")
                }
                ParseError::StrayTerminator { marker, line } => format!("stray {line} {marker}"),
                ParseError::DeleteAfterContent {
                    path,
                    line,
                    delete_line,
                } => format!("delete after content {line} {path} at {delete_line}"),
                ParseError::DuplicatePath {
                    path,
                    line,
                    first_line,
                } => format!("duplicate {line} {path} first {first_line}"),
                ParseError::WriteAndDelete {
                    path,
                    write_line,
                    delete_line,
                    ..
                } => format!("write {write_line} and delete {delete_line} {path}"),
                ParseError::Fenced { path, line } => format!("fenced {line} {path}"),
                ParseError::Elision {
                    path,
                    line,
                    elision_line,
                    ..
                } => format!("elision {line} {path} at {elision_line}"),
            })
            .collect(),
    }
}

fn check(response: &str, expected: &[&str]) {
    let got = render(&parse(response));
    assert_eq!(got, expected, "response:\n{response}");
}

#[test]
fn table() {
    let cases: &[(&str, &[&str])] = &[
        // Basic writes and deletes.
        (
            "^^^src/main.rs\nfn main() {}\n^^^end\n",
            &[r#"W 1 src/main.rs "fn main() {}\n""#],
        ),
        ("^^^old/file.rs\n^^^delete\n", &["D 1 old/file.rs"]),
        (
            "^^^a.rs\nx\n^^^end\n^^^b.rs\n^^^delete\n^^^c.rs\ny\n\nz\n^^^end",
            &[r#"W 1 a.rs "x\n""#, "D 4 b.rs", r#"W 6 c.rs "y\n\nz\n""#],
        ),
        // Empty files and blank content.
        ("^^^empty.txt\n^^^end\n", &[r#"W 1 empty.txt """#]),
        ("^^^blank.txt\n\n^^^end\n", &[r#"W 1 blank.txt "\n""#]),
        // Text outside blocks is ignored, fences outside markers too.
        (
            "Here is the change:\n```\n^^^a.rs\nx\n^^^end\n```\nThat's all.\n",
            &[r#"W 3 a.rs "x\n""#],
        ),
        // CRLF.
        (
            "^^^a.rs\r\nline 1\r\nline 2\r\n^^^end\r\n^^^b.rs\r\n^^^delete\r\n",
            &[r#"W 1 a.rs "line 1\nline 2\n""#, "D 5 b.rs"],
        ),
        // Terminator spellings, whitespace around header paths.
        ("^^^a.rs\nx\n^^^END\n", &[r#"W 1 a.rs "x\n""#]),
        ("^^^a.rs\nx\n^^^ end \t\n", &[r#"W 1 a.rs "x\n""#]),
        ("^^^ a.rs  \n^^^ DELETE\n", &["D 1 a.rs"]),
        ("^^^./end\nx\n^^^end\n", &[r#"W 1 ./end "x\n""#]),
        ("^^^ending.rs\nx\n^^^end\n", &[r#"W 1 ending.rs "x\n""#]),
        // Markers start at column 0; indented ones are content.
        (
            "^^^a.md\n  ^^^end\n ^^^b.rs\n^^^end\n",
            &[r#"W 1 a.md "  ^^^end\n ^^^b.rs\n""#],
        ),
        // No blocks.
        ("", &["no blocks"]),
        ("just prose, no blocks\n", &["no blocks"]),
        ("^^^end\n", &["stray 1 ^^^end", "no blocks"]),
        // Empty and decorated paths.
        ("^^^\nx\n^^^end\n", &["empty path 1"]),
        ("^^^   \n^^^delete\n", &["empty path 1"]),
        ("^^^`src/a.rs`\nx\n^^^end\n", &["decorated 1 `src/a.rs`"]),
        ("^^^[src/a.rs]\nx\n^^^end\n", &["decorated 1 [src/a.rs]"]),
        ("^^^**a.rs**\nx\n^^^end\n", &["decorated 1 **a.rs**"]),
        // Unterminated blocks.
        (
            "^^^a.rs\nx\n^^^b.rs\ny\n^^^end\n",
            &["unterminated 1 a.rs before 3"],
        ),
        ("^^^a.rs\nx\n", &["unterminated 1 a.rs at end"]),
        ("^^^a.rs\n", &["unterminated 1 a.rs at end"]),
        (
            "^^^a.rs\nx\n^^^\ny\n^^^end\n",
            &["unterminated 1 a.rs before 3", "empty path 3"],
        ),
        // Stray terminators.
        ("^^^a.rs\nx\n^^^end\n^^^end\n", &["stray 4 ^^^end"]),
        (
            "text\n^^^ Delete\n^^^a.rs\n^^^delete\n",
            &["stray 2 ^^^ Delete"],
        ),
        // Delete only directly after the header.
        (
            "^^^a.rs\nx\n^^^delete\n",
            &["delete after content 1 a.rs at 3"],
        ),
        (
            "^^^a.rs\n\n^^^delete\n",
            &["delete after content 1 a.rs at 3"],
        ),
        // Duplicates, after trimming and dropping ./.
        (
            "^^^a.rs\nx\n^^^end\n^^^./a.rs\ny\n^^^end\n",
            &["duplicate 4 ./a.rs first 1"],
        ),
        (
            "^^^src/a.rs\n^^^delete\n^^^ ././src/a.rs \n^^^delete\n",
            &["duplicate 3 ././src/a.rs first 1"],
        ),
        (
            "^^^a.rs\nx\n^^^end\n^^^a.rs\n^^^delete\n",
            &["write 1 and delete 4 a.rs"],
        ),
        (
            "^^^a.rs\n^^^delete\n^^^a.rs\nx\n^^^end\n",
            &["write 3 and delete 1 a.rs"],
        ),
        // Fences.
        (
            "^^^src/a.rs\n```rust\nfn a() {}\n```\n^^^end\n",
            &["fenced 1 src/a.rs"],
        ),
        ("^^^a.py\n~~~\nx = 1\n~~~\n^^^end\n", &["fenced 1 a.py"]),
        (
            "^^^README.md\n```rust\nfn a() {}\n```\n^^^end\n",
            &[r#"W 1 README.md "```rust\nfn a() {}\n```\n""#],
        ),
        (
            "^^^docs/Guide.MDX\n```\nx\n```\n^^^end\n",
            &[r#"W 1 docs/Guide.MDX "```\nx\n```\n""#],
        ),
        (
            "^^^a.rs\n/// ```\n/// a();\n/// ```\nfn a() {}\n^^^end\n",
            &[r#"W 1 a.rs "/// ```\n/// a();\n/// ```\nfn a() {}\n""#],
        ),
        // Elisions.
        (
            "^^^a.rs\nfn a() {}\n// ... rest of file ...\n^^^end\n",
            &["elision 1 a.rs at 3"],
        ),
        (
            "^^^README.md\n# Title\n<!-- rest of the file unchanged -->\n^^^end\n",
            &["elision 1 README.md at 3"],
        ),
        // Every problem is reported, in order.
        (
            "intro\n^^^end\n^^^a.rs\n```\nx\n```\n^^^end\n^^^b.rs\n# ... existing code ...\n^^^end\n^^^a.rs\n^^^delete\n^^^c.rs\nz\n",
            &[
                "stray 2 ^^^end",
                "fenced 3 a.rs",
                "elision 8 b.rs at 9",
                "write 3 and delete 11 a.rs",
                "unterminated 13 c.rs at end",
            ],
        ),
    ];
    assert!(cases.len() >= 25, "{} cases", cases.len());
    for (response, expected) in cases {
        check(response, expected);
    }
}

/// Lines that stand for omitted code.
#[test]
fn elisions_flagged() {
    let lines = [
        "// ... rest of file ...",
        "    # ... existing code ...",
        "/* ... unchanged ... */",
        "<!-- rest of the file unchanged -->",
        "... (rest unchanged)",
        "// remaining code unchanged",
        "// (existing implementation)",
        "    // ...existing code...",
        "// … rest of the implementation …",
        "# rest of the file",
        "-- remaining lines omitted",
        "    // ... other methods ...",
        "    // ... 40 lines omitted ...",
        "// Rest of code same as before",
        "{/* ... existing content ... */}",
        " * ... rest of the body ...",
        "    ...  # existing code",
        "// same as before",
        "; rest of file unchanged",
        "// [existing tests]",
    ];
    for line in lines {
        let response = format!("^^^src/a.rs\nfn a() {{}}\n{line}\n^^^end\n");
        match parse(&response) {
            Err(errors) => assert!(
                matches!(
                    errors.as_slice(),
                    [ParseError::Elision { elision_line: 3, text, .. }] if text == line.trim()
                ),
                "{line:?}: {errors:?}"
            ),
            Ok(_) => panic!("{line:?} is not flagged"),
        }
    }
}

/// Real code and ordinary comments are never elisions.
#[test]
fn elisions_not_flagged() {
    let lines = [
        "...",
        "    ...",
        "pass  # ...",
        "    pass  # ...",
        "    ..Default::default()",
        "let Foo { a, .. } = foo;",
        "    f(...args);",
        "const all = [...rest, ...others];",
        "    println!(\"...\");",
        "let s = \"rest of the file\";",
        "// handle the rest of the input...",
        "// Check other code paths",
        "// unchanged",
        "// ...",
        "# ...",
        "/* ... */",
        "#[derive(Debug)]",
        "#!/usr/bin/env python3",
        "// TODO: keep the existing behaviour for old clients",
        "    return rest",
        "// Les lignes restantes... é",
        "    for line in remaining_lines:",
        "x = [1, 2, ...]",
        "// Tests",
    ];
    for line in lines {
        let response = format!("^^^src/a.rs\nfn a() {{}}\n{line}\n^^^end\n");
        assert!(parse(&response).is_ok(), "{line:?}: {:?}", parse(&response));
    }
}

/// In markdown, `#` starts a heading and fences are content.
#[test]
fn markdown_headings_are_not_comments() {
    let response = "^^^docs/notes.md\n# Existing code\n\nSome text.\n^^^end\n";
    assert!(parse(response).is_ok(), "{:?}", parse(response));
}

/// Every message tells the model what to do.
#[test]
fn messages_are_instructions() {
    let message = |response: &str| -> String {
        parse(response)
            .expect_err("the response is rejected")
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let cases = [
        (
            "",
            "the response has no ^^^path … ^^^end blocks; reply with whole-file blocks",
        ),
        (
            "^^^a.rs\nx\n^^^b.rs\n^^^end\n",
            "unterminated block for a.rs (line 1): it needs ^^^end before the next block",
        ),
        (
            "^^^a.rs\n```rust\nx\n```\n^^^end\n",
            "the block for a.rs starts and ends with a markdown fence; put the ``` lines outside ^^^ markers",
        ),
        (
            "^^^a.rs\n// ... existing code ...\n^^^end\n",
            "write out the complete file",
        ),
        ("^^^a.rs\nx\n^^^end\n^^^a.rs\n^^^end\n", "lines 1 and 4"),
        ("^^^end\n", "must follow a ^^^path header"),
        (
            "^^^a.rs\nx\n^^^delete\n",
            "put ^^^delete on the line right after the header",
        ),
        ("^^^\n^^^end\n", "write the file's path right after ^^^"),
        ("^^^`a.rs`\n^^^end\n", "write the bare path"),
        (
            "^^^a.rs\n^^^delete\n^^^a.rs\n^^^end\n",
            "both written (line 3) and deleted (line 1)",
        ),
        ("^^^a.rs\nx", "close every block with a line ^^^end"),
    ];
    for (response, needle) in cases {
        let text = message(response);
        assert!(text.contains(needle), "{response:?}: {text}");
    }
}

/// A response without a final newline, and one that is only CRs and markers.
#[test]
fn line_endings() {
    check("^^^a.rs\nx\n^^^end", &[r#"W 1 a.rs "x\n""#]);
    check("^^^a.rs\r\n\r\n^^^end\r\n", &[r#"W 1 a.rs "\n""#]);
    // A lone CR inside a line is content.
    check("^^^a.txt\nx\ry\n^^^end\n", &[r#"W 1 a.txt "x\ry\n""#]);
}

/// Properties over arbitrary input: the parser never panics, and what it
/// returns grows at most linearly with what it was given.
mod properties {
    use proptest::prelude::*;

    use super::*;

    /// The bytes of everything `parse` returned: block paths and contents, or
    /// the displayed errors.
    fn output_bytes(result: &Result<Vec<Block>, Vec<ParseError>>) -> (usize, usize) {
        match result {
            Ok(blocks) => (
                blocks
                    .iter()
                    .map(|b| {
                        b.path.len()
                            + match &b.action {
                                Action::Write(content) => content.len(),
                                Action::Delete => 0,
                            }
                    })
                    .sum(),
                blocks.len(),
            ),
            Err(errors) => (
                errors.iter().map(|e| e.to_string().len()).sum(),
                errors.len(),
            ),
        }
    }

    /// Asserts the bounds for `input`.
    fn check_bounds(input: &str) {
        let result = parse(input);
        let lines = input.split('\n').count();
        let (bytes, count) = output_bytes(&result);
        assert!(count <= lines + 1, "{count} items from {lines} lines");
        match &result {
            // Paths and contents are pieces of the input; each content gains at
            // most one final newline.
            Ok(blocks) => {
                assert!(!blocks.is_empty());
                assert!(bytes <= input.len() + count, "{bytes} > {}", input.len());
                for block in blocks {
                    assert!(block.line >= 1 && block.line <= lines);
                }
            }
            // Each error is a fixed instruction plus pieces of the input (a path
            // may be named twice).
            Err(errors) => {
                assert!(!errors.is_empty());
                assert!(
                    bytes <= count * 1024 + 3 * input.len(),
                    "{bytes} bytes of errors for {} bytes of input",
                    input.len()
                );
            }
        }
    }

    /// Fragments that exercise every rule when glued together at random.
    const FRAGMENTS: &[&str] = &[
        "^^^",
        "^^^end",
        "^^^END ",
        "^^^delete",
        "^^^ delete",
        "^^^a.rs",
        "^^^./a.rs",
        "^^^b/c.md",
        "^^^`x.rs`",
        "^^^[y]",
        "^^^**z**",
        "^^^./end",
        "\n",
        "\n",
        "\n",
        "\r\n",
        "\r",
        "```",
        "```rust",
        "~~~",
        "// ... rest of file ...",
        "# existing code",
        "...",
        "…",
        "<!-- rest unchanged -->",
        "fn main() {}",
        " ",
        "é",
        "\u{202e}",
        "\0",
        "^",
        "^^",
        "^^^^^^",
        "\t",
    ];

    fn glued() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(FRAGMENTS), 0..200)
            .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn arbitrary_strings(input in any::<String>()) {
            check_bounds(&input);
        }

        #[test]
        fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
            check_bounds(&String::from_utf8_lossy(&bytes));
        }

        #[test]
        fn marker_soup(input in glued()) {
            check_bounds(&input);
        }
    }

    #[test]
    fn many_markers() {
        // 200,000 headers, none terminated.
        let headers: String = (0..200_000).map(|i| format!("^^^f{i}.rs\n")).collect();
        check_bounds(&headers);
        // 100,000 blocks for the same path.
        check_bounds(&"^^^a.rs\nx\n^^^end\n".repeat(100_000));
        // 300,000 stray terminators, and markers with nothing else.
        check_bounds(&"^^^end\n".repeat(300_000));
        check_bounds(&"^^^\n".repeat(300_000));
        // Valid blocks, many: every one comes back.
        let valid: String = (0..50_000)
            .map(|i| format!("^^^d/f{i}.rs\nline\n^^^end\n"))
            .collect();
        let blocks = parse(&valid).unwrap();
        assert_eq!(blocks.len(), 50_000);
        check_bounds(&valid);
    }

    #[test]
    fn huge_lines() {
        let huge = "x".repeat(4 * 1024 * 1024);
        // A 4 MiB path, a 4 MiB content line, a 4 MiB comment that looks
        // like the start of an elision, a 4 MiB line of carets.
        check_bounds(&format!("^^^{huge}\nbody\n^^^end\n"));
        check_bounds(&format!("^^^a.rs\n{huge}\n^^^end\n"));
        check_bounds(&format!(
            "^^^a.rs\n// ... rest {}\n^^^end\n",
            "of the ".repeat(512 * 1024)
        ));
        check_bounds(&"^".repeat(4 * 1024 * 1024));
        check_bounds(&format!("```\n^^^a.rs\n```\n{huge}\n```\n^^^end\n```\n"));
        // No newline at all, lots of carriage returns.
        check_bounds(&"\r".repeat(4 * 1024 * 1024));
    }
}
