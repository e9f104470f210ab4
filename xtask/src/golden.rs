//! `cargo xtask golden [--accept]`.
//!
//! Every insta snapshot suite runs (the whole workspace's tests, so no suite can be
//! forgotten) with:
//! - `INSTA_UPDATE=no` — a drifted snapshot fails its test and nothing is written
//!   (`--accept`: `INSTA_UPDATE=always`, the snapshot file is rewritten);
//! - `INSTA_FORCE_PASS=0`;
//! - `INSTA_SNAPSHOT_REFERENCES_FILE` — insta records every snapshot file a test
//!   compared against, so files no test uses any more are found and reported
//!   (`--accept`: deleted).
//!
//! Pending `.snap.new` files left by an interactive run are removed first: they are
//! never the truth.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::{cargo, workspace_root};

pub fn run(args: &[String]) -> Result<(), String> {
    let accept = match args {
        [] => false,
        [flag] if flag == "--accept" => true,
        _ => return Err("usage: cargo xtask golden [--accept]".to_owned()),
    };
    let root = workspace_root();
    let snapshots_before = snapshot_files(&root)?;
    for pending in snapshots_before.pending.iter() {
        fs::remove_file(pending).map_err(|e| format!("{}: {e}", pending.display()))?;
    }

    let references = root.join("target").join("golden-references.txt");
    fs::create_dir_all(root.join("target")).map_err(|e| e.to_string())?;
    fs::write(&references, "").map_err(|e| format!("{}: {e}", references.display()))?;

    let mut cmd = cargo();
    if has_nextest() {
        cmd.args([
            "nextest",
            "run",
            "--workspace",
            "--no-fail-fast",
            "--locked",
        ]);
    } else {
        cmd.args(["test", "--workspace", "--no-fail-fast", "--locked"]);
    }
    cmd.env("INSTA_UPDATE", if accept { "always" } else { "no" })
        .env("INSTA_FORCE_PASS", "0")
        .env("INSTA_OUTPUT", "diff")
        .env("INSTA_SNAPSHOT_REFERENCES_FILE", &references);
    let status = cmd
        .status()
        .map_err(|e| format!("could not run cargo: {e}"))?;

    let used: BTreeSet<PathBuf> = fs::read_to_string(&references)
        .map_err(|e| format!("{}: {e}", references.display()))?
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| fs::canonicalize(l).unwrap_or_else(|_| PathBuf::from(l)))
        .collect();
    let on_disk = snapshot_files(&root)?;
    let unreferenced: Vec<&PathBuf> = on_disk
        .snapshots
        .iter()
        .filter(|p| !used.contains(*p))
        .collect();

    if !status.success() {
        return Err(if accept {
            "tests failed even with snapshots accepted: fix them, then run again".to_owned()
        } else {
            "tests failed (a drifted snapshot prints its diff above). Read the diff; if the \
             new output is right, run `cargo xtask golden --accept` and commit the snapshots"
                .to_owned()
        });
    }
    if !unreferenced.is_empty() {
        let list: Vec<String> = unreferenced
            .iter()
            .map(|p| format!("  {}", relative(&root, p)))
            .collect();
        if accept {
            for path in &unreferenced {
                fs::remove_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
            }
            println!("deleted unreferenced snapshots:\n{}", list.join("\n"));
        } else {
            return Err(format!(
                "snapshot files no test uses (delete them with `cargo xtask golden --accept`):\n{}",
                list.join("\n")
            ));
        }
    }
    println!(
        "golden: {} snapshots checked{}",
        used.len(),
        if accept { " (accepted)" } else { "" }
    );
    Ok(())
}

fn has_nextest() -> bool {
    cargo()
        .args(["nextest", "--version"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[derive(Default)]
struct SnapshotFiles {
    snapshots: Vec<PathBuf>,
    pending: Vec<PathBuf>,
}

/// Every `.snap` (and pending `.snap.new`/`.pending-snap`) under `crates/`, `bins/`
/// and `xtask/`.
fn snapshot_files(root: &Path) -> Result<SnapshotFiles, String> {
    let mut found = SnapshotFiles::default();
    for top in ["crates", "bins", "xtask"] {
        walk(&root.join(top), &mut found)?;
    }
    found.snapshots.sort();
    Ok(found)
}

fn walk(dir: &Path, found: &mut SnapshotFiles) -> Result<(), String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                walk(&path, found)?;
            }
        } else if name.ends_with(".snap") {
            found
                .snapshots
                .push(fs::canonicalize(&path).unwrap_or(path));
        } else if name.ends_with(".snap.new") || name.ends_with(".pending-snap") {
            found.pending.push(path);
        }
    }
    Ok(())
}

fn relative(root: &Path, path: &Path) -> String {
    let root = fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    path.strip_prefix(&root)
        .unwrap_or(path)
        .display()
        .to_string()
}
