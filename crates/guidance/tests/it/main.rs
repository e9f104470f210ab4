//! Integration tests for `guidance`, on real temporary directories.

mod budget;
mod discovery;
mod golden;
mod render;
mod safety;

use std::fs;
use std::path::Path;

use guidance::{Family, FamilyChoice, Guidance, Options};
use tempfile::TempDir;

/// A temporary repository root holding `files` (path, text), parents created.
pub fn repo(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().expect("create temp dir");
    write_files(dir.path(), files);
    dir
}

/// Writes `files` under `base`, creating parent directories.
pub fn write_files(base: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let path = base.join(path);
        fs::create_dir_all(path.parent().expect("a file has a parent")).expect("create dirs");
        fs::write(&path, text).expect("write file");
    }
}

/// Resolves `targets` under `root` with default options.
pub fn resolve(root: &Path, targets: &[&str], choice: FamilyChoice) -> Guidance {
    resolve_with(root, targets, choice, &Options::default())
}

/// Resolves `targets` under `root` with `options`.
pub fn resolve_with(
    root: &Path,
    targets: &[&str],
    choice: FamilyChoice,
    options: &Options,
) -> Guidance {
    let targets: Vec<String> = targets.iter().map(|t| (*t).to_owned()).collect();
    guidance::resolve(root, &targets, choice, options).expect("resolve")
}

/// Builds a repository from `files`, resolves `targets`, and checks the
/// family and source paths. Every file's text names its own path, so the
/// texts are checked too.
pub fn check(
    files: &[&str],
    targets: &[&str],
    choice: FamilyChoice,
    family: Option<Family>,
    paths: &[&str],
) -> Guidance {
    let with_text: Vec<(&str, String)> = files
        .iter()
        .map(|path| (*path, format!("text of {path}\n")))
        .collect();
    let with_text: Vec<(&str, &str)> = with_text.iter().map(|(p, t)| (*p, t.as_str())).collect();
    let root = repo(&with_text);
    let found = resolve(root.path(), targets, choice);
    assert_eq!(found.family, family, "family for {targets:?}");
    assert_eq!(found.paths(), paths, "paths for {targets:?}");
    assert_eq!(found.is_empty(), paths.is_empty());
    for source in &found.sources {
        assert_eq!(source.text, format!("text of {}\n", source.path));
        assert!(!source.truncated);
    }
    found
}
