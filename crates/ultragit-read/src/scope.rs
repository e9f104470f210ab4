//! Stage 1 of spec 003 §4: what the query is about, file by file — the whole
//! file, a line range, or the units an anchor resolves to in today's outline.

use outline::Unit;
use ultragit_schema::{AstAnchor, LineRange};

use crate::error::ReadError;
use crate::query::ReadQuery;

/// One resolved query scope (spec 003 §4.2 `ResolvedScope`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedScope {
    pub file: String,
    /// Today's lines; `None` for the whole file.
    pub line_range: Option<LineRange>,
    /// The unit the anchor resolved to.
    pub anchor_name: Option<String>,
    pub anchor_type: Option<String>,
    pub anchor_signature: Option<String>,
    /// One of several units the anchor matched.
    pub ambiguous: bool,
    /// The anchor as asked (used to match regions by name, even when it could not
    /// be resolved because the file has no grammar).
    pub query_anchor: Option<String>,
    /// The anchor was resolved through the notes (the annotated regions that
    /// name it, carried to today's lines by blame), not today's outline.
    pub resolved_by_notes: bool,
}

impl ResolvedScope {
    /// The name regions are matched against: the unit the anchor resolved to
    /// (so `B::run` does not match the scope of `A::run`), or the anchor as
    /// asked when it could not be resolved; `None` without an anchor.
    pub(crate) fn anchor(&self) -> Option<&str> {
        self.anchor_name.as_deref().or(self.query_anchor.as_deref())
    }
}

/// A file at HEAD: its length and outline.
pub(crate) struct FileAtHead {
    pub(crate) path: String,
    pub(crate) line_count: u32,
    /// `None`: no grammar for this file.
    pub(crate) units: Option<Vec<Unit>>,
}

/// What stage 1 found: the scopes, and the files they are in.
pub(crate) struct Resolved {
    /// The files asked for, each once, in the order asked.
    pub(crate) paths: Vec<String>,
    /// The files that were read (a file left out for a missing anchor too).
    pub(crate) files: Vec<FileAtHead>,
    pub(crate) scopes: Vec<ResolvedScope>,
    /// Some scope is one of several units the anchor matched.
    pub(crate) ambiguous: bool,
}

impl Resolved {
    /// Today's outline of `path`, if it was read and has a grammar.
    pub(crate) fn units(&self, path: &str) -> Option<&[Unit]> {
        self.files
            .iter()
            .find(|f| f.path == path)
            .and_then(|f| f.units.as_deref())
    }
}

/// The scopes of `query` in `file`; the anchor's resolution warning (a fuzzy
/// match, say) goes to `warnings`.
pub(crate) fn resolve_scope(
    file: &FileAtHead,
    query: &ReadQuery,
    warnings: &mut Vec<String>,
) -> Result<Vec<ResolvedScope>, ReadError> {
    let whole = ResolvedScope {
        file: file.path.clone(),
        line_range: None,
        anchor_name: None,
        anchor_type: None,
        anchor_signature: None,
        ambiguous: false,
        query_anchor: query.anchor.clone(),
        resolved_by_notes: false,
    };
    if let Some(lines) = query.lines {
        if lines.end > file.line_count {
            return Err(ReadError::LineRangeOutOfBounds {
                start: lines.start,
                end: lines.end,
                len: file.line_count,
            });
        }
        return Ok(vec![ResolvedScope {
            line_range: Some(lines),
            ..whole
        }]);
    }
    let Some(anchor) = &query.anchor else {
        return Ok(vec![whole]);
    };
    let Some(units) = &file.units else {
        // No grammar: regions are matched by name over the whole file.
        return Ok(vec![whole]);
    };
    let resolution = outline::resolve_anchor(units, anchor).map_err(|err| match err {
        outline::AnchorError::NotFound { available, .. } => ReadError::AnchorNotFound {
            path: file.path.clone(),
            anchor: anchor.clone(),
            available,
        },
        outline::AnchorError::EmptyQuery => {
            ReadError::InvalidArgument("The anchor is empty".to_owned())
        }
    })?;
    if let Some(warning) = &resolution.warning {
        warnings.push(format!("{}: {warning}", file.path));
    }
    Ok(resolution
        .units
        .iter()
        .map(|unit| ResolvedScope {
            file: file.path.clone(),
            line_range: Some(LineRange {
                start: unit.lines.start,
                end: unit.lines.end.min(file.line_count.max(unit.lines.start)),
            }),
            anchor_name: Some(unit.qualified_name.clone()),
            anchor_type: Some(unit.kind.as_str().to_owned()),
            anchor_signature: Some(unit.signature.clone()),
            ambiguous: resolution.ambiguous,
            query_anchor: Some(anchor.clone()),
            resolved_by_notes: false,
        })
        .collect())
}

/// An annotated region named like the anchor asked for, in today's lines.
pub(crate) struct NamedSpan {
    /// The span of its surviving lines today.
    pub(crate) today: LineRange,
    /// Its anchor as the note records it.
    pub(crate) anchor: AstAnchor,
    /// The anchor matched exactly (not only unqualified).
    pub(crate) exact: bool,
}

/// The scopes of `anchor` in `path` resolved through the notes: overlapping
/// (or adjacent) spans merged, each merged span one scope named after its
/// best-matching region (exact before unqualified, then the widest). Several
/// spans make the anchor ambiguous.
pub(crate) fn scopes_from_notes(
    path: &str,
    anchor: &str,
    mut found: Vec<NamedSpan>,
) -> Vec<ResolvedScope> {
    found.sort_by_key(|f| (f.today.start, f.today.end));
    let mut groups: Vec<(LineRange, Vec<NamedSpan>)> = Vec::new();
    for span in found {
        match groups.last_mut() {
            Some((range, members)) if span.today.start <= range.end.saturating_add(1) => {
                range.end = range.end.max(span.today.end);
                members.push(span);
            }
            _ => groups.push((span.today, vec![span])),
        }
    }
    let ambiguous = groups.len() > 1;
    groups
        .into_iter()
        .filter_map(|(range, members)| {
            let best = members
                .into_iter()
                .max_by_key(|m| (m.exact, m.today.end - m.today.start))?;
            Some(ResolvedScope {
                file: path.to_owned(),
                line_range: Some(range),
                anchor_name: Some(best.anchor.name),
                anchor_type: Some(best.anchor.unit_type),
                anchor_signature: best.anchor.signature,
                ambiguous,
                query_anchor: Some(anchor.to_owned()),
                resolved_by_notes: true,
            })
        })
        .collect()
}

/// The files asked for, each once (`./a.rs` is `a.rs`), in the order asked.
pub(crate) fn dedup(files: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for file in files {
        let file = file.trim_start_matches("./").to_owned();
        if !out.contains(&file) {
            out.push(file);
        }
    }
    out
}
