//! The generic outline walker, driven by a [`LanguageSpec`].

use std::fmt;
use std::path::Path;

use tree_sitter::{Node, Parser};

use crate::lang::{ContainerRole, Language, LanguageSpec, Scope, collapsed, last_row, text};
use crate::{LineSpan, Unit, UnitKind};

/// Signatures longer than this many characters are cut and end in `…`.
pub const MAX_SIGNATURE_CHARS: usize = 300;

/// Containers nested deeper than this are listed but not entered: real code
/// never gets close, and it bounds the walker's recursion on hostile input.
const MAX_DEPTH: usize = 64;

/// Why no outline could be produced.
#[derive(Debug, thiserror::Error)]
pub enum OutlineError {
    /// No grammar handles the path's extension. Callers fall back to
    /// line-range-only mode.
    #[error("no grammar for {}", NoGrammarSubject { path, extension: extension.as_deref() })]
    NoGrammar {
        /// The path as the caller gave it.
        path: String,
        /// Its extension without the dot, if it has one.
        extension: Option<String>,
    },
    /// The grammar could not be loaded into a parser (an ABI mismatch between
    /// tree-sitter and the grammar crate: a build problem, not bad input).
    #[error("cannot load the tree-sitter grammar for {language}: {message}")]
    Grammar {
        /// The language's name.
        language: &'static str,
        /// tree-sitter's description of the problem (its error type is not
        /// part of this crate's API).
        message: String,
    },
    /// tree-sitter returned no tree.
    #[error("tree-sitter could not parse the {language} source")]
    ParseFailed {
        /// The language's name.
        language: &'static str,
    },
}

/// `.toml files (src/config.toml)` or `files without an extension (Makefile)`.
struct NoGrammarSubject<'a> {
    path: &'a str,
    extension: Option<&'a str>,
}

impl fmt::Display for NoGrammarSubject<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.extension {
            Some(extension) => write!(f, ".{extension} files ({})", self.path),
            None => write!(f, "files without an extension ({})", self.path),
        }
    }
}

/// The outline of `source`, in the language picked from `path`'s extension.
///
/// `path` is only used to choose the language; nothing is read from disk.
pub fn outline(path: &str, source: &str) -> Result<Vec<Unit>, OutlineError> {
    match Language::from_path(path) {
        Some(language) => outline_for(language, source),
        None => Err(no_grammar(path)),
    }
}

/// The outline of `source` in `language`: its units in source order, each
/// container before its members.
///
/// Syntax errors do not fail: tree-sitter recovers, and the units it could
/// still recognise (including those inside error nodes) are listed.
pub fn outline_for(language: Language, source: &str) -> Result<Vec<Unit>, OutlineError> {
    Ok(parse_for(language, source)?.units)
}

/// An outline with what carrying it forward to a later version of the file
/// ([`carry`](crate::carry)) needs to know of its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outline {
    /// The units, as [`outline`] lists them.
    pub units: Vec<Unit>,
    /// No syntax error anywhere in the source (no error or missing node in
    /// tree-sitter's tree). Only such an outline can be carried forward.
    pub clean: bool,
    /// The lines of the file's top-level syntax nodes that cover more than
    /// one line (units, and what holds them: a C `#ifdef` block, a C++
    /// `extern "C" { … }`, a multi-line comment), those sharing a line
    /// merged, in order. A carry only cuts the file between them.
    pub top_level: Vec<LineSpan>,
}

/// [`outline`], with what [`carry`](crate::carry) needs: whether the
/// source parsed without a syntax error, and where its top-level nodes lie.
pub fn parse(path: &str, source: &str) -> Result<Outline, OutlineError> {
    match Language::from_path(path) {
        Some(language) => parse_for(language, source),
        None => Err(no_grammar(path)),
    }
}

/// [`parse`] with the language given.
pub fn parse_for(language: Language, source: &str) -> Result<Outline, OutlineError> {
    parse_with(&mut parser(language)?, language, source)
}

/// The error for a path no grammar handles.
pub(crate) fn no_grammar(path: &str) -> OutlineError {
    OutlineError::NoGrammar {
        path: path.to_owned(),
        extension: Path::new(path)
            .extension()
            .map(|extension| extension.to_string_lossy().into_owned()),
    }
}

/// A parser loaded with `language`'s grammar.
pub(crate) fn parser(language: Language) -> Result<Parser, OutlineError> {
    let spec = language.spec();
    let mut parser = Parser::new();
    parser
        .set_language(&(spec.grammar)())
        .map_err(|error| OutlineError::Grammar {
            language: spec.name,
            message: error.to_string(),
        })?;
    Ok(parser)
}

/// Parses `source` with `parser` (loaded with `language`'s grammar) and walks
/// the tree.
pub(crate) fn parse_with(
    parser: &mut Parser,
    language: Language,
    source: &str,
) -> Result<Outline, OutlineError> {
    let spec = language.spec();
    let tree = parser
        .parse(source, None)
        .ok_or(OutlineError::ParseFailed {
            language: spec.name,
        })?;
    let root = tree.root_node();
    let mut walker = Walker {
        spec,
        source,
        prefix: (spec.hooks.file_qualifier)(root, source)
            .into_iter()
            .collect(),
        units: Vec::new(),
    };
    walker.items(root, Scope { container: None }, 0);
    Ok(Outline {
        units: walker.units,
        clean: !root.has_error(),
        top_level: top_level(root),
    })
}

/// The lines of `root`'s children that cover more than one line, merged
/// where they share a line.
fn top_level(root: Node<'_>) -> Vec<LineSpan> {
    let mut spans: Vec<LineSpan> = Vec::new();
    let mut cursor = root.walk();
    for child in root.children(&mut cursor) {
        let (start, end) = (child.start_position().row, last_row(child));
        if end <= start {
            continue;
        }
        let span = LineSpan {
            start: line_number(start),
            end: line_number(end),
        };
        match spans.last_mut() {
            Some(last) if span.start <= last.end => last.end = last.end.max(span.end),
            _ => spans.push(span),
        }
    }
    spans
}

struct Walker<'s> {
    spec: &'static LanguageSpec,
    source: &'s str,
    /// Qualifiers of the enclosing containers.
    prefix: Vec<String>,
    units: Vec<Unit>,
}

impl Walker<'_> {
    /// Lists the units among `parent`'s children in order, each container
    /// followed by its members.
    fn items(&mut self, parent: Node<'_>, scope: Scope, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let mut cursor = parent.walk();
        for child in parent.named_children(&mut cursor) {
            if child.is_error() || self.spec.is_transparent(child.kind()) {
                // Recovered items often sit inside an ERROR node.
                self.items(child, scope, depth + 1);
                continue;
            }
            let node = match self.spec.wrapped_field(child.kind()) {
                Some(field) => match child.child_by_field_name(field) {
                    Some(wrapped) => wrapped,
                    None => continue,
                },
                None => child,
            };
            self.unit(child, node, scope, depth);
        }
    }

    /// Lists `node` (whose lines start at `outer`) if it is a unit, and its
    /// members if it is a container.
    fn unit(&mut self, outer: Node<'_>, node: Node<'_>, scope: Scope, depth: usize) {
        let spec = self.spec;
        let (kind, node) = match spec.unit_kind(node.kind()) {
            Some(kind) => (kind, node),
            None => match (spec.hooks.extra_unit)(node, self.source, scope) {
                Some(found) => found,
                None => return,
            },
        };
        let owner = (spec.hooks.owner)(node, self.source);
        let kind = match (kind, scope.container, &owner) {
            (UnitKind::Function, Some(ContainerRole::Type), _)
            | (UnitKind::Function, _, Some(_)) => UnitKind::Method,
            (kind, _, _) => kind,
        };
        let name = (spec.hooks.unit_name)(node, self.source).unwrap_or_else(|| {
            node.child_by_field_name("name")
                .map(|name| collapsed(text(name, self.source)))
                .unwrap_or_default()
        });
        // A missing name means tree-sitter recovered from an error; `_` is
        // Rust's anonymous `const _: () = …;`. Neither can be an anchor.
        if name.is_empty() || name == "_" {
            return;
        }
        let qualified_name = self.qualify(owner.as_deref(), &name);
        let first = (spec.hooks.leading)(outer);
        self.units.push(Unit {
            kind,
            name: name.clone(),
            qualified_name,
            signature: signature(spec, node, self.source),
            lines: LineSpan {
                start: line_number(first.start_position().row),
                end: line_number(last_row(outer)),
            },
        });

        let Some(role) = spec.container_role(node.kind()) else {
            return;
        };
        let Some(body) = node.child_by_field_name(spec.body_field) else {
            return;
        };
        let qualifier = (spec.hooks.qualifier)(node, self.source).unwrap_or(name);
        self.prefix.push(qualifier);
        self.items(
            body,
            Scope {
                container: Some(role),
            },
            depth + 1,
        );
        self.prefix.pop();
    }

    /// `name` behind the enclosing containers' qualifiers and its owner, if
    /// any, joined by the language's separator.
    fn qualify(&self, owner: Option<&str>, name: &str) -> String {
        let segments: Vec<&str> = self
            .prefix
            .iter()
            .map(String::as_str)
            .chain(owner)
            .chain([name])
            .collect();
        segments.join(self.spec.separator)
    }
}

/// The declaration text of `node` up to its body (or, for bodiless items, up
/// to the first stop token), whitespace collapsed, comments between the
/// declaration and the body left out, capped at [`MAX_SIGNATURE_CHARS`].
fn signature(spec: &LanguageSpec, node: Node<'_>, source: &str) -> String {
    if let Some(special) = (spec.hooks.signature)(node, source) {
        return cap(collapsed(&special));
    }
    let mut end = node.start_byte();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        let kind = child.kind();
        if child.is_named() && spec.body_kinds.contains(&kind) {
            break;
        }
        if !child.is_named() && spec.signature_stops.contains(&kind) {
            break;
        }
        if spec.comment_kinds.contains(&kind)
            || (!child.is_named() && spec.signature_trailing.contains(&kind))
        {
            continue;
        }
        end = child.end_byte();
    }
    let declaration = source.get(node.start_byte()..end).unwrap_or("");
    cap(collapsed(declaration))
}

fn cap(signature: String) -> String {
    match signature.char_indices().nth(MAX_SIGNATURE_CHARS - 1) {
        Some((cut, _)) if signature.chars().count() > MAX_SIGNATURE_CHARS => {
            let mut capped = signature[..cut].trim_end().to_owned();
            capped.push('…');
            capped
        }
        _ => signature,
    }
}

/// 0-based row → 1-based line, saturating on absurdly long files.
fn line_number(row: usize) -> u32 {
    u32::try_from(row).map_or(u32::MAX, |row| row.saturating_add(1))
}

#[cfg(test)]
mod tests {
    use super::{MAX_SIGNATURE_CHARS, cap};

    #[test]
    fn cap_keeps_short_signatures() {
        assert_eq!(cap("fn f()".to_owned()), "fn f()");
        let exact = "x".repeat(MAX_SIGNATURE_CHARS);
        assert_eq!(cap(exact.clone()), exact);
    }

    #[test]
    fn cap_cuts_on_characters() {
        let long = "ü".repeat(MAX_SIGNATURE_CHARS + 10);
        let capped = cap(long);
        assert_eq!(capped.chars().count(), MAX_SIGNATURE_CHARS);
        assert!(capped.ends_with('…'));
    }
}
