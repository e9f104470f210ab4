//! Stage 6, after ranking: the items later notes on the same unit retire
//! ([`crate::decisions`]), withheld.

use std::collections::HashMap;
use std::rc::Rc;

use gitctx::ObjectId;
use ultragit_schema::{Annotation, RegionAnnotation, ScoredRegion};

use crate::decisions;
use crate::error::ReadError;
use crate::index::DepsIndex;
use crate::query::ReadQuery;
use crate::scope::Resolved;

use super::{NOTES_REF, Run};

impl Run<'_> {
    /// The notes index, opened (and brought up to date) once per read.
    pub(super) fn index(&mut self) -> Result<Rc<DepsIndex>, ReadError> {
        if let Some(index) = &self.index {
            return Ok(Rc::clone(index));
        }
        let index = Rc::new(DepsIndex::open(self.repo(), NOTES_REF)?);
        self.index = Some(Rc::clone(&index));
        Ok(index)
    }

    /// Removes the retired items from `regions` (see [`crate::decisions`]):
    /// those a later note on the same unit retires, found among the notes
    /// loaded so far and the retiring notes the index lists for the scopes'
    /// units (read only when there are any);
    /// returns how many items were withheld, the items of flagged regions
    /// included.
    pub(super) fn retire(
        &mut self,
        query: &ReadQuery,
        resolved: &Resolved,
        regions: &mut [ScoredRegion],
    ) -> Result<u32, ReadError> {
        let flagged: u32 = regions
            .iter()
            .filter(|r| decisions::flagged(r))
            .map(decisions::items_of)
            .sum();
        if !self.notes_ref_exists || regions.is_empty() {
            return Ok(flagged);
        }
        // Every name the scopes' files go by: today's and those blame gives.
        let mut names: Vec<String> = Vec::new();
        for scope in &resolved.scopes {
            for name in std::iter::once(scope.file()).chain(
                self.blamed_paths
                    .get(scope.file())
                    .into_iter()
                    .flatten()
                    .map(String::as_str),
            ) {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_owned());
                }
            }
        }
        let index = self.index()?;
        // Retiring notes under any path: a former name of the file whose
        // lines no longer survive is not among the names blame gives.
        let (listed, other_paths): (Vec<String>, bool) = {
            let anchors: Vec<&str> = query.anchor.as_deref().into_iter().collect();
            let found = index.retiring(&anchors);
            let other = found
                .iter()
                .flat_map(|a| &a.regions)
                .any(|(file, _)| !names.iter().any(|n| n == file));
            (
                found.into_iter().map(|a| a.commit.to_hex()).collect(),
                other,
            )
        };
        if other_paths {
            // Then the file's former names, from its renames (one `git log`).
            let head = self.head.to_hex();
            for scope_file in resolved
                .scopes
                .iter()
                .map(|s| s.file().to_owned())
                .collect::<Vec<_>>()
            {
                for name in crate::lineage::names_of(self.repo(), &head, &index, &scope_file)? {
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
            }
        }
        self.load_notes(&listed)?;
        let mut retiring: Vec<(ObjectId, &RegionAnnotation)> = Vec::new();
        let notes: Vec<(ObjectId, Rc<Annotation>)> = self
            .notes
            .iter()
            .filter_map(|(commit, note)| Some((commit.parse().ok()?, Rc::clone(note.as_ref()?))))
            .filter(|(_, note): &(ObjectId, Rc<Annotation>)| {
                note.regions.iter().any(|r| !r.retires.is_empty())
            })
            .collect();
        for (commit, note) in &notes {
            for region in note.regions.iter().filter(|r| !r.retires.is_empty()) {
                retiring.push((*commit, region));
            }
        }
        if retiring.is_empty() {
            return Ok(flagged);
        }
        let mut descends: HashMap<(ObjectId, ObjectId), bool> = HashMap::new();
        let head = self.head;
        let mut withheld = 0;
        for scored in regions.iter_mut() {
            let Ok(item_commit) = scored.commit_sha.parse::<ObjectId>() else {
                continue;
            };
            let unit = query
                .anchor
                .clone()
                .unwrap_or_else(|| scored.region.ast_anchor.name.clone());
            let file = scored.region.file.clone();
            let mut texts: Vec<&str> = Vec::new();
            for (commit, region) in &retiring {
                let same_file = region.file == file || names.contains(&region.file);
                if *commit == item_commit
                    || !same_file
                    || !crate::index::anchors_match(&region.ast_anchor.name, &unit)
                {
                    continue;
                }
                let repo = self.repo();
                let mut is_ancestor = |a: ObjectId, d: ObjectId| {
                    *descends
                        .entry((a, d))
                        .or_insert_with(|| a == d || repo.is_ancestor(a, d).unwrap_or(false))
                };
                if is_ancestor(item_commit, *commit) && is_ancestor(*commit, head) {
                    texts.extend(region.retires.iter().map(String::as_str));
                }
            }
            if !texts.is_empty() && !decisions::flagged(scored) {
                withheld += decisions::remove_retired(scored, |text| {
                    texts
                        .iter()
                        .any(|t| ultragit_schema::same_item_text(t, text))
                });
            }
        }
        Ok(flagged + withheld)
    }
}
