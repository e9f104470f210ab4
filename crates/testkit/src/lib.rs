//! `testkit`: test support for the workspace (a dev-dependency only).
//!
//! [`TestRepo`] builds hermetic temporary git repositories: pinned identities and
//! dates (so commit hashes are the same on every machine and every run), isolated
//! config (`GIT_CONFIG_GLOBAL=/dev/null`, `GIT_CONFIG_NOSYSTEM=1`), and helpers to
//! write, stage, commit, amend, tag, branch, add worktrees and submodules, and to make
//! long histories quickly with `git fast-import`.
//!
//! [`FakeLlm`] is a fake LLM HTTP server for end-to-end tests of LLM flows over real
//! HTTP. It speaks one [`Flavor`]: OpenAI Responses (`POST {base}/responses`), OpenAI
//! Chat Completions (`POST {base}/chat/completions`) or Anthropic Messages
//! (`POST {base}/messages`), with `base_url()` = `http://127.0.0.1:PORT/v1`. It
//! answers from a script of [`Reply`]s, one per request in arrival order whatever
//! the path: model turns (text, [`ToolCall`]s, max-tokens) rendered in the flavor's
//! JSON with deterministic ids, provider-shaped errors, exact or malformed bodies,
//! and transport faults (truncated bodies, hang-ups, delays, chunked framing without
//! a `Content-Length`). [`Reply::repeated_text`] answers with a huge text (100 MB
//! and more) that is never built in memory: the server writes it block by block
//! as the body goes out, so memory tests cost the test process nothing. It records every
//! request ([`RecordedRequest`]: method, target, path, headers, body) for the test
//! to assert on, and when each arrived and was answered ([`Exchange`]). Past its
//! script a server can answer from the request itself ([`FakeLlm::respond_with`]);
//! [`annotator`] is such a responder playing ultragit's writing agent for any
//! number of commits at once, with a chosen latency, and a [`Storm`] puts a
//! stretch of 429s, 500s, hangs or cut bodies in front of a responder. HTTP/1.1 is hand-written on
//! `std::net`, one thread per connection; dropping the server stops it.
//!
//! Ready-made repositories several crates share: [`TestRepo::with_staged_change`]
//! (one commit and a small staged change to describe) and
//! [`TestRepo::code_commit_project`] (a `build.sh` project with its
//! `agent-config/`).
//!
//! Set-ups the tests of several crates share: [`TestRepo::with_files`] and
//! [`TestRepo::with_commit`] (a new repository with some files, committed or
//! not), [`TestRepo::with_submodule`], [`TestRepo::merge_side_branch`],
//! [`TestRepo::with_topic_change`] (a numbered file, [`twenty_lines`], changed
//! on a topic branch), [`TestRepo::forge_rebase_merge`] and
//! [`TestRepo::forge_squash_merge`] (what a forge's merge buttons do), and
//! [`Team`] (a bare remote, [`bare_beside`] a repository, and two clones
//! sharing three commits; [`bare_git`] runs git in it). [`field_strs`] lists
//! one string field of a JSON array's objects. [`TestRepo::merge_shaped`]
//! is a history shaped like git/git's (topic branches merged with `--no-ff`,
//! a rename, a function moved between files, an octopus merge, an unmerged
//! annotated branch) with notes on topic commits only ([`MergeShaped`]).
//!
//! [`generate_delivery`] generates a larger merge-shaped history with notes
//! for the decision-delivery benchmark ([`delivery`]: overlapping topics,
//! renames, moves, reverts, rewrites, notes whose items carry unique tokens,
//! retirements by later notes and by corrections), written with
//! [`fast_import`], the `git fast-import` stream writer xtask's benchmark
//! fixtures use too.
//!
//! [`hostile::Hostile`] is a repository whose `.gitattributes` and `.git/config`
//! make git run marking programs (textconv, external diff, clean/smudge/process
//! filters, fsmonitor, pager), for proving that no tool runs them.
//!
//! [`text`] has assertions on text that show the text when they fail
//! ([`assert_contains`], [`assert_lacks`], [`assert_starts_with`], …, and
//! [`line_containing`], which finds the line a test looks at), instead of
//! `assert!(text.contains(…), "{text}")` written out again in every test.
//!
//! [`files_under`] lists the files a run left below a directory (session logs,
//! traces, artifacts), [`texts_under`] with their text; [`runtime`] is the tokio runtime async tests block on;
//! [`landlock_available`] says whether sandbox tests should expect Landlock
//! to be enforced.
//!
//! [`cli::assert_basics`] checks what every binary shares: `--version`, `--help`,
//! usage errors and the hidden completions flag.
//!
//! - **Dependencies:** `gitctx` — every git process is a hardened
//!   [`gitctx::GitCommand`] with the pinned environment added — `serde_json`
//!   for the fake servers' bodies, `tokio` for [`runtime`] (the fake
//!   servers themselves are plain threads), and `landlock` (Linux) for
//!   [`landlock_available`].
//! - **Invariant:** nothing here reaches the network or the user's git config. The
//!   fake servers bind `127.0.0.1` only and never connect anywhere.
//! - Helpers panic with git's stderr on failure: they are for tests, where a failed
//!   setup step should stop the test with a clear message. The fake servers never
//!   panic on what a client sends.

pub mod cli;
pub mod delivery;
mod fake_llm;
pub mod fast_import;
pub mod hostile;
mod merge_history;
mod projects;
mod shared;
pub mod text;

pub use delivery::{DeliveryCorpus, DeliverySpec, generate_delivery};
pub use fake_llm::{
    Exchange, FAKE_MODEL, FakeLlm, Flavor, RecordedRequest, Reply, Storm, ToolCall, annotator, call,
};
pub use merge_history::MergeShaped;
pub use projects::{NET_RS, NET_RS_WITH_RETRIES};
pub use shared::{Team, bare_beside, bare_git, field_strs, twenty_lines};
pub use text::{
    assert_contains, assert_contains_all, assert_ends_with, assert_lacks, assert_starts_with,
    line_containing,
};

use std::cell::Cell;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use gitctx::GitCommand;

/// The first pinned commit time: 2024-01-01T00:00:00Z.
pub const EPOCH: i64 = 1_704_067_200;

/// Seconds between consecutive pinned commits.
pub const TICK: i64 = 60;

/// The pinned author and committer.
pub const AUTHOR_NAME: &str = "Test Author";
/// The pinned author and committer e-mail.
pub const AUTHOR_EMAIL: &str = "author@example.com";

/// Environment that makes any git process (ours or a binary under test) hermetic:
/// no user or system config, fixed identity.
pub fn hermetic_env() -> Vec<(&'static str, String)> {
    vec![
        ("GIT_CONFIG_GLOBAL", "/dev/null".to_owned()),
        ("GIT_CONFIG_NOSYSTEM", "1".to_owned()),
        ("GIT_AUTHOR_NAME", AUTHOR_NAME.to_owned()),
        ("GIT_AUTHOR_EMAIL", AUTHOR_EMAIL.to_owned()),
        ("GIT_COMMITTER_NAME", AUTHOR_NAME.to_owned()),
        ("GIT_COMMITTER_EMAIL", AUTHOR_EMAIL.to_owned()),
    ]
}

/// Variables a binary under test reads that must not leak in from the
/// environment running the tests: credentials and model selection, proxies,
/// git's repository location (set when tests run inside a git hook) and
/// ultragit's author context.
pub const HOST_ENV: &[&str] = &[
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_MODEL",
    "ANTHROPIC_API_KEY",
    "CODEX_HOME",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_CEILING_DIRECTORIES",
    "ULTRAGIT_TASK",
    "ULTRAGIT_REASONING",
    "ULTRAGIT_DEPENDENCIES",
    "ULTRAGIT_TAGS",
];

/// Every file below `dir`, at any depth, sorted (directories themselves are not
/// listed; links are listed, not followed). Panics when `dir` cannot be read.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries =
            fs::read_dir(&dir).unwrap_or_else(|err| panic!("reading {}: {err}", dir.display()));
        for entry in entries {
            let entry = entry.unwrap_or_else(|err| panic!("reading {}: {err}", dir.display()));
            let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
            if is_dir {
                pending.push(entry.path());
            } else {
                files.push(entry.path());
            }
        }
    }
    files.sort();
    files
}

/// Every regular file below `dir` (as [`files_under`], links left out) with
/// its text, invalid UTF-8 replaced: for asserting that a secret or a marker
/// reached no file a run wrote.
pub fn texts_under(dir: &Path) -> Vec<(PathBuf, String)> {
    files_under(dir)
        .into_iter()
        .filter(|path| fs::symlink_metadata(path).is_ok_and(|meta| meta.is_file()))
        .map(|path| {
            let bytes =
                fs::read(&path).unwrap_or_else(|err| panic!("reading {}: {err}", path.display()));
            let text = String::from_utf8_lossy(&bytes).into_owned();
            (path, text)
        })
        .collect()
}

/// A tokio runtime for tests that drive async code: two worker threads (so a
/// spawned task runs while the test blocks on another), IO and timers on.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a test runtime starts")
}

/// True when this kernel enforces Landlock. Probed on a throwaway thread that
/// restricts itself with the `landlock` crate as a hard requirement, so that
/// sandbox tests learn what to expect independently of the code under test.
/// Always false off Linux.
pub fn landlock_available() -> bool {
    #[cfg(target_os = "linux")]
    {
        use landlock::{ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr};
        std::thread::spawn(|| {
            Ruleset::default()
                .set_compatibility(CompatLevel::HardRequirement)
                .handle_access(AccessFs::from_all(ABI::V1))
                .and_then(|r| r.create())
                .and_then(|r| r.restrict_self())
                .is_ok()
        })
        .join()
        .expect("the Landlock probe thread does not panic")
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Makes a FIFO at `path` (as a repository's working tree may hold one: it must
/// never be opened for reading, or whatever opens it hangs).
pub fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Makes `cmd` hermetic for running one of our binaries: removes
/// [`HOST_ENV`] and sets [`hermetic_env`]. `HOME` is left to the caller.
pub fn isolate(cmd: &mut std::process::Command) -> &mut std::process::Command {
    for key in HOST_ENV {
        cmd.env_remove(key);
    }
    cmd.envs(hermetic_env())
}

/// Config every test repository's git processes run with.
const CONFIG: &[(&str, &str)] = &[
    ("init.defaultBranch", "main"),
    ("user.name", AUTHOR_NAME),
    ("user.email", AUTHOR_EMAIL),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("core.autocrlf", "false"),
    ("protocol.file.allow", "always"),
    ("advice.detachedHead", "false"),
];

/// A hardened git command in `dir` with the configuration and environment
/// every test repository's git processes run with (no pinned date).
pub(crate) fn hermetic_git(dir: &Path) -> GitCommand {
    let mut cmd = GitCommand::new(dir);
    for (key, value) in CONFIG {
        cmd = cmd.config(key, value);
    }
    for (key, value) in hermetic_env() {
        cmd = cmd.env(key, value);
    }
    cmd
}

/// A temporary git repository, deleted when dropped.
#[derive(Debug)]
pub struct TestRepo {
    _dir: tempfile::TempDir,
    root: PathBuf,
    tick: Cell<i64>,
}

impl Default for TestRepo {
    fn default() -> Self {
        Self::new()
    }
}

impl TestRepo {
    /// An empty repository on branch `main` with no commits.
    pub fn new() -> TestRepo {
        Self::named("repo")
    }

    /// An empty repository in a directory called `name` (inside a fresh temporary
    /// directory), e.g. to control the path a test sees.
    pub fn named(name: &str) -> TestRepo {
        let dir = tempfile::Builder::new()
            .prefix("testkit-")
            .tempdir()
            .expect("create a temporary directory");
        let root = dir.path().join(name);
        fs::create_dir_all(&root).expect("create the repository directory");
        // Resolve symlinks (macOS /var → /private/var) so paths compare equal to
        // what git reports.
        let root = root
            .canonicalize()
            .expect("canonicalize the repository path");
        let repo = TestRepo {
            _dir: dir,
            root,
            tick: Cell::new(0),
        };
        repo.git(&["init", "--quiet", "--initial-branch=main"]);
        repo
    }

    /// The working tree.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The absolute path of `rel` inside the working tree.
    pub fn join(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// A hardened, hermetic git command in the working tree (no pinned date; see
    /// [`TestRepo::git`] for commands that create commits).
    pub fn command(&self) -> GitCommand {
        self.command_in(&self.root)
    }

    fn command_in(&self, dir: &Path) -> GitCommand {
        hermetic_git(dir)
    }

    /// Runs git with `args` and the pinned date; panics with stderr on failure.
    /// Returns stdout. Commands that create commits or tags (`commit`, `merge`,
    /// `tag`, `notes`, …) advance the clock by [`TICK`], so the first commit is dated
    /// [`EPOCH`] and each later one a minute after the one before.
    pub fn git(&self, args: &[&str]) -> String {
        let creates = matches!(
            args.first().copied(),
            Some(
                "commit"
                    | "merge"
                    | "tag"
                    | "notes"
                    | "cherry-pick"
                    | "revert"
                    | "rebase"
                    | "stash"
            )
        );
        let date = if creates {
            self.next_date()
        } else {
            self.current_date()
        };
        self.run(
            self.command()
                .args(args)
                .env("GIT_AUTHOR_DATE", &date)
                .env("GIT_COMMITTER_DATE", &date),
        )
    }

    /// Runs git with `args` and `input` on its stdin (plumbing such as
    /// `mktree` or `hash-object --stdin`); panics on failure. Returns stdout,
    /// trimmed.
    pub fn git_stdin(&self, args: &[&str], input: &str) -> String {
        let date = self.current_date();
        self.run(
            self.command()
                .args(args)
                .env("GIT_AUTHOR_DATE", &date)
                .env("GIT_COMMITTER_DATE", &date)
                .stdin(input.as_bytes().to_vec()),
        )
        .trim()
        .to_owned()
    }

    fn run(&self, cmd: GitCommand) -> String {
        match cmd.run() {
            Ok(output) => String::from_utf8_lossy(&output.stdout).into_owned(),
            Err(err) => panic!("test git command failed: {err}"),
        }
    }

    fn current_date(&self) -> String {
        format!("@{} +0000", EPOCH + self.tick.get() * TICK)
    }

    fn next_date(&self) -> String {
        let tick = self.tick.get();
        self.tick.set(tick + 1);
        format!("@{} +0000", EPOCH + tick * TICK)
    }

    /// Writes `contents` to `rel` (creating directories). Does not stage.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> &Self {
        let path = self.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("create parent directories");
        }
        fs::write(&path, contents).expect("write a file");
        self
    }

    /// Writes an executable file.
    pub fn write_executable(&self, rel: &str, contents: impl AsRef<[u8]>) -> &Self {
        self.write(rel, contents);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(self.join(rel), fs::Permissions::from_mode(0o755))
                .expect("make a file executable");
        }
        self
    }

    /// Deletes `rel` from the working tree. Does not stage.
    pub fn remove(&self, rel: &str) -> &Self {
        let path = self.join(rel);
        if path.is_dir() {
            fs::remove_dir_all(path).expect("remove a directory");
        } else {
            fs::remove_file(path).expect("remove a file");
        }
        self
    }

    /// `git add -- paths`.
    pub fn stage(&self, paths: &[&str]) -> &Self {
        let mut args = vec!["add", "--"];
        args.extend_from_slice(paths);
        self.git(&args);
        self
    }

    /// `git add -A`.
    pub fn stage_all(&self) -> &Self {
        self.git(&["add", "-A"]);
        self
    }

    /// `git mv from to` (creating the target's directories).
    pub fn rename(&self, from: &str, to: &str) -> &Self {
        if let Some(parent) = self.join(to).parent() {
            fs::create_dir_all(parent).expect("create parent directories");
        }
        self.git(&["mv", "--", from, to]);
        self
    }

    /// Commits what is staged; returns the new commit's full hash.
    pub fn commit(&self, message: &str) -> String {
        self.git(&[
            "commit",
            "--quiet",
            "--no-verify",
            "--allow-empty",
            "-m",
            message,
        ]);
        self.rev_parse("HEAD")
    }

    /// Stages everything and commits; returns the new commit's full hash.
    pub fn commit_all(&self, message: &str) -> String {
        self.stage_all();
        self.commit(message)
    }

    /// Writes one file and commits it; returns the commit hash.
    pub fn commit_file(&self, rel: &str, contents: impl AsRef<[u8]>, message: &str) -> String {
        self.write(rel, contents);
        self.stage(&[rel]);
        self.commit(message)
    }

    /// `git commit --amend` with what is staged, keeping the author and author
    /// date and pinning a new committer date. `None` keeps the message.
    pub fn amend(&self, message: Option<&str>) -> String {
        let date = self.next_date();
        let mut args = vec![
            "commit",
            "--quiet",
            "--no-verify",
            "--amend",
            "--allow-empty",
        ];
        match message {
            Some(m) => {
                args.push("-m");
                args.push(m);
            }
            None => args.push("--no-edit"),
        }
        self.run(self.command().args(&args).env("GIT_COMMITTER_DATE", &date));
        self.rev_parse("HEAD")
    }

    /// A lightweight tag at HEAD.
    pub fn tag(&self, name: &str) -> &Self {
        self.git(&["tag", name]);
        self
    }

    /// An annotated tag at `rev`.
    pub fn tag_annotated(&self, name: &str, rev: &str, message: &str) -> &Self {
        self.git(&["tag", "-a", name, "-m", message, rev]);
        self
    }

    /// Creates a branch at HEAD without switching to it.
    pub fn branch(&self, name: &str) -> &Self {
        self.git(&["branch", name]);
        self
    }

    /// Switches to an existing branch.
    pub fn checkout(&self, name: &str) -> &Self {
        self.git(&["checkout", "--quiet", name]);
        self
    }

    /// Creates a branch at HEAD and switches to it.
    pub fn checkout_new(&self, name: &str) -> &Self {
        self.git(&["checkout", "--quiet", "-b", name]);
        self
    }

    /// Detaches HEAD at `rev`.
    pub fn checkout_detached(&self, rev: &str) -> &Self {
        self.git(&["checkout", "--quiet", "--detach", rev]);
        self
    }

    /// Points `refs/remotes/origin/<branch>` at `rev` and makes
    /// `refs/remotes/origin/HEAD` a symbolic ref to it, as a clone would.
    pub fn set_origin_head(&self, branch: &str, rev: &str) -> &Self {
        let target = format!("refs/remotes/origin/{branch}");
        let sha = self.rev_parse(rev);
        self.git(&["update-ref", &target, &sha]);
        self.git(&["symbolic-ref", "refs/remotes/origin/HEAD", &target]);
        self
    }

    /// Adds `sub` as a submodule at `path` (staged, with `.gitmodules`; not
    /// committed).
    pub fn add_submodule(&self, path: &str, sub: &TestRepo) -> &Self {
        let url = sub.path().to_string_lossy().into_owned();
        self.git(&["submodule", "--quiet", "add", "--", &url, path]);
        self
    }

    /// Adds a linked worktree for a new branch `branch`; returns its path.
    pub fn add_worktree(&self, name: &str, branch: &str) -> PathBuf {
        let path = self
            .root
            .parent()
            .expect("the repository has a parent directory")
            .join(name);
        let path_text = path.to_string_lossy().into_owned();
        self.git(&["worktree", "add", "--quiet", "-b", branch, &path_text]);
        path.canonicalize().expect("canonicalize the worktree path")
    }

    /// The full hash of `rev`.
    pub fn rev_parse(&self, rev: &str) -> String {
        self.run(
            self.command()
                .args(["rev-parse", "--verify", "--end-of-options", rev]),
        )
        .trim()
        .to_owned()
    }

    /// Appends `count` commits to the current branch with `git fast-import`, each
    /// setting `path` to `"<i>\n"` (i from 0). Fast enough for hundreds of commits.
    /// Returns the hashes, oldest first. The working tree and index are updated to
    /// the new HEAD.
    pub fn commit_many(&self, count: usize, path: &str) -> Vec<String> {
        let edits: Vec<(String, String)> = (0..count)
            .map(|i| (format!("commit {i}"), format!("{i}\n")))
            .collect();
        self.import_commits(path, &edits)
    }

    /// Appends one commit per `(message, contents)` pair, each setting `path` to
    /// `contents`, with `git fast-import`. Returns the hashes, oldest first.
    pub fn import_commits(&self, path: &str, commits: &[(String, String)]) -> Vec<String> {
        let branch = self
            .run(self.command().args(["symbolic-ref", "--quiet", "HEAD"]))
            .trim()
            .to_owned();
        let parent = self
            .command()
            .args(["rev-parse", "--verify", "--quiet", "HEAD"])
            .run()
            .ok()
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned());
        let mut stream = String::new();
        for (i, (message, contents)) in commits.iter().enumerate() {
            let tick = self.tick.get();
            self.tick.set(tick + 1);
            let when = EPOCH + tick * TICK;
            let _ = writeln!(stream, "commit {branch}");
            let _ = writeln!(stream, "mark :{}", i + 1);
            let _ = writeln!(stream, "author {AUTHOR_NAME} <{AUTHOR_EMAIL}> {when} +0000");
            let _ = writeln!(
                stream,
                "committer {AUTHOR_NAME} <{AUTHOR_EMAIL}> {when} +0000"
            );
            let _ = writeln!(stream, "data {}\n{message}", message.len());
            if i == 0
                && let Some(parent) = &parent
            {
                let _ = writeln!(stream, "from {parent}");
            }
            let _ = writeln!(stream, "M 100644 inline {path}");
            let _ = writeln!(stream, "data {}\n{contents}", contents.len());
            stream.push('\n');
        }
        let marks = self.root.join(".git").join("testkit-marks");
        let marks_text = marks.to_string_lossy().into_owned();
        self.run(
            self.command()
                .args(["fast-import", "--quiet", "--force"])
                .arg(format!("--export-marks={marks_text}"))
                .stdin(stream.into_bytes()),
        );
        let text = fs::read_to_string(&marks).expect("read fast-import marks");
        let _ = fs::remove_file(&marks);
        let mut by_mark: Vec<(usize, String)> = text
            .lines()
            .filter_map(|line| {
                let (mark, sha) = line.strip_prefix(':')?.split_once(' ')?;
                Some((mark.parse().ok()?, sha.to_owned()))
            })
            .collect();
        by_mark.sort();
        self.git(&["reset", "--quiet", "--hard", "HEAD"]);
        by_mark.into_iter().map(|(_, sha)| sha).collect()
    }
}
