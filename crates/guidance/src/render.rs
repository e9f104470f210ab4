//! The Codex-style text wrapper around the found sources.

use std::fmt::Write as _;

use crate::{Guidance, Source};

impl Guidance {
    /// The guidance as prompt text, or `None` when there are no sources:
    ///
    /// ```text
    /// # AGENTS.md instructions for /absolute/target/dir
    ///
    /// <INSTRUCTIONS>
    /// <PROJECT_DOC path="AGENTS.md">
    /// …text…
    /// </PROJECT_DOC>
    ///
    /// <PROJECT_DOC path="frontend/AGENTS.md">
    /// …text…
    /// [… truncated: 100 of 5000 bytes shown]
    /// </PROJECT_DOC>
    /// </INSTRUCTIONS>
    /// ```
    ///
    /// The heading says `AGENTS.md instructions` for either family. Each
    /// text has its trailing whitespace replaced by exactly one newline; a
    /// truncated source gets the marker line after its text (alone, when
    /// nothing of it fit the total budget). `&`, `"`, `<` and `>` in a path
    /// attribute are escaped as XML entities; the texts are inserted as they
    /// are. The output ends with a newline.
    pub fn render(&self) -> Option<String> {
        if self.sources.is_empty() {
            return None;
        }
        let mut out = format!(
            "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\n",
            self.target.display()
        );
        for (index, source) in self.sources.iter().enumerate() {
            if index > 0 {
                out.push('\n');
            }
            render_doc(&mut out, source);
        }
        out.push_str("</INSTRUCTIONS>\n");
        Some(out)
    }
}

fn render_doc(out: &mut String, source: &Source) {
    out.push_str("<PROJECT_DOC path=\"");
    escape_attribute(out, &source.path);
    out.push_str("\">\n");
    let body = source.text.trim_end();
    if !body.is_empty() {
        out.push_str(body);
        out.push('\n');
    }
    if source.truncated {
        // Writing to a String cannot fail.
        let _ = writeln!(
            out,
            "[… truncated: {} of {} bytes shown]",
            source.text.len(),
            source.file_len
        );
    }
    out.push_str("</PROJECT_DOC>\n");
}

fn escape_attribute(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
}
