//! The release-note evidence, computed before the model runs: the refs peeled
//! and validated, the parent repository's commits with clamped messages,
//! changed paths, statistics, patch excerpts and operator signals, submodule
//! moves with their own commit groups when the history is available locally
//! (and their URLs from `.gitmodules`, read by git through
//! [`gitctx::Repo::submodule_urls`]), candidate items, and link hints from the
//! remotes.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use commit_text::clamp;
use git_evidence::Error;
use git_evidence::classify::{self, Class};
use git_evidence::fit;
use gitctx::{Bump, DiffOptions, DiffTarget, FileDiff, ObjectId, Repo, Version};
use lockfile_diff as lockfile;

use crate::types::{
    ChangedPath, ItemRef, LinkHints, Range, RefInfo, ReleaseCommit, ReleaseContext, SubmoduleGroup,
};
use crate::{bumps, candidates, links, signals};

/// Sizes of the prepared evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReleaseLimits {
    /// Parent commits listed (the rest are counted).
    pub max_commits: usize,
    /// Commits listed per submodule group.
    pub submodule_commits: usize,
    /// Paths listed per commit.
    pub paths_per_commit: usize,
    /// Patch excerpt per commit, at most.
    pub excerpt_bytes: usize,
    /// All patch excerpts together, at most (each commit's share shrinks with
    /// the number of commits).
    pub excerpts_total: usize,
}

impl Default for ReleaseLimits {
    fn default() -> Self {
        ReleaseLimits {
            max_commits: 150,
            submodule_commits: 30,
            paths_per_commit: 20,
            excerpt_bytes: 1500,
            excerpts_total: 40 * 1024,
        }
    }
}

/// How the user named the range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RangeSpec {
    /// `release-note BASE RELEASE`.
    Explicit { base: String, release: String },
    /// `release-note patch|minor|major`: from the latest reachable semantic
    /// version tag to HEAD.
    Bump(Bump),
}

impl RangeSpec {
    /// `patch`, `minor` or `major` as a shortcut; anything else is not one.
    pub fn bump(word: &str) -> Option<Bump> {
        match word {
            "patch" => Some(Bump::Patch),
            "minor" => Some(Bump::Minor),
            "major" => Some(Bump::Major),
            _ => None,
        }
    }
}

fn ref_info(repo: &Repo, name: &str) -> Result<RefInfo, Error> {
    let commit = repo.resolve_commit(name)?;
    let info = repo.commit_info_by_id(commit)?;
    Ok(RefInfo {
        name: name.to_owned(),
        commit,
        subject: info.summary,
        date: info
            .committer
            .time
            .to_fixed()
            .format("%Y-%m-%d")
            .to_string(),
    })
}

/// Peels and validates the range.
pub(crate) fn resolve_range(repo: &Repo, spec: &RangeSpec) -> Result<Range, Error> {
    let range = match spec {
        RangeSpec::Explicit { base, release } => {
            let base = ref_info(repo, base)?;
            let release = ref_info(repo, release)?;
            let version = Version::parse_tag(&release.name).map(|v| v.to_string());
            Range {
                base,
                release,
                version,
                bump: None,
            }
        }
        RangeSpec::Bump(bump) => {
            let latest = repo.latest_semver_tag("HEAD")?.ok_or(Error::NoVersionTag)?;
            let base = ref_info(repo, &latest.tag.name)?;
            let release = ref_info(repo, "HEAD")?;
            let name = match bump {
                Bump::Patch => "patch",
                Bump::Minor => "minor",
                Bump::Major => "major",
            };
            let version = latest.version.bump(*bump).ok_or_else(|| {
                Error::InvalidOption(format!(
                    "the latest version tag {} cannot be given a {name} bump: that number is already the largest there is; pass BASE and RELEASE instead",
                    latest.tag.name
                ))
            })?;
            Range {
                base,
                release,
                version: Some(version.to_string()),
                bump: Some(name.to_owned()),
            }
        }
    };
    if range.base.commit == range.release.commit {
        return Err(Error::EmptyRange {
            base: range.base.name,
            release: range.release.name,
        });
    }
    Ok(range)
}

fn short(id: ObjectId) -> String {
    id.to_hex()[..7].to_owned()
}

/// The evidence of one commit of `repo`. `excerpt_room` bounds its patch
/// excerpt.
fn release_commit(
    repo: &Repo,
    id: ObjectId,
    limits: &ReleaseLimits,
    excerpt_room: usize,
) -> Result<ReleaseCommit, Error> {
    let info = repo.commit_info_by_id(id)?;
    let diff = repo.diff(
        DiffTarget::Commit(&id.to_hex()),
        &DiffOptions {
            context_lines: 1,
            ..DiffOptions::default()
        },
    )?;
    let classes: Vec<Class> = diff
        .files
        .iter()
        .map(|f| classify::classify(repo, f))
        .collect();
    let mut paths: Vec<ChangedPath> = diff
        .files
        .iter()
        .zip(&classes)
        .map(|(f, class)| ChangedPath {
            path: f.path().to_owned(),
            status: f.status.letter(),
            additions: f.additions,
            deletions: f.deletions,
            binary: f.binary,
            signal: signals::signal_of(f.path(), class),
        })
        .collect();
    let signals = signals::commit_signals(&paths);
    let paths_total = paths.len();
    // Keep the largest changes when there are too many paths to list.
    if paths.len() > limits.paths_per_commit {
        paths.sort_by(|a, b| {
            (b.additions + b.deletions)
                .cmp(&(a.additions + a.deletions))
                .then(a.path.cmp(&b.path))
        });
        paths.truncate(limits.paths_per_commit);
        paths.sort_by(|a, b| a.path.cmp(&b.path));
    }
    let hand: Vec<&FileDiff> = diff
        .files
        .iter()
        .zip(&classes)
        .filter(|(_, c)| **c == Class::Handwritten)
        .map(|(f, _)| f)
        .collect();
    // Lockfiles: their package version changes instead of their diff.
    let parent = info.parents.first().map(|p| p.to_hex());
    let mut excerpt = String::new();
    for (file, class) in diff.files.iter().zip(&classes) {
        if let Class::Lockfile(kind) = class {
            let text =
                |rev: Option<&str>, path: Option<&String>| -> Result<Option<String>, Error> {
                    match (rev, path) {
                        (Some(rev), Some(path)) => Ok(repo
                            .file_at_opt(rev, path)?
                            .map(|b| String::from_utf8_lossy(&b).into_owned())),
                        _ => Ok(None),
                    }
                };
            let old = text(parent.as_deref(), file.old_path.as_ref())?;
            let new = text(Some(&id.to_hex()), file.new_path.as_ref())?;
            let summary = lockfile::summarize(file.path(), *kind, old.as_deref(), new.as_deref());
            excerpt.push_str(&summary.render(12));
            excerpt.push('\n');
        }
    }
    let room = excerpt_room.saturating_sub(excerpt.len());
    if room >= fit::MIN_SHARE {
        excerpt.push_str(&fit::fit(&hand, room, None).text);
    }
    let (mut message, clamped) =
        clamp::clamp_message(&info.message, clamp::MAX_LINES, clamp::MAX_WORDS);
    // A breaking-change footer past the clamp still matters most of all.
    if clamped
        && let Some(footer) = info
            .message
            .lines()
            .find(|l| l.starts_with("BREAKING CHANGE:") || l.starts_with("BREAKING-CHANGE:"))
        && !message.contains(footer)
    {
        message.push('\n');
        message.push_str(footer);
    }
    Ok(ReleaseCommit {
        id,
        short: short(id),
        subject: info.summary.clone(),
        message,
        clamped,
        author: info.author.name.clone(),
        date: info.author.time.to_fixed().format("%Y-%m-%d").to_string(),
        merge: info.parents.len() > 1,
        paths,
        paths_total,
        additions: diff.additions(),
        deletions: diff.deletions(),
        excerpt,
        signals,
        pull_requests: commit_text::pull_requests(&info.message),
        issues: commit_text::issue_references(&info.message),
        internal_bumps: bumps::internal_bumps(&diff.files),
    })
}

/// The commits `from..to` of `repo` (newest first, at most `max`) and how many
/// more there are.
fn commits_in(
    repo: &Repo,
    from: Option<ObjectId>,
    to: ObjectId,
    max: usize,
    limits: &ReleaseLimits,
) -> Result<(Vec<ReleaseCommit>, usize), Error> {
    let from = from.map(|f| f.to_hex());
    let ids = repo.log_range(from.as_deref(), &to.to_hex(), max + 1)?;
    let more = if ids.len() > max {
        repo.log_range(from.as_deref(), &to.to_hex(), 1_000_000)?
            .len()
            - max
    } else {
        0
    };
    let listed = ids.len().min(max);
    let room = (limits.excerpts_total / listed.max(1)).min(limits.excerpt_bytes);
    let mut out = Vec::with_capacity(listed);
    for id in ids.into_iter().take(max) {
        out.push(release_commit(repo, id, limits, room)?);
    }
    Ok((out, more))
}

fn submodule_groups(
    repo: &Repo,
    range: &Range,
    parent_remote: Option<&str>,
    limits: &ReleaseLimits,
) -> Result<Vec<SubmoduleGroup>, Error> {
    let base = repo.gitlinks(&range.base.commit.to_hex())?;
    let release = repo.gitlinks(&range.release.commit.to_hex())?;
    let mut moves: BTreeMap<String, (Option<ObjectId>, Option<ObjectId>)> = BTreeMap::new();
    for link in base {
        moves.entry(link.path).or_default().0 = Some(link.commit);
    }
    for link in release {
        moves.entry(link.path).or_default().1 = Some(link.commit);
    }
    moves.retain(|_, (old, new)| old != new);
    if moves.is_empty() {
        return Ok(Vec::new());
    }
    let urls = match repo.submodule_urls(&range.release.commit.to_hex()) {
        Ok(urls) => urls,
        // The URLs only make links: a `.gitmodules` git cannot read, or one
        // over gitctx's bounds, leaves the groups unlinked.
        Err(gitctx::Error::InvalidInput { .. }) => BTreeMap::new(),
        Err(err) => return Err(err.into()),
    };
    let mut out = Vec::new();
    for (path, (old, new)) in moves {
        let links: Option<LinkHints> = urls
            .get(&path)
            .and_then(|url| links::resolve_submodule_url(parent_remote, url))
            .and_then(|url| links::link_hints(&url));
        let mut group = SubmoduleGroup {
            path: path.clone(),
            old,
            new,
            commits: Vec::new(),
            more: 0,
            note: None,
            links,
        };
        match (new, repo.open_submodule(&path)) {
            (None, _) => group.note = Some("removed in this range".to_owned()),
            (Some(_), Ok(None)) | (Some(_), Err(_)) => {
                group.note = Some(
                    "its history is not available here (the submodule is not checked out)"
                        .to_owned(),
                );
            }
            (Some(new), Ok(Some(sub))) => {
                let has = |id: ObjectId| sub.commit_info_by_id(id).is_ok();
                if !has(new) || old.is_some_and(|o| !has(o)) {
                    group.note = Some(
                        "its commits for this range are not in the local checkout (fetch it)"
                            .to_owned(),
                    );
                } else {
                    let (commits, more) =
                        commits_in(&sub, old, new, limits.submodule_commits, limits)?;
                    if commits.is_empty() {
                        group.note = Some("moved back to an older commit".to_owned());
                    }
                    group.commits = commits;
                    group.more = more;
                }
            }
        }
        out.push(group);
    }
    Ok(out)
}

/// Prepares the release-note evidence for `range`.
pub(crate) fn prepare_context(
    repo: &Repo,
    range: Range,
    limits: &ReleaseLimits,
) -> Result<ReleaseContext, Error> {
    let (commits, more_commits) = commits_in(
        repo,
        Some(range.base.commit),
        range.release.commit,
        limits.max_commits,
        limits,
    )?;
    if commits.is_empty() {
        return Err(Error::EmptyRange {
            base: range.base.name.clone(),
            release: range.release.name.clone(),
        });
    }
    let remote = repo.config_get("remote.origin.url")?;
    let links = remote.as_deref().and_then(links::link_hints);
    let submodules = submodule_groups(repo, &range, remote.as_deref(), limits)?;
    let touched_code = !submodules.is_empty()
        || commits
            .iter()
            .any(|c| c.signals.iter().any(|s| s.is_code()));
    let candidates = candidates::candidates(&commits, &submodules);
    Ok(ReleaseContext {
        range,
        commits,
        more_commits,
        submodules,
        candidates,
        links,
        touched_code,
    })
}

fn write_commit(out: &mut String, c: &ReleaseCommit, indent: &str) {
    let signals: Vec<&str> = c.signals.iter().map(|s| s.as_str()).collect();
    let _ = writeln!(
        out,
        "{indent}<commit id=\"{}\" date=\"{}\" author=\"{}\"{}{}{}>",
        c.short,
        c.date,
        git_evidence::prompt::escape(&c.author),
        if c.merge { " merge=\"true\"" } else { "" },
        numbers_attribute("pull_requests", &c.pull_requests),
        numbers_attribute("issues", &c.issues),
    );
    let _ = writeln!(
        out,
        "<message{}>",
        if c.clamped { " clamped=\"true\"" } else { "" }
    );
    out.push_str(&data(c.message.trim_end()));
    let _ = writeln!(out, "\n</message>");
    let _ = writeln!(
        out,
        "<changes files=\"{}\" additions=\"{}\" deletions=\"{}\" signals=\"{}\">",
        c.paths_total,
        c.additions,
        c.deletions,
        signals.join(",")
    );
    for p in &c.paths {
        let stat = if p.binary {
            "binary".to_owned()
        } else {
            format!("+{} -{}", p.additions, p.deletions)
        };
        let _ = writeln!(out, "{} {stat} {} [{}]", p.status, data(&p.path), p.signal);
    }
    if c.paths_total > c.paths.len() {
        let _ = writeln!(out, "[… {} more paths]", c.paths_total - c.paths.len());
    }
    let _ = writeln!(out, "</changes>");
    if !c.excerpt.is_empty() {
        let _ = writeln!(out, "<excerpt>");
        out.push_str(&data(&c.excerpt));
        let _ = writeln!(out, "</excerpt>");
    }
    let _ = writeln!(out, "{indent}</commit>");
}

/// ` name="#1 #2"`, or nothing without numbers.
fn numbers_attribute(name: &str, numbers: &[u64]) -> String {
    if numbers.is_empty() {
        return String::new();
    }
    format!(" {name}=\"{}\"", hash_list(numbers, " "))
}

/// `#1<sep>#2`.
fn hash_list(numbers: &[u64], separator: &str) -> String {
    numbers
        .iter()
        .map(|n| format!("#{n}"))
        .collect::<Vec<_>>()
        .join(separator)
}

/// The numbers each kind of ref may cite, from every listed commit of the
/// range, sorted and unique: (pull requests, issues).
pub(crate) fn valid_numbers(ctx: &ReleaseContext) -> (Vec<u64>, Vec<u64>) {
    let collect = |of: fn(&ReleaseCommit) -> &Vec<u64>| {
        let mut all: Vec<u64> = ctx.commits.iter().flat_map(of).copied().collect();
        all.sort_unstable();
        all.dedup();
        all
    };
    (collect(|c| &c.pull_requests), collect(|c| &c.issues))
}

fn data(text: &str) -> String {
    git_evidence::render::data(text)
        .replace("</commit", "<\\/commit")
        .replace("</message", "<\\/message")
        .replace("</excerpt", "<\\/excerpt")
        .replace("</changes", "<\\/changes")
}

/// The policy the candidates follow, for the model.
const POLICY: &str = "Include/omit policy: write for the people who deploy and operate this release. Include user- or operator-visible behaviour, API/CLI/config changes, breaking changes with the action they require, security fixes, notable performance changes and dependency updates that matter. Omit tests-only, CI/tooling-only, internal refactors without visible effect, internal docs and merge commits (their content is in the merged commits). Candidates marked include=\"false\" should normally be left out; those marked include=\"true\" should normally be kept, polished.";

/// Renders the evidence as the data block of the task prompt.
pub(crate) fn render(ctx: &ReleaseContext) -> String {
    let mut out = String::new();
    let r = &ctx.range;
    let _ = writeln!(out, "<prepared_context mode=\"release-note\">");
    let _ = writeln!(
        out,
        "Range: {} ({} {}, {}) .. {} ({} {}, {}){}{}",
        data(&r.base.name),
        short(r.base.commit),
        data(&r.base.subject),
        r.base.date,
        data(&r.release.name),
        short(r.release.commit),
        data(&r.release.subject),
        r.release.date,
        r.version
            .as_ref()
            .map_or(String::new(), |v| format!("; release version {v}")),
        r.bump.as_ref().map_or(String::new(), |b| format!(
            " (a {b} bump of {})",
            r.base.name
        )),
    );
    match &ctx.links {
        Some(l) => {
            let _ = writeln!(
                out,
                "Repository: {} ({:?}); commit and pull request links are added locally from the refs you give",
                l.web, l.host
            );
        }
        None => {
            let _ = writeln!(
                out,
                "Repository: no known web host; refs are shown as plain ids"
            );
        }
    }
    let _ = writeln!(out, "{POLICY}");
    let (pulls, issues) = valid_numbers(ctx);
    let none = |list: &[u64]| {
        if list.is_empty() {
            "none".to_owned()
        } else {
            hash_list(list, ", ")
        }
    };
    let _ = writeln!(
        out,
        "Pull requests the commits mention (refs of kind pull_request): {}. Issues they close (refs of kind issue): {}.",
        none(&pulls),
        none(&issues)
    );
    let _ = writeln!(out, "<candidates count=\"{}\">", ctx.candidates.len());
    for (i, c) in ctx.candidates.iter().enumerate() {
        let refs: Vec<String> = c
            .refs
            .iter()
            .map(|r| match r {
                ItemRef::Commit(id) => format!("commit:{id}"),
                ItemRef::PullRequest(n) => format!("pull_request:#{n}"),
                ItemRef::Issue(n) => format!("issue:#{n}"),
                ItemRef::SubmoduleCommit { path, id } => {
                    format!("submodule_commit:{path}@{id}")
                }
            })
            .collect();
        let _ = writeln!(
            out,
            "<candidate n=\"{}\" section=\"{}\" confidence=\"{:?}\" include=\"{}\" refs=\"{}\">",
            i + 1,
            c.section.key(),
            c.confidence,
            c.include,
            refs.join(" ")
        );
        let _ = writeln!(out, "draft: {}", data(&c.draft));
        let _ = writeln!(out, "why: {}", data(&c.reason));
        for e in &c.evidence {
            let _ = writeln!(out, "evidence: {}", data(e));
        }
        let _ = writeln!(out, "</candidate>");
    }
    let _ = writeln!(out, "</candidates>");
    let _ = writeln!(
        out,
        "<commits count=\"{}\" note=\"the parent repository's commits, newest first\">",
        ctx.commits.len() + ctx.more_commits
    );
    for c in &ctx.commits {
        write_commit(&mut out, c, "");
    }
    if ctx.more_commits > 0 {
        let _ = writeln!(out, "[… {} older commits not listed]", ctx.more_commits);
    }
    let _ = writeln!(out, "</commits>");
    if !ctx.submodules.is_empty() {
        let _ = writeln!(out, "<submodules>");
        for g in &ctx.submodules {
            let end = |id: Option<ObjectId>| id.map_or("(none)".to_owned(), short);
            let _ = writeln!(
                out,
                "<submodule path=\"{}\" old=\"{}\" new=\"{}\" commits=\"{}\">",
                data(&g.path),
                end(g.old),
                end(g.new),
                g.commits.len() + g.more
            );
            if let Some(note) = &g.note {
                let _ = writeln!(out, "note: {note}");
            }
            for c in &g.commits {
                write_commit(&mut out, c, "  ");
            }
            if g.more > 0 {
                let _ = writeln!(out, "[… {} more commits]", g.more);
            }
            let _ = writeln!(out, "</submodule>");
        }
        let _ = writeln!(out, "</submodules>");
    }
    let _ = writeln!(out, "</prepared_context>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortcut_words() {
        assert_eq!(RangeSpec::bump("minor"), Some(Bump::Minor));
        assert_eq!(RangeSpec::bump("v1.2.0"), None);
    }
}
