//! `ultragit sync`: annotations travel through the team's own git remote.
//!
//! One round is: fetch the remote's `refs/notes/ultragit` into the tracking ref
//! `refs/notes/remotes/<remote>/ultragit` (the only ref a fetch force-updates;
//! the local notes ref never is), merge the tracking ref into the local notes
//! ref ([`gitctx::Notes::merge_from`]), and push the local ref without force.
//! When the push is rejected because someone pushed meanwhile, the round starts
//! again, at most [`SyncOptions::max_attempts`] times, with a growing, jittered
//! pause.
//!
//! **The merge is a union: notes from others are merged, never allowed to
//! remove or degrade yours.**
//! - A remote note is adopted only when it is a regular file under
//!   [`gitctx::MAX_NOTE_BYTES`] that parses as an `ultragit/v1` annotation
//!   ([`admit`]); anything else is *refused* ([`SyncReport::refused`], with the
//!   reason, also recorded in the notes merge commit's message) and the local
//!   note, if any, stays as it is. `ultragit doctor` lists refused notes still
//!   on the tracking ref.
//! - An adopted note for a commit annotated here too is joined with ours
//!   ([`ultragit_schema::merge::merge_texts`]: regions, concerns and
//!   corrections are a union), whichever side changed it, so an edit on the
//!   remote that drops a region cannot drop it here. A local note that is
//!   itself unreadable is replaced by the remote's valid one (a warning says so).
//! - A note the remote no longer has stays here ([`SyncReport::kept`]), whether
//!   the remote's history diverged or descends from ours: deletions never
//!   travel by a sync. The result always contains the remote's notes commit, so
//!   the push that follows is a fast-forward for the remote.
//! - Errors are classified by exit status and git's `--porcelain` push report,
//!   never by English stderr. A `[rejected]` push (not a fast-forward) starts
//!   a new round; so does a `[remote rejected]` one when the next fetch shows
//!   the remote's notes moved (another push won the race on the remote's ref
//!   lock) — when they did not move, the remote refuses ours. The errors: a remote that is not configured, a remote that
//!   cannot be reached, a push the remote refused, a push that kept losing.
//! - The remote and its URL come from `.git/config` (trusted); the transport is
//!   the user's own (credential helpers, SSH), with `GIT_TERMINAL_PROMPT=0`.
//!
//! [`enable`] (`ultragit init --sync`, `ultragit sync --enable`) adds the fetch
//! refspec for the tracking ref, sets `ultragit.syncRemote` and installs a
//! `pre-push` hook block that syncs and never fails the user's own push. The
//! push of the notes ref from inside that hook would run the hook again: our
//! push sets [`SYNC_PUSH_ENV`] and the hook block does nothing when it is set.

use std::path::Path;
use std::time::Duration;

use gitctx::{MergeKind, ObjectId, Repo, Resolution};
use safe_io::Dir;
use ultragit_schema::merge::{TextMerge, Unreadable, merge_texts};

use crate::error::NotesError;
pub use crate::error::SyncError;
use crate::setup::{HookChange, install_hook, shell_quote};

/// Set on our own `git push` of the notes ref; the `pre-push` block skips
/// itself when it sees it, so a sync never triggers another sync.
pub const SYNC_PUSH_ENV: &str = "ULTRAGIT_SYNC_PUSH";

/// The config key naming the remote notes are synced with (set by [`enable`]).
pub const SYNC_REMOTE_KEY: &str = "ultragit.syncRemote";

/// How a sync behaves.
#[derive(Debug, Clone)]
pub struct SyncOptions {
    /// Rounds (fetch, merge, push) before giving up on a push that keeps being
    /// rejected because others push at the same time.
    pub max_attempts: u32,
    /// How long one network command (fetch, push) may take.
    pub network_timeout: Duration,
    /// The first pause after a rejected push; it doubles each round, plus
    /// jitter.
    pub retry_pause: Duration,
}

impl Default for SyncOptions {
    fn default() -> Self {
        SyncOptions {
            max_attempts: 5,
            network_timeout: Duration::from_secs(120),
            retry_pause: Duration::from_millis(200),
        }
    }
}

/// What the push of one round did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// The remote had no notes: the push created its notes ref.
    Created,
    /// The remote's notes ref moved forward to ours.
    Updated,
    /// The remote already had exactly our notes: nothing was pushed.
    UpToDate,
    /// Neither side has any notes.
    Nothing,
}

/// What a sync did.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncReport {
    pub remote: String,
    /// The remote had a notes ref before this sync.
    pub remote_had_notes: bool,
    /// How the fetched notes were merged into ours (`None`: nothing fetched).
    pub merge: Option<MergeKind>,
    /// Notes taken from the remote for commits that had none here.
    pub taken: usize,
    /// Commits whose notes were joined from both sides.
    pub merged: usize,
    /// Local notes the remote no longer has: kept.
    pub kept: usize,
    /// Remote notes not taken, and why (the local note, if any, stands).
    pub refused: Vec<RefusedNote>,
    pub pushed: Pushed,
    /// Rounds used (1 when nobody pushed at the same time).
    pub attempts: u32,
    /// Local notes that could not be read or compared (kept as they are).
    pub warnings: Vec<String>,
}

/// A note of the remote that a sync did not take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedNote {
    /// The annotated commit.
    pub commit: ObjectId,
    /// Why, for people (one line, no terminal controls).
    pub reason: String,
}

impl RefusedNote {
    /// `commit 4f2a9c1: the note from 'origin' is …; kept the local one`.
    pub fn describe(&self, remote: &str) -> String {
        format!(
            "commit {}: refused the note from '{remote}': {}",
            self.commit.short(),
            self.reason
        )
    }
}

/// Whether a note of someone else may come into the local notes: it must
/// parse as an `ultragit/v1` annotation (the error says why not). Used by
/// `sync`, and by `doctor` to list what was refused.
pub fn admit(_commit: ObjectId, text: &str) -> Result<(), String> {
    ultragit_schema::Annotation::from_json(text)
        .map(|_| ())
        .map_err(|err| {
            format!(
                "not a valid ultragit/v1 annotation ({})",
                clean(err.reason())
            )
        })
}

/// The tracking ref of `remote`'s notes.
pub fn tracking_ref(remote: &str) -> String {
    format!("refs/notes/remotes/{remote}/ultragit")
}

/// The fetch refspec for `remote`'s notes (force only on the tracking ref).
pub fn fetch_refspec(remote: &str) -> String {
    format!("+{}:{}", crate::NOTES_REF, tracking_ref(remote))
}

/// The remote a sync uses when none is named: `ultragit.syncRemote`, else the
/// remote of the current branch's upstream, else `origin`.
pub fn default_remote(repo: &Repo) -> Result<String, NotesError> {
    if let Some(remote) = repo.config_get(SYNC_REMOTE_KEY)?
        && !remote.trim().is_empty()
    {
        return Ok(remote.trim().to_owned());
    }
    if let Ok(gitctx::Head::Branch { name, .. }) = repo.head()
        && let Some(remote) = repo.config_get(&format!("branch.{name}.remote"))?
        && remote != "."
        && !remote.is_empty()
    {
        return Ok(remote);
    }
    Ok("origin".to_owned())
}

/// Checks that `remote` is a remote configured in this repository (a name, not
/// a URL or a path, and not something git would read as an option).
pub fn check_remote(repo: &Repo, remote: &str) -> Result<(), NotesError> {
    let unknown = || SyncError::UnknownRemote {
        remote: remote.to_owned(),
    };
    let plausible = !remote.is_empty()
        && !remote.starts_with('-')
        && !remote.contains(['/', ':', '\\', '\n', ' '])
        && git_ref_component_ok(remote);
    if !plausible || repo.config_get(&format!("remote.{remote}.url"))?.is_none() {
        return Err(unknown().into());
    }
    Ok(())
}

/// A remote name must fit in a ref name (`refs/notes/remotes/<remote>/…`).
fn git_ref_component_ok(name: &str) -> bool {
    name != "."
        && name != ".."
        && !name.contains("..")
        && !name.ends_with(".lock")
        && !name.ends_with('.')
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| !c.is_control() && !"~^?*[@{".contains(c))
}

/// Syncs the notes with `remote` (see the module docs).
pub fn sync(repo: &Repo, remote: &str, options: &SyncOptions) -> Result<SyncReport, NotesError> {
    check_remote(repo, remote)?;
    let notes = repo.notes(crate::NOTES_REF)?;
    let mut report = SyncReport {
        remote: remote.to_owned(),
        remote_had_notes: false,
        merge: None,
        taken: 0,
        merged: 0,
        kept: 0,
        refused: Vec::new(),
        pushed: Pushed::Nothing,
        attempts: 0,
        warnings: Vec::new(),
    };
    // Corrections recorded here go into their notes first: the notes carry
    // them to everyone else.
    match crate::correct::fold_pending(repo) {
        Ok(folded) => {
            for (commit, why) in folded.kept {
                report.warnings.push(format!(
                    "the pending corrections of commit {} were not folded into its note ({why}); they stay local",
                    commit.short()
                ));
            }
        }
        Err(err) => report
            .warnings
            .push(format!("pending corrections were not folded: {err}")),
    }
    let mut pause = options.retry_pause;
    // A "[remote rejected]" push: the remote's tip before it, and the reason.
    let mut refused: Option<(Option<ObjectId>, String)> = None;
    for attempt in 1..=options.max_attempts.max(1) {
        report.attempts = attempt;
        let remote_tip = fetch(repo, remote, options)?;
        if let Some((before, reason)) = refused.take()
            && before == remote_tip
        {
            // Nobody else moved the remote's notes: the remote refuses ours.
            return Err(SyncError::Refused {
                remote: remote.to_owned(),
                refname: crate::NOTES_REF.to_owned(),
                reason,
            }
            .into());
        }
        report.remote_had_notes = remote_tip.is_some();
        if let Some(theirs) = remote_tip {
            let mut warnings = Vec::new();
            let merge = notes.merge_from(theirs, admit, |commit, ours, theirs| {
                resolve(commit, ours, theirs, remote, &mut warnings)
            })?;
            for commit in &merge.too_large {
                warnings.push(format!(
                    "commit {}: the local note is over {} bytes and differs from '{remote}''s; kept the local one",
                    commit.short(),
                    gitctx::MAX_NOTE_BYTES
                ));
            }
            report.merge = Some(merge.kind);
            report.taken += merge.taken;
            report.merged += merge.resolved;
            report.kept += merge.kept;
            report.refused.extend(
                merge
                    .refused
                    .into_iter()
                    .map(|(commit, refusal)| RefusedNote {
                        commit,
                        reason: clean(&refusal.to_string()),
                    }),
            );
            report.warnings.extend(warnings);
        }
        let Some(local) = notes.tip()? else {
            report.pushed = Pushed::Nothing;
            return Ok(report);
        };
        if remote_tip == Some(local) {
            report.pushed = Pushed::UpToDate;
            return Ok(report);
        }
        let outcome = push(repo, remote, options)?;
        match outcome {
            PushResult::Done(pushed) => {
                report.pushed = pushed;
                return Ok(report);
            }
            PushResult::Rejected | PushResult::RemoteRejected(_) => {
                if let PushResult::RemoteRejected(reason) = outcome {
                    refused = Some((remote_tip, reason));
                }
                if attempt < options.max_attempts {
                    std::thread::sleep(jittered(pause));
                    pause = pause.saturating_mul(2);
                }
            }
        }
    }
    Err(SyncError::KeptLosing {
        remote: remote.to_owned(),
        refname: crate::NOTES_REF.to_owned(),
        attempts: options.max_attempts.max(1),
    }
    .into())
}

/// The per-commit rule: `merge_texts`, with a warning for an unreadable side.
fn resolve(
    commit: ObjectId,
    ours: &str,
    theirs: &str,
    remote: &str,
    warnings: &mut Vec<String>,
) -> Resolution {
    let (decision, unreadable) = merge_texts(ours, theirs);
    if let Some(side) = unreadable {
        let which = match side {
            Unreadable::Ours => "the local note is",
            Unreadable::Theirs => "the note from the remote is",
            Unreadable::Both => "both notes are",
        };
        let kept = match decision {
            TextMerge::Theirs => "took the remote's",
            _ => "kept the local one",
        };
        warnings.push(format!(
            "commit {}: {which} not a valid ultragit annotation ('{remote}'); {kept}",
            commit.short()
        ));
    }
    match decision {
        TextMerge::Ours => Resolution::Ours,
        TextMerge::Theirs => Resolution::Theirs,
        TextMerge::Merged(text) if text.len() as u64 > gitctx::MAX_NOTE_BYTES => {
            warnings.push(format!(
                "commit {}: the union with the note from '{remote}' would be {} bytes, over the limit of {}; kept the local one",
                commit.short(),
                text.len(),
                gitctx::MAX_NOTE_BYTES
            ));
            Resolution::Ours
        }
        TextMerge::Merged(text) => Resolution::Text(text),
    }
}

/// Fetches the remote's notes into the tracking ref. `None`: the remote has
/// no notes ref.
fn fetch(repo: &Repo, remote: &str, options: &SyncOptions) -> Result<Option<ObjectId>, NotesError> {
    let fetch = repo
        .git()
        .args([
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-recurse-submodules",
            "--no-write-fetch-head",
            "--no-auto-gc",
            "--",
            remote,
        ])
        .arg(fetch_refspec(remote))
        .timeout(options.network_timeout);
    // A ref that appears between the fetch and the probe gets one more fetch.
    let mut output = fetch
        .run_unchecked()
        .map_err(|err| unreachable(remote, &err))?;
    for _ in 0..2 {
        if output.status.success() {
            return Ok(Some(repo.resolve(&tracking_ref(remote))?));
        }
        // Why did it fail? `ls-remote --exit-code` answers with its status: 2
        // when the remote has no such ref, 0 when it has one, anything else
        // when the remote could not be read.
        let probe = repo
            .git()
            .args(["ls-remote", "--exit-code", "--", remote, crate::NOTES_REF])
            .timeout(options.network_timeout);
        let probed = probe
            .run_unchecked()
            .map_err(|err| unreachable(remote, &err))?;
        match probed.status.code() {
            Some(2) => {
                // The remote has no notes: a tracking ref left from before is
                // stale.
                let _ = repo
                    .git()
                    .args(["update-ref", "-d", &tracking_ref(remote)])
                    .run();
                return Ok(None);
            }
            Some(0) => {
                output = fetch
                    .run_unchecked()
                    .map_err(|err| unreachable(remote, &err))?;
            }
            _ => break,
        }
    }
    Err(unreachable(remote, &fetch.failure(&output)))
}

enum PushResult {
    Done(Pushed),
    /// Not a fast-forward: someone pushed since our fetch.
    Rejected,
    /// The remote did not update its ref: another push won the race on the
    /// remote (its ref lock or compare), or the remote refuses ours. The next
    /// fetch tells: if the remote's notes did not move, it refuses.
    RemoteRejected(String),
}

/// Pushes the local notes ref without force and reads git's porcelain report.
fn push(repo: &Repo, remote: &str, options: &SyncOptions) -> Result<PushResult, NotesError> {
    let refspec = format!("{0}:{0}", crate::NOTES_REF);
    let push = repo
        .git()
        .args([
            "push",
            "--porcelain",
            "--recurse-submodules=no",
            "--",
            remote,
            &refspec,
        ])
        .env(SYNC_PUSH_ENV, "1")
        .timeout(options.network_timeout);
    let output = push
        .run_unchecked()
        .map_err(|err| unreachable(remote, &err))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    match porcelain_status(&stdout, &refspec) {
        Some(PorcelainLine { flag: '*', .. }) => Ok(PushResult::Done(Pushed::Created)),
        Some(PorcelainLine { flag: '=', .. }) => Ok(PushResult::Done(Pushed::UpToDate)),
        Some(PorcelainLine {
            flag: ' ' | '+', ..
        }) if output.status.success() => Ok(PushResult::Done(Pushed::Updated)),
        Some(PorcelainLine { flag: '!', summary }) if summary.starts_with("[rejected]") => {
            Ok(PushResult::Rejected)
        }
        Some(PorcelainLine { flag: '!', summary }) if summary.starts_with("[remote rejected]") => {
            Ok(PushResult::RemoteRejected(clean(&summary)))
        }
        Some(PorcelainLine { summary, .. }) => Err(SyncError::Refused {
            remote: remote.to_owned(),
            refname: crate::NOTES_REF.to_owned(),
            reason: clean(&summary),
        }
        .into()),
        // No report for our ref: the push never reached the remote, or a
        // pre-push hook of the user's stopped it (exit status 1).
        None if output.status.code() == Some(1) => Err(SyncError::Refused {
            remote: remote.to_owned(),
            refname: crate::NOTES_REF.to_owned(),
            reason: clean(&format!(
                "the push failed before reaching the remote (a pre-push hook?): {}",
                String::from_utf8_lossy(&output.stderr).trim()
            )),
        }
        .into()),
        None => Err(unreachable(remote, &push.failure(&output))),
    }
}

/// One line of `git push --porcelain`: `<flag>\t<from>:<to>\t<summary>`.
#[derive(Debug, PartialEq, Eq)]
struct PorcelainLine {
    flag: char,
    summary: String,
}

fn porcelain_status(stdout: &str, refspec: &str) -> Option<PorcelainLine> {
    stdout.lines().find_map(|line| {
        let mut fields = line.splitn(3, '\t');
        let flag = fields.next()?;
        let spec = fields.next()?;
        let summary = fields.next().unwrap_or("");
        let mut flag_chars = flag.chars();
        let flag = flag_chars.next()?;
        (flag_chars.next().is_none() && spec == refspec).then(|| PorcelainLine {
            flag,
            summary: summary.to_owned(),
        })
    })
}

fn unreachable(remote: &str, err: &gitctx::Error) -> NotesError {
    SyncError::Unreachable {
        remote: remote.to_owned(),
        detail: clean(&err.to_string()),
    }
    .into()
}

/// Remote output on one line, with nothing a terminal would act on.
fn clean(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = safe_io::term::sanitize_line(&one_line).into_owned();
    if out.len() > 500 {
        let mut cut = 500;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push('…');
    }
    out
}

/// `pause` plus up to the same again, from the clock (no random-number crate).
fn jittered(pause: Duration) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::from(d.subsec_nanos()))
        .unwrap_or(0)
        ^ u64::from(std::process::id()).rotate_left(17);
    let max = u64::try_from(pause.as_micros()).unwrap_or(u64::MAX).max(1);
    pause + Duration::from_micros(nanos % max)
}

/// What [`enable`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnableReport {
    pub remote: String,
    /// The fetch refspec was added (false: it was there already).
    pub refspec_added: bool,
    pub hook_path: std::path::PathBuf,
    pub hook: HookChange,
}

/// The `pre-push` hook line: sync with the remote being pushed to (the
/// command itself skips remotes other than `ultragit.syncRemote`), never
/// failing the push, and never from inside our own notes push. Its output goes
/// to stderr: git passes a pre-push hook's stdout through to its own, where
/// `git push --porcelain` readers would trip over it.
pub(crate) fn pre_push_line(ultragit: &Path) -> String {
    format!(
        "[ -n \"${SYNC_PUSH_ENV}\" ] || {} sync --pre-push \"$1\" </dev/null >&2 || true",
        shell_quote(&ultragit.to_string_lossy())
    )
}

/// Turns sync on for `remote`: the fetch refspec of its tracking ref (once),
/// `ultragit.syncRemote`, and the `pre-push` hook block. Running it again
/// changes nothing but the hook block's text.
pub fn enable(repo: &Repo, remote: &str, ultragit: &Path) -> Result<EnableReport, NotesError> {
    check_remote(repo, remote)?;
    let refspec_added =
        repo.config_add_unique(&format!("remote.{remote}.fetch"), &fetch_refspec(remote))?;
    repo.config_set(SYNC_REMOTE_KEY, remote)?;
    let hooks = repo.hooks_dir()?;
    std::fs::create_dir_all(&hooks).map_err(|e| NotesError::io(&hooks, e))?;
    let hook = install_hook(&Dir::open(&hooks)?, "pre-push", &pre_push_line(ultragit))?;
    Ok(EnableReport {
        remote: remote.to_owned(),
        refspec_added,
        hook_path: hooks.join("pre-push"),
        hook,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_lines_are_found_by_refspec() {
        let spec = "refs/notes/ultragit:refs/notes/ultragit";
        let out = format!("To /tmp/remote.git\n!\t{spec}\t[rejected] (fetch first)\nDone\n");
        assert_eq!(
            porcelain_status(&out, spec),
            Some(PorcelainLine {
                flag: '!',
                summary: "[rejected] (fetch first)".to_owned()
            })
        );
        let out = format!("To x\n*\t{spec}\t[new reference]\nDone\n");
        assert_eq!(porcelain_status(&out, spec).map(|l| l.flag), Some('*'));
        let out = format!("To x\n \t{spec}\tabc..def\nDone\n");
        assert_eq!(porcelain_status(&out, spec).map(|l| l.flag), Some(' '));
        assert_eq!(porcelain_status("To x\nDone\n", spec), None);
        assert_eq!(
            porcelain_status("!\trefs/heads/x:refs/heads/x\t[rejected]\n", spec),
            None
        );
    }

    #[test]
    fn remote_names_that_are_not_names_are_refused() {
        for bad in [
            "",
            "-x",
            "a/b",
            "http://h/r",
            "a..b",
            "x.lock",
            "a b",
            "a@{1}",
        ] {
            assert!(
                !(!bad.is_empty()
                    && !bad.starts_with('-')
                    && !bad.contains(['/', ':', '\\', '\n', ' '])
                    && git_ref_component_ok(bad)),
                "{bad:?} accepted"
            );
        }
        assert!(git_ref_component_ok("origin"));
        assert!(git_ref_component_ok("team.remote"));
    }

    #[test]
    fn the_hook_line_guards_against_recursion() {
        let line = pre_push_line(Path::new("/opt/my tools/ultragit"));
        assert_eq!(
            line,
            "[ -n \"$ULTRAGIT_SYNC_PUSH\" ] || '/opt/my tools/ultragit' sync --pre-push \"$1\" </dev/null >&2 || true"
        );
    }

    #[test]
    fn remote_text_is_one_clean_line() {
        assert_eq!(
            clean("fatal:\n  \x1b[31mno\x1b[0m"),
            "fatal: \\x1b[31mno\\x1b[0m"
        );
    }
}
