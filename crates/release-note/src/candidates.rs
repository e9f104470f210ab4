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
//!    **Internal version bumps** (commits that only bump versions of the
//!    workspace's own crates, [`ReleaseCommit::internal_bumps`]) get no
//!    candidate of their own either: all of them together get one, Other,
//!    excluded, High, draft `Bump internal crate versions: a 1.2.3, b 0.4.0`,
//!    refs to each commit.
//! 3. **Breaking**: `!` in the conventional header, or a `BREAKING CHANGE:` /
//!    `BREAKING-CHANGE:` footer → Breaking, included, High.
//!    **Packaging-only commits** (every path a package manager's manifest or
//!    tap: `pkg/`, `packaging/`, `debian/`, `Formula/`, `PKGBUILD`, `*.spec`,
//!    … — [`is_packaging`]) → Other, excluded, High; unless every listed
//!    commit of the range is packaging-only (then packaging is the release's
//!    point) → Other, included, Medium.
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
//!    description; a `component: subject` prefix, such as ripgrep's `printer:
//!    fix …` or `ignore/types: add …`, is a scope: the reason names the
//!    component and the rule reads the description): a version bump (`Release 1.2.0`, `Bump version to …`) →
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
//! **Draft**: the conventional or component description (or the subject)
//! with Markdown links reduced to their text, without trailing `(#123)` and
//! period, first letter capitalized, then `. ` and the first body line that
//! adds something (not a trailer, a URL, a line of pull request or issue
//! references, or the breaking footer, which a breaking commit uses instead); at most 300 characters, cut at a word
//! boundary with `…`.
//!
//! **Refs**: `Commit(short)`, then each pull request of the commit, then each
//! issue it closes.
//! **Evidence**: `signals: …`, `+A -D in N files`, and the five largest paths.
//!
//! Output: in [`Section::ALL`] order, then commit order, then group order.

use std::cmp::Reverse;
use std::sync::LazyLock;

use commit_text::trailer::is_trailer_line;
use commit_text::{Conventional, Prefix};
use regex::Regex;

use crate::built_in;
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

static PULL_REQUEST_SUFFIX: LazyLock<Regex> = LazyLock::new(|| built_in(r"(?:\s*\(#\d+\))+\s*$"));

static SECURITY: LazyLock<Regex> = LazyLock::new(|| {
    built_in(r"(?i)\b(?:security|vulnerabilit(?:y|ies)|vulnerable|xss|injection|cve-\d+)")
});

static VERSION_BUMP: LazyLock<Regex> = LazyLock::new(|| {
    built_in(
        r"(?i)^(?:(?:release|version|bump to)\s*:?\s*v?\d+(?:\.\d+)+\b|v?\d+\.\d+\.\d+$|(?:bump version|version bump|prepare (?:for )?release)\b)",
    )
});

static URL_ONLY: LazyLock<Regex> = LazyLock::new(|| built_in(r"^<?https?://\S+>?$"));

/// The candidate items of a range's `commits` and moved `submodules`, by the
/// rules of the module documentation.
pub(crate) fn candidates(
    commits: &[ReleaseCommit],
    submodules: &[SubmoduleGroup],
) -> Vec<Candidate> {
    let listed: Vec<&ReleaseCommit> = commits
        .iter()
        .filter(|c| !c.merge && !moves_grouped_submodule(c, submodules))
        .collect();
    let range = RangeFacts {
        packaging_point: !listed.is_empty() && listed.iter().all(|c| packaging_only(c)),
    };
    let (bumps, others): (Vec<&ReleaseCommit>, Vec<&ReleaseCommit>) = listed
        .into_iter()
        .partition(|c| !c.internal_bumps.is_empty());
    let mut out: Vec<Candidate> = others
        .into_iter()
        .map(|c| commit_candidate(c, &range))
        .collect();
    out.extend(bumps_candidate(&bumps));
    out.extend(
        submodules
            .iter()
            .filter_map(|g| group_candidate(g, commits)),
    );
    out.sort_by_key(|c| c.section);
    out
}

/// What the rules need to know about the range as a whole.
struct RangeFacts {
    /// Every listed commit is packaging-only: packaging is the release's point.
    packaging_point: bool,
}

/// Rule 2b: the commits that only bump the workspace's own crates, as one
/// candidate.
fn bumps_candidate(commits: &[&ReleaseCommit]) -> Option<Candidate> {
    if commits.is_empty() {
        return None;
    }
    let mut crates: Vec<&str> = commits
        .iter()
        .flat_map(|c| &c.internal_bumps)
        .map(String::as_str)
        .collect();
    crates.sort_unstable();
    crates.dedup();
    let ids: Vec<&str> = commits.iter().map(|c| c.short.as_str()).collect();
    Some(Candidate {
        section: Section::Other,
        draft: shorten(
            &format!("Bump internal crate versions: {}", crates.join(", ")),
            MAX_DRAFT,
        ),
        confidence: Confidence::High,
        include: false,
        reason: format!(
            "{} {} only bumping versions of the workspace's own crates, grouped: release bookkeeping",
            commits.len(),
            if commits.len() == 1 {
                "commit"
            } else {
                "commits"
            }
        ),
        refs: commits
            .iter()
            .map(|c| ItemRef::Commit(c.short.clone()))
            .collect(),
        evidence: vec![
            "signals: dependency".to_owned(),
            format!("commits: {}", ids.join(", ")),
        ],
    })
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

fn commit_candidate(commit: &ReleaseCommit, range: &RangeFacts) -> Candidate {
    let conventional = Conventional::parse(&commit.subject);
    let footer = breaking_footer(&commit.message);
    let verdict = judge(commit, conventional.as_ref(), footer.is_some(), range);
    let head = match &conventional {
        Some(h) if h.kind == "revert" && !starts_with_word(&h.description, "revert") => {
            format!("Revert {}", h.description)
        }
        Some(h) => h.description.clone(),
        None => Prefix::of(&commit.subject)
            .description(&commit.subject)
            .to_owned(),
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
    refs.extend(commit.issues.iter().map(|&n| ItemRef::Issue(n)));
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
fn judge(
    commit: &ReleaseCommit,
    conventional: Option<&Conventional>,
    footer: bool,
    range: &RangeFacts,
) -> Verdict {
    use Confidence::{High, Medium};
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
    if packaging_only(commit) {
        return if range.packaging_point {
            Verdict::new(
                Section::Other,
                true,
                Medium,
                "packaging-only change, the point of this release: every commit of the range is packaging",
            )
        } else {
            Verdict::new(
                Section::Other,
                false,
                High,
                "packaging-only change (package manifests or a package tap): not what this release is about",
            )
        };
    }
    let Some(header) = conventional else {
        return match Prefix::of(&commit.subject) {
            Prefix::Component {
                component,
                description,
            } => as_component(commit, &component, &description),
            _ => infer(commit, &commit.subject),
        };
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
        _ if scope.is_none() => as_component(commit, kind, &header.description),
        _ => {
            let mut verdict = infer(commit, &header.description);
            verdict.reason = format!("unknown conventional type `{kind}`; {}", verdict.reason);
            verdict
        }
    }
}

/// Rule 8 for a `component: description` subject: the component is a scope,
/// the description is read as any other subject.
fn as_component(commit: &ReleaseCommit, component: &str, description: &str) -> Verdict {
    let mut verdict = infer(commit, description);
    verdict.reason = format!("component `{component}`; {}", verdict.reason);
    verdict
}

/// Every path is packaging: a package manager's manifest or tap (see
/// [`is_packaging`]).
fn packaging_only(commit: &ReleaseCommit) -> bool {
    !commit.paths.is_empty()
        && commit.paths.len() == commit.paths_total
        && commit.paths.iter().all(|p| is_packaging(&p.path))
}

/// Packaging of the project for a package manager: a path under `pkg/`,
/// `packaging/`, `debian/`, `rpm/`, `homebrew/`, `HomebrewFormula/`,
/// `Formula/`, `Casks/`, `snap/`, `flatpak/`, `chocolatey/`, `scoop/`,
/// `winget/` or `aur/`, or a file `PKGBUILD`, `.SRCINFO`, `snapcraft.yaml`,
/// `*.spec`, `*.nuspec` or `*.ebuild`.
fn is_packaging(path: &str) -> bool {
    let lower = path.to_lowercase();
    let (dirs, name) = lower.rsplit_once('/').unwrap_or(("", lower.as_str()));
    dirs.split('/').any(|d| {
        matches!(
            d,
            "pkg"
                | "packaging"
                | "debian"
                | "rpm"
                | "homebrew"
                | "homebrewformula"
                | "formula"
                | "casks"
                | "snap"
                | "flatpak"
                | "chocolatey"
                | "scoop"
                | "winget"
                | "aur"
        )
    }) || matches!(name, "pkgbuild" | ".srcinfo" | "snapcraft.yaml")
        || [".spec", ".nuspec", ".ebuild"]
            .iter()
            .any(|ext| name.len() > ext.len() && name.ends_with(ext))
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

/// A line that only cites pull requests or issues (`PR #3192`, `Fixes
/// #3202`, `!45`): the candidate's refs carry them.
static REFERENCE_ONLY: LazyLock<Regex> = LazyLock::new(|| {
    built_in(
        r"(?i)^(?:(?:pr|fix(?:es|ed)?|close[sd]?|resolve[sd]?|see|refs?)\s*:?\s*)?[#!]\d+(?:\s*,\s*[#!]\d+)*\.?$",
    )
});

/// The first body line worth adding to a draft: not blank, not a trailer, not
/// a lone URL or pull request or issue reference, not the clamp marker; list
/// markers dropped.
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
                && !REFERENCE_ONLY.is_match(line)
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

/// A Markdown link, inline `[text](url)` or by reference `[text][label]`;
/// group 1 the text.
static MARKDOWN_LINK: LazyLock<Regex> =
    LazyLock::new(|| built_in(r"\[([^\[\]]*)\](?:\([^()\s]*(?:\s+[^()]*)?\)|\[[^\[\]]*\])"));

/// Trimmed, Markdown links reduced to their text, without trailing `(#123)`
/// refs and periods, first letter capitalized.
fn tidy(text: &str) -> String {
    let text = MARKDOWN_LINK.replace_all(text.trim(), "$1");
    let text = PULL_REQUEST_SUFFIX.replace(&text, "");
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
mod tests;
