//! Ready-made repositories that tests (and benchmarks) in several crates set up
//! the same way.

use crate::TestRepo;

/// `src/net.rs` as [`TestRepo::with_staged_change`] commits it.
pub const NET_RS: &str = "pub fn connect(host: &str) -> bool {\n    !host.is_empty()\n}\n";

/// `src/net.rs` as the staged change of [`TestRepo::with_staged_change`] leaves
/// it: `connect` tries three times.
pub const NET_RS_WITH_RETRIES: &str = "pub fn connect(host: &str) -> bool {\n    for _ in 0..3 {\n        if !host.is_empty() {\n            return true;\n        }\n    }\n    false\n}\n";

impl TestRepo {
    /// A repository with one commit, `feat: add connect`, adding [`NET_RS`] as
    /// `src/net.rs`, and one staged change to describe: [`NET_RS_WITH_RETRIES`].
    pub fn with_staged_change() -> TestRepo {
        let repo = TestRepo::new();
        repo.write("src/net.rs", NET_RS);
        repo.commit_all("feat: add connect");
        repo.write("src/net.rs", NET_RS_WITH_RETRIES)
            .stage(&["src/net.rs"]);
        repo
    }

    /// Makes this repository a `code-commit` project: a `.gitignore` that
    /// ignores `/agent-config`, an executable `build.sh` with the text `build`,
    /// and `files` (path, text), committed as `project`; then the files of the
    /// untracked `agent-config/` directory (`query.txt`, `codeRollup.txt`,
    /// `config.toml`, …: name, text).
    pub fn code_commit_project(
        &self,
        build: &str,
        files: &[(&str, &str)],
        agent_config: &[(&str, &str)],
    ) -> &Self {
        self.write(".gitignore", "/agent-config\n")
            .write_executable("build.sh", build);
        for (path, text) in files {
            self.write(path, text);
        }
        self.commit_all("project");
        for (name, text) in agent_config {
            self.write(&format!("agent-config/{name}"), text);
        }
        self
    }
}
