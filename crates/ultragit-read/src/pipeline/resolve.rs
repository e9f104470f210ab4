//! Stage 1, *resolve*: the scopes of each file asked for, from today's
//! outline or, failing it, from the notes.

use std::rc::Rc;

use gitctx::{BlameEntry, ObjectId};
use outline::{MatchKind, OutlineError, Unit};

use crate::error::ReadError;
use crate::query::ReadQuery;
use crate::regions::surviving_lines;
use crate::scope::{
    FileAtHead, NamedSpan, Resolved, ResolvedScope, dedup, resolve_scope, scopes_from_notes,
};

use super::Run;

impl Run<'_> {
    /// Stage 1: the scopes of every file asked for. With several files, an
    /// anchor needs to exist in one of them only: the others are left out,
    /// with a warning.
    pub(super) fn resolve(&mut self, query: &ReadQuery) -> Result<Resolved, ReadError> {
        let paths = dedup(&query.files);
        let mut scopes = Vec::new();
        let mut files = Vec::new();
        let mut ambiguous = false;
        let mut first_miss = None;
        for path in &paths {
            let file = self.file_at_head(path)?;
            match self.resolve_file(&file, query) {
                Ok(resolved) => {
                    ambiguous |= resolved.iter().any(|s| s.echo.ambiguous);
                    scopes.extend(resolved);
                }
                Err(err @ ReadError::AnchorNotFound { .. }) if paths.len() > 1 => {
                    self.warnings.push(format!(
                        "{path}: no unit matches '{}'; the file is left out",
                        query.anchor.as_deref().unwrap_or_default()
                    ));
                    first_miss.get_or_insert(err);
                }
                Err(err) => return Err(err),
            }
            files.push(file);
        }
        if scopes.is_empty()
            && let Some(err) = first_miss
        {
            return Err(err);
        }
        Ok(Resolved {
            paths,
            files,
            scopes,
            ambiguous,
        })
    }

    /// The scopes of `query` in `file`: today's outline first; when the anchor
    /// names no unit of it (a macro-defined item such as `rgtest!(name, …)`,
    /// or a file without a grammar), the notes ([`Run::resolve_by_notes`]).
    /// Without either, a file with a grammar has no such anchor; one without
    /// keeps its whole-file scope, matched by name.
    pub(super) fn resolve_file(
        &mut self,
        file: &FileAtHead,
        query: &ReadQuery,
    ) -> Result<Vec<ResolvedScope>, ReadError> {
        let mut warnings = Vec::new();
        let outcome = resolve_scope(file, query, &mut warnings);
        let anchor = query.anchor.as_deref().unwrap_or_default();
        let unresolved = match &outcome {
            Err(ReadError::AnchorNotFound { .. }) => true,
            // Only a fuzzy match (`reads_stdn` for `reads_stdin`): a note
            // naming the anchor exactly is the better answer.
            Ok(scopes) => {
                file.units.is_none()
                    || scopes.iter().all(|s| {
                        let name = s.echo.anchor_name.as_deref().unwrap_or_default();
                        matches!(
                            outline::match_name(anchor, name),
                            Some(MatchKind::Fuzzy { .. })
                        )
                    })
            }
            Err(_) => false,
        };
        if unresolved && query.anchor.is_some() {
            let by_notes = self.resolve_by_notes(&file.path, anchor)?;
            if !by_notes.is_empty() {
                return Ok(by_notes);
            }
        }
        self.warnings.extend(warnings);
        outcome
    }

    /// The scopes of `anchor` in `path` according to the notes: the regions of
    /// the commits blame names in the file whose anchor is `anchor` (exactly
    /// or unqualified), carried to today's lines through blame (the annotated
    /// commit's lines → today's), overlapping spans merged. Several disjoint
    /// spans are an ambiguous anchor. Empty when no note names it.
    pub(super) fn resolve_by_notes(
        &mut self,
        path: &str,
        anchor: &str,
    ) -> Result<Vec<ResolvedScope>, ReadError> {
        let entries = self.blame_lines(path, None)?;
        self.file_blames.insert(path.to_owned(), entries.clone());
        let mut commits: Vec<String> = entries.iter().map(|e| e.commit.to_hex()).collect();
        commits.sort();
        commits.dedup();
        self.load_notes(&commits)?;
        let mut found: Vec<NamedSpan> = Vec::new();
        for commit in &commits {
            let Some(Some(annotation)) = self.notes.get(commit).cloned() else {
                continue;
            };
            let own: Vec<&BlameEntry> = entries
                .iter()
                .filter(|e| e.commit.to_hex() == *commit)
                .collect();
            for region in &annotation.regions {
                let exact = match outline::match_name(anchor, &region.ast_anchor.name) {
                    Some(MatchKind::Exact) => true,
                    Some(MatchKind::Unqualified) => false,
                    _ => continue,
                };
                if let Some(today) = surviving_lines(region, &own) {
                    found.push(NamedSpan {
                        today,
                        anchor: region.ast_anchor.clone(),
                        exact,
                    });
                }
            }
        }
        Ok(scopes_from_notes(path, anchor, found))
    }

    /// The file at HEAD and its outline; a missing grammar is a warning.
    pub(super) fn file_at_head(&mut self, path: &str) -> Result<FileAtHead, ReadError> {
        let (blob, bytes) = match self.repo().file_with_id_at(&self.head.to_hex(), path) {
            Ok(found) => found,
            Err(gitctx::Error::PathNotFound { .. } | gitctx::Error::NotAFile { .. }) => {
                return Err(ReadError::FileNotFound {
                    path: path.to_owned(),
                });
            }
            Err(err) => return Err(ReadError::Git(err)),
        };
        let line_count = gitctx::count_lines(&bytes);
        let text = String::from_utf8_lossy(&bytes);
        let units = match self.outline_of(path, blob, &text) {
            Ok(units) => Some(units),
            Err(OutlineError::NoGrammar { extension, .. }) => {
                let language = extension.unwrap_or_else(|| format!("'{path}'"));
                let warning = format!(
                    "No tree-sitter grammar for {language}. Anchor resolution unavailable."
                );
                if !self.warnings.contains(&warning) {
                    self.warnings.push(warning);
                }
                None
            }
            Err(err) => {
                self.warnings.push(format!(
                    "Could not outline {path} ({err}). Anchor resolution unavailable."
                ));
                None
            }
        };
        self.outlines
            .insert(path.to_owned(), units.clone().map(Rc::new));
        Ok(FileAtHead {
            path: path.to_owned(),
            line_count,
            units,
            blank: FileAtHead::blank_lines(&bytes),
        })
    }

    /// Today's outline of `path`, cached (`None`: not a file at HEAD or no grammar).
    pub(super) fn outline_at_head(&mut self, path: &str) -> Option<Rc<Vec<Unit>>> {
        if let Some(cached) = self.outlines.get(path) {
            return cached.clone();
        }
        let units = self
            .repo()
            .file_with_id_at(&self.head.to_hex(), path)
            .ok()
            .and_then(|(blob, bytes)| {
                self.outline_of(path, blob, &String::from_utf8_lossy(&bytes))
                    .ok()
            })
            .map(Rc::new);
        self.outlines.insert(path.to_owned(), units.clone());
        units
    }

    /// The outline of `path`, whose content at HEAD is the blob `blob`,
    /// `text`: through the outline cache when there is one.
    pub(super) fn outline_of(
        &self,
        path: &str,
        blob: ObjectId,
        text: &str,
    ) -> Result<Vec<Unit>, OutlineError> {
        match &self.pipeline.outline_cache {
            Some(cache) => Ok(cache.outline(self.repo(), path, blob, text)?.0),
            None => outline::outline(path, text),
        }
    }
}
