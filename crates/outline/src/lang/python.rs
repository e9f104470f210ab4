//! Python: module-level functions, classes, constants and type aliases, and
//! methods and nested classes inside classes. Hooks: module-level
//! `UPPER_CASE = …` constants and `X: TypeAlias = …` aliases, and the names of
//! assignments and `type X[T] = …` statements.

use tree_sitter::Node;

use super::{ContainerRole, DEFAULT_HOOKS, Hooks, LanguageSpec, Scope, collapsed, text};
use crate::UnitKind;

#[rustfmt::skip]
pub(crate) static SPEC: LanguageSpec = LanguageSpec {
    name: "python", extensions: &["py", "pyi"], separator: ".", grammar,
    units: &[("function_definition", UnitKind::Function), ("class_definition", UnitKind::Class), ("type_alias_statement", UnitKind::TypeAlias)],
    containers: &[("class_definition", ContainerRole::Type)], body_field: "body",
    body_kinds: &["block"], wrappers: &[("decorated_definition", "definition")], transparent: &[],
    comment_kinds: &["comment"], signature_stops: &["="], signature_trailing: &[":"],
    hooks: Hooks { unit_name, extra_unit, ..DEFAULT_HOOKS },
};

fn grammar() -> tree_sitter::Language {
    tree_sitter_python::LANGUAGE.into()
}

/// `type Point[T] = …` is named `Point`; an assignment by its target.
fn unit_name(node: Node<'_>, source: &str) -> Option<String> {
    let left = match node.kind() {
        "type_alias_statement" | "assignment" => node.child_by_field_name("left")?,
        _ => return None,
    };
    let left = text(left, source);
    let name = left.split('[').next().unwrap_or(left);
    Some(collapsed(name))
}

/// A module-level `X: TypeAlias = …` is a type alias, a module-level
/// `UPPER_CASE = …` (annotated or not) a constant.
fn extra_unit<'t>(node: Node<'t>, source: &str, scope: Scope) -> Option<(UnitKind, Node<'t>)> {
    if !scope.is_top_level() || node.kind() != "expression_statement" {
        return None;
    }
    let assignment = node.named_child(0)?;
    if assignment.kind() != "assignment" {
        return None;
    }
    let left = assignment.child_by_field_name("left")?;
    if left.kind() != "identifier" {
        return None;
    }
    let annotation = assignment
        .child_by_field_name("type")
        .map(|annotation| collapsed(text(annotation, source)));
    if annotation
        .is_some_and(|annotation| annotation == "TypeAlias" || annotation.ends_with(".TypeAlias"))
    {
        return Some((UnitKind::TypeAlias, assignment));
    }
    is_constant_name(text(left, source)).then_some((UnitKind::Const, assignment))
}

/// `MAX_RETRIES`, `_LIMIT`, `GRÜSSE`: at least one uppercase letter, no
/// lowercase ones.
fn is_constant_name(name: &str) -> bool {
    name.chars().any(char::is_uppercase)
        && name
            .chars()
            .all(|c| c == '_' || (c.is_alphanumeric() && !c.is_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::is_constant_name;

    #[test]
    fn constant_names() {
        for name in ["MAX", "MAX_RETRIES", "_LIMIT", "V2", "GRÜSSE"] {
            assert!(is_constant_name(name), "{name}");
        }
        for name in ["max", "Max", "__all__", "_", "__", "x1", "ÄpfEL"] {
            assert!(!is_constant_name(name), "{name}");
        }
    }
}
