//! Stage 3, *fetch notes*: the notes of the blamed commits that the query
//! admits, read once per read.

use std::collections::HashSet;
use std::rc::Rc;

use chrono::{DateTime, Utc};
use gitctx::{BlameEntry, ObjectId};
use ultragit_schema::{Annotation, SCHEMA_V1};

use crate::error::ReadError;
use crate::query::{ReadQuery, SinceFilter};
use crate::regions::Fetched;

use super::{NO_NOTES_HINT, NOTES_REF, Run};

/// What stage 3 found: the notes that passed the filters.
pub(super) struct FetchedNotes {
    /// How many distinct commits blame named.
    pub(super) commits_examined: u32,
    pub(super) fetched: Vec<Fetched>,
}

impl Run<'_> {
    /// Stage 3: the notes of the blamed commits that the query admits
    /// ([`Run::admit`]).
    pub(super) fn fetch_notes(
        &mut self,
        blames: &[Vec<BlameEntry>],
        query: &ReadQuery,
    ) -> Result<FetchedNotes, ReadError> {
        let mut commits: Vec<String> = Vec::new();
        let mut seen = HashSet::new();
        for entry in blames.iter().flatten() {
            let hex = entry.commit.to_hex();
            if seen.insert(hex.clone()) {
                commits.push(hex);
            }
        }
        self.load_notes(&commits)?;
        let fetched: Vec<Fetched> = commits
            .iter()
            .filter_map(|commit| self.admit(commit, query))
            .collect();
        if !self.notes_ref_exists {
            self.warnings.push(NO_NOTES_HINT.to_owned());
        }
        Ok(FetchedNotes {
            commits_examined: commits.len() as u32,
            fetched,
        })
    }

    /// The loaded note of `commit` when the query admits it: its commit is not
    /// before `--since` and its context level passes `--context-level`.
    pub(super) fn admit(&mut self, commit: &str, query: &ReadQuery) -> Option<Fetched> {
        let annotation = Rc::clone(self.notes.get(commit)?.as_ref()?);
        let timestamp = annotation.timestamp_utc()?;
        let committed = self.commit_time(commit).unwrap_or(timestamp);
        if self.cutoff.is_some_and(|cutoff| committed < cutoff)
            || !query.context_level.admits(&annotation.context_level)
        {
            return None;
        }
        Some(Fetched {
            commit: commit.to_owned(),
            annotation,
            timestamp,
            committed,
        })
    }

    /// The notes whose cross-cutting concerns may mention the scopes: the
    /// fetched ones (blame's), then every other note this read loaded — the
    /// related annotations followed and the dependency scan's recent
    /// annotated commits — that the query admits, newest commit first. A
    /// concern is declared once, in the note of the commit that wrote it, so a
    /// member whose lines that commit no longer holds (or never touched) finds
    /// it only this way.
    pub(super) fn concern_notes(&mut self, fetched: &[Fetched], query: &ReadQuery) -> Vec<Fetched> {
        let fetched_commits: HashSet<&str> = fetched.iter().map(|f| f.commit.as_str()).collect();
        let mut others: Vec<String> = self
            .notes
            .iter()
            .filter(|(commit, note)| note.is_some() && !fetched_commits.contains(commit.as_str()))
            .map(|(commit, _)| commit.clone())
            .collect();
        others.sort();
        let mut extra: Vec<Fetched> = others
            .iter()
            .filter_map(|commit| self.admit(commit, query))
            .collect();
        extra.sort_by(|a, b| b.committed.cmp(&a.committed).then(a.commit.cmp(&b.commit)));
        let mut all = fetched.to_vec();
        all.extend(extra);
        all
    }

    /// Reads and parses the notes of `commits` not read yet; malformed ones are
    /// skipped with the spec's warning.
    pub(super) fn load_notes(&mut self, commits: &[String]) -> Result<(), ReadError> {
        let wanted: Vec<ObjectId> = commits
            .iter()
            .filter(|c| !self.notes.contains_key(*c))
            .filter_map(|c| c.parse().ok())
            .collect();
        if wanted.is_empty() {
            return Ok(());
        }
        let read = self.repo().notes(NOTES_REF)?.read_many(&wanted)?;
        for id in &wanted {
            self.notes.insert(id.to_hex(), None);
        }
        for (id, bytes) in read.too_large {
            self.warnings.push(format!(
                "Skipping the annotation on commit {}: it is {bytes} bytes, over the limit of {} bytes",
                id.to_hex(),
                gitctx::MAX_NOTE_BYTES
            ));
        }
        let pending = crate::pending::read(self.repo(), &wanted)?;
        for (id, text) in read.found {
            let hex = id.to_hex();
            let mut parsed = Annotation::from_json(&text)
                .ok()
                .filter(|a| a.timestamp_utc().is_some());
            if let (Some(annotation), Some(corrections)) = (parsed.as_mut(), pending.get(&id)) {
                crate::pending::join(annotation, corrections);
            }
            match &parsed {
                None => self
                    .warnings
                    .push(format!("Skipping malformed annotation on commit {hex}")),
                Some(annotation) if annotation.schema != SCHEMA_V1 => {
                    self.warnings.push(format!(
                        "The annotation on commit {hex} declares \"$schema\": {:?}, not \"{SCHEMA_V1}\"; it is read as {SCHEMA_V1} and fields this version does not know are ignored",
                        annotation.schema
                    ));
                }
                Some(_) => {}
            }
            self.notes.insert(hex, parsed.map(Rc::new));
        }
        Ok(())
    }

    pub(super) fn since_cutoff(
        &self,
        since: Option<&SinceFilter>,
    ) -> Result<Option<DateTime<Utc>>, ReadError> {
        match since {
            None => Ok(None),
            Some(SinceFilter::Date(date)) => Ok(Some(*date)),
            Some(SinceFilter::Sha(rev)) => {
                let commit = self
                    .repo()
                    .commit_info(rev)
                    .map_err(|_| ReadError::InvalidSince { value: rev.clone() })?;
                Ok(Some(commit.committer.time.to_utc()))
            }
        }
    }
}
