//! The language table: one [`LanguageSpec`] per supported language.
//!
//! Everything the generic walker in [`crate::extract`] needs to know about a
//! grammar lives in its spec: which node kinds are units, which are containers
//! whose members get qualified names, where bodies are, and a few small hooks
//! for what a table cannot say. Adding a language means one file here with
//! its `SPEC`, one [`Language`] variant, and one arm in [`Language::spec`].

mod c;
mod cpp;
mod go;
mod java;
mod javascript;
mod python;
mod rust;
mod typescript;

use std::fmt;
use std::path::Path;

use tree_sitter::Node;

use crate::UnitKind;

/// The version of the extraction rules (the walker and the language table):
/// bumped by every change that can change an outline of the same source, so
/// that cached outlines ([`Language::outline_version`]) are not used across it.
pub const RULES_VERSION: u32 = 1;

/// A language the crate has a tree-sitter grammar for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    /// Rust (`.rs`).
    Rust,
    /// Python (`.py`, `.pyi`).
    Python,
    /// C (`.c`, `.h`).
    C,
    /// C++ (`.cc`, `.cpp`, `.cxx`, `.hpp`, `.hh`, `.hxx`; `.h` stays C).
    Cpp,
    /// Go (`.go`).
    Go,
    /// Java (`.java`).
    Java,
    /// JavaScript (`.js`, `.mjs`, `.cjs`, `.jsx`).
    JavaScript,
    /// TypeScript (`.ts`, `.mts`, `.cts`).
    TypeScript,
    /// TypeScript with JSX (`.tsx`).
    Tsx,
}

impl Language {
    /// Every supported language.
    pub const ALL: &'static [Language] = &[
        Language::Rust,
        Language::Python,
        Language::C,
        Language::Cpp,
        Language::Go,
        Language::Java,
        Language::JavaScript,
        Language::TypeScript,
        Language::Tsx,
    ];

    /// The language of a path, chosen by its extension (ASCII
    /// case-insensitive). `None` when no grammar handles it.
    pub fn from_path(path: impl AsRef<Path>) -> Option<Language> {
        let extension = path.as_ref().extension()?.to_str()?;
        Language::from_extension(extension)
    }

    /// The language for a file extension given without its dot (`"rs"`).
    fn from_extension(extension: &str) -> Option<Language> {
        Language::ALL.iter().copied().find(|language| {
            language
                .extensions()
                .iter()
                .any(|known| known.eq_ignore_ascii_case(extension))
        })
    }

    /// The lowercase name: `"rust"`, `"python"`, `"c"`, `"cpp"`, `"go"`,
    /// `"java"`, `"javascript"`, `"typescript"`, `"tsx"`.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The file extensions (without dot) this language is picked for.
    pub fn extensions(self) -> &'static [&'static str] {
        self.spec().extensions
    }

    /// What this crate's outline of the language depends on, as one word:
    /// the language, the version of the extraction rules (this crate's
    /// version and [`RULES_VERSION`]) and the grammar's shape (its ABI
    /// version and its numbers of node kinds, fields and parse states, which
    /// any change of a grammar alters). A cache of outlines keeps it with
    /// each entry: another value means the same source may outline
    /// differently, so the entry must not be used.
    pub fn outline_version(self) -> String {
        let grammar = (self.spec().grammar)();
        format!(
            "{}-{}-r{RULES_VERSION}-abi{}-k{}-f{}-s{}",
            self.name(),
            env!("CARGO_PKG_VERSION"),
            grammar.abi_version(),
            grammar.node_kind_count(),
            grammar.field_count(),
            grammar.parse_state_count()
        )
    }

    pub(crate) fn spec(self) -> &'static LanguageSpec {
        match self {
            Language::Rust => &rust::SPEC,
            Language::Python => &python::SPEC,
            Language::C => &c::SPEC,
            Language::Cpp => &cpp::SPEC,
            Language::Go => &go::SPEC,
            Language::Java => &java::SPEC,
            Language::JavaScript => &javascript::SPEC,
            Language::TypeScript => &typescript::SPEC,
            Language::Tsx => &typescript::TSX_SPEC,
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a container does to the functions inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ContainerRole {
    /// A type-like container (Rust `impl`/`trait`, a class, an interface):
    /// its functions are methods.
    Type,
    /// A namespace (Rust `mod`, C++ `namespace`, TypeScript `namespace`):
    /// its functions stay functions.
    Namespace,
}

/// Where the walker currently is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scope {
    /// The innermost enclosing container, `None` at the top level of the file.
    pub(crate) container: Option<ContainerRole>,
}

impl Scope {
    pub(crate) fn is_top_level(self) -> bool {
        self.container.is_none()
    }
}

/// Finds a unit the table cannot describe by node kind alone: returns its
/// kind and the node that carries its name and signature.
pub(crate) type ExtraUnitFn = for<'t> fn(Node<'t>, &str, Scope) -> Option<(UnitKind, Node<'t>)>;

/// Finds the first node of a unit's line range (e.g. its leading attributes).
pub(crate) type LeadingFn = for<'t> fn(Node<'t>) -> Node<'t>;

/// Derives a string from a node and the source (a name, a qualifier, a
/// signature); `None` means "use the default".
pub(crate) type TextFn = fn(Node<'_>, &str) -> Option<String>;

/// The table entry for one language.
#[derive(Debug)]
pub(crate) struct LanguageSpec {
    /// Lowercase language name.
    pub(crate) name: &'static str,
    /// File extensions without dot.
    pub(crate) extensions: &'static [&'static str],
    /// What joins the segments of a qualified name: `::` (Rust, C, C++) or
    /// `.` (Python, Go, Java, JavaScript, TypeScript).
    pub(crate) separator: &'static str,
    /// The tree-sitter grammar.
    pub(crate) grammar: fn() -> tree_sitter::Language,
    /// Node kinds that are units, and their kind. `Function` becomes `Method`
    /// inside a [`ContainerRole::Type`] container.
    pub(crate) units: &'static [(&'static str, UnitKind)],
    /// Unit node kinds whose body holds member units qualified by the
    /// container's name.
    pub(crate) containers: &'static [(&'static str, ContainerRole)],
    /// The field holding a container's body.
    pub(crate) body_field: &'static str,
    /// Node kinds that are bodies: a signature stops before the first of
    /// them among a unit's children.
    pub(crate) body_kinds: &'static [&'static str],
    /// Wrapper node kinds (e.g. Python's `decorated_definition`) and the field
    /// holding the wrapped definition; the wrapper's lines count for the unit.
    pub(crate) wrappers: &'static [(&'static str, &'static str)],
    /// Node kinds whose children are listed as if they stood in the node's
    /// place (C's `#ifdef` blocks, Go's grouped `type ( … )`).
    pub(crate) transparent: &'static [&'static str],
    /// Comment node kinds, never part of a signature.
    pub(crate) comment_kinds: &'static [&'static str],
    /// Anonymous tokens a bodiless declaration's signature stops before.
    pub(crate) signature_stops: &'static [&'static str],
    /// Anonymous tokens dropped from the end of a signature (Python's `:`).
    pub(crate) signature_trailing: &'static [&'static str],
    /// Hooks for what the table cannot say.
    pub(crate) hooks: Hooks,
}

/// Per-language hooks; [`DEFAULT_HOOKS`] holds the neutral default of each
/// ([`none`], [`no_extra_unit`], [`own_lines`]).
#[derive(Debug)]
pub(crate) struct Hooks {
    /// The unit's name when it is not the text of its `name` field (`None`:
    /// use that field).
    pub(crate) unit_name: TextFn,
    /// The segment a container adds to its members' qualified names when it
    /// is not the container's name.
    pub(crate) qualifier: TextFn,
    /// The owner of a unit defined outside it (a Go method's receiver type,
    /// a C++ `Scene::add_layer` defined out of line), already joined with the
    /// language's separator. A function with an owner is a method.
    pub(crate) owner: TextFn,
    /// The first segment of every qualified name in the file, read from the
    /// root node (Go's `package` clause).
    pub(crate) file_qualifier: TextFn,
    /// The unit's signature when the generic rule (declaration up to the
    /// body) does not fit; collapsed and capped like the generic one.
    pub(crate) signature: TextFn,
    /// Units that are not recognisable by node kind alone.
    pub(crate) extra_unit: ExtraUnitFn,
    /// The first node of a unit's line range.
    pub(crate) leading: LeadingFn,
}

/// Every hook at its neutral default.
pub(crate) const DEFAULT_HOOKS: Hooks = Hooks {
    unit_name: none,
    qualifier: none,
    owner: none,
    file_qualifier: none,
    signature: none,
    extra_unit: no_extra_unit,
    leading: own_lines,
};

/// Default [`TextFn`] hook: nothing special, use the generic rule.
pub(crate) fn none(_node: Node<'_>, _source: &str) -> Option<String> {
    None
}

/// Default [`Hooks::extra_unit`]: every unit is recognised by its node kind.
pub(crate) fn no_extra_unit<'t>(
    _node: Node<'t>,
    _source: &str,
    _scope: Scope,
) -> Option<(UnitKind, Node<'t>)> {
    None
}

/// Default [`Hooks::leading`]: a unit's lines are its node's own.
pub(crate) fn own_lines(node: Node<'_>) -> Node<'_> {
    node
}

impl LanguageSpec {
    pub(crate) fn unit_kind(&self, node_kind: &str) -> Option<UnitKind> {
        self.units
            .iter()
            .find(|(kind, _)| *kind == node_kind)
            .map(|(_, unit)| *unit)
    }

    pub(crate) fn container_role(&self, node_kind: &str) -> Option<ContainerRole> {
        self.containers
            .iter()
            .find(|(kind, _)| *kind == node_kind)
            .map(|(_, role)| *role)
    }

    pub(crate) fn is_transparent(&self, node_kind: &str) -> bool {
        self.transparent.contains(&node_kind)
    }

    pub(crate) fn wrapped_field(&self, node_kind: &str) -> Option<&'static str> {
        self.wrappers
            .iter()
            .find(|(kind, _)| *kind == node_kind)
            .map(|(_, field)| *field)
    }
}

/// Extends a unit upwards over the comments (and TypeScript decorators)
/// directly above it: the run stops at a blank line, at anything else, and at
/// a comment that ends a line of code (it belongs to that code).
pub(crate) fn comments_above(node: Node<'_>) -> Node<'_> {
    let mut first = node;
    while let Some(previous) = first.prev_sibling() {
        let attached = matches!(
            previous.kind(),
            "comment" | "line_comment" | "block_comment" | "decorator"
        );
        if !attached || last_row(previous) + 1 < first.start_position().row {
            break;
        }
        let trailing = previous
            .prev_sibling()
            .is_some_and(|before| last_row(before) == previous.start_position().row);
        if trailing {
            break;
        }
        first = previous;
    }
    first
}

/// The text from the start of `node` to the start of `end` (a descendant),
/// trimmed.
pub(crate) fn text_before<'s>(node: Node<'_>, end: Node<'_>, source: &'s str) -> &'s str {
    source
        .get(node.start_byte()..end.start_byte())
        .unwrap_or("")
        .trim()
}

/// The text of a node, or `""` if its byte range does not fall on character
/// boundaries of `source` (it always should; this keeps bad input from
/// panicking).
pub(crate) fn text<'s>(node: Node<'_>, source: &'s str) -> &'s str {
    source.get(node.start_byte()..node.end_byte()).unwrap_or("")
}

/// `text` with whitespace runs collapsed to one space and trimmed.
pub(crate) fn collapsed(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The 0-based row of a node's last character: a node ending at column 0 of a
/// later row (e.g. a line comment that includes its newline) ends on the row
/// before.
pub(crate) fn last_row(node: Node<'_>) -> usize {
    let end = node.end_position();
    if end.column == 0 && end.row > node.start_position().row {
        end.row - 1
    } else {
        end.row
    }
}
