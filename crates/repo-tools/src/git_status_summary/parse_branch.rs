//! The branch named by the `##` header of `git status --porcelain=v1 --branch`.

/// The branch from the first line of porcelain v1 output, when it is a `##` header:
///
/// | header | branch |
/// |---|---|
/// | `## main...origin/main [ahead 1]` | `main` |
/// | `## feature/x` | `feature/x` |
/// | `## No commits yet on main` | `main` (unborn branch) |
/// | `## Initial commit on main` | `main` (what git before 2.15 printed) |
/// | `## HEAD (no branch)` | `None` (detached HEAD) |
///
/// `None` as well when the first line is no `##` header or names nothing. Only the
/// first line is read; branch names cannot contain spaces or `..`, so the name ends
/// at the first space or at the `...` before the upstream.
pub fn parse_branch(raw: &str) -> Option<String> {
    let first = raw.split('\n').next()?;
    let header = first.strip_suffix('\r').unwrap_or(first);
    let rest = header.strip_prefix("## ")?;
    let rest = rest
        .strip_prefix("No commits yet on ")
        .or_else(|| rest.strip_prefix("Initial commit on "))
        .unwrap_or(rest);
    if rest.starts_with("HEAD (no branch)") {
        return None;
    }
    let end = [rest.find("..."), rest.find(' ')]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(rest.len());
    let name = &rest[..end];
    (!name.is_empty()).then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(raw: &str, expected: Option<&str>) {
        assert_eq!(parse_branch(raw).as_deref(), expected, "{raw:?}");
    }

    #[test]
    fn branch_lines() {
        check("## main\n", Some("main"));
        check("## main...origin/main\n", Some("main"));
        check("## main...origin/main [ahead 1]\n M a.txt\n", Some("main"));
        check("## main...origin/main [ahead 1, behind 2]\n", Some("main"));
        check("## main...origin/main [gone]\n", Some("main"));
        check("## feature/x\n?? new.txt\n", Some("feature/x"));
        check(
            "## release-1.2.3...upstream/release-1.2.3\n",
            Some("release-1.2.3"),
        );
        check("## main", Some("main"));
    }

    #[test]
    fn unborn_branches() {
        check("## No commits yet on main\n", Some("main"));
        check(
            "## No commits yet on main...origin/main [gone]\n",
            Some("main"),
        );
        check("## Initial commit on main\n", Some("main"));
        check("## Initial commit on topic/y\n?? a\n", Some("topic/y"));
    }

    #[test]
    fn detached_head_is_none() {
        check("## HEAD (no branch)\n", None);
        check("## HEAD (no branch)\n M a.txt\n", None);
        check("## No commits yet on HEAD (no branch)\n", None);
    }

    #[test]
    fn missing_or_malformed_header_is_none() {
        check("", None);
        check("\n", None);
        check(" M a.txt\n", None);
        check("?? b\n## main\n", None);
        check("##\n", None);
        check("## \n", None);
        check("##main\n", None);
        check("## ...origin/main\n", None);
    }
}
