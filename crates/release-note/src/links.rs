//! Links to commits, pull requests and comparisons, from a remote URL.
//!
//! [`link_hints`] recognizes the remote URL forms git accepts (`https://`,
//! `http://`, `ssh://` with an optional port, scp-like `git@host:owner/repo`,
//! `git://`) on hosts whose URL scheme we know, and [`resolve_submodule_url`]
//! resolves a submodule's URL relative to its parent's remote as git does.
//!
//! **Invariants:** no link is better than a wrong link: unknown hosts, local
//! paths, `file://` URLs and paths that do not look like a repository give
//! `None`. Credentials in a remote URL never reach a link.

use std::fmt::Write as _;

use crate::types::{Host, LinkHints};

/// The links of the repository whose remote is `remote_url`, when its host is
/// one we know: GitHub (`github.com` and hosts containing `github`, as GitHub
/// Enterprise), GitLab (`gitlab.com` and hosts containing `gitlab`, with
/// nested groups), Bitbucket (`bitbucket.org`), Gitea (`codeberg.org` and hosts
/// containing `gitea` or `forgejo`). `web` is always `https://host/slug`,
/// without credentials, port, `.git` or trailing slash.
pub(crate) fn link_hints(remote_url: &str) -> Option<LinkHints> {
    let remote = parse_remote(remote_url.trim())?;
    let (host, web_host) = known_host(&remote.host)?;
    let path = remote.path.split(['?', '#']).next().unwrap_or_default();
    let path = path.trim_matches('/');
    let path = path
        .strip_suffix(".git")
        .unwrap_or(path)
        .trim_end_matches('/');
    let segments: Vec<&str> = path.split('/').collect();
    let depth_ok = match host {
        Host::GitLab => segments.len() >= 2,
        Host::GitHub | Host::Bitbucket | Host::Gitea => segments.len() == 2,
    };
    if !depth_ok || !segments.iter().all(|s| is_name(s)) {
        return None;
    }
    let slug = segments.join("/");
    Some(LinkHints {
        host,
        web: format!("https://{web_host}/{slug}"),
        slug,
    })
}

impl LinkHints {
    /// The page of commit `sha`.
    pub(crate) fn commit_url(&self, sha: &str) -> String {
        self.page(["commit", "-/commit", "commits"], sha)
    }

    /// The page of pull request (GitLab: merge request) `n`.
    pub(crate) fn pull_url(&self, n: u64) -> String {
        self.page(["pull", "-/merge_requests", "pull-requests"], n)
    }

    /// The page of issue `n`.
    pub(crate) fn issue_url(&self, n: u64) -> String {
        self.page(["issues", "-/issues", "issues"], n)
    }

    /// `web/<folder>/id`, the folder of this host among `folders` (GitHub and
    /// Gitea, GitLab, Bitbucket).
    fn page(&self, folders: [&str; 3], id: impl std::fmt::Display) -> String {
        let folder = match self.host {
            Host::GitHub | Host::Gitea => folders[0],
            Host::GitLab => folders[1],
            Host::Bitbucket => folders[2],
        };
        format!("{}/{folder}/{id}", self.web)
    }

    /// The comparison of `from` and `to` (refs or ids, percent-encoded where
    /// needed); `None` on Bitbucket, whose comparison URLs are not stable.
    pub(crate) fn compare_url(&self, from: &str, to: &str) -> Option<String> {
        let web = &self.web;
        let (from, to) = (encode_ref(from), encode_ref(to));
        match self.host {
            Host::GitHub | Host::Gitea => Some(format!("{web}/compare/{from}...{to}")),
            Host::GitLab => Some(format!("{web}/-/compare/{from}...{to}")),
            Host::Bitbucket => None,
        }
    }
}

/// The URL of a submodule whose `.gitmodules` URL is `submodule_url`: relative
/// URLs (`./x`, `../lib.git`) are resolved against the parent's remote URL the
/// way git does (the parent URL is the directory they are relative to), for
/// `scheme://` URLs, scp-like URLs and absolute local paths; absolute URLs
/// pass through. `None`: a relative URL without a parent remote, or one that
/// climbs above the parent's host. Credentials of an `http(s)` parent URL are
/// dropped, and so is the password of any other.
pub(crate) fn resolve_submodule_url(
    parent_remote: Option<&str>,
    submodule_url: &str,
) -> Option<String> {
    let url = submodule_url.trim();
    if url.is_empty() {
        return None;
    }
    if !(url.starts_with("./") || url.starts_with("../")) {
        return Some(url.to_owned());
    }
    let base = Base::parse(parent_remote?.trim())?;
    let mut segments: Vec<&str> = base
        .path
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    for part in url.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                segments.pop()?;
            }
            _ => segments.push(part),
        }
    }
    Some(format!("{}{}{}", base.prefix, base.sep, segments.join("/")))
}

/// The host and path of a remote URL.
struct Remote<'a> {
    /// Lowercase, without user or port.
    host: String,
    path: &'a str,
}

/// Splits a `scheme://` or scp-like remote URL; `None` for local paths,
/// `file://` and schemes that are not git's network transports.
fn parse_remote(url: &str) -> Option<Remote<'_>> {
    if let Some((scheme, rest)) = url.split_once("://") {
        let scheme = scheme.to_ascii_lowercase();
        if !["https", "http", "ssh", "git", "git+ssh", "ssh+git"].contains(&scheme.as_str()) {
            return None;
        }
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let host = match host_port.rsplit_once(':') {
            Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
            Some(_) => return None,
            None => host_port,
        };
        return Some(Remote {
            host: host.to_ascii_lowercase(),
            path,
        });
    }
    // scp-like `[user@]host:path`: git reads it so only when no slash comes
    // before the colon.
    let (left, path) = url.split_once(':')?;
    if left.contains(['/', '\\']) {
        return None;
    }
    let host = left.rsplit_once('@').map_or(left, |(_, h)| h);
    Some(Remote {
        host: host.to_ascii_lowercase(),
        path,
    })
}

/// The kind of a host and the host its web pages live on (GitHub's and
/// GitLab's SSH-over-443 hosts serve no pages).
fn known_host(host: &str) -> Option<(Host, String)> {
    if host.is_empty()
        || !host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
    {
        return None;
    }
    let known = match host {
        "github.com" | "www.github.com" | "ssh.github.com" => (Host::GitHub, "github.com"),
        "gitlab.com" | "www.gitlab.com" | "altssh.gitlab.com" => (Host::GitLab, "gitlab.com"),
        "bitbucket.org" | "www.bitbucket.org" | "altssh.bitbucket.org" => {
            (Host::Bitbucket, "bitbucket.org")
        }
        "codeberg.org" => (Host::Gitea, "codeberg.org"),
        _ if host.contains("github") => (Host::GitHub, host),
        _ if host.contains("gitlab") => (Host::GitLab, host),
        _ if host.contains("gitea") || host.contains("forgejo") => (Host::Gitea, host),
        _ => return None,
    };
    Some((known.0, known.1.to_owned()))
}

/// A path segment a hosting service accepts as an owner, group or repository
/// name (ASCII letters, digits, `-`, `_`, `.`; not `.` or `..`).
fn is_name(segment: &str) -> bool {
    !segment.is_empty()
        && segment != "."
        && segment != ".."
        && segment
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Percent-encodes what would break a URL path in a ref name (spaces, `#`,
/// `?`, `%`, controls, non-ASCII, …); `/` stays, as in `release/1.2`.
fn encode_ref(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        let keep = b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&b);
        if keep {
            out.push(char::from(b));
        } else {
            // Writing to a `String` cannot fail.
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A parent remote URL split for relative resolution: `prefix` (scheme and
/// host, or scp-like `user@host`), the separator before the path, the path.
struct Base<'a> {
    prefix: String,
    sep: char,
    path: &'a str,
}

impl<'a> Base<'a> {
    fn parse(url: &'a str) -> Option<Base<'a>> {
        if let Some((scheme, rest)) = url.split_once("://") {
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            let authority = match authority.rsplit_once('@') {
                Some((_, host)) if scheme.eq_ignore_ascii_case("https") => host.to_owned(),
                Some((_, host)) if scheme.eq_ignore_ascii_case("http") => host.to_owned(),
                Some((user, host)) => {
                    let user = user.split_once(':').map_or(user, |(user, _)| user);
                    format!("{user}@{host}")
                }
                None => authority.to_owned(),
            };
            return Some(Base {
                prefix: format!("{scheme}://{authority}"),
                sep: '/',
                path,
            });
        }
        if let Some(path) = url.strip_prefix('/') {
            return Some(Base {
                prefix: String::new(),
                sep: '/',
                path,
            });
        }
        let (left, path) = url.split_once(':')?;
        if left.is_empty() || left.contains(['/', '\\']) {
            return None;
        }
        Some(Base {
            prefix: left.to_owned(),
            sep: ':',
            path,
        })
    }
}

#[cfg(test)]
mod tests;
