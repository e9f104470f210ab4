//! Exact rendering.

use guidance::{Family, FamilyChoice, Guidance, Options, Source};

use crate::{repo, resolve, resolve_with};

#[test]
fn two_levels_render_exactly() {
    let root = repo(&[
        ("AGENTS.md", "Root rules.\n\n\n"),
        ("frontend/AGENTS.md", "Frontend rules.\nSecond line."),
        ("frontend/app.tsx", ""),
    ]);
    let found = resolve(root.path(), &["frontend/app.tsx"], FamilyChoice::Auto);
    let expected = format!(
        "# AGENTS.md instructions for {}\n\
         \n\
         <INSTRUCTIONS>\n\
         <PROJECT_DOC path=\"AGENTS.md\">\n\
         Root rules.\n\
         </PROJECT_DOC>\n\
         \n\
         <PROJECT_DOC path=\"frontend/AGENTS.md\">\n\
         Frontend rules.\n\
         Second line.\n\
         </PROJECT_DOC>\n\
         </INSTRUCTIONS>\n",
        root.path().join("frontend").display()
    );
    assert_eq!(found.render().as_deref(), Some(expected.as_str()));
}

#[test]
fn claude_family_keeps_the_agents_md_heading() {
    let root = repo(&[("CLAUDE.md", "Claude rules.\n")]);
    let found = resolve(root.path(), &[], FamilyChoice::Auto);
    assert_eq!(found.family, Some(Family::Claude));
    let expected = format!(
        "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\n<PROJECT_DOC path=\"CLAUDE.md\">\nClaude rules.\n</PROJECT_DOC>\n</INSTRUCTIONS>\n",
        root.path().display()
    );
    assert_eq!(found.render().unwrap(), expected);
}

#[test]
fn truncation_markers() {
    let root = repo(&[
        ("AGENTS.md", "0123456789abcdef\n"),
        ("x/AGENTS.md", "second file\n"),
    ]);
    let options = Options {
        max_file_bytes: 10,
        max_total_bytes: 10,
    };
    let found = resolve_with(root.path(), &["x/y"], FamilyChoice::Auto, &options);
    let expected = format!(
        "# AGENTS.md instructions for {}\n\
         \n\
         <INSTRUCTIONS>\n\
         <PROJECT_DOC path=\"AGENTS.md\">\n\
         0123456789\n\
         [… truncated: 10 of 17 bytes shown]\n\
         </PROJECT_DOC>\n\
         \n\
         <PROJECT_DOC path=\"x/AGENTS.md\">\n\
         [… truncated: 0 of 12 bytes shown]\n\
         </PROJECT_DOC>\n\
         </INSTRUCTIONS>\n",
        root.path().join("x").display()
    );
    assert_eq!(found.render().unwrap(), expected);
}

#[test]
fn nothing_is_rendered_without_sources() {
    let root = repo(&[("AGENTS.md", "rules\n")]);
    let found = resolve(root.path(), &[], FamilyChoice::None);
    assert!(found.is_empty());
    assert_eq!(found.family, None);
    assert_eq!(found.render(), None);
}

#[test]
fn path_attributes_are_escaped() {
    let guidance = Guidance {
        family: Some(Family::Agents),
        sources: vec![Source {
            path: "a\"b&<c>/AGENTS.md".to_owned(),
            text: "x".to_owned(),
            truncated: false,
            file_len: 1,
        }],
        target: "/r".into(),
    };
    assert_eq!(
        guidance.render().unwrap(),
        "# AGENTS.md instructions for /r\n\n<INSTRUCTIONS>\n\
         <PROJECT_DOC path=\"a&quot;b&amp;&lt;c&gt;/AGENTS.md\">\nx\n</PROJECT_DOC>\n\
         </INSTRUCTIONS>\n"
    );
}

#[test]
fn leading_whitespace_is_kept_and_trailing_whitespace_becomes_one_newline() {
    let root = repo(&[("AGENTS.md", "\n  indented\r\n \t\n")]);
    let rendered = resolve(root.path(), &[], FamilyChoice::Auto)
        .render()
        .unwrap();
    assert!(
        rendered.contains("<PROJECT_DOC path=\"AGENTS.md\">\n\n  indented\n</PROJECT_DOC>\n"),
        "{rendered}"
    );
}
