//! Snapshots of rendered guidance, with the temporary root replaced by
//! `[ROOT]`.

use std::path::Path;

use guidance::FamilyChoice;

use crate::{repo, resolve};

fn render(root: &Path, targets: &[&str]) -> String {
    let rendered = resolve(root, targets, FamilyChoice::Auto)
        .render()
        .expect("guidance found");
    rendered.replace(&root.display().to_string(), "[ROOT]")
}

#[test]
fn three_levels() {
    let root = repo(&[
        (
            "AGENTS.md",
            "# Repository\n\n- Run `cargo test` before committing.\n- Keep commits small.\n",
        ),
        (
            "frontend/AGENTS.md",
            "# Frontend\n\nUse TypeScript strict mode.\n\n",
        ),
        (
            "frontend/admin/AGENTS.override.md",
            "Admin pages need an access check.",
        ),
        ("frontend/admin/AGENTS.md", "shadowed by the override\n"),
        ("frontend/CLAUDE.md", "ignored: other family\n"),
        ("backend/AGENTS.md", "not on the chain\n"),
    ]);
    insta::assert_snapshot!(render(
        root.path(),
        &["frontend/admin/users.tsx", "frontend/admin/deleted.tsx"]
    ));
}

#[test]
fn claude_family() {
    let root = repo(&[
        ("CLAUDE.md", "Prefer small functions.\n"),
        ("crates/core/CLAUDE.md", "No panics in library code.\n"),
        ("crates/core/src/lib.rs", ""),
    ]);
    insta::assert_snapshot!(render(
        root.path(),
        &["crates/core/src/lib.rs", "crates/core/Cargo.toml"]
    ));
}
