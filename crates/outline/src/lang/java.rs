//! Java: classes, interfaces (and `@interface`s), enums, records, and their
//! methods and constructors, nested types included. Qualified names use `.`
//! from the outermost type (`LruCache.Entry.Entry`); the package is left
//! out. A unit's range includes its annotations (they are part of the
//! declaration) and the comments directly above it (Javadoc).

use super::{ContainerRole, DEFAULT_HOOKS, Hooks, LanguageSpec, comments_above};
use crate::UnitKind;

#[rustfmt::skip]
pub(crate) static SPEC: LanguageSpec = LanguageSpec {
    name: "java", extensions: &["java"], separator: ".", grammar,
    units: &[
        ("class_declaration", UnitKind::Class), ("record_declaration", UnitKind::Class),
        ("interface_declaration", UnitKind::Interface), ("annotation_type_declaration", UnitKind::Interface),
        ("enum_declaration", UnitKind::Enum),
        ("method_declaration", UnitKind::Function), ("constructor_declaration", UnitKind::Function),
    ],
    containers: &[
        ("class_declaration", ContainerRole::Type), ("record_declaration", ContainerRole::Type),
        ("interface_declaration", ContainerRole::Type), ("enum_declaration", ContainerRole::Type),
    ],
    body_field: "body",
    body_kinds: &["block", "constructor_body", "class_body", "interface_body", "enum_body", "annotation_type_body"],
    // An enum's methods follow its constants.
    wrappers: &[], transparent: &["enum_body_declarations"],
    comment_kinds: &["line_comment", "block_comment"], signature_stops: &[";"], signature_trailing: &[],
    hooks: Hooks { leading: comments_above, ..DEFAULT_HOOKS },
};

fn grammar() -> tree_sitter::Language {
    tree_sitter_java::LANGUAGE.into()
}
