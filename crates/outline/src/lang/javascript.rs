//! JavaScript (and what TypeScript shares with it): function declarations,
//! classes and their methods, and functions bound by name: `const f = () =>
//! …` / `function () {}` at the top level or in a namespace, and class
//! fields holding one (`handleClick = () => { … }`). `export` statements wrap
//! declarations. Qualified names use `.` (`Router.add`). Hooks: names and
//! signatures (up to `=>`) of bound functions, and the comments and
//! decorators directly above a unit.

use tree_sitter::Node;

use super::{
    ContainerRole, DEFAULT_HOOKS, Hooks, LanguageSpec, Scope, collapsed, comments_above, text,
    text_before,
};
use crate::UnitKind;

#[rustfmt::skip]
pub(crate) static SPEC: LanguageSpec = LanguageSpec {
    name: "javascript", extensions: &["js", "mjs", "cjs", "jsx"], separator: ".", grammar,
    units: &[
        ("function_declaration", UnitKind::Function), ("generator_function_declaration", UnitKind::Function),
        ("class_declaration", UnitKind::Class), ("method_definition", UnitKind::Function),
    ],
    containers: &[("class_declaration", ContainerRole::Type)], body_field: "body",
    body_kinds: &["statement_block", "class_body"],
    wrappers: &[("export_statement", "declaration")], transparent: &[],
    comment_kinds: &["comment"], signature_stops: &[], signature_trailing: &[],
    hooks: HOOKS,
};

/// The hooks JavaScript and TypeScript share.
pub(super) const HOOKS: Hooks = Hooks {
    unit_name,
    signature,
    extra_unit,
    leading: comments_above,
    ..DEFAULT_HOOKS
};

fn grammar() -> tree_sitter::Language {
    tree_sitter_javascript::LANGUAGE.into()
}

/// Values that make a binding a function.
const FUNCTION_VALUES: &[&str] = &[
    "arrow_function",
    "function_expression",
    "function",
    "generator_function",
];

/// A `const`/`let`/`var` binding a function is named by its variable; a
/// JavaScript class field by its property.
fn unit_name(node: Node<'_>, source: &str) -> Option<String> {
    let name = match node.kind() {
        "lexical_declaration" | "variable_declaration" => {
            bound_function(node)?.child_by_field_name("name")?
        }
        "field_definition" => node.child_by_field_name("property")?,
        _ => return None,
    };
    Some(collapsed(text(name, source)))
}

/// A bound function's signature runs to its body: `const f = (a, b) =>`.
fn signature(node: Node<'_>, source: &str) -> Option<String> {
    let function = match node.kind() {
        "lexical_declaration" | "variable_declaration" => {
            bound_function(node)?.child_by_field_name("value")?
        }
        "field_definition" | "public_field_definition" => node.child_by_field_name("value")?,
        _ => return None,
    };
    let body = function.child_by_field_name("body")?;
    Some(text_before(node, body, source).to_owned())
}

/// `const f = () => …` outside classes and function bodies; a class field
/// holding a function (a method).
fn extra_unit<'t>(node: Node<'t>, _source: &str, scope: Scope) -> Option<(UnitKind, Node<'t>)> {
    match node.kind() {
        "lexical_declaration" | "variable_declaration"
            if scope.container != Some(ContainerRole::Type) =>
        {
            bound_function(node).map(|_| (UnitKind::Function, node))
        }
        "field_definition" | "public_field_definition" => {
            let value = node.child_by_field_name("value")?;
            FUNCTION_VALUES
                .contains(&value.kind())
                .then_some((UnitKind::Function, node))
        }
        // A TypeScript `namespace` that is not exported is an expression.
        "expression_statement" => {
            let inner = node.named_child(0)?;
            (inner.kind() == "internal_module").then_some((UnitKind::Module, inner))
        }
        _ => None,
    }
}

/// The declarator of a declaration binding exactly one function.
fn bound_function(node: Node<'_>) -> Option<Node<'_>> {
    let mut cursor = node.walk();
    let mut declarators = node
        .named_children(&mut cursor)
        .filter(|child| child.kind() == "variable_declarator");
    let declarator = declarators.next()?;
    if declarators.next().is_some() {
        return None;
    }
    let value = declarator.child_by_field_name("value")?;
    FUNCTION_VALUES
        .contains(&value.kind())
        .then_some(declarator)
}
