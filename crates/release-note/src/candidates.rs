//! Candidate release-note items: draft facts, a recommended section, a
//! confidence, refs and evidence for each change of the range, so the model
//! polishes what the commits say rather than inventing behaviour.
//!
//! # Rules
//!
//! Every candidate's `reason` names the rule that applied. The first rule that
//! matches wins.
//!
//! 1. **Merge commits** get no candidate: their content is in the merged
//!    commits.
//! 2. **Submodule-only commits** (every signal `submodule`) whose submodule
//!    has a [`SubmoduleGroup`] get no candidate of their own; each group does
//!    instead (rule 9).
//! 3. **Breaking**: `!` in the conventional header, or a `BREAKING CHANGE:` /
//!    `BREAKING-CHANGE:` footer → Breaking, included, High.
//! 4. **Shipped conventional types**: `feat` → Features; `fix` → Fixes, or
//!    Security when the subject or body mentions security, a vulnerability, a
//!    `CVE-` id, XSS or injection; `perf` → Performance; `security`/`sec` →
//!    Security; `revert` → Fixes (draft `Revert …`). Included; High when the
//!    commit changes runtime, API, CLI or config paths, else Medium. Except:
//!    `fix(deps)` → Dependencies (Security when it mentions security); a
//!    commit that changes only tests and tooling → Other, excluded, Medium; one
//!    that changes only docs → as rule 5, Medium.
//! 5. **`docs`** → Documentation, High; included only when the commit changes
//!    user-facing docs (a README, `docs/`, `doc/` or `man/` outside ADR and
//!    internal folders, upgrade or migration guides), else excluded as
//!    internal.
//! 6. **`deps`** → Dependencies; **`ops`/`deploy`** → Operations; both
//!    included, High.
//! 7. **Internal conventional types** (`refactor`, `style`, `test`, `ci`,
//!    `chore`, `build`): scope `deps`/`deps-dev` or only dependency paths →
//!    Dependencies, included, High; scope `release` or a version-bump
//!    description → Other, excluded, High; only config paths → Operations,
//!    included, Medium; API, CLI or config paths among others → Other,
//!    included, Medium (the reason names them); otherwise → Other, excluded
//!    (High when the paths agree with the type, Medium when runtime code
//!    changed).
//! 8. **Other subjects** (not conventional, or an unknown type, read from its
//!    description): a version bump (`Release 1.2.0`, `Bump version to …`) →
//!    Other, excluded; only dependency paths → Dependencies; only tests,
//!    tooling, or both → Other, excluded; only docs → as rule 5; only config
//!    paths → Operations; then the first word: `Fix`/`Resolve`/`Correct` →
//!    Fixes (or Security, as in rule 4); `Add`/`Support`/`Introduce`/`Allow`/
//!    `Enable`/`Implement` → Features; `Bump`/`Upgrade`/`Update … to|from`
//!    with dependency paths → Dependencies; `Remove`/`Drop`/`Deprecate` →
//!    Other, included; `Revert` → Fixes. All Medium; anything else → Other,
//!    included, Low.
//! 9. **Submodule groups** that moved (added, removed, or old ≠ new): Section
//!    Dependencies under a vendored path (`vendor/`, `third_party/`, `deps/`,
//!    `external/`, …), else Other; included. With commits: draft
//!    `` `path` moves from old7 to new7: `` and up to five subjects joined by
//!    `; ` (`; and N more`), refs to up to ten submodule commits, Medium.
//!    Without: the draft says why (the group's note), refs are the parent
//!    commits that moved it, Low.
//!
//! **Draft**: the conventional description (or the subject) without trailing
//! `(#123)` and period, first letter capitalized, then `. ` and the first body
//! line that adds something (not a trailer, a URL, or the breaking footer,
//! which a breaking commit uses instead); at most 300 characters, cut at a word
//! boundary with `…`.
//!
//! **Refs**: `Commit(short)`, then each pull request of the commit.
//! **Evidence**: `signals: …`, `+A -D in N files`, and the five largest paths.
//!
//! Output: in [`Section::ALL`] order, then commit order, then group order.

use std::cmp::Reverse;
use std::sync::LazyLock;

use commit_text::Conventional;
use commit_text::trailer::is_trailer_line;
use regex::Regex;

use crate::types::{
    Candidate, ChangedPath, Confidence, ItemRef, ReleaseCommit, Section, Signal, SubmoduleGroup,
};

/// The longest draft, in characters.
const MAX_DRAFT: usize = 300;
/// The most submodule commit subjects a group's draft lists.
const GROUP_SUBJECTS: usize = 5;
/// The most submodule commits a group's candidate refers to.
const GROUP_REFS: usize = 10;
/// The most paths in a commit's evidence.
const EVIDENCE_PATHS: usize = 5;

static PULL_REQUEST_SUFFIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:\s*\(#\d+\))+\s*$").expect("the pull request suffix pattern is valid")
});

static SECURITY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:security|vulnerabilit(?:y|ies)|vulnerable|xss|injection|cve-\d+)")
        .expect("the security pattern is valid")
});

static VERSION_BUMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^(?:(?:release|version|bump to)\s*:?\s*v?\d+(?:\.\d+)+\b|v?\d+\.\d+\.\d+$|(?:bump version|version bump|prepare (?:for )?release)\b)",
    )
    .expect("the version bump pattern is valid")
});

static URL_ONLY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^<?https?://\S+>?$").expect("the URL pattern is valid"));

/// The candidate items of a range's `commits` and moved `submodules`, by the
/// rules of the module documentation.
pub(crate) fn candidates(commits: &[ReleaseCommit], submodules: &[SubmoduleGroup]) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = commits
        .iter()
        .filter(|c| !c.merge && !moves_grouped_submodule(c, submodules))
        .map(commit_candidate)
        .collect();
    out.extend(
        submodules
            .iter()
            .filter_map(|g| group_candidate(g, commits)),
    );
    out.sort_by_key(|c| c.section);
    out
}

/// Rule 2: every signal is `submodule` and some group covers one of its paths.
fn moves_grouped_submodule(commit: &ReleaseCommit, groups: &[SubmoduleGroup]) -> bool {
    only(&commit.signals, &[Signal::Submodule])
        && commit
            .paths
            .iter()
            .any(|p| groups.iter().any(|g| g.path == p.path))
}

/// The section, inclusion, confidence and reason of one candidate.
struct Verdict {
    section: Section,
    include: bool,
    confidence: Confidence,
    reason: String,
}

impl Verdict {
    fn new(
        section: Section,
        include: bool,
        confidence: Confidence,
        reason: impl Into<String>,
    ) -> Self {
        Verdict {
            section,
            include,
            confidence,
            reason: reason.into(),
        }
    }
}

fn commit_candidate(commit: &ReleaseCommit) -> Candidate {
    let conventional = Conventional::parse(&commit.subject);
    let footer = breaking_footer(&commit.message);
    let verdict = judge(commit, conventional.as_ref(), footer.is_some());
    let head = match &conventional {
        Some(h) if h.kind == "revert" && !starts_with_word(&h.description, "revert") => {
            format!("Revert {}", h.description)
        }
        Some(h) => h.description.clone(),
        None => commit.subject.trim().to_owned(),
    };
    let head = tidy(&head);
    let extra = footer
        .filter(|f| !f.is_empty())
        .or_else(|| detail_line(&commit.message))
        .map(|line| tidy(&line))
        .filter(|line| adds_something(line, &head));
    let draft = match extra {
        Some(extra) => format!("{head}. {extra}"),
        None => head,
    };
    let mut refs = vec![ItemRef::Commit(commit.short.clone())];
    refs.extend(
        commit
            .pull_requests
            .iter()
            .map(|&n| ItemRef::PullRequest(n)),
    );
    Candidate {
        section: verdict.section,
        draft: shorten(&draft, MAX_DRAFT),
        confidence: verdict.confidence,
        include: verdict.include,
        reason: verdict.reason,
        refs,
        evidence: commit_evidence(commit),
    }
}

/// Rules 3 to 8.
fn judge(commit: &ReleaseCommit, conventional: Option<&Conventional>, footer: bool) -> Verdict {
    use Confidence::High;
    if conventional.is_some_and(|h| h.breaking) {
        return Verdict::new(
            Section::Breaking,
            true,
            High,
            "breaking: `!` in the conventional header",
        );
    }
    if footer {
        return Verdict::new(
            Section::Breaking,
            true,
            High,
            "breaking: BREAKING CHANGE footer",
        );
    }
    let Some(header) = conventional else {
        return infer(commit, &commit.subject);
    };
    let kind = header.kind.as_str();
    let scope = header.scope.as_deref().map(str::to_ascii_lowercase);
    let deps_scope = matches!(scope.as_deref(), Some("deps" | "deps-dev"));
    match kind {
        "feat" | "feature" | "fix" | "bugfix" | "hotfix" | "perf" | "security" | "sec"
        | "revert" => shipped(commit, kind, deps_scope),
        "docs" | "doc" => docs(commit, High, &format!("conventional `{kind}`")),
        "deps" | "dep" => Verdict::new(
            Section::Dependencies,
            true,
            High,
            format!("conventional `{kind}`: dependency update"),
        ),
        "ops" | "deploy" => Verdict::new(
            Section::Operations,
            true,
            High,
            format!("conventional `{kind}`: operations change"),
        ),
        "refactor" | "style" | "test" | "tests" | "ci" | "chore" | "build" => {
            let bookkeeping =
                scope.as_deref() == Some("release") || VERSION_BUMP.is_match(&header.description);
            internal(commit, kind, deps_scope, bookkeeping)
        }
        _ => {
            let mut verdict = infer(commit, &header.description);
            verdict.reason = format!("unknown conventional type `{kind}`; {}", verdict.reason);
            verdict
        }
    }
}

/// Rule 4: `feat`, `fix`, `perf`, `security`, `revert` and their aliases.
fn shipped(commit: &ReleaseCommit, kind: &str, deps_scope: bool) -> Verdict {
    use Confidence::{High, Medium};
    let signals = &commit.signals;
    let is_fix = matches!(kind, "fix" | "bugfix" | "hotfix");
    let security = is_fix && mentions_security(commit);
    if is_fix && deps_scope {
        return if security {
            Verdict::new(
                Section::Security,
                true,
                High,
                format!("conventional `{kind}(deps)` mentioning a security issue"),
            )
        } else {
            Verdict::new(
                Section::Dependencies,
                true,
                High,
                format!("conventional `{kind}(deps)`: dependency update"),
            )
        };
    }
    if only(signals, &[Signal::Tests, Signal::Tooling]) {
        return Verdict::new(
            Section::Other,
            false,
            Medium,
            format!("conventional `{kind}` but only tests or tooling changed"),
        );
    }
    if only(signals, &[Signal::Docs]) {
        return docs(
            commit,
            Medium,
            &format!("conventional `{kind}` but only docs changed"),
        );
    }
    let section = match kind {
        "feat" | "feature" => Section::Features,
        "perf" => Section::Performance,
        "security" | "sec" => Section::Security,
        _ if security => Section::Security,
        _ => Section::Fixes,
    };
    let mut reason = format!("conventional `{kind}`");
    if security {
        reason.push_str(" mentioning a security issue");
    }
    let consistent = signals.iter().any(|s| s.is_code());
    if !consistent {
        reason.push_str(" (no runtime, API, CLI or config path changed)");
    }
    let confidence = if consistent { High } else { Medium };
    Verdict::new(section, true, confidence, reason)
}

/// Rule 7: `refactor`, `style`, `test`, `ci`, `chore`, `build`.
fn internal(commit: &ReleaseCommit, kind: &str, deps_scope: bool, bookkeeping: bool) -> Verdict {
    use Confidence::{High, Medium};
    let signals = &commit.signals;
    if deps_scope {
        return Verdict::new(
            Section::Dependencies,
            true,
            High,
            format!("conventional `{kind}(deps)`: dependency update"),
        );
    }
    if bookkeeping {
        return Verdict::new(
            Section::Other,
            false,
            High,
            format!("conventional `{kind}`: release bookkeeping"),
        );
    }
    if only(signals, &[Signal::Dependency]) {
        return Verdict::new(
            Section::Dependencies,
            true,
            High,
            format!("conventional `{kind}` changing only dependencies"),
        );
    }
    if only(signals, &[Signal::ConfigSchema]) {
        return Verdict::new(
            Section::Operations,
            true,
            Medium,
            format!("conventional `{kind}` changing only configuration or deployment files"),
        );
    }
    let visible: Vec<&str> = signals
        .iter()
        .filter(|s| matches!(s, Signal::Api | Signal::Cli | Signal::ConfigSchema))
        .map(|s| s.as_str())
        .collect();
    if !visible.is_empty() {
        return Verdict::new(
            Section::Other,
            true,
            Medium,
            format!(
                "conventional `{kind}` but touches {}: may change what operators see",
                visible.join(", ")
            ),
        );
    }
    let consistent = match kind {
        "test" | "tests" => only(signals, &[Signal::Tests]),
        "ci" => only(signals, &[Signal::Tooling]),
        "style" => true,
        _ => !signals.iter().any(|s| s.is_code()),
    };
    let confidence = if consistent { High } else { Medium };
    Verdict::new(
        Section::Other,
        false,
        confidence,
        format!("conventional `{kind}`: internal change"),
    )
}

/// Rule 5 (and docs-only changes of rules 4 and 8).
fn docs(commit: &ReleaseCommit, confidence: Confidence, why: &str) -> Verdict {
    match commit
        .paths
        .iter()
        .find(|p| p.signal == Signal::Docs && is_user_doc(&p.path))
    {
        Some(p) => Verdict::new(
            Section::Documentation,
            true,
            confidence,
            format!("{why}: user-facing docs ({})", p.path),
        ),
        None => Verdict::new(
            Section::Documentation,
            false,
            confidence,
            format!("{why}: internal docs only"),
        ),
    }
}

/// Rule 8: subjects without a known conventional type.
fn infer(commit: &ReleaseCommit, text: &str) -> Verdict {
    use Confidence::{Low, Medium};
    let signals = &commit.signals;
    let text = text.trim();
    if VERSION_BUMP.is_match(text) {
        return Verdict::new(Section::Other, false, Medium, "release bookkeeping");
    }
    if only(signals, &[Signal::Dependency]) {
        return Verdict::new(
            Section::Dependencies,
            true,
            Medium,
            "dependency-only change",
        );
    }
    for (allowed, what) in [
        (&[Signal::Tests][..], "tests-only change"),
        (&[Signal::Tooling][..], "tooling-only change"),
        (
            &[Signal::Tests, Signal::Tooling][..],
            "tests and tooling only",
        ),
    ] {
        if only(signals, allowed) {
            return Verdict::new(Section::Other, false, Medium, what);
        }
    }
    if only(signals, &[Signal::Docs]) {
        return docs(commit, Medium, "docs-only change");
    }
    if only(signals, &[Signal::ConfigSchema]) {
        return Verdict::new(
            Section::Operations,
            true,
            Medium,
            "configuration-only change",
        );
    }
    let word = text.split_whitespace().next().unwrap_or_default();
    let verb: String = word
        .chars()
        .take_while(|c| c.is_alphabetic())
        .flat_map(char::to_lowercase)
        .collect();
    let by_word = |section| {
        Verdict::new(
            section,
            true,
            Medium,
            format!("first word `{}`", word.trim_end_matches(':')),
        )
    };
    match verb.as_str() {
        "fix" | "fixes" | "fixed" | "resolve" | "resolves" | "resolved" | "correct"
        | "corrects" | "corrected" => {
            if mentions_security(commit) {
                let mut verdict = by_word(Section::Security);
                verdict.reason.push_str(" mentioning a security issue");
                verdict
            } else {
                by_word(Section::Fixes)
            }
        }
        "add" | "adds" | "added" | "support" | "supports" | "introduce" | "introduces"
        | "introduced" | "allow" | "allows" | "enable" | "enables" | "implement" | "implements"
        | "implemented" => by_word(Section::Features),
        "bump" | "bumps" | "bumped" | "upgrade" | "upgrades" | "upgraded" | "update"
        | "updates" | "updated"
            if signals.contains(&Signal::Dependency)
                && (text.contains(" to ") || text.contains(" from ")) =>
        {
            by_word(Section::Dependencies)
        }
        "remove" | "removes" | "removed" | "drop" | "drops" | "dropped" | "deprecate"
        | "deprecates" | "deprecated" => by_word(Section::Other),
        "revert" | "reverts" | "reverted" => by_word(Section::Fixes),
        _ => Verdict::new(
            Section::Other,
            true,
            Low,
            "no rule matched: check whether operators see it",
        ),
    }
}

/// Rule 9.
fn group_candidate(group: &SubmoduleGroup, commits: &[ReleaseCommit]) -> Option<Candidate> {
    let path = &group.path;
    let movement = match (&group.old, &group.new) {
        (Some(old), Some(new)) if old == new => return None,
        (Some(old), Some(new)) => format!("`{path}` moves from {} to {}", old.short(), new.short()),
        (None, Some(new)) => format!("`{path}` is added at {}", new.short()),
        (Some(old), None) => format!("`{path}` is removed (was at {})", old.short()),
        (None, None) => return None,
    };
    let (section, place) = if is_vendored(path) {
        (Section::Dependencies, "vendored submodule")
    } else {
        (Section::Other, "submodule")
    };
    let mut evidence = vec!["signals: submodule".to_owned()];
    if group.commits.is_empty() {
        let draft = match &group.note {
            Some(note) => format!("{movement} ({note})"),
            None => movement,
        };
        evidence.extend(group.note.iter().map(|note| format!("note: {note}")));
        let refs = commits
            .iter()
            .filter(|c| !c.merge && c.paths.iter().any(|p| &p.path == path))
            .map(|c| ItemRef::Commit(c.short.clone()))
            .collect();
        return Some(Candidate {
            section,
            draft: shorten(&draft, MAX_DRAFT),
            confidence: Confidence::Low,
            include: true,
            reason: format!("{place} moved; its commits are not available"),
            refs,
            evidence,
        });
    }
    let mut subjects: Vec<&str> = group
        .commits
        .iter()
        .take(GROUP_SUBJECTS)
        .map(|c| c.subject.trim())
        .collect();
    let hidden = group.commits.len().saturating_sub(GROUP_SUBJECTS) + group.more;
    let more = format!("and {hidden} more");
    if hidden > 0 {
        subjects.push(&more);
    }
    let listed = group.commits.len();
    evidence.push(match group.more {
        0 => format!("{listed} submodule commits"),
        more => format!("{listed} submodule commits listed, {more} more"),
    });
    Some(Candidate {
        section,
        draft: shorten(&format!("{movement}: {}", subjects.join("; ")), MAX_DRAFT),
        confidence: Confidence::Medium,
        include: true,
        reason: format!("{place} moved over {} commits", listed + group.more),
        refs: group
            .commits
            .iter()
            .take(GROUP_REFS)
            .map(|c| ItemRef::SubmoduleCommit {
                path: path.clone(),
                id: c.short.clone(),
            })
            .collect(),
        evidence,
    })
}

fn commit_evidence(commit: &ReleaseCommit) -> Vec<String> {
    let signals = if commit.signals.is_empty() {
        "none".to_owned()
    } else {
        let names: Vec<&str> = commit.signals.iter().map(|s| s.as_str()).collect();
        names.join(", ")
    };
    let files = if commit.paths_total == 1 {
        "file"
    } else {
        "files"
    };
    let mut lines = vec![
        format!("signals: {signals}"),
        format!(
            "+{} -{} in {} {files}",
            commit.additions, commit.deletions, commit.paths_total
        ),
    ];
    let mut paths: Vec<&ChangedPath> = commit.paths.iter().collect();
    paths.sort_by_key(|p| Reverse(u64::from(p.additions) + u64::from(p.deletions)));
    lines.extend(paths.iter().take(EVIDENCE_PATHS).map(|p| {
        if p.binary {
            format!("{} (binary)", p.path)
        } else {
            format!("{} (+{} -{})", p.path, p.additions, p.deletions)
        }
    }));
    lines
}

/// Every signal is one of `allowed` (and there is at least one).
fn only(signals: &[Signal], allowed: &[Signal]) -> bool {
    !signals.is_empty() && signals.iter().all(|s| allowed.contains(s))
}

fn mentions_security(commit: &ReleaseCommit) -> bool {
    SECURITY.is_match(&commit.subject) || SECURITY.is_match(&commit.message)
}

/// Docs that readers of a release use: READMEs, upgrade and migration guides,
/// `docs/`, `doc/` and `man/` outside ADR and internal folders.
fn is_user_doc(path: &str) -> bool {
    let lower = path.to_lowercase();
    let (dirs, name) = lower.rsplit_once('/').unwrap_or(("", lower.as_str()));
    let mut dirs = dirs.split('/');
    let guide = ["readme", "upgrading", "migrating", "migration"]
        .iter()
        .any(|prefix| name.starts_with(prefix));
    guide
        || (dirs.clone().any(|d| matches!(d, "docs" | "doc" | "man"))
            && !dirs.any(|d| {
                matches!(
                    d,
                    "adr" | "adrs" | "decisions" | "internal" | "rfc" | "rfcs"
                )
            }))
}

/// A path under a vendoring folder.
fn is_vendored(path: &str) -> bool {
    path.to_lowercase().split('/').any(|d| {
        matches!(
            d,
            "vendor"
                | "vendored"
                | "third_party"
                | "third-party"
                | "thirdparty"
                | "3rdparty"
                | "deps"
                | "external"
                | "externals"
                | "extern"
        )
    })
}

/// The text of a `BREAKING CHANGE:` or `BREAKING-CHANGE:` footer.
fn breaking_footer(message: &str) -> Option<String> {
    message.lines().find_map(|line| {
        let line = line.trim_start();
        ["BREAKING CHANGE:", "BREAKING-CHANGE:", "BREAKING CHANGES:"]
            .iter()
            .find_map(|tag| line.strip_prefix(tag))
            .map(|text| text.trim().to_owned())
    })
}

/// The first body line worth adding to a draft: not blank, not a trailer, not
/// a lone URL, not the clamp marker; list markers dropped.
fn detail_line(message: &str) -> Option<String> {
    message
        .lines()
        .skip(1)
        .map(str::trim)
        .map(|line| {
            ["- ", "* ", "• "]
                .iter()
                .find_map(|marker| line.strip_prefix(marker))
                .unwrap_or(line)
                .trim()
        })
        .find(|line| {
            line.chars().any(char::is_alphanumeric)
                && !is_trailer_line(line)
                && !URL_ONLY.is_match(line)
                && !line.starts_with("BREAKING")
        })
        .map(str::to_owned)
}

/// `line` says more than `head` already does.
fn adds_something(line: &str, head: &str) -> bool {
    !line.is_empty() && !head.to_lowercase().contains(&line.to_lowercase())
}

fn starts_with_word(text: &str, word: &str) -> bool {
    text.split_whitespace()
        .next()
        .is_some_and(|first| first.eq_ignore_ascii_case(word))
}

/// Trimmed, without trailing `(#123)` refs and periods, first letter
/// capitalized.
fn tidy(text: &str) -> String {
    let text = PULL_REQUEST_SUFFIX.replace(text.trim(), "");
    let text = text.trim_end_matches('.').trim_end();
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// At most `max` characters, cut at a word boundary and marked with `…`.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let keep = max.saturating_sub(1);
    let cut = text.char_indices().nth(keep).map_or(text.len(), |(i, _)| i);
    let head = &text[..cut];
    let head = if text[cut..].starts_with(char::is_whitespace) {
        head
    } else {
        head.rfind(char::is_whitespace).map_or(head, |i| &head[..i])
    };
    let head = head.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':'));
    format!("{head}…")
}

#[cfg(test)]
mod tests {
    use commit_text::pull_requests;
    use git_agent_core::classify::Class;
    use gitctx::ObjectId;

    use super::*;
    use crate::signals::{commit_signals, signal_of};

    fn id(seed: &str) -> ObjectId {
        let byte = seed
            .bytes()
            .fold(7u8, |acc, b| acc.wrapping_mul(31).wrapping_add(b));
        ObjectId::from_bytes([byte; 20])
    }

    /// A commit whose paths take their signal from the path rules; a path
    /// ending in `@` is a submodule.
    fn commit(subject: &str, body: &str, paths: &[&str]) -> ReleaseCommit {
        let paths: Vec<ChangedPath> = paths
            .iter()
            .enumerate()
            .map(|(i, path)| {
                let (path, class) = match path.strip_suffix('@') {
                    Some(path) => (path, Class::Submodule),
                    None => (*path, Class::Handwritten),
                };
                let n = u32::try_from(i).expect("few paths");
                ChangedPath {
                    path: path.to_owned(),
                    status: 'M',
                    additions: 10 * (n + 1),
                    deletions: n,
                    binary: false,
                    signal: signal_of(path, &class),
                }
            })
            .collect();
        let message = if body.is_empty() {
            subject.to_owned()
        } else {
            format!("{subject}\n\n{body}")
        };
        let id = id(&message);
        ReleaseCommit {
            id,
            short: id.short(),
            subject: subject.to_owned(),
            pull_requests: pull_requests(&message),
            message,
            clamped: false,
            author: "A U Thor".to_owned(),
            date: "2025-01-02".to_owned(),
            merge: false,
            paths_total: paths.len(),
            additions: paths.iter().map(|p| p.additions).sum(),
            deletions: paths.iter().map(|p| p.deletions).sum(),
            excerpt: String::new(),
            signals: commit_signals(&paths),
            paths,
        }
    }

    type Expected<'a> = (Section, bool, Confidence, &'a str);

    #[track_caller]
    fn check(commits: &[ReleaseCommit], groups: &[SubmoduleGroup], expected: &[Expected<'_>]) {
        let got = candidates(commits, groups);
        let got: Vec<Expected<'_>> = got
            .iter()
            .map(|c| (c.section, c.include, c.confidence, c.draft.as_str()))
            .collect();
        assert_eq!(got, expected);
    }

    #[track_caller]
    fn check_one(subject: &str, body: &str, paths: &[&str], expected: Expected<'_>) {
        check(&[commit(subject, body, paths)], &[], &[expected]);
    }

    #[track_caller]
    fn reason_of(subject: &str, body: &str, paths: &[&str]) -> String {
        let mut all = candidates(&[commit(subject, body, paths)], &[]);
        assert_eq!(all.len(), 1);
        all.remove(0).reason
    }

    use Confidence::{High, Low, Medium};
    use Section::*;

    #[test]
    fn features_and_fixes() {
        check_one(
            "feat(cli): add --json flag (#12)",
            "The output is a JSON object per line.",
            &["src/cli/args.rs"],
            (
                Features,
                true,
                High,
                "Add --json flag. The output is a JSON object per line",
            ),
        );
        check_one(
            "fix: handle empty input.",
            "",
            &["src/parse.rs"],
            (Fixes, true, High, "Handle empty input"),
        );
        check_one(
            "perf: cache lookups",
            "",
            &["src/db.rs"],
            (Performance, true, High, "Cache lookups"),
        );
        check_one(
            "revert: add caching",
            "",
            &["src/db.rs"],
            (Fixes, true, High, "Revert add caching"),
        );
        // A type the paths do not back is less sure.
        check_one(
            "feat: new generated bindings",
            "",
            &["Cargo.toml"],
            (Features, true, Medium, "New generated bindings"),
        );
        check_one(
            "fix: flaky test",
            "",
            &["tests/it/a.rs"],
            (Other, false, Medium, "Flaky test"),
        );
    }

    #[test]
    fn security_fixes() {
        check_one(
            "fix: escape user names in HTML",
            "Prevents XSS in the profile page.",
            &["src/web.rs"],
            (
                Security,
                true,
                High,
                "Escape user names in HTML. Prevents XSS in the profile page",
            ),
        );
        check_one(
            "fix(deps): update openssl for CVE-2024-1234",
            "",
            &["Cargo.toml"],
            (Security, true, High, "Update openssl for CVE-2024-1234"),
        );
        check_one(
            "security: rotate default keys",
            "",
            &["src/keys.rs"],
            (Security, true, High, "Rotate default keys"),
        );
        check_one(
            "Fix SQL injection in search",
            "",
            &["src/search.rs"],
            (Security, true, Medium, "Fix SQL injection in search"),
        );
        assert!(
            reason_of("fix: sanitize", "vulnerable to injection", &["a.rs"]).contains("security")
        );
    }

    #[test]
    fn breaking() {
        check_one(
            "feat(api)!: remove v1 endpoints",
            "",
            &["src/api/v1.rs"],
            (Breaking, true, High, "Remove v1 endpoints"),
        );
        check_one(
            "refactor: rename settings",
            "Some words.\n\nBREAKING CHANGE: `timeout` is now `timeout_ms`.",
            &["src/lib.rs"],
            (
                Breaking,
                true,
                High,
                "Rename settings. `timeout` is now `timeout_ms`",
            ),
        );
        check_one(
            "Drop Node 16",
            "BREAKING-CHANGE: Node 18 or later is required",
            &["src/index.js"],
            (
                Breaking,
                true,
                High,
                "Drop Node 16. Node 18 or later is required",
            ),
        );
        assert_eq!(
            reason_of("chore!: x", "", &["src/lib.rs"]),
            "breaking: `!` in the conventional header"
        );
    }

    #[test]
    fn docs_internal_vs_user_facing() {
        check_one(
            "docs: explain the retry policy",
            "",
            &["README.md"],
            (Documentation, true, High, "Explain the retry policy"),
        );
        check_one(
            "docs: add install guide",
            "",
            &["docs/install.md", "docs/img/a.png"],
            (Documentation, true, High, "Add install guide"),
        );
        check_one(
            "docs: update contributing notes",
            "",
            &["CONTRIBUTING.md", "docs/adr/0001-x.md"],
            (Documentation, false, High, "Update contributing notes"),
        );
        check_one(
            "Document the upgrade path",
            "",
            &["UPGRADING.md"],
            (Documentation, true, Medium, "Document the upgrade path"),
        );
        check_one(
            "Tidy architecture notes",
            "",
            &["ARCHITECTURE.md"],
            (Documentation, false, Medium, "Tidy architecture notes"),
        );
        assert!(reason_of("docs: x", "", &["README.md"]).contains("README.md"));
    }

    #[test]
    fn dependencies() {
        check_one(
            "build(deps): bump serde from 1.0.1 to 1.0.2",
            "",
            &["Cargo.toml", "src/lib.rs"],
            (Dependencies, true, High, "Bump serde from 1.0.1 to 1.0.2"),
        );
        check_one(
            "chore(deps-dev): bump jest",
            "",
            &["package.json"],
            (Dependencies, true, High, "Bump jest"),
        );
        check_one(
            "deps: update tokio",
            "",
            &["Cargo.toml"],
            (Dependencies, true, High, "Update tokio"),
        );
        check_one(
            "chore: refresh manifests",
            "",
            &["Cargo.toml", "crates/x/Cargo.toml"],
            (Dependencies, true, High, "Refresh manifests"),
        );
        check_one(
            "Refresh lock",
            "",
            &["go.mod"],
            (Dependencies, true, Medium, "Refresh lock"),
        );
        check_one(
            "Upgrade reqwest to 0.13",
            "",
            &["Cargo.toml", "src/http.rs"],
            (Dependencies, true, Medium, "Upgrade reqwest to 0.13"),
        );
    }

    #[test]
    fn internal_changes() {
        check_one(
            "test: cover the parser",
            "",
            &["tests/parser.rs"],
            (Other, false, High, "Cover the parser"),
        );
        check_one(
            "ci: cache cargo",
            "",
            &[".github/workflows/ci.yml"],
            (Other, false, High, "Cache cargo"),
        );
        check_one(
            "refactor: split the parser",
            "",
            &["src/parse.rs"],
            (Other, false, Medium, "Split the parser"),
        );
        check_one(
            "refactor(cli): share flag parsing",
            "",
            &["src/cli/flags.rs", "src/lib.rs"],
            (Other, true, Medium, "Share flag parsing"),
        );
        assert_eq!(
            reason_of("refactor: x", "", &["src/cli/flags.rs", "proto/a.proto"]),
            "conventional `refactor` but touches api, cli: may change what operators see"
        );
        check_one(
            "chore: tune the helm chart",
            "",
            &["helm/values.yaml"],
            (Operations, true, Medium, "Tune the helm chart"),
        );
        check_one(
            "ops: raise the memory limit",
            "",
            &["deploy/app.yaml"],
            (Operations, true, High, "Raise the memory limit"),
        );
        check_one(
            "chore(release): 1.2.0",
            "",
            &["Cargo.toml", "CHANGELOG.md"],
            (Other, false, High, "1.2.0"),
        );
        check_one(
            "chore: release 1.2.0",
            "",
            &["Cargo.toml"],
            (Other, false, High, "Release 1.2.0"),
        );
    }

    #[test]
    fn non_conventional_subjects() {
        let cases = [
            ("Fix crash on empty config", Fixes, true, Medium),
            ("Fixed the retry loop", Fixes, true, Medium),
            ("Resolve race in shutdown", Fixes, true, Medium),
            ("Add a health endpoint", Features, true, Medium),
            ("Support IPv6 listeners", Features, true, Medium),
            ("Allow empty names", Features, true, Medium),
            ("Implement retries", Features, true, Medium),
            ("Remove the legacy importer", Other, true, Medium),
            ("Deprecate --old", Other, true, Medium),
            ("Revert \"Add x\"", Fixes, true, Medium),
            ("Update handler to return 404", Other, true, Low),
            ("Speed things up", Other, true, Low),
            ("Release 1.2.0", Other, false, Medium),
            ("Bump version to 1.2.0", Other, false, Medium),
        ];
        for (subject, section, include, confidence) in cases {
            check_one(
                subject,
                "",
                &["src/server.rs"],
                (section, include, confidence, subject),
            );
        }
        check_one(
            "Add tests for the parser",
            "",
            &["tests/parser.rs"],
            (Other, false, Medium, "Add tests for the parser"),
        );
        check_one(
            "Tweak CI",
            "",
            &[".github/workflows/ci.yml", "Makefile"],
            (Other, false, Medium, "Tweak CI"),
        );
        check_one(
            "Set the default port",
            "",
            &["config/default.toml"],
            (Operations, true, Medium, "Set the default port"),
        );
        // An unknown type is read as a subject.
        check_one(
            "ui: add dark mode",
            "",
            &["src/theme.rs"],
            (Features, true, Medium, "Add dark mode"),
        );
        assert_eq!(
            reason_of("ui: add dark mode", "", &["src/theme.rs"]),
            "unknown conventional type `ui`; first word `add`"
        );
        assert_eq!(reason_of("Fix: x", "", &["src/a.rs"]), "first word `Fix`");
    }

    #[test]
    fn drafts() {
        #[track_caller]
        fn check_draft(subject: &str, body: &str, expected: &str) {
            let c = commit(subject, body, &["src/a.rs"]);
            assert_eq!(candidates(&[c], &[])[0].draft, expected, "{subject}");
        }
        check_draft("feat: émoji support", "", "Émoji support");
        check_draft(
            "fix: x (#1) (#2)",
            "Signed-off-by: A <a@b>\nhttps://example.com/issue/1",
            "X",
        );
        check_draft(
            "fix: x",
            "Fixes: #3\n\nThe real reason.",
            "X. The real reason",
        );
        check_draft(
            "fix: retry",
            "- retry on 503\n- and 502",
            "Retry. Retry on 503",
        );
        check_draft("fix: retry on 503", "retry on 503.", "Retry on 503");
        check_draft("fix: x", "Body\n[…]", "X. Body");
        let long = "word ".repeat(100);
        let c = commit("feat: long", &long, &["src/a.rs"]);
        let draft = &candidates(&[c], &[])[0].draft;
        assert!(draft.chars().count() <= MAX_DRAFT, "{draft}");
        assert!(draft.ends_with("word…"), "{draft}");
    }

    #[test]
    fn refs_and_evidence() {
        let c = commit(
            "feat: x (#12)",
            "Also see (#7).",
            &["src/a.rs", "src/cli.rs", "tests/a.rs", "b", "c", "d"],
        );
        let got = candidates(std::slice::from_ref(&c), &[]);
        assert_eq!(
            got[0].refs,
            [
                ItemRef::Commit(c.short.clone()),
                ItemRef::PullRequest(7),
                ItemRef::PullRequest(12),
            ]
        );
        assert_eq!(
            got[0].evidence,
            [
                "signals: runtime, cli, tests",
                "+210 -15 in 6 files",
                "d (+60 -5)",
                "c (+50 -4)",
                "b (+40 -3)",
                "tests/a.rs (+30 -2)",
                "src/cli.rs (+20 -1)",
            ]
        );
    }

    #[test]
    fn merges_are_skipped_and_order_is_by_section() {
        let mut merge = commit("Merge pull request #5 from a/b", "", &["src/a.rs"]);
        merge.merge = true;
        check(
            &[
                commit("docs: readme", "", &["README.md"]),
                commit("fix: one", "", &["src/a.rs"]),
                merge,
                commit("feat: two", "", &["src/b.rs"]),
                commit("fix: three", "", &["src/c.rs"]),
            ],
            &[],
            &[
                (Features, true, High, "Two"),
                (Fixes, true, High, "One"),
                (Fixes, true, High, "Three"),
                (Documentation, true, High, "Readme"),
            ],
        );
    }

    fn group(path: &str, commits: Vec<ReleaseCommit>, more: usize) -> SubmoduleGroup {
        SubmoduleGroup {
            path: path.to_owned(),
            old: Some(id("old")),
            new: Some(id("new")),
            commits,
            more,
            note: None,
            links: None,
        }
    }

    #[test]
    fn submodule_groups() {
        let moved = commit("Update lib", "", &["vendor/lib@"]);
        let subs: Vec<ReleaseCommit> = (1..=7)
            .map(|i| commit(&format!("fix: bug {i}"), "", &["src/a.rs"]))
            .collect();
        let (old, new) = (id("old").short(), id("new").short());
        let got = candidates(&[moved], &[group("vendor/lib", subs.clone(), 3)]);
        assert_eq!(
            got.len(),
            1,
            "the parent commit has no candidate of its own"
        );
        let c = &got[0];
        assert_eq!(
            (c.section, c.include, c.confidence),
            (Dependencies, true, Medium)
        );
        assert_eq!(
            c.draft,
            format!(
                "`vendor/lib` moves from {old} to {new}: fix: bug 1; fix: bug 2; fix: bug 3; \
                 fix: bug 4; fix: bug 5; and 5 more"
            )
        );
        assert_eq!(c.refs.len(), 7);
        assert_eq!(
            c.refs[0],
            ItemRef::SubmoduleCommit {
                path: "vendor/lib".to_owned(),
                id: subs[0].short.clone(),
            }
        );
        assert_eq!(c.reason, "vendored submodule moved over 10 commits");

        // Not vendored: Other; refs capped at ten.
        let many: Vec<ReleaseCommit> = (1..=12)
            .map(|i| commit(&format!("change {i}"), "", &["src/a.rs"]))
            .collect();
        let got = candidates(&[], &[group("engine", many, 0)]);
        assert_eq!(got[0].section, Other);
        assert_eq!(got[0].refs.len(), 10);

        // Without commits: Low, the note says why, refs are the parent commits.
        let mut bare = group("libs/core", Vec::new(), 0);
        bare.note = Some("not checked out".to_owned());
        let parent = commit("Update core", "", &["libs/core@"]);
        check(
            std::slice::from_ref(&parent),
            std::slice::from_ref(&bare),
            &[(
                Other,
                true,
                Low,
                &format!("`libs/core` moves from {old} to {new} (not checked out)"),
            )],
        );
        let got = candidates(std::slice::from_ref(&parent), std::slice::from_ref(&bare));
        assert_eq!(got[0].refs, [ItemRef::Commit(parent.short.clone())]);

        // Moved back: nothing at all.
        let mut back = group("libs/core", Vec::new(), 0);
        back.new = back.old;
        check(std::slice::from_ref(&parent), &[back], &[]);

        // Added: no old commit.
        let mut added = group("third_party/zlib", Vec::new(), 0);
        added.old = None;
        check(
            &[],
            &[added],
            &[(
                Dependencies,
                true,
                Low,
                &format!("`third_party/zlib` is added at {new}"),
            )],
        );

        // A submodule-only commit no group covers is judged like any commit.
        check(
            &[commit("Update other", "", &["other@"])],
            &[],
            &[(Other, true, Low, "Update other")],
        );
    }
}
