//! The data of a release note: the prepared context (refs, commits, submodule
//! groups, candidate items, link hints) and the model's structured answer.

use std::fmt;

use gitctx::ObjectId;
use serde::{Deserialize, Serialize};

fn hex<S: serde::Serializer>(id: &ObjectId, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&id.to_hex())
}

fn hex_opt<S: serde::Serializer>(id: &Option<ObjectId>, s: S) -> Result<S::Ok, S::Error> {
    match id {
        Some(id) => s.serialize_str(&id.to_hex()),
        None => s.serialize_none(),
    }
}

/// One end of the range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RefInfo {
    /// As the user gave it (`v1.2.0`, `HEAD`, a branch, an id).
    pub name: String,
    /// The commit it peels to.
    #[serde(serialize_with = "hex")]
    pub commit: ObjectId,
    pub subject: String,
    /// `YYYY-MM-DD` (committer date).
    pub date: String,
}

/// The range a release note covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Range {
    pub base: RefInfo,
    pub release: RefInfo,
    /// The release's version without `v` (`1.3.0`): inferred by the
    /// patch/minor/major shortcut, or parsed from a RELEASE tag name.
    pub version: Option<String>,
    /// The shortcut that chose the range (`patch`, `minor`, `major`).
    pub bump: Option<String>,
}

/// What a changed path means to the people who deploy and operate a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// Code that runs in production.
    Runtime,
    /// Configuration files, their schemas and examples.
    ConfigSchema,
    /// API definitions (protobuf, OpenAPI, GraphQL, public API modules).
    Api,
    /// Command-line entry points and commands.
    Cli,
    /// Documentation.
    Docs,
    /// Generated or vendored files.
    Generated,
    /// Tests and fixtures.
    Tests,
    /// Dependency manifests and lockfiles.
    Dependency,
    /// A submodule's recorded commit.
    Submodule,
    /// CI, build and repository tooling.
    Tooling,
}

impl Signal {
    /// The snake-case name used in the prepared context.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Signal::Runtime => "runtime",
            Signal::ConfigSchema => "config_schema",
            Signal::Api => "api",
            Signal::Cli => "cli",
            Signal::Docs => "docs",
            Signal::Generated => "generated",
            Signal::Tests => "tests",
            Signal::Dependency => "dependency",
            Signal::Submodule => "submodule",
            Signal::Tooling => "tooling",
        }
    }

    /// Whether a change of this kind is code a release ships.
    pub(crate) fn is_code(self) -> bool {
        matches!(
            self,
            Signal::Runtime | Signal::ConfigSchema | Signal::Api | Signal::Cli
        )
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One path a commit changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChangedPath {
    pub path: String,
    /// `A`, `M`, `D`, `R`, `C`, `T`.
    pub status: char,
    pub additions: u32,
    pub deletions: u32,
    pub binary: bool,
    pub signal: Signal,
}

/// A commit of the range (or of a submodule group), with its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReleaseCommit {
    #[serde(serialize_with = "hex")]
    pub id: ObjectId,
    /// The 7-character short id used in refs.
    pub short: String,
    pub subject: String,
    /// The full message, clamped to 10 lines and 1,000 words.
    pub message: String,
    /// The message was clamped.
    pub clamped: bool,
    pub author: String,
    /// `YYYY-MM-DD` (author date).
    pub date: String,
    /// More than one parent.
    pub merge: bool,
    /// Its paths against its first parent (at most a bounded number; see
    /// `paths_total`).
    pub paths: Vec<ChangedPath>,
    pub paths_total: usize,
    pub additions: u32,
    pub deletions: u32,
    /// A bounded excerpt of its patch (hand-written files first).
    pub excerpt: String,
    /// The distinct signals of its paths, sorted.
    pub signals: Vec<Signal>,
    /// Pull request numbers its message mentions (`(#123)`, `Merge pull
    /// request #123`, `PR #123`, GitLab `!123`: [`commit_text::pull_requests`]).
    pub pull_requests: Vec<u64>,
    /// Issue numbers its message closes (`Fixes #123`, `Closes: #123`,
    /// `Resolves #123`: [`commit_text::issue_references`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub issues: Vec<u64>,
    /// When the commit only bumps versions of the workspace's own crates:
    /// each crate and its new version (`grep-searcher 0.1.14`); else empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub internal_bumps: Vec<String>,
}

/// A submodule whose recorded commit moved within the range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubmoduleGroup {
    pub path: String,
    /// `None`: added within the range.
    #[serde(serialize_with = "hex_opt")]
    pub old: Option<ObjectId>,
    /// `None`: removed within the range.
    #[serde(serialize_with = "hex_opt")]
    pub new: Option<ObjectId>,
    /// `old..new` in the submodule's own history, when available locally.
    pub commits: Vec<ReleaseCommit>,
    /// Commits beyond the listed ones.
    pub more: usize,
    /// Why there are no commits (not checked out, commits missing, moved back).
    pub note: Option<String>,
    /// Where the submodule's own commits link to.
    pub links: Option<LinkHints>,
}

/// A hosting service whose URL scheme we know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Host {
    GitHub,
    GitLab,
    Bitbucket,
    /// Gitea, Forgejo, Codeberg: GitHub-like paths.
    Gitea,
}

/// How to link commits, pull requests and comparisons of one repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LinkHints {
    pub host: Host,
    /// `https://github.com/owner/repo` (no trailing slash, no `.git`).
    pub web: String,
    /// `owner/repo` (GitLab: `group/sub/repo`).
    pub slug: String,
}

/// The fixed sections a release note may have, in rendering order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    Breaking,
    Security,
    Features,
    Fixes,
    Performance,
    Operations,
    Dependencies,
    Documentation,
    Other,
}

impl Section {
    /// Every section, in rendering order.
    pub const ALL: [Section; 9] = [
        Section::Breaking,
        Section::Security,
        Section::Features,
        Section::Fixes,
        Section::Performance,
        Section::Operations,
        Section::Dependencies,
        Section::Documentation,
        Section::Other,
    ];

    /// The key in the model's JSON (`breaking`, `features`, …).
    pub(crate) fn key(self) -> &'static str {
        match self {
            Section::Breaking => "breaking",
            Section::Security => "security",
            Section::Features => "features",
            Section::Fixes => "fixes",
            Section::Performance => "performance",
            Section::Operations => "operations",
            Section::Dependencies => "dependencies",
            Section::Documentation => "documentation",
            Section::Other => "other",
        }
    }

    /// The Markdown heading text (`Breaking changes`, `Features`, …).
    pub(crate) fn title(self) -> &'static str {
        match self {
            Section::Breaking => "Breaking changes",
            Section::Security => "Security",
            Section::Features => "Features",
            Section::Fixes => "Fixes",
            Section::Performance => "Performance",
            Section::Operations => "Operations",
            Section::Dependencies => "Dependencies",
            Section::Documentation => "Documentation",
            Section::Other => "Other changes",
        }
    }
}

/// How sure a candidate's drafting is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

/// What an item refers to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub enum ItemRef {
    /// A commit of the range, by (short or full) id.
    Commit(String),
    /// A pull request number the range's messages mention.
    PullRequest(u64),
    /// An issue number the range's messages close (`Fixes #123`).
    Issue(u64),
    /// A commit of a submodule group.
    SubmoduleCommit { path: String, id: String },
}

/// An item drafted from the evidence, for the model to polish (or omit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Candidate {
    pub section: Section,
    /// Draft facts, plain text.
    pub draft: String,
    pub confidence: Confidence,
    /// Whether the policy recommends including it (false: tests-only, CI,
    /// refactors without visible change, docs-only internal notes…).
    pub include: bool,
    /// Why it is drafted this way (the policy rule that applied).
    pub reason: String,
    pub refs: Vec<ItemRef>,
    /// Evidence lines: signals, paths, statistics.
    pub evidence: Vec<String>,
}

/// Everything prepared before the model writes the release note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReleaseContext {
    pub range: Range,
    /// Parent-repository commits `base..release`, newest first.
    pub commits: Vec<ReleaseCommit>,
    /// Commits beyond the listed ones.
    pub more_commits: usize,
    pub submodules: Vec<SubmoduleGroup>,
    pub candidates: Vec<Candidate>,
    /// Links of the parent repository, when its `origin` is a known host.
    pub links: Option<LinkHints>,
    /// Some commit of the range (or a submodule move) touched code: a path
    /// whose signal is runtime, config schema, API or CLI, or a submodule.
    pub touched_code: bool,
}

/// The model's answer, validated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Answer {
    pub sections: Vec<AnswerSection>,
}

/// One section of the answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnswerSection {
    pub section: Section,
    pub items: Vec<AnswerItem>,
}

/// One bullet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnswerItem {
    pub text: String,
    pub refs: Vec<ItemRef>,
}
