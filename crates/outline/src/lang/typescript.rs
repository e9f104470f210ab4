//! TypeScript and TSX: everything JavaScript has (same hooks), plus
//! interfaces with their method signatures, type aliases, enums, abstract
//! classes and methods, overload signatures and namespaces. TSX is the same
//! table over the TSX grammar. Qualified names use `.`
//! (`Session.refresh`, `Sessions.isClosed`); decorators above a class or
//! method belong to it.

use super::javascript::HOOKS;
use super::{ContainerRole, LanguageSpec};
use crate::UnitKind;

pub(crate) static SPEC: LanguageSpec = LanguageSpec {
    name: "typescript",
    extensions: &["ts", "mts", "cts"],
    grammar: typescript,
    ..TABLE
};

pub(crate) static TSX_SPEC: LanguageSpec = LanguageSpec {
    name: "tsx",
    extensions: &["tsx"],
    grammar: tsx,
    ..TABLE
};

/// The rows TypeScript and TSX share.
#[rustfmt::skip]
const TABLE: LanguageSpec = LanguageSpec {
    name: "typescript", extensions: &[], separator: ".", grammar: typescript,
    units: &[
        ("function_declaration", UnitKind::Function), ("generator_function_declaration", UnitKind::Function),
        ("function_signature", UnitKind::Function),
        ("class_declaration", UnitKind::Class), ("abstract_class_declaration", UnitKind::Class),
        ("method_definition", UnitKind::Function), ("method_signature", UnitKind::Function),
        ("abstract_method_signature", UnitKind::Function),
        ("interface_declaration", UnitKind::Interface), ("type_alias_declaration", UnitKind::TypeAlias),
        ("enum_declaration", UnitKind::Enum), ("internal_module", UnitKind::Module),
    ],
    containers: &[
        ("class_declaration", ContainerRole::Type), ("abstract_class_declaration", ContainerRole::Type),
        ("interface_declaration", ContainerRole::Type), ("internal_module", ContainerRole::Namespace),
    ],
    body_field: "body",
    body_kinds: &["statement_block", "class_body", "interface_body", "object_type", "enum_body"],
    // `declare function f(): void;` is the signature inside.
    wrappers: &[("export_statement", "declaration")], transparent: &["ambient_declaration"],
    // `type X = …` stops before `=` like Rust's aliases.
    comment_kinds: &["comment"], signature_stops: &["=", ";"], signature_trailing: &[],
    hooks: HOOKS,
};

fn typescript() -> tree_sitter::Language {
    tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into()
}

fn tsx() -> tree_sitter::Language {
    tree_sitter_typescript::LANGUAGE_TSX.into()
}
