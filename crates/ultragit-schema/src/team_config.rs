//! `.ultragit-config.toml`: the team's shared settings, committed at the top of
//! the working tree — and therefore **untrusted**.
//!
//! A repository cloned from a stranger ships this file. It may tune behaviour
//! (limits, scoring), never choose where requests go, which credential is sent,
//! which provider or model is used, or which program runs.
//!
//! This module fixes the file's shape: its name, the most of it that is read,
//! and its two sections. The keys of each section, which of them the file may
//! set, and how values are checked are the key tables of the commands that read
//! them — `ultragit_read::config` for `[ultragit.read]`, `ultragit_annotate`'s
//! `config` for `[ultragit.annotate]` — resolved by `layered-config`, which
//! ignores every steering key the file sets with a warning naming the file and
//! the trusted place to set it. Readers read the file bounded
//! ([`TEAM_CONFIG_LIMIT`]) and without following symbolic links. Other tables
//! than `[ultragit]` are left to other tools; a key in a section that its table
//! does not know is an error (a typo does not pass silently), and each reader
//! judges only its own section.
//!
//! ```toml
//! [ultragit.read]
//! deps_scan_limit = 500          # tuning: honoured
//! default_max_regions = 20
//! recency_half_life = 180.0
//!
//! [ultragit.annotate]
//! max_diff_lines = 2000          # tuning: honoured
//! max_agent_turns = 20
//! max_tokens_per_response = 4096
//! recent_annotations_limit = 5
//! chunk_size = 5
//! base_url = "http://…"          # steering: ignored with a warning
//! ```

/// The file name, at the top of the working tree.
pub const TEAM_CONFIG_FILE: &str = ".ultragit-config.toml";

/// The largest team file read (1 MiB); a larger one is an error.
pub const TEAM_CONFIG_LIMIT: u64 = 1024 * 1024;

/// The section `ultragit read` reads: `[ultragit.read]`.
pub const READ_SECTION: &[&str] = &["ultragit", "read"];

/// The section `ultragit annotate` reads: `[ultragit.annotate]`.
pub const ANNOTATE_SECTION: &[&str] = &["ultragit", "annotate"];
