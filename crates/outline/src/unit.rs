//! The plain types an outline is made of.

use std::fmt;

/// What kind of semantic unit an outline entry is.
///
/// [`UnitKind::as_str`] gives the lowercase name used in outlines and in
/// anchors; [`UnitKind::anchor_type`] maps it onto the smaller `ast_anchor.type`
/// enum of the annotation schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UnitKind {
    /// A free function (module level, inside a Rust `mod` or a C++ or
    /// TypeScript namespace), a JavaScript/TypeScript `const f = () => …`.
    Function,
    /// A function inside a Rust `impl`/`trait`, a class or an interface; a
    /// Go function with a receiver; a C++ `Type::f` defined out of line; a
    /// Java constructor.
    Method,
    /// A Rust, C or C++ `struct`, a Go struct type.
    Struct,
    /// A Rust, C, C++, Java or TypeScript `enum`.
    Enum,
    /// A Rust `trait`.
    Trait,
    /// A Rust `impl` block.
    Impl,
    /// A class: Python, C++, Java (and Java `record`), JavaScript, TypeScript.
    Class,
    /// A Rust `mod` (inline, or the one-line `mod name;` declaration), a C++
    /// or TypeScript `namespace`.
    Module,
    /// A Rust `const`, a Python module-level `UPPER_CASE = …` assignment, a
    /// C/C++ object-like `#define` with a value.
    Const,
    /// A Rust `static`.
    Static,
    /// A type alias: Rust `type X = …;` (and associated types), Python
    /// `X: TypeAlias = …` and `type X = …`, C/C++ `typedef`, C++ `using X =`,
    /// Go type declarations other than structs and interfaces, TypeScript
    /// `type X = …`.
    TypeAlias,
    /// A Rust, C or C++ `union`.
    Union,
    /// A Rust `macro_rules!` definition, a C/C++ function-like `#define`.
    Macro,
    /// An interface: Go, Java (and `@interface`), TypeScript.
    Interface,
}

impl UnitKind {
    /// Every kind, in declaration order. Part of the published API (as
    /// [`Language::ALL`](crate::Language::ALL) is), for callers that list or
    /// filter kinds.
    pub const ALL: &'static [UnitKind] = &[
        UnitKind::Function,
        UnitKind::Method,
        UnitKind::Struct,
        UnitKind::Enum,
        UnitKind::Trait,
        UnitKind::Impl,
        UnitKind::Class,
        UnitKind::Module,
        UnitKind::Const,
        UnitKind::Static,
        UnitKind::TypeAlias,
        UnitKind::Union,
        UnitKind::Macro,
        UnitKind::Interface,
    ];

    /// The lowercase name: `"function"`, `"method"`, …, `"type"` for
    /// [`UnitKind::TypeAlias`].
    pub fn as_str(self) -> &'static str {
        match self {
            UnitKind::Function => "function",
            UnitKind::Method => "method",
            UnitKind::Struct => "struct",
            UnitKind::Enum => "enum",
            UnitKind::Trait => "trait",
            UnitKind::Impl => "impl",
            UnitKind::Class => "class",
            UnitKind::Module => "module",
            UnitKind::Const => "const",
            UnitKind::Static => "static",
            UnitKind::TypeAlias => "type",
            UnitKind::Union => "union",
            UnitKind::Macro => "macro",
            UnitKind::Interface => "interface",
        }
    }

    /// The closest value of the annotation schema's `ast_anchor.type` enum
    /// (`function`, `method`, `struct`, `class`, `impl`, `module`, `const`,
    /// `type`): enums, traits and interfaces are `type`, unions `struct`,
    /// statics `const`, macros `function`.
    pub fn anchor_type(self) -> &'static str {
        match self {
            UnitKind::Function | UnitKind::Macro => "function",
            UnitKind::Method => "method",
            UnitKind::Struct | UnitKind::Union => "struct",
            UnitKind::Enum | UnitKind::Trait | UnitKind::TypeAlias | UnitKind::Interface => "type",
            UnitKind::Impl => "impl",
            UnitKind::Class => "class",
            UnitKind::Module => "module",
            UnitKind::Const | UnitKind::Static => "const",
        }
    }
}

impl fmt::Display for UnitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A range of lines: 1-based, both ends inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LineSpan {
    /// First line (1-based).
    pub start: u32,
    /// Last line (1-based, inclusive).
    pub end: u32,
}

impl LineSpan {
    /// Number of lines covered (at least 1 for a well-formed span).
    pub fn line_count(self) -> u32 {
        self.end.saturating_sub(self.start).saturating_add(1)
    }

    /// Whether `line` (1-based) lies inside the span.
    pub fn contains(self, line: u32) -> bool {
        self.start <= line && line <= self.end
    }
}

/// One entry of an outline: a named semantic unit of a source file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Unit {
    /// What the unit is.
    pub kind: UnitKind,
    /// The unit's own name: `connect`, `Client`, `Display for Foo` (a Rust
    /// trait impl), `Stack` (an inherent impl, generics stripped).
    pub name: String,
    /// The name qualified by its enclosing containers (and its owner, for a
    /// Go method or a C++ member defined out of line), in the language's own
    /// style: `::` in Rust and C++ (`net::Client::connect`,
    /// `render::Scene::add_layer`), `.` in Python, Java, JavaScript and
    /// TypeScript (`Outer.Inner.method`), and `.` behind the package name in
    /// Go (`store.Store.Get`, as `go doc` spells it). C has no qualifiers.
    pub qualified_name: String,
    /// The declaration up to (not including) its body, whitespace runs
    /// collapsed to one space; bodiless items stop before `=`/`;`. At most
    /// [`MAX_SIGNATURE_CHARS`](crate::MAX_SIGNATURE_CHARS) characters, ending
    /// in `…` when cut.
    pub signature: String,
    /// The unit's lines, including Rust outer attributes and doc comments
    /// directly above it, Python decorators, and the comments, Java
    /// annotations and TypeScript decorators directly above a unit in the
    /// other languages.
    pub lines: LineSpan,
}

/// Renders one outline line: `L{start}-{end} {kind} {qualified_name} | {signature}`.
impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "L{}-{} {} {} | {}",
            self.lines.start, self.lines.end, self.kind, self.qualified_name, self.signature
        )
    }
}
