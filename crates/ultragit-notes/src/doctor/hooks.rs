//! The hook checks: each hook `init` installs ([`setup::HOOKS`]; and
//! `pre-push` with sync on) is a file in git's hooks directory holding its
//! block, executable, not a link into the working tree, and the program its
//! block runs exists. A block an older `ultragit init` wrote, without the
//! cache warm-up (`ultragit cache warm`, in every block since the caches are
//! carried forward), is a warning: the hook does its other work, but the
//! first read after a commit, rewrite, merge or checkout is cold. So is a
//! `post-merge` or `post-checkout` hook without its block (absent, no block,
//! not executable): those hooks only make reads faster, and a repository set
//! up by an older `init` has none.

use std::path::Path;

use safe_io::Dir;
use safe_io::fs::FileKind;

use super::{Check, Doctor, Finding, Repair, Status};
use crate::error::NotesError;
use crate::setup;

/// The most of a hook file that is read.
const HOOK_LIMIT: u64 = 1024 * 1024;

impl Doctor<'_> {
    pub(super) fn hooks(&self) -> Result<Vec<Finding>, NotesError> {
        let hooks = self.repo.hooks_dir()?;
        let exe = self.inputs.ultragit;
        let mut out: Vec<Finding> = setup::HOOKS
            .iter()
            .map(|spec| self.hook(&hooks, spec.name, Some(spec.lines(exe))))
            .collect();
        if let Ok(Some(remote)) = self.sync_remote() {
            // Its line is `ultragit sync`'s to choose: repaired by `sync --enable`.
            let mut finding = self.hook(&hooks, "pre-push", None);
            if finding.check.status != Status::Ok {
                finding.check.fix = Some(format!("ultragit sync --enable {remote}"));
            }
            out.push(finding);
        }
        Ok(out)
    }

    /// One hook; `line` is what a repair installs (`None`: not repaired here).
    fn hook(&self, hooks: &Path, name: &'static str, line: Option<String>) -> Finding {
        let id = format!("hooks.{name}");
        let path = hooks.join(name);
        let state = match self.inspect_hook(hooks, name) {
            Ok(state) => state,
            Err(err) => {
                return Check::fail(id, format!("{}: could not be read: {err}", path.display()))
                    .into();
            }
        };
        let repair = line
            .filter(|_| state.repairable())
            .map(|line| Repair::Hook { name, line });
        match state {
            HookState::Healthy { program } => Check::ok(
                id,
                match program {
                    Some(program) => format!("{} runs {program}", path.display()),
                    None => format!("{} holds the ultragit block", path.display()),
                },
            )
            .into(),
            HookState::Outdated { program, .. } => {
                let fix = if repair.is_some() {
                    "rerun ultragit init (or ultragit doctor --fix): it rewrites the block"
                        .to_owned()
                } else {
                    format!(
                        "edit {} by hand: add `{}` to its ultragit block",
                        path.display(),
                        setup::warm_line(Path::new(program.as_deref().unwrap_or("ultragit")))
                    )
                };
                let after = setup::hook_spec(name).map_or("it", |spec| spec.warms_after);
                Finding {
                    check: Check::warn(
                        id,
                        format!(
                            "{}: its ultragit block is from an older ultragit init: it does not warm \
                             the read caches after {after} (ultragit cache warm), so the first read \
                             after one starts cold",
                            path.display()
                        ),
                    )
                    .with_fix(fix),
                    repair,
                }
            }
            HookState::Broken {
                problem,
                repairable,
                runs_nothing,
                not_shell,
            } => {
                let fix = if repair.is_some() {
                    "ultragit doctor --fix (or ultragit init)".to_owned()
                } else if repairable {
                    String::new()
                } else if not_shell {
                    format!(
                        "edit {} by hand: make it run, in its own language, the lines `ultragit \
                         init` prints for it",
                        path.display()
                    )
                } else {
                    format!(
                        "edit {} by hand: it needs the ultragit block between `{}` and `{}`",
                        path.display(),
                        setup::hook_markers(name).0,
                        setup::hook_markers(name).1
                    )
                };
                // A hook that only makes reads faster, and runs none of our
                // lines: slower reads, nothing lost.
                let speed_only =
                    setup::hook_spec(name).filter(|spec| spec.speed_only && runs_nothing);
                let check = match speed_only {
                    Some(spec) => Check::warn(
                        id,
                        format!(
                            "{}: {problem}: the read caches are not warmed after {}, so the first \
                             read after one starts cold",
                            path.display(),
                            spec.warms_after
                        ),
                    ),
                    None => Check::fail(id, format!("{}: {problem}", path.display())),
                };
                Finding {
                    check: if fix.is_empty() {
                        check
                    } else {
                        check.with_fix(fix)
                    },
                    repair,
                }
            }
        }
    }

    fn inspect_hook(&self, hooks: &Path, name: &str) -> Result<HookState, NotesError> {
        let broken = |problem: &str, repairable: bool| {
            Ok(HookState::Broken {
                problem: problem.to_owned(),
                repairable,
                runs_nothing: false,
                not_shell: false,
            })
        };
        // git runs no line of ours: no hook, no block, or not executable.
        let inert = |problem: &str, repairable: bool| {
            Ok(HookState::Broken {
                problem: problem.to_owned(),
                repairable,
                runs_nothing: true,
                not_shell: false,
            })
        };
        let dir = match Dir::open(hooks) {
            Ok(dir) => dir,
            Err(err) if err.is_not_found() => return inert("does not exist", true),
            Err(err) => return Err(err.into()),
        };
        let (text, mode, repairable) = match dir.kind(name)? {
            None => return inert("does not exist", true),
            Some(FileKind::File) => {
                let text = dir.read(name, HOOK_LIMIT)?;
                let file = dir.open_file(name)?;
                let meta = file
                    .metadata()
                    .map_err(|e| NotesError::io(&hooks.join(name), e))?;
                (text, unix_mode(&meta), true)
            }
            Some(FileKind::Symlink) => {
                // The hooks directory is the user's; a link out of the
                // repository (shared dotfiles) is theirs too and is read. A link
                // into the working tree runs what the repository says.
                let Ok(target) = std::fs::canonicalize(hooks.join(name)) else {
                    return broken("is a link to nothing", false);
                };
                if self.in_work_tree(&target) {
                    return broken(
                        &format!(
                            "is a link into the working tree ({}): a commit could change what it runs",
                            target.display()
                        ),
                        false,
                    );
                }
                let text = safe_io::fs::read_regular(&target, HOOK_LIMIT)?;
                let meta = std::fs::metadata(&target).map_err(|e| NotesError::io(&target, e))?;
                (text, unix_mode(&meta), false)
            }
            Some(kind) => return broken(&format!("is {}, not a file", kind.describe()), false),
        };
        let text = String::from_utf8_lossy(&text);
        let (begin, end) = setup::hook_markers(name);
        let Some(block) = block_of(&text, &begin, &end) else {
            // `init` and `--fix` leave a hook in another language alone.
            let first = text.lines().next().unwrap_or("");
            if first.starts_with("#!") && !setup::is_posix_shell(first) {
                return Ok(HookState::Broken {
                    problem: "has no ultragit block (it is not a shell script, so neither \
                              ultragit init nor --fix edits it)"
                        .to_owned(),
                    repairable: false,
                    runs_nothing: true,
                    not_shell: true,
                });
            }
            return inert("has no ultragit block", repairable);
        };
        if mode & 0o100 == 0 {
            return inert("is not executable, so git does not run it", repairable);
        }
        let program = block_program(block);
        if let Some(program) = &program
            && program.starts_with('/')
        {
            let usable = std::fs::metadata(program)
                .map(|meta| meta.is_file() && unix_mode(&meta) & 0o111 != 0)
                .unwrap_or(false);
            if !usable {
                return broken(
                    &format!("its block runs {program}, which is not an executable file"),
                    repairable,
                );
            }
        }
        if setup::hook_spec(name).is_some() && !runs_cache_warm(block) {
            return Ok(HookState::Outdated {
                program,
                repairable,
            });
        }
        Ok(HookState::Healthy { program })
    }

    /// True when `path` is inside the working tree but not inside a git directory.
    fn in_work_tree(&self, path: &Path) -> bool {
        let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let root = canonical(self.repo.root());
        let git_dirs = [
            canonical(self.repo.git_dir()),
            canonical(&self.repo.common_dir()),
        ];
        path.starts_with(&root) && !git_dirs.iter().any(|g| path.starts_with(g))
    }
}

enum HookState {
    Healthy {
        program: Option<String>,
    },
    /// Works, but lacks a line a newer `init` writes (the cache warm-up).
    Outdated {
        program: Option<String>,
        repairable: bool,
    },
    Broken {
        problem: String,
        repairable: bool,
        /// git runs none of the block's lines (no hook, no block, not
        /// executable), as opposed to running something wrong.
        runs_nothing: bool,
        /// A hook in another language: the fix is its lines, by hand.
        not_shell: bool,
    },
}

impl HookState {
    /// Whether `--fix` may rewrite the hook.
    fn repairable(&self) -> bool {
        match self {
            HookState::Healthy { .. } => false,
            HookState::Outdated { repairable, .. } | HookState::Broken { repairable, .. } => {
                *repairable
            }
        }
    }
}

#[cfg(unix)]
fn unix_mode(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    meta.permissions().mode()
}

#[cfg(not(unix))]
fn unix_mode(_meta: &std::fs::Metadata) -> u32 {
    0o755
}

/// The text between the hook block's markers, if the block is there.
fn block_of<'t>(text: &'t str, begin: &str, end: &str) -> Option<&'t str> {
    let start = text.find(begin)? + begin.len();
    let stop = text[start..].find(end)? + start;
    Some(&text[start..stop])
}

/// The program the block runs: the first word, on a line that is not a
/// comment, that is an absolute path (`/usr/local/bin/ultragit`, or quoted when
/// it has spaces). `None` when the block runs a program found on `PATH`.
fn block_program(block: &str) -> Option<String> {
    block
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .flat_map(shell_words)
        .find(|word| word.starts_with('/'))
}

/// Whether the block runs `… cache warm …` on a line that is not a comment
/// (what `init` writes in every block since the caches are carried forward,
/// see `setup::warm_line`).
fn runs_cache_warm(block: &str) -> bool {
    block
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|line| {
            // Up to a comment.
            let mut words = shell_words(line);
            if let Some(at) = words.iter().position(|w| w.starts_with('#')) {
                words.truncate(at);
            }
            words
        })
        .any(|words| words.windows(2).any(|w| w[0] == "cache" && w[1] == "warm"))
}

/// A line split into words as a POSIX shell would for simple cases: single
/// quotes, double quotes and backslashes are removed; nothing is expanded.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    w.push(c);
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => w.extend(chars.next()),
                        c => w.push(c),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            c if c.is_whitespace() => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_and_program() {
        let text = "#!/bin/sh\necho hi\n# >>> ultragit post-commit >>>\n# Annotates.\n'/opt/my tools/ultragit' annotate --async || true\n# <<< ultragit post-commit <<<\n";
        let (b, e) = setup::hook_markers("post-commit");
        let block = block_of(text, &b, &e).unwrap();
        let rewrite = setup::rewrite_hook_line(Path::new("/opt/my tools/ultragit"));
        for (block, program) in [
            (block, Some("/opt/my tools/ultragit")),
            (
                "\n/usr/bin/ultragit rewritten \"$1\"\n",
                Some("/usr/bin/ultragit"),
            ),
            ("\n# only a comment\n", None),
            ("\nultragit annotate --async\n", None),
            (&rewrite, Some("/opt/my tools/ultragit")),
        ] {
            assert_eq!(block_program(block).as_deref(), program, "{block:?}");
        }
        assert_eq!(
            shell_words(r#"a 'b c' "d \"e\"" f\ g"#),
            ["a", "b c", "d \"e\"", "f g"]
        );
        assert!(
            block_of(
                text,
                "# >>> ultragit pre-push >>>",
                "# <<< ultragit pre-push <<<"
            )
            .is_none()
        );
        // A begin marker without its end is no block.
        assert!(block_of("# >>> ultragit post-commit >>>\nx\n", &b, &e).is_none());
    }

    #[test]
    fn the_cache_warm_line_is_found_in_what_init_writes_only() {
        let exe = Path::new("/opt/my tools/ultragit");
        for spec in &setup::HOOKS {
            assert!(runs_cache_warm(&spec.lines(exe)), "{}", spec.name);
        }
        for older in [
            "\n/usr/bin/ultragit annotate --async >/dev/null 2>&1 || true\n",
            "\n# ultragit cache warm --background\nultragit annotate --async\n",
            "\nultragit annotate --async # then cache warm\n",
            "",
        ] {
            assert!(!runs_cache_warm(older), "{older:?}");
        }
        // The post-rewrite block an older init wrote.
        let older_rewrite = setup::rewrite_hook_line(exe).replace(&setup::warm_line(exe), "");
        assert!(!runs_cache_warm(&older_rewrite));
    }
}
