//! A guess at an anchor's lines from the file's text alone, so that its
//! blame can start while tree-sitter is still parsing the file (on a large
//! file the parse costs about as much as the blame).
//!
//! The guess never decides what is read: the blame of the guessed lines goes
//! into the blame cache, and the read then asks the cache for the lines the
//! outline gives. Blame decides every line on its own (no `-M`/`-C`), so a
//! line's blame does not depend on which range it was asked in: lines the
//! guess covered are served, lines it missed are blamed then. A wrong guess
//! costs time (a second, smaller blame, or a few lines too many), never
//! exactness.
//!
//! The guess: the lines that *define* the anchor's last name segment (a
//! definition keyword before it — `fn`, `def`, `func`, `class`, … — or, for
//! C-like code, the name followed by `(` on a line that does not end in `;`
//! and is not a call inside a body, i.e. is not indented), each extended up
//! over the comment, attribute and decorator lines above it, and down to the
//! line where its braces close (or, without braces, to the last line indented
//! deeper than the definition), with a margin of [`MARGIN`] lines. At most
//! [`MAX_DEFINITIONS`] definitions; otherwise, or when nothing is found, no
//! guess.

/// Lines added on each side of a guessed definition.
pub(crate) const MARGIN: u32 = 2;
/// More definitions of the same name than this: no guess (the union would
/// blame too much).
const MAX_DEFINITIONS: usize = 4;
/// A definition spanning more lines than this is not followed to its end.
const MAX_SPAN: usize = 20_000;
/// Keywords that introduce a named definition, in the supported languages.
const KEYWORDS: &[&str] = &[
    "fn",
    "def",
    "func",
    "function",
    "class",
    "struct",
    "enum",
    "trait",
    "impl",
    "interface",
    "type",
    "mod",
    "union",
    "namespace",
    "record",
];

/// The guessed lines (1-based, inclusive) of `anchor` in `text`, or `None`.
/// `path` only tells whether blocks end by indentation (`.py`, `.pyi`).
pub(crate) fn guess_lines(path: &str, text: &str, anchor: &str) -> Option<(u32, u32)> {
    let by_indent = path.ends_with(".py") || path.ends_with(".pyi");
    let name = last_segment(anchor);
    if name.is_empty() || !name.bytes().all(is_ident) {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut spans = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        if !line.contains(name) || !defines(line, name) {
            continue;
        }
        if spans.len() == MAX_DEFINITIONS {
            return None;
        }
        spans.push((start_of(&lines, at), end_of(&lines, at, by_indent)?));
    }
    let start = spans.iter().map(|s| s.0).min()?;
    let end = spans.iter().map(|s| s.1).max()?;
    // Definitions far apart (`new` in several impls): their union would
    // blame much more than they span; no guess.
    let spanned: usize = spans.iter().map(|s| s.1 - s.0 + 1).sum();
    if end - start + 1 > 2 * spanned + 20 {
        return None;
    }
    let first = (start as u32 + 1).saturating_sub(MARGIN).max(1);
    let last = (end as u32 + 1 + MARGIN).min(lines.len() as u32);
    (first <= last).then_some((first, last))
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

fn last_segment(anchor: &str) -> &str {
    let anchor = anchor.trim();
    let after = anchor.rsplit("::").next().unwrap_or(anchor);
    after.rsplit('.').next().unwrap_or(after)
}

/// Whether `line` defines `name`: a definition keyword right before it, or
/// (C, C++, Java) an unindented line with `name(` that is no statement.
fn defines(line: &str, name: &str) -> bool {
    let bytes = line.as_bytes();
    let mut from = 0;
    while let Some(found) = line[from..].find(name) {
        let at = from + found;
        let end = at + name.len();
        from = end;
        let whole =
            (at == 0 || !is_ident(bytes[at - 1])) && bytes.get(end).is_none_or(|&b| !is_ident(b));
        if !whole {
            continue;
        }
        let before = line[..at].trim_end();
        let keyword = before
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .next()
            .unwrap_or_default();
        if KEYWORDS.contains(&keyword) {
            return true;
        }
        let after = line[end..].trim_start();
        let unindented = !line.starts_with([' ', '\t']);
        let statement = line.trim_end().ends_with(';');
        if unindented && after.starts_with('(') && !statement && !before.ends_with('=') {
            return true;
        }
    }
    false
}

/// The first line of the comments, attributes and decorators right above
/// the definition on line `at` (0-based).
fn start_of(lines: &[&str], at: usize) -> usize {
    let mut start = at;
    while start > 0 {
        let above = lines[start - 1].trim_start();
        let annotation = ["//", "/*", "*", "#", "@", "--"]
            .iter()
            .any(|p| above.starts_with(p));
        if !annotation || above.is_empty() {
            break;
        }
        start -= 1;
    }
    start
}

/// The last line (0-based) of the definition on line `at`. By indentation
/// (Python, `by_indent`): the last line indented deeper than the definition
/// before one that is not, lines inside open brackets aside. Otherwise
/// where its braces close; a definition that opens no brace before a line
/// indented no deeper than it (outside brackets) ended on the line before.
fn end_of(lines: &[&str], at: usize, by_indent: bool) -> Option<usize> {
    let indent = indent_of(lines[at]);
    let mut braces = 0i64;
    let mut brackets = 0i64;
    let mut opened = false;
    let mut last_deeper = at;
    for (k, line) in lines.iter().enumerate().skip(at).take(MAX_SPAN) {
        if k > at && !line.trim().is_empty() {
            if brackets > 0 || indent_of(line) > indent {
                last_deeper = k;
            } else if by_indent || (!opened && !line.trim_start().starts_with('{')) {
                // The block ended (a brace on a line of its own opens a C
                // body instead).
                return Some(last_deeper);
            }
        }
        for b in line.bytes() {
            match b {
                b'{' if !by_indent => {
                    braces += 1;
                    opened = true;
                }
                b'}' if !by_indent => braces -= 1,
                b'(' | b'[' => brackets += 1,
                b')' | b']' => brackets -= 1,
                _ => {}
            }
        }
        if opened && braces <= 0 {
            return Some(k);
        }
        if !by_indent && !opened && brackets <= 0 && line.trim_end().ends_with(';') {
            return Some(k);
        }
    }
    (by_indent || !opened).then_some(last_deeper)
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_functions_and_methods_with_their_docs() {
        let text = "use std::io;\n\n/// Docs.\n#[inline]\npub fn connect(x: u32) -> u32 {\n    let y = connect_inner(x);\n    y\n}\n\nimpl Client {\n    fn send(&self) {\n        if true { connect(1); }\n    }\n}\n";
        // Lines 3–8, with the margin: 1–10.
        assert_eq!(guess_lines("x.rs", text, "connect"), Some((1, 10)));
        // The method: lines 11–13, margin 9–14 (the file has 14 lines).
        assert_eq!(guess_lines("x.rs", text, "Client::send"), Some((9, 14)));
        assert_eq!(guess_lines("x.rs", text, "nowhere"), None);
    }

    #[test]
    fn go_methods_are_definitions() {
        let text = "package store\n\nfunc (s *Store) Get(k string) string {\n\treturn s.m[k]\n}\n";
        assert_eq!(guess_lines("x.go", text, "Store.Get"), Some((1, 5)));
    }

    #[test]
    fn c_definitions_not_calls_or_prototypes() {
        let text = "static void helper(int a);\n\nstatic void builtin_diff(const char *name_a,\n\t\t\t const char *name_b)\n{\n\thelper(1);\n\tif (x) {\n\t\ty();\n\t}\n}\n\nint main(void)\n{\n\tbuiltin_diff(\"a\",\n\t\t\"b\");\n\treturn 0;\n}\n";
        assert_eq!(guess_lines("x.c", text, "builtin_diff"), Some((1, 12)));
        // A prototype and calls define nothing.
        assert_eq!(guess_lines("x.c", text, "helper"), None);
    }

    #[test]
    fn python_blocks_end_by_indentation() {
        let text = "import os\n\n@cached\ndef load(path):\n    with open(path) as f:\n        return f.read()\n\n\ndef other():\n    pass\n";
        assert_eq!(guess_lines("x.py", text, "load"), Some((1, 8)));
    }

    #[test]
    fn too_many_definitions_or_odd_anchors_give_no_guess() {
        let many: String = (0..5).map(|_| "fn f() {}\n").collect();
        assert_eq!(guess_lines("x.rs", &many, "f"), None);
        assert_eq!(
            guess_lines("x.rs", "impl Display for Foo {}\n", "Display for Foo"),
            None
        );
        assert_eq!(guess_lines("x.rs", "", "f"), None);
        // An unclosed brace at the end of the file is no guess.
        assert_eq!(guess_lines("x.rs", "fn f() {\n  x\n", "f"), None);
    }

    proptest::proptest! {
        /// Whatever the text (it is the repository's, untrusted), a guess
        /// never panics and names lines of the file.
        #[test]
        fn any_text_gives_no_guess_or_lines_of_the_file(
            text in "(fn |def |static int |[a-z_]{1,3}|[(){}\\[\\];:. \t\n#/*@é]){0,200}",
            anchor in "[a-z_:.]{0,6}",
            python in proptest::bool::ANY,
        ) {
            let path = if python { "x.py" } else { "x.rs" };
            if let Some((start, end)) = guess_lines(path, &text, &anchor) {
                let lines = text.lines().count() as u32;
                proptest::prop_assert!(1 <= start && start <= end && end <= lines, "{start}-{end} of {lines}");
            }
        }
    }
}
