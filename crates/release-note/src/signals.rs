//! Operator-facing signals: what a changed path means to the people who deploy
//! and operate a release (see [`Signal`]).
//!
//! The path's [`Class`] decides first; hand-written and binary paths then go
//! through the path rules, in this order (the first rule that matches wins).
//! Matching ignores ASCII and Unicode case. A *directory* matches any
//! directory component of the path, at any depth (`crates/x/tests/a.rs`); a
//! *file* pattern matches the file name only.
//!
//! | Order | Signal | Rule |
//! |---|---|---|
//! | 1 | `submodule` | class [`Class::Submodule`] |
//! | 2 | `dependency` | class [`Class::Lockfile`] |
//! | 3 | `generated` | class [`Class::Generated`] |
//! | 4 | `tests` | directories `tests` `test` `__tests__` `spec` `specs` `testdata` `fixtures` `e2e`; files `*_test.go` `*_test.rs` `*_test.py` `test_*.py` `conftest.py` `*.test.{js,jsx,ts,tsx,mjs}` `*.spec.{js,jsx,ts,tsx,mjs}` |
//! | 5 | `docs` | directories `docs` `doc`; files `*.md` `*.mdx` `*.rst` `*.adoc`; `LICENSE` `LICENCE` `COPYING` `NOTICE` `CHANGELOG` `CHANGES` `AUTHORS` `CONTRIBUTING` bare, with `.txt`, or with a `-suffix` (`LICENSE-MIT`) |
//! | 6 | `tooling` | directories `.github` `.gitlab` `.circleci` `.ci` `ci` `xtask` `scripts` `.husky`; files `.gitlab-ci.yml` `.editorconfig` `.gitignore` `.gitattributes` `.gitmodules` `.mailmap` `.pre-commit-config.yaml` `rustfmt.toml` `.rustfmt.toml` `clippy.toml` `.clippy.toml` `.eslintrc*` `.prettierrc*` `Makefile` `GNUmakefile` `justfile` `.justfile` |
//! | 7 | `dependency` | files `Cargo.toml` `package.json` `pyproject.toml` `requirements*.txt` `go.mod` `Gemfile` `composer.json` `setup.py` `setup.cfg` `Pipfile` `*.gemspec` `pom.xml` `build.gradle` `build.gradle.kts` |
//! | 8 | `cli` | directories `cli` `cmd` `bin` `bins` `commands`; files `main.rs` `main.go` `__main__.py` `cli.{py,rs,ts,js,go}` |
//! | 9 | `api` | directories `api` `proto`; files `*.proto` `openapi*.{yaml,yml,json}` `swagger*` `*.graphql` `*.gql` |
//! | 10 | `config_schema` | directories `config` `configs` `settings` `deploy` `helm` `k8s` `charts`; files `*.schema.json` `*.example` (`.env.example`) `*.sample` `Dockerfile*` `docker-compose*.{yml,yaml}` `compose.{yml,yaml}` `values.{yaml,yml}` `config.{toml,yaml,yml,json}` `settings.*` |
//! | 11 | `runtime` | everything else |
//!
//! A [`Class::Binary`] path has no signal of its own: an image under `docs/`
//! is documentation, a binary under `tests/` a fixture.

use git_evidence::classify::Class;

use crate::types::{ChangedPath, Signal};

/// One path rule: the directories and the file-name test of a signal.
struct Rule {
    signal: Signal,
    dirs: &'static [&'static str],
    file: fn(&str) -> bool,
}

/// The path rules of the table above, rows 4 to 10, in order.
const RULES: &[Rule] = &[
    Rule {
        signal: Signal::Tests,
        dirs: &[
            "tests",
            "test",
            "__tests__",
            "spec",
            "specs",
            "testdata",
            "fixtures",
            "e2e",
        ],
        file: is_test_file,
    },
    Rule {
        signal: Signal::Docs,
        dirs: &["docs", "doc"],
        file: is_docs_file,
    },
    Rule {
        signal: Signal::Tooling,
        dirs: &[
            ".github",
            ".gitlab",
            ".circleci",
            ".ci",
            "ci",
            "xtask",
            "scripts",
            ".husky",
        ],
        file: is_tooling_file,
    },
    Rule {
        signal: Signal::Dependency,
        dirs: &[],
        file: is_manifest,
    },
    Rule {
        signal: Signal::Cli,
        dirs: &["cli", "cmd", "bin", "bins", "commands"],
        file: is_cli_file,
    },
    Rule {
        signal: Signal::Api,
        dirs: &["api", "proto"],
        file: is_api_file,
    },
    Rule {
        signal: Signal::ConfigSchema,
        dirs: &[
            "config", "configs", "settings", "deploy", "helm", "k8s", "charts",
        ],
        file: is_config_file,
    },
];

/// JavaScript and TypeScript extensions whose `*.test.*` and `*.spec.*` files
/// are tests.
const JS_EXTENSIONS: &[&str] = &["js", "jsx", "ts", "tsx", "mjs"];

/// The signal of one changed path of class `class` (see the module table).
pub(crate) fn signal_of(path: &str, class: &Class) -> Signal {
    match class {
        Class::Submodule => return Signal::Submodule,
        Class::Lockfile(_) => return Signal::Dependency,
        Class::Generated(_) => return Signal::Generated,
        Class::Handwritten | Class::Binary => {}
    }
    let lower = path.to_lowercase();
    let (dirs, name) = lower.rsplit_once('/').unwrap_or(("", lower.as_str()));
    RULES
        .iter()
        .find(|rule| dirs.split('/').any(|dir| rule.dirs.contains(&dir)) || (rule.file)(name))
        .map_or(Signal::Runtime, |rule| rule.signal)
}

/// The distinct signals of a commit's paths, sorted.
pub(crate) fn commit_signals(paths: &[ChangedPath]) -> Vec<Signal> {
    let mut signals: Vec<Signal> = paths.iter().map(|p| p.signal).collect();
    signals.sort_unstable();
    signals.dedup();
    signals
}

/// `name` without its last extension, and that extension (`None` without a
/// dot; a leading dot does not start an extension).
fn split_extension(name: &str) -> (&str, Option<&str>) {
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, Some(ext)),
        _ => (name, None),
    }
}

/// `name` is `{stem}.{ext}` with `ext` one of `extensions`.
fn has_extension(name: &str, extensions: &[&str]) -> bool {
    split_extension(name)
        .1
        .is_some_and(|ext| extensions.contains(&ext))
}

fn is_test_file(name: &str) -> bool {
    let js_test = match split_extension(name) {
        (stem, Some(ext)) if JS_EXTENSIONS.contains(&ext) => {
            stem.ends_with(".test") || stem.ends_with(".spec")
        }
        _ => false,
    };
    js_test
        || name.ends_with("_test.go")
        || name.ends_with("_test.rs")
        || name.ends_with("_test.py")
        || (name.starts_with("test_") && name.ends_with(".py"))
        || name == "conftest.py"
}

fn is_docs_file(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "license",
        "licence",
        "copying",
        "notice",
        "changelog",
        "changes",
        "authors",
        "contributing",
    ];
    if has_extension(name, &["md", "mdx", "rst", "adoc"]) {
        return true;
    }
    // `LICENSE`, `LICENSE.txt`, `LICENSE-MIT`, but not `license.rs`.
    let stem = name.strip_suffix(".txt").unwrap_or(name);
    let base = stem.split_once('-').map_or(stem, |(base, _)| base);
    !stem.contains('.') && NAMES.contains(&base)
}

fn is_tooling_file(name: &str) -> bool {
    const NAMES: &[&str] = &[
        ".gitlab-ci.yml",
        ".editorconfig",
        ".gitignore",
        ".gitattributes",
        ".gitmodules",
        ".mailmap",
        ".pre-commit-config.yaml",
        "rustfmt.toml",
        ".rustfmt.toml",
        "clippy.toml",
        ".clippy.toml",
        "makefile",
        "gnumakefile",
        "justfile",
        ".justfile",
    ];
    NAMES.contains(&name) || name.starts_with(".eslintrc") || name.starts_with(".prettierrc")
}

fn is_manifest(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "cargo.toml",
        "package.json",
        "pyproject.toml",
        "go.mod",
        "gemfile",
        "composer.json",
        "setup.py",
        "setup.cfg",
        "pipfile",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
    ];
    NAMES.contains(&name)
        || (name.starts_with("requirements") && name.ends_with(".txt"))
        || has_extension(name, &["gemspec"])
}

fn is_cli_file(name: &str) -> bool {
    match split_extension(name) {
        ("cli", Some(ext)) => ["py", "rs", "ts", "js", "go"].contains(&ext),
        _ => ["main.rs", "main.go", "__main__.py"].contains(&name),
    }
}

fn is_api_file(name: &str) -> bool {
    has_extension(name, &["proto", "graphql", "gql"])
        || (name.starts_with("openapi") && has_extension(name, &["yaml", "yml", "json"]))
        || name.starts_with("swagger")
}

fn is_config_file(name: &str) -> bool {
    let yaml = has_extension(name, &["yaml", "yml"]);
    name.ends_with(".schema.json")
        || has_extension(name, &["example", "sample"])
        || name.starts_with("dockerfile")
        || (name.starts_with("docker-compose") && yaml)
        || ["compose.yml", "compose.yaml", "values.yaml", "values.yml"].contains(&name)
        || matches!(
            split_extension(name),
            ("config", Some("toml" | "yaml" | "yml" | "json"))
        )
        || name.starts_with("settings.")
}

#[cfg(test)]
mod tests;
