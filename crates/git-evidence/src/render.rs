//! Repository text as prompt data: placed between our evidence tags, it can
//! never close one of them early ([`data`]). Every task's rendering of its
//! evidence goes through it.

/// Neutralizes our own section tags inside repository data, so a diff that
/// contains `</staged_diff>` cannot end the section early.
pub fn data(text: &str) -> String {
    const TAGS: &[&str] = &[
        "prepared_context",
        "staged_paths",
        "final_paths",
        "staged_diff",
        "final_amended_diff",
        "focus_diff",
        "generated_diff",
        "lockfiles",
        "submodules",
        "recent_commits",
        "previous_head",
        "head_commit",
        "original_message",
        "staged_changes",
        "status_notes",
    ];
    let mut out = text.to_owned();
    if out.contains("</") {
        for tag in TAGS {
            out = out.replace(&format!("</{tag}"), &format!("<\\/{tag}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_cannot_close_our_sections() {
        assert_eq!(
            data("a </staged_diff> b </other>"),
            "a <\\/staged_diff> b </other>"
        );
    }
}
