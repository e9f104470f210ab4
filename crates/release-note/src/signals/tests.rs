use lockfile_diff::LockKind;

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
