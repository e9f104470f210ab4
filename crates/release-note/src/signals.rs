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

use git_agent_core::classify::Class;

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
mod tests {
    use git_agent_core::lockfile::LockKind;

    use super::*;

    #[track_caller]
    fn check(path: &str, expected: Signal) {
        assert_eq!(signal_of(path, &Class::Handwritten), expected, "{path}");
    }

    #[track_caller]
    fn check_all(paths: &[&str], expected: Signal) {
        for path in paths {
            check(path, expected);
        }
    }

    #[test]
    fn class_comes_first() {
        let cases = [
            (Class::Submodule, Signal::Submodule),
            (Class::Lockfile(LockKind::Cargo), Signal::Dependency),
            (Class::Generated("*.pb.go".into()), Signal::Generated),
        ];
        for (class, expected) in cases {
            // Even where the path alone would say tests or docs.
            assert_eq!(signal_of("tests/docs/x.md", &class), expected);
        }
    }

    #[test]
    fn binary_falls_through_to_the_path() {
        assert_eq!(signal_of("docs/img/arch.png", &Class::Binary), Signal::Docs);
        assert_eq!(
            signal_of("tests/fixtures/a.bin", &Class::Binary),
            Signal::Tests
        );
        assert_eq!(
            signal_of("assets/logo.png", &Class::Binary),
            Signal::Runtime
        );
    }

    #[test]
    fn tests() {
        check_all(
            &[
                "tests/it/main.rs",
                "crates/x/tests/a.rs",
                "src/test/java/AppTest.java",
                "web/__tests__/app.js",
                "spec/models/user_spec.rb",
                "specs/a.rb",
                "pkg/testdata/in.txt",
                "fixtures/a.json",
                "e2e/login.ts",
                "Tests/Thing.cs",
                "pkg/server_test.go",
                "src/parse_test.rs",
                "app/test_views.py",
                "app/views_test.py",
                "conftest.py",
                "src/app.test.tsx",
                "src/app.spec.ts",
                "src/util.test.mjs",
                "src/util.spec.jsx",
            ],
            Signal::Tests,
        );
        // Look-alikes.
        check_all(
            &["src/testing.rs", "src/latest.py", "src/app.test.css"],
            Signal::Runtime,
        );
    }

    #[test]
    fn docs() {
        check_all(
            &[
                "docs/guide/install.html",
                "doc/api.txt",
                "README.md",
                "crates/x/README.md",
                "guide.mdx",
                "index.rst",
                "manual.adoc",
                "LICENSE",
                "LICENSE-MIT",
                "LICENSE.txt",
                "license",
                "CHANGELOG",
                "AUTHORS",
                "CONTRIBUTING",
                "NOTICE",
            ],
            Signal::Docs,
        );
        check_all(&["src/license.rs", "src/authors.py"], Signal::Runtime);
    }

    #[test]
    fn tooling() {
        check_all(
            &[
                ".github/workflows/ci.yml",
                ".gitlab-ci.yml",
                ".circleci/config.yml",
                ".ci/run.sh",
                "ci/build.sh",
                "xtask/src/main.rs",
                "scripts/release.sh",
                ".husky/pre-commit",
                ".editorconfig",
                ".gitignore",
                ".gitattributes",
                ".pre-commit-config.yaml",
                "rustfmt.toml",
                "clippy.toml",
                ".eslintrc.json",
                "web/.prettierrc",
                "Makefile",
                "justfile",
            ],
            Signal::Tooling,
        );
    }

    #[test]
    fn dependency_manifests() {
        check_all(
            &[
                "Cargo.toml",
                "crates/x/Cargo.toml",
                "web/package.json",
                "pyproject.toml",
                "requirements.txt",
                "requirements-dev.txt",
                "go.mod",
                "Gemfile",
                "composer.json",
                "setup.py",
                "setup.cfg",
                "Pipfile",
                "mylib.gemspec",
                "pom.xml",
                "build.gradle",
                "app/build.gradle.kts",
            ],
            Signal::Dependency,
        );
    }

    #[test]
    fn cli() {
        check_all(
            &[
                "src/cli/args.rs",
                "cmd/server/server.go",
                "src/bin/tool.rs",
                "bins/git-agent/src/run.rs",
                "app/commands/deploy.py",
                "src/main.rs",
                "main.go",
                "pkg/__main__.py",
                "tool/cli.py",
                "src/cli.rs",
                "src/cli.ts",
                "web/cli.js",
                "cli.go",
            ],
            Signal::Cli,
        );
    }

    #[test]
    fn api() {
        check_all(
            &[
                "proto/user.proto",
                "schema/user.proto",
                "openapi.yaml",
                "spec-less/openapi-v2.json",
                "swagger.json",
                "schema.graphql",
                "queries/user.gql",
                "src/api/handlers.rs",
            ],
            Signal::Api,
        );
    }

    #[test]
    fn config_schema() {
        check_all(
            &[
                "config.schema.json",
                "settings.example",
                ".env.example",
                "app.conf.sample",
                "config/default.toml",
                "configs/prod.yaml",
                "src/settings/mod.rs",
                "deploy/nginx.conf",
                "helm/templates/svc.yaml",
                "k8s/deployment.yaml",
                "charts/app/Chart.yaml",
                "Dockerfile",
                "docker/Dockerfile.prod",
                "docker-compose.yml",
                "docker-compose.override.yaml",
                "compose.yaml",
                "values.yaml",
                "config.toml",
                "app/config.json",
                "settings.py",
            ],
            Signal::ConfigSchema,
        );
    }

    #[test]
    fn runtime() {
        check_all(
            &["src/lib.rs", "server/handler.go", "app.py", "src/config.rs"],
            Signal::Runtime,
        );
    }

    #[test]
    fn precedence() {
        let cases = [
            // Tests before everything else.
            ("tests/fixtures/config.toml", Signal::Tests),
            ("docs/tests/x.md", Signal::Tests),
            ("src/cli/main_test.go", Signal::Tests),
            // Docs before tooling, CLI, API and config.
            ("cli/README.md", Signal::Docs),
            ("docs/api/openapi.yaml", Signal::Docs),
            (".github/PULL_REQUEST_TEMPLATE.md", Signal::Docs),
            // Tooling before manifests and CLI.
            ("xtask/Cargo.toml", Signal::Tooling),
            ("scripts/cli.py", Signal::Tooling),
            // Manifests before CLI and config.
            ("cmd/tool/Cargo.toml", Signal::Dependency),
            ("config/package.json", Signal::Dependency),
            // CLI before API and config.
            ("src/api/main.rs", Signal::Cli),
            ("cli/config.toml", Signal::Cli),
            // API before config.
            ("config/api.proto", Signal::Api),
        ];
        for (path, expected) in cases {
            check(path, expected);
        }
    }

    #[test]
    fn commit_signals_are_sorted_and_unique() {
        let path = |path: &str, signal| ChangedPath {
            path: path.to_owned(),
            status: 'M',
            additions: 1,
            deletions: 0,
            binary: false,
            signal,
        };
        let paths = [
            path("src/cli.rs", Signal::Cli),
            path("src/a.rs", Signal::Runtime),
            path("tests/a.rs", Signal::Tests),
            path("src/b.rs", Signal::Runtime),
        ];
        assert_eq!(
            commit_signals(&paths),
            [Signal::Runtime, Signal::Cli, Signal::Tests]
        );
        assert_eq!(commit_signals(&[]), []);
    }
}
