//! C++: what C has, plus namespaces, classes, templates, `using` aliases and
//! member functions defined in the class or out of line (`Scene::add_layer`,
//! qualified by its owner). Qualified names use `::`
//! (`render::Scene::add_layer`). Member declarations without a body are not
//! units: the definition is.

use tree_sitter::Node;

use super::c;
use super::{
    ContainerRole, DEFAULT_HOOKS, Hooks, LanguageSpec, Scope, collapsed, comments_above, text,
};
use crate::UnitKind;

#[rustfmt::skip]
pub(crate) static SPEC: LanguageSpec = LanguageSpec {
    name: "cpp", extensions: &["cc", "cpp", "cxx", "hpp", "hh", "hxx"], separator: "::", grammar,
    units: UNITS,
    containers: &[
        ("namespace_definition", ContainerRole::Namespace), ("class_specifier", ContainerRole::Type),
        ("struct_specifier", ContainerRole::Type), ("union_specifier", ContainerRole::Type),
    ],
    body_field: "body",
    // A constructor's initializer list and `= default` are not part of a
    // signature.
    body_kinds: &["compound_statement", "field_declaration_list", "enumerator_list", "field_initializer_list", "declaration_list", "default_method_clause", "delete_method_clause"],
    wrappers: &[],
    // `#ifdef` blocks and `extern "C" { … }`.
    transparent: &["preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef", "linkage_specification", "declaration_list"],
    comment_kinds: &["comment"], signature_stops: &[";", "="], signature_trailing: &[],
    hooks: Hooks { unit_name, owner, signature: c::signature, extra_unit, leading: comments_above, ..DEFAULT_HOOKS },
};

#[rustfmt::skip]
const UNITS: &[(&str, UnitKind)] = &[
    ("function_definition", UnitKind::Function), ("type_definition", UnitKind::TypeAlias),
    ("alias_declaration", UnitKind::TypeAlias), ("namespace_definition", UnitKind::Module),
    ("preproc_function_def", UnitKind::Macro),
];

fn grammar() -> tree_sitter::Language {
    tree_sitter_cpp::LANGUAGE.into()
}

/// A function is named by the last segment of its declarator
/// (`Scene::add_layer` → `add_layer`); a class template specialisation by
/// its template's name.
fn unit_name(node: Node<'_>, source: &str) -> Option<String> {
    match node.kind() {
        "function_definition" => {
            let (_, name) = split_qualified(c::declarator_name(node)?, source);
            Some(name)
        }
        "class_specifier" | "struct_specifier" | "union_specifier" | "enum_specifier" => {
            let name = node.child_by_field_name("name")?;
            Some(split_qualified(name, source).1)
        }
        _ => c::unit_name(node, source),
    }
}

/// `Scene::add_layer` defined out of line belongs to `Scene`.
fn owner(node: Node<'_>, source: &str) -> Option<String> {
    if node.kind() != "function_definition" {
        return None;
    }
    let (scopes, _) = split_qualified(c::declarator_name(node)?, source);
    (!scopes.is_empty()).then(|| scopes.join("::"))
}

/// `a::b::name` → (`[a, b]`, `name`); template arguments of the scopes and
/// of a class name are dropped (`Pool<T>::acquire` → (`[Pool]`, `acquire`)).
fn split_qualified(node: Node<'_>, source: &str) -> (Vec<String>, String) {
    let mut scopes = Vec::new();
    let mut current = node;
    while current.kind() == "qualified_identifier" {
        if let Some(scope) = current.child_by_field_name("scope") {
            scopes.push(template_name(scope, source));
        }
        match current.child_by_field_name("name") {
            Some(name) => current = name,
            None => break,
        }
    }
    (scopes, template_name(current, source))
}

/// `Pool<T>` → `Pool`; anything else keeps its collapsed text.
fn template_name(node: Node<'_>, source: &str) -> String {
    let base = match node.kind() {
        "template_type" => node.child_by_field_name("name"),
        _ => None,
    };
    collapsed(text(base.unwrap_or(node), source))
}

/// What C finds, plus the definition inside a `template <…>` declaration
/// (nested ones too: `template <…> template <…>`).
fn extra_unit<'t>(node: Node<'t>, source: &str, scope: Scope) -> Option<(UnitKind, Node<'t>)> {
    let mut current = node;
    while current.kind() == "template_declaration" {
        let mut cursor = current.walk();
        let inner = current.named_children(&mut cursor).find(|child| {
            child.kind() == "template_declaration"
                || UNITS.iter().any(|(kind, _)| *kind == child.kind())
                || c::extra_unit(*child, source, scope).is_some()
        })?;
        current = inner;
    }
    if current == node {
        return c::extra_unit(node, source, scope);
    }
    UNITS
        .iter()
        .find(|(kind, _)| *kind == current.kind())
        .map(|(_, unit)| (*unit, current))
        .or_else(|| c::extra_unit(current, source, scope))
}
