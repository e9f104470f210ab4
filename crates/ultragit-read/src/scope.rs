//! Stage 1 of spec 003 §4: what the query is about, file by file — the whole
//! file, a line range, or the units an anchor resolves to in today's outline.

use outline::Unit;
use ultragit_schema::{AstAnchor, LineRange, ScopeEcho, ScopeUnit};

use crate::error::ReadError;
use crate::query::ReadQuery;

/// One resolved query scope (spec 003 §4.2 `ResolvedScope`): what the output
/// echoes of it, and the anchor as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResolvedScope {
    /// The file, today's lines (`None`: the whole file), the unit the anchor
    /// resolved to, whether it is one of several, and how it was resolved
    /// (`resolved_by`: `outline`, or `notes` — the annotated regions that name
    /// it, carried to today's lines by blame).
    pub(crate) echo: ScopeEcho,
    /// The anchor as asked (used to match regions by name, even when it could
    /// not be resolved because the file has no grammar).
    pub(crate) query_anchor: Option<String>,
}

impl ResolvedScope {
    /// The whole of `file`, for a query whose anchor is `query_anchor`.
    fn whole(file: &str, query_anchor: Option<String>) -> ResolvedScope {
        ResolvedScope {
            echo: ScopeEcho {
                file: file.to_owned(),
                ..ScopeEcho::default()
            },
            query_anchor,
        }
    }

    /// `lines` of `file`, the unit `anchor` (`[name, type]`, signature) resolved
    /// to, through the notes or the outline.
    fn unit(
        file: &str,
        lines: LineRange,
        anchor: AstAnchor,
        ambiguous: bool,
        query_anchor: &str,
        by_notes: bool,
    ) -> ResolvedScope {
        ResolvedScope {
            echo: ScopeEcho {
                file: file.to_owned(),
                line_range: Some(lines),
                anchor_name: Some(anchor.name),
                anchor_type: Some(anchor.unit_type),
                anchor_signature: anchor.signature,
                ambiguous,
                resolved_by: Some(if by_notes { "notes" } else { "outline" }.to_owned()),
                units: Vec::new(),
            },
            query_anchor: Some(query_anchor.to_owned()),
        }
    }

    pub(crate) fn file(&self) -> &str {
        &self.echo.file
    }

    /// The anchor was resolved through the notes, not today's outline.
    pub(crate) fn resolved_by_notes(&self) -> bool {
        self.echo.resolved_by.as_deref() == Some("notes")
    }

    /// The lines blame must cover for this scope: its lines, widened to the
    /// units a line range lies in (their notes count as if asked for by name,
    /// so their annotated lines elsewhere in the unit must be blamed too);
    /// `None`: the whole file.
    pub(crate) fn blame_range(&self) -> Option<LineRange> {
        let range = self.echo.line_range?;
        Some(self.echo.units.iter().fold(range, |hull, unit| LineRange {
            start: hull.start.min(unit.lines.start),
            end: hull.end.max(unit.lines.end),
        }))
    }

    /// The name regions are matched against: the unit the anchor resolved to
    /// (so `B::run` does not match the scope of `A::run`), or the anchor as
    /// asked when it could not be resolved; `None` without an anchor.
    pub(crate) fn anchor(&self) -> Option<&str> {
        self.echo
            .anchor_name
            .as_deref()
            .or(self.query_anchor.as_deref())
    }
}

/// A file at HEAD: its length and outline.
pub(crate) struct FileAtHead {
    pub(crate) path: String,
    pub(crate) line_count: u32,
    /// `None`: no grammar for this file.
    pub(crate) units: Option<Vec<Unit>>,
    /// Which lines hold only whitespace (line `n` at `n - 1`).
    pub(crate) blank: Vec<bool>,
}

impl FileAtHead {
    /// Which lines of `bytes` hold only whitespace (line `n` at `n - 1`).
    pub(crate) fn blank_lines(bytes: &[u8]) -> Vec<bool> {
        let mut lines: Vec<bool> = bytes
            .split(|&b| b == b'\n')
            .map(|line| line.iter().all(u8::is_ascii_whitespace))
            .collect();
        if bytes.ends_with(b"\n") {
            lines.pop();
        }
        lines
    }
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
    let whole = ResolvedScope::whole(&file.path, query.anchor.clone());
    if let Some(lines) = query.lines {
        if lines.end > file.line_count {
            return Err(ReadError::LineRangeOutOfBounds {
                start: lines.start,
                end: lines.end,
                len: file.line_count,
            });
        }
        let mut lines_only = whole;
        lines_only.echo.line_range = Some(lines);
        if let Some(units) = &file.units {
            lines_only.echo.units = units_of_lines(units, lines, &file.blank);
        }
        return Ok(vec![lines_only]);
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
        .map(|unit| {
            let lines = LineRange {
                start: unit.lines.start,
                end: unit.lines.end.min(file.line_count.max(unit.lines.start)),
            };
            let found = AstAnchor {
                unit_type: unit.kind.as_str().to_owned(),
                name: unit.qualified_name.clone(),
                signature: Some(unit.signature.clone()),
            };
            ResolvedScope::unit(
                &file.path,
                lines,
                found,
                resolution.ambiguous,
                anchor,
                false,
            )
        })
        .collect())
}

/// The units `lines` lie in: for each line that is not blank (`blank[n - 1]`),
/// the innermost unit holding it (a line inside `Client::connect` is
/// `Client::connect`'s, not `Client`'s; the line `impl Client {` is
/// `Client`'s), each unit once, in file order.
///
/// So a read of some lines of a function finds the function's notes, and one
/// across two functions finds both, while a container's notes count only
/// where the lines reach code of its own past its members (a blank line
/// between two methods is nobody's).
pub(crate) fn units_of_lines(units: &[Unit], lines: LineRange, blank: &[bool]) -> Vec<ScopeUnit> {
    let blank = |line: u32| blank.get(line as usize - 1).copied().unwrap_or(false);
    let overlaps = |u: &Unit| u.lines.start <= lines.end && u.lines.end >= lines.start;
    let mut out: Vec<ScopeUnit> = Vec::new();
    for unit in units.iter().filter(|u| overlaps(u)) {
        let own = LineRange {
            start: unit.lines.start.max(lines.start),
            end: unit.lines.end.min(lines.end),
        };
        // The parts of `own` held by units nested in this one.
        let mut nested: Vec<(u32, u32)> = units
            .iter()
            .filter(|n| {
                n.lines.start >= unit.lines.start
                    && n.lines.end <= unit.lines.end
                    && (n.lines.start, n.lines.end) != (unit.lines.start, unit.lines.end)
            })
            .map(|n| (n.lines.start.max(own.start), n.lines.end.min(own.end)))
            .filter(|(start, end)| start <= end)
            .collect();
        nested.sort_unstable();
        // The first line of `own` no nested unit holds and that is not blank.
        let mut next = own.start;
        let mut nested = nested.into_iter().peekable();
        let covered = loop {
            while let Some((_, end)) = nested.next_if(|&(start, _)| start <= next) {
                next = next.max(end.saturating_add(1));
            }
            if next > own.end {
                break true;
            }
            if !blank(next) {
                break false;
            }
            next += 1;
        };
        if !covered
            && !out
                .iter()
                .any(|u| u.name == unit.qualified_name && u.lines.start == unit.lines.start)
        {
            out.push(ScopeUnit {
                name: unit.qualified_name.clone(),
                unit_type: unit.kind.as_str().to_owned(),
                lines: LineRange {
                    start: unit.lines.start,
                    end: unit.lines.end,
                },
            });
        }
    }
    out.sort_by_key(|u| (u.lines.start, std::cmp::Reverse(u.lines.end)));
    out
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
            Some(ResolvedScope::unit(
                path,
                range,
                best.anchor,
                ambiguous,
                anchor,
                true,
            ))
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
