//! The sync checks: with `ultragit.syncRemote` set, the remote exists and has
//! the tracking ref's fetch refspec; no refspec force-writes the local notes;
//! and (`sync-refused`) which notes of the remote's, as last fetched, a sync
//! refuses (not regular files, over the size limit, not valid annotations):
//! they never replace a local note, and are listed so someone can look.

use super::config::glob_match;
use super::{Check, Doctor, Finding, Repair};
use crate::NOTES_REF;
use crate::error::NotesError;
use crate::sync::{SYNC_REMOTE_KEY, admit, fetch_refspec as sync_refspec, tracking_ref};

/// How many refused notes the check names one by one.
const NAMED: usize = 5;

impl Doctor<'_> {
    /// `ultragit.syncRemote`, when set (blank counts as unset).
    pub(super) fn sync_remote(&self) -> Result<Option<String>, NotesError> {
        Ok(self
            .repo
            .config_get(SYNC_REMOTE_KEY)?
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty()))
    }

    /// The sync check, then (sync enabled) the refused-notes check.
    pub(super) fn sync_checks(&self) -> Result<Vec<Finding>, NotesError> {
        let mut findings = vec![self.sync()?];
        if let Some(remote) = self.sync_remote()?
            && !remote.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            findings.push(self.refused(&remote)?.into());
        }
        Ok(findings)
    }

    /// The notes on `remote`'s tracking ref that a sync refuses.
    fn refused(&self, remote: &str) -> Result<Check, NotesError> {
        let id = "sync-refused";
        let tracking = tracking_ref(remote);
        let Ok(theirs) = self.repo.resolve(&tracking) else {
            return Ok(Check::ok(
                id,
                format!("no notes fetched from '{remote}' yet"),
            ));
        };
        let refused = self.repo.notes(NOTES_REF)?.refused_in(theirs, admit)?;
        if refused.is_empty() {
            return Ok(Check::ok(
                id,
                format!("every note fetched from '{remote}' is a valid annotation"),
            ));
        }
        let named: Vec<String> = refused
            .iter()
            .take(NAMED)
            .map(|(commit, why)| format!("{} ({why})", commit.short()))
            .collect();
        let more = refused.len().saturating_sub(NAMED);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        Ok(Check::warn(
            id,
            format!(
                "{} notes on '{remote}' were refused by sync and never replace local ones: {}{more}",
                refused.len(),
                named.join(", ")
            ),
        )
        .with_fix(format!(
            "ask who pushed them (git log {tracking}); `git notes --ref={tracking} show <commit>` shows one; the local notes are unaffected"
        )))
    }

    pub(super) fn sync(&self) -> Result<Finding, NotesError> {
        let id = "sync";
        // A forced refspec whose destination is the local notes ref replaces
        // local notes with the remote's on every fetch.
        let mut clobbering = Vec::new();
        for (key, spec) in self.fetch_refspecs()? {
            if let Some(dst) = spec.split_once(':').map(|(_, dst)| dst)
                && spec.starts_with('+')
                && glob_match(dst, NOTES_REF)
            {
                clobbering.push(format!("git config --fixed-value --unset {key} '{spec}'"));
            }
        }
        if !clobbering.is_empty() {
            return Ok(Check::fail(
                id,
                format!("a forced fetch refspec writes {NOTES_REF} directly: every fetch replaces local notes with the remote's"),
            )
            .with_fix(format!(
                "{} (then `ultragit init --sync`, which fetches into a tracking ref and merges)",
                clobbering.join(" && ")
            ))
            .into());
        }
        let Some(remote) = self.sync_remote()? else {
            return Ok(Check::ok(
                id,
                "not enabled: notes stay in this clone (`ultragit init --sync` shares them through a remote)",
            )
            .into());
        };
        if remote.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Ok(Check::fail(
                id,
                format!("{SYNC_REMOTE_KEY}='{remote}' is not a remote name"),
            )
            .with_fix(format!("git config {SYNC_REMOTE_KEY} <remote>"))
            .into());
        }
        if self
            .repo
            .config_get(&format!("remote.{remote}.url"))?
            .is_none()
        {
            return Ok(Check::fail(
                id,
                format!("{SYNC_REMOTE_KEY}={remote}, but there is no remote '{remote}'"),
            )
            .with_fix(format!(
                "git remote add {remote} <url> (or git config {SYNC_REMOTE_KEY} <an existing remote>)"
            ))
            .into());
        }
        let key = format!("remote.{remote}.fetch");
        let spec = sync_refspec(&remote);
        if !self.config_all(&key)?.contains(&spec) {
            return Ok(Finding {
                check: Check::fail(
                    id,
                    format!("remote '{remote}' has no fetch refspec for notes, so sync never sees teammates' notes"),
                )
                .with_fix(format!("git config --add {key} '{spec}'")),
                repair: Some(Repair::Config(vec![(key, spec, true)])),
            });
        }
        Ok(Check::ok(id, format!("notes sync with '{remote}' ({spec})")).into())
    }

    /// Every `remote.*.fetch` value, with its key.
    fn fetch_refspecs(&self) -> Result<Vec<(String, String)>, NotesError> {
        let command = self
            .repo
            .git()
            .args(["config", "--get-regexp", r"^remote\..*\.fetch$"]);
        let output = command.run_unchecked()?;
        match output.status.code() {
            Some(0) => Ok(String::from_utf8_lossy(&output.stdout)
                .lines()
                .filter_map(|line| line.split_once(' '))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect()),
            Some(1) => Ok(Vec::new()),
            _ => Err(command.failure(&output).into()),
        }
    }
}
