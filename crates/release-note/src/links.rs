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
        let web = &self.web;
        match self.host {
            Host::GitHub | Host::Gitea => format!("{web}/commit/{sha}"),
            Host::GitLab => format!("{web}/-/commit/{sha}"),
            Host::Bitbucket => format!("{web}/commits/{sha}"),
        }
    }

    /// The page of pull request (GitLab: merge request) `n`.
    pub(crate) fn pull_url(&self, n: u64) -> String {
        let web = &self.web;
        match self.host {
            Host::GitHub | Host::Gitea => format!("{web}/pull/{n}"),
            Host::GitLab => format!("{web}/-/merge_requests/{n}"),
            Host::Bitbucket => format!("{web}/pull-requests/{n}"),
        }
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
pub(crate) fn resolve_submodule_url(parent_remote: Option<&str>, submodule_url: &str) -> Option<String> {
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
mod tests {
    use super::*;

    #[track_caller]
    fn check(url: &str, expected: Option<(Host, &str, &str)>) {
        let got = link_hints(url);
        let expected = expected.map(|(host, web, slug)| LinkHints {
            host,
            web: web.to_owned(),
            slug: slug.to_owned(),
        });
        assert_eq!(got, expected, "{url}");
    }

    #[test]
    fn url_forms() {
        let gh = Some((Host::GitHub, "https://github.com/owner/repo", "owner/repo"));
        for url in [
            "https://github.com/owner/repo",
            "https://github.com/owner/repo.git",
            "https://github.com/owner/repo/",
            "https://github.com/owner/repo.git/",
            "http://github.com/owner/repo.git",
            "HTTPS://GitHub.com/owner/repo",
            "ssh://git@github.com/owner/repo.git",
            "ssh://git@github.com:22/owner/repo.git",
            "ssh://git@ssh.github.com:443/owner/repo.git",
            "git+ssh://git@github.com/owner/repo.git",
            "git@github.com:owner/repo.git",
            "git@github.com:/owner/repo.git",
            "github.com:owner/repo",
            "git://github.com/owner/repo",
            "  https://github.com/owner/repo.git\n",
        ] {
            check(url, gh);
        }
    }

    #[test]
    fn credentials_never_kept() {
        let gh = Some((Host::GitHub, "https://github.com/owner/repo", "owner/repo"));
        check("https://user:token@github.com/owner/repo.git", gh);
        check("https://ghp_secret@github.com/owner/repo", gh);
        check("https://x-access-token:abc@github.com/owner/repo", gh);
        check("ssh://user:pw@github.com:2222/owner/repo.git", gh);
        let hints = link_hints("https://user:token@gitlab.com/g/r.git").expect("gitlab");
        assert!(!hints.web.contains("token") && !hints.web.contains("user"));
    }

    #[test]
    fn hosts() {
        check(
            "git@github.example.com:team/app.git",
            Some((
                Host::GitHub,
                "https://github.example.com/team/app",
                "team/app",
            )),
        );
        check(
            "ssh://git@github.corp.internal:2222/team/app.git",
            Some((
                Host::GitHub,
                "https://github.corp.internal/team/app",
                "team/app",
            )),
        );
        check(
            "https://gitlab.com/group/sub/deeper/repo.git",
            Some((
                Host::GitLab,
                "https://gitlab.com/group/sub/deeper/repo",
                "group/sub/deeper/repo",
            )),
        );
        check(
            "git@gitlab.example.org:group/repo.git",
            Some((
                Host::GitLab,
                "https://gitlab.example.org/group/repo",
                "group/repo",
            )),
        );
        check(
            "git@bitbucket.org:team/repo.git",
            Some((
                Host::Bitbucket,
                "https://bitbucket.org/team/repo",
                "team/repo",
            )),
        );
        check(
            "https://codeberg.org/owner/repo.git",
            Some((Host::Gitea, "https://codeberg.org/owner/repo", "owner/repo")),
        );
        check(
            "ssh://git@gitea.example.com:2222/owner/repo.git",
            Some((
                Host::Gitea,
                "https://gitea.example.com/owner/repo",
                "owner/repo",
            )),
        );
        check(
            "https://forgejo.example.com/owner/repo",
            Some((
                Host::Gitea,
                "https://forgejo.example.com/owner/repo",
                "owner/repo",
            )),
        );
    }

    #[test]
    fn no_links_rather_than_wrong_links() {
        for url in [
            "",
            "https://example.com/owner/repo.git",
            "git@git.example.com:owner/repo.git",
            "https://dev.azure.com/org/project/_git/repo",
            "/srv/git/repo.git",
            "../repo.git",
            "./repo",
            "file:///srv/git/repo.git",
            "C:\\repos\\app",
            "ftp://github.com/owner/repo",
            // Depth a host does not use.
            "https://github.com/owner",
            "https://github.com/owner/repo/tree/main",
            "https://gitlab.com/justone",
            "https://bitbucket.org/a/b/c",
            // Names that would break or mislead a URL.
            "https://github.com/owner/re po",
            "https://github.com/owner/../repo",
            "https://github.com:abc/owner/repo",
            "https://git hub.com/owner/repo",
        ] {
            check(url, None);
        }
    }

    #[track_caller]
    fn check_urls(url: &str, expected: [Option<&str>; 3]) {
        let hints = link_hints(url).expect("known host");
        let got = [
            Some(hints.commit_url("abc1234")),
            Some(hints.pull_url(42)),
            hints.compare_url("v1.0.0", "v1.1.0"),
        ];
        assert_eq!(got.each_ref().map(Option::as_deref), expected, "{url}");
    }

    #[test]
    fn url_kinds_per_host() {
        check_urls(
            "https://github.com/o/r",
            [
                Some("https://github.com/o/r/commit/abc1234"),
                Some("https://github.com/o/r/pull/42"),
                Some("https://github.com/o/r/compare/v1.0.0...v1.1.0"),
            ],
        );
        check_urls(
            "https://codeberg.org/o/r",
            [
                Some("https://codeberg.org/o/r/commit/abc1234"),
                Some("https://codeberg.org/o/r/pull/42"),
                Some("https://codeberg.org/o/r/compare/v1.0.0...v1.1.0"),
            ],
        );
        check_urls(
            "https://gitlab.com/g/s/r",
            [
                Some("https://gitlab.com/g/s/r/-/commit/abc1234"),
                Some("https://gitlab.com/g/s/r/-/merge_requests/42"),
                Some("https://gitlab.com/g/s/r/-/compare/v1.0.0...v1.1.0"),
            ],
        );
        check_urls(
            "https://bitbucket.org/o/r",
            [
                Some("https://bitbucket.org/o/r/commits/abc1234"),
                Some("https://bitbucket.org/o/r/pull-requests/42"),
                None,
            ],
        );
    }

    #[test]
    fn compare_refs_are_percent_encoded() {
        let hints = link_hints("https://github.com/o/r").expect("github");
        let check = |from: &str, to: &str, expected: &str| {
            assert_eq!(
                hints.compare_url(from, to).as_deref(),
                Some(expected),
                "{from} {to}"
            );
        };
        check(
            "release/1.2",
            "HEAD",
            "https://github.com/o/r/compare/release/1.2...HEAD",
        );
        check("a b", "c#d", "https://github.com/o/r/compare/a%20b...c%23d");
        check(
            "x?y",
            "100%",
            "https://github.com/o/r/compare/x%3Fy...100%25",
        );
        check("é", "v1", "https://github.com/o/r/compare/%C3%A9...v1");
    }

    #[track_caller]
    fn check_resolve(parent: Option<&str>, url: &str, expected: Option<&str>) {
        assert_eq!(
            resolve_submodule_url(parent, url).as_deref(),
            expected,
            "{parent:?} {url}"
        );
    }

    #[test]
    fn submodule_urls() {
        let https = Some("https://github.com/o/app.git");
        check_resolve(https, "../lib.git", Some("https://github.com/o/lib.git"));
        check_resolve(
            https,
            "../../other/lib",
            Some("https://github.com/other/lib"),
        );
        check_resolve(https, "./sub", Some("https://github.com/o/app.git/sub"));
        check_resolve(https, "../../../too-far", None);
        check_resolve(
            Some("https://github.com/o/app/"),
            "../lib",
            Some("https://github.com/o/lib"),
        );
        let scp = Some("git@github.com:o/app.git");
        check_resolve(scp, "../lib.git", Some("git@github.com:o/lib.git"));
        check_resolve(
            Some("git@host:app.git"),
            "../lib.git",
            Some("git@host:lib.git"),
        );
        check_resolve(
            Some("ssh://git@gitlab.com:2222/g/s/app.git"),
            "../lib.git",
            Some("ssh://git@gitlab.com:2222/g/s/lib.git"),
        );
        check_resolve(
            Some("/srv/git/app.git"),
            "../lib.git",
            Some("/srv/git/lib.git"),
        );
        // Credentials do not survive.
        check_resolve(
            Some("https://user:token@github.com/o/app.git"),
            "../lib.git",
            Some("https://github.com/o/lib.git"),
        );
        check_resolve(
            Some("ssh://git:pw@example.com/o/app.git"),
            "../lib.git",
            Some("ssh://git@example.com/o/lib.git"),
        );
        // Absolute URLs pass through; relative ones need a parent.
        check_resolve(
            None,
            "https://github.com/o/lib.git",
            Some("https://github.com/o/lib.git"),
        );
        check_resolve(
            https,
            "git@gitlab.com:g/lib.git",
            Some("git@gitlab.com:g/lib.git"),
        );
        check_resolve(None, "../lib.git", None);
        check_resolve(https, "  ", None);
        // And the result links like any remote.
        let resolved = resolve_submodule_url(scp, "../lib.git").expect("resolved");
        assert_eq!(
            link_hints(&resolved).map(|h| h.web).as_deref(),
            Some("https://github.com/o/lib")
        );
    }
}
