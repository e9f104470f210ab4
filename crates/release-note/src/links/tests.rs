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
