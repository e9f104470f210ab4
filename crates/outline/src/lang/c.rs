//! C: function definitions (`static` ones too), `struct`/`union`/`enum`
//! definitions, `typedef`s and `#define`s at the top level and inside
//! `#if`/`#ifdef` blocks. C has no qualifiers: every name is plain. Hooks:
//! names read through declarators (`static char *quote_two(…)` is
//! `quote_two`), type definitions found inside declarations, object-like
//! macros with a value, and comments directly above a unit. The helpers here
//! serve C++ too.

use tree_sitter::Node;

use super::{
    DEFAULT_HOOKS, Hooks, LanguageSpec, Scope, collapsed, comments_above, text, text_before,
};
use crate::UnitKind;

#[rustfmt::skip]
pub(crate) static SPEC: LanguageSpec = LanguageSpec {
    name: "c", extensions: &["c", "h"], separator: "::", grammar,
    units: &[("function_definition", UnitKind::Function), ("type_definition", UnitKind::TypeAlias), ("preproc_function_def", UnitKind::Macro)],
    containers: &[], body_field: "body",
    body_kinds: &["compound_statement", "field_declaration_list", "enumerator_list"],
    wrappers: &[],
    // Conditional compilation: the items of `#ifdef` blocks count as the
    // enclosing ones.
    transparent: &["preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"],
    comment_kinds: &["comment"], signature_stops: &[";"], signature_trailing: &[],
    hooks: Hooks { unit_name, signature, extra_unit, leading: comments_above, ..DEFAULT_HOOKS },
};

fn grammar() -> tree_sitter::Language {
    tree_sitter_c::LANGUAGE.into()
}

/// Functions and typedefs are named by their innermost declarator.
pub(super) fn unit_name(node: Node<'_>, source: &str) -> Option<String> {
    match node.kind() {
        "function_definition" | "type_definition" => {
            let name = declarator_name(node)?;
            Some(collapsed(text(name, source)))
        }
        _ => None,
    }
}

/// The identifier a declarator chain ends in: `*quote_two(…)` →
/// `quote_two`, `(*fn_out_consume)(…)` → `fn_out_consume`; in C++ also
/// `Scene::add_layer`, `operator==`, `~Scene`.
pub(super) fn declarator_name(node: Node<'_>) -> Option<Node<'_>> {
    let mut current = node.child_by_field_name("declarator")?;
    loop {
        current = match current.kind() {
            "parenthesized_declarator" => current.named_child(0)?,
            kind if kind.ends_with("declarator") => current.child_by_field_name("declarator")?,
            _ => return Some(current),
        };
    }
}

/// A typedef of a type defined in place reads `typedef struct tag { … }
/// name`, without the member list.
pub(super) fn signature(node: Node<'_>, source: &str) -> Option<String> {
    if node.kind() != "type_definition" {
        return None;
    }
    let body = node
        .child_by_field_name("type")?
        .child_by_field_name("body")?;
    let name = declarator_name(node)?;
    Some(format!(
        "{} {{ … }} {}",
        text_before(node, body, source),
        text(name, source)
    ))
}

/// `struct`/`union`/`enum` (and C++ `class`) definitions with a body,
/// standing alone or inside a declaration (`struct x { … } x;`), and
/// object-like `#define`s with a value.
pub(super) fn extra_unit<'t>(
    node: Node<'t>,
    _source: &str,
    _scope: Scope,
) -> Option<(UnitKind, Node<'t>)> {
    match node.kind() {
        "declaration" | "field_declaration" => {
            let specifier = node.child_by_field_name("type")?;
            type_definition(specifier)
        }
        "preproc_def" => node
            .child_by_field_name("value")
            .map(|_| (UnitKind::Const, node)),
        _ => type_definition(node),
    }
}

/// A `struct`/`union`/`enum`/`class` specifier that defines the type (has a
/// body; `struct repository;` does not).
fn type_definition(node: Node<'_>) -> Option<(UnitKind, Node<'_>)> {
    let kind = match node.kind() {
        "struct_specifier" => UnitKind::Struct,
        "union_specifier" => UnitKind::Union,
        "enum_specifier" => UnitKind::Enum,
        "class_specifier" => UnitKind::Class,
        _ => return None,
    };
    node.child_by_field_name("body")?;
    Some((kind, node))
}
