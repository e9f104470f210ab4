//! Rust: items at the top level and inside inline `mod`, `impl` and `trait`
//! bodies. Hooks: impl names (`Stack`, `Display for Foo`) and leading outer
//! attributes / doc comments.

use tree_sitter::Node;

use super::{ContainerRole, DEFAULT_HOOKS, Hooks, LanguageSpec, collapsed, last_row, text};
use crate::UnitKind;

#[rustfmt::skip]
pub(crate) static SPEC: LanguageSpec = LanguageSpec {
    name: "rust", extensions: &["rs"], separator: "::", grammar,
    units: &[
        ("function_item", UnitKind::Function), ("function_signature_item", UnitKind::Function),
        ("struct_item", UnitKind::Struct), ("enum_item", UnitKind::Enum), ("union_item", UnitKind::Union),
        ("trait_item", UnitKind::Trait), ("impl_item", UnitKind::Impl), ("mod_item", UnitKind::Module),
        ("const_item", UnitKind::Const), ("static_item", UnitKind::Static),
        ("type_item", UnitKind::TypeAlias), ("associated_type", UnitKind::TypeAlias),
        ("macro_definition", UnitKind::Macro),
    ],
    containers: &[("impl_item", ContainerRole::Type), ("trait_item", ContainerRole::Type), ("mod_item", ContainerRole::Namespace)],
    body_field: "body",
    // A tuple struct's `(…)` is not a body: `pub struct Meters(pub f64)` is
    // the more useful signature.
    body_kinds: &["block", "declaration_list", "field_declaration_list", "enum_variant_list"],
    wrappers: &[], transparent: &[], comment_kinds: &["line_comment", "block_comment"],
    // `=`/`;` end bodiless items; `{`/`(`/`[` open a `macro_rules!` body
    // (elsewhere they only occur nested inside child nodes).
    signature_stops: &["=", ";", "{", "(", "["], signature_trailing: &[],
    hooks: Hooks { unit_name, qualifier, leading, ..DEFAULT_HOOKS },
};

fn grammar() -> tree_sitter::Language {
    tree_sitter_rust::LANGUAGE.into()
}

/// `impl<T> Stack<T>` is named `Stack`; `impl fmt::Display for Foo` is named
/// `Display for Foo` (trait path dropped, trait generics kept so that
/// `From<A> for Foo` and `From<B> for Foo` stay apart).
fn unit_name(node: Node<'_>, source: &str) -> Option<String> {
    if node.kind() != "impl_item" {
        return None;
    }
    let target = type_name(node.child_by_field_name("type")?, source);
    match node.child_by_field_name("trait") {
        Some(trait_node) => Some(format!("{} for {target}", trait_name(trait_node, source))),
        None => Some(target),
    }
}

/// Methods of `impl … for Foo<T>` are qualified by `Foo`.
fn qualifier(node: Node<'_>, source: &str) -> Option<String> {
    if node.kind() != "impl_item" {
        return None;
    }
    Some(type_name(node.child_by_field_name("type")?, source))
}

/// The bare name of an impl's target type: generics, paths and references
/// stripped (`&'a mut a::Foo<T>` → `Foo`); other types (tuples, slices,
/// `dyn Trait`) keep their collapsed text.
fn type_name(node: Node<'_>, source: &str) -> String {
    let inner = match node.kind() {
        "generic_type" | "reference_type" | "pointer_type" => node.child_by_field_name("type"),
        "scoped_type_identifier" | "scoped_identifier" => node.child_by_field_name("name"),
        _ => None,
    };
    match inner {
        Some(inner) => type_name(inner, source),
        None => collapsed(text(node, source)),
    }
}

/// A trait's name without its path, with its generic arguments.
fn trait_name(node: Node<'_>, source: &str) -> String {
    match node.kind() {
        "generic_type" => {
            let base = node
                .child_by_field_name("type")
                .map(|base| trait_name(base, source))
                .unwrap_or_default();
            let arguments = node
                .child_by_field_name("type_arguments")
                .map(|arguments| collapsed(text(arguments, source)))
                .unwrap_or_default();
            format!("{base}{arguments}")
        }
        "scoped_type_identifier" | "scoped_identifier" => node
            .child_by_field_name("name")
            .map(|name| collapsed(text(name, source)))
            .unwrap_or_else(|| collapsed(text(node, source))),
        _ => collapsed(text(node, source)),
    }
}

/// Extends an item upwards over the outer attributes (`#[…]`) and outer doc
/// comments (`///`, `/** */`) directly above it. The run stops at a blank
/// line, a plain comment, an inner attribute or anything else.
fn leading(node: Node<'_>) -> Node<'_> {
    let mut first = node;
    while let Some(previous) = first.prev_sibling() {
        let attached = match previous.kind() {
            "attribute_item" => true,
            "line_comment" | "block_comment" => previous.child_by_field_name("outer").is_some(),
            _ => false,
        };
        if !attached || last_row(previous) + 1 < first.start_position().row {
            break;
        }
        first = previous;
    }
    first
}
