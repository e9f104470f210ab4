//! Go: functions, methods (functions with a receiver) and type declarations
//! (structs, interfaces with their methods, other defined types and aliases,
//! grouped `type ( … )` too). Qualified names follow `go doc`: the package
//! clause first, then the receiver type for a method (`package store` →
//! `store.New`, `store.Store.Get` for `func (s *Store) Get`), as far as one
//! file's text tells (the import path is not knowable from it). Hooks: the
//! package qualifier, receiver owners, `type X struct` signatures, and
//! comments directly above a declaration.

use tree_sitter::Node;

use super::{
    ContainerRole, DEFAULT_HOOKS, Hooks, LanguageSpec, Scope, collapsed, comments_above, text,
    text_before,
};
use crate::UnitKind;

#[rustfmt::skip]
pub(crate) static SPEC: LanguageSpec = LanguageSpec {
    name: "go", extensions: &["go"], separator: ".", grammar,
    // Type specs are units through `extra_unit` (their kind depends on the type).
    units: &[("function_declaration", UnitKind::Function), ("method_declaration", UnitKind::Function), ("type_alias", UnitKind::TypeAlias), ("method_elem", UnitKind::Function)],
    // An interface's methods are members of its type spec.
    containers: &[("type_spec", ContainerRole::Type)], body_field: "type",
    body_kinds: &["block"], wrappers: &[], transparent: &["type_declaration"],
    comment_kinds: &["comment"], signature_stops: &[], signature_trailing: &[],
    hooks: Hooks { extra_unit, owner, file_qualifier, signature, leading, ..DEFAULT_HOOKS },
};

fn grammar() -> tree_sitter::Language {
    tree_sitter_go::LANGUAGE.into()
}

/// A type spec is a struct, an interface, or (any other defined type) a
/// type alias in this crate's kinds.
fn extra_unit<'t>(node: Node<'t>, _source: &str, _scope: Scope) -> Option<(UnitKind, Node<'t>)> {
    if node.kind() != "type_spec" {
        return None;
    }
    let kind = match node.child_by_field_name("type")?.kind() {
        "struct_type" => UnitKind::Struct,
        "interface_type" => UnitKind::Interface,
        _ => UnitKind::TypeAlias,
    };
    Some((kind, node))
}

/// `package store` qualifies every name of the file.
fn file_qualifier(root: Node<'_>, source: &str) -> Option<String> {
    let mut cursor = root.walk();
    let clause = root
        .named_children(&mut cursor)
        .find(|child| child.kind() == "package_clause")?;
    let mut cursor = clause.walk();
    let name = clause
        .named_children(&mut cursor)
        .find(|child| child.kind() == "package_identifier")?;
    Some(collapsed(text(name, source)))
}

/// A method belongs to its receiver's base type: `(s *Store)` and
/// `(p *Pair[K, V])` give `Store` and `Pair`.
fn owner(node: Node<'_>, source: &str) -> Option<String> {
    if node.kind() != "method_declaration" {
        return None;
    }
    let receiver = node.child_by_field_name("receiver")?;
    let mut cursor = receiver.walk();
    let parameter = receiver
        .named_children(&mut cursor)
        .find(|child| child.kind() == "parameter_declaration")?;
    let mut current = parameter.child_by_field_name("type")?;
    loop {
        current = match current.kind() {
            "pointer_type" | "parenthesized_type" => current.named_child(0)?,
            "generic_type" => current.child_by_field_name("type")?,
            _ => return Some(collapsed(text(current, source))),
        };
    }
}

/// `type X struct { … }` reads `type X struct`, an interface likewise; other
/// type specs keep their text behind `type`.
fn signature(node: Node<'_>, source: &str) -> Option<String> {
    if !matches!(node.kind(), "type_spec" | "type_alias") {
        return None;
    }
    let declared = node.child_by_field_name("type")?;
    let head = match declared.kind() {
        "struct_type" | "interface_type" => {
            let keyword = declared.child(0)?;
            format!(
                "{} {}",
                text_before(node, declared, source),
                text(keyword, source)
            )
        }
        _ => text(node, source).to_owned(),
    };
    Some(format!("type {head}"))
}

/// A lone `type X …` declaration starts at its `type` keyword and takes the
/// comments above that; a spec inside `type ( … )` takes its own.
fn leading(node: Node<'_>) -> Node<'_> {
    match node.parent() {
        Some(parent)
            if parent.kind() == "type_declaration"
                && parent.start_position().row == node.start_position().row =>
        {
            comments_above(parent)
        }
        _ => comments_above(node),
    }
}
