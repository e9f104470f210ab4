//! Read-pipeline configuration (spec 003 §6).
//!
//! Sources, lowest precedence first: built-in defaults; git config `[ultragit]`
//! (`depsScanLimit`, `defaultMaxRegions`, `recencyHalfLife` — repository, user or
//! system config, as git resolves them); `.ultragit-config.toml` at the top of the
//! working tree (`[ultragit.read]`: `deps_scan_limit`, `default_max_regions`,
//! `recency_half_life`). The spec calls the TOML file an override "for shared team
//! defaults", so it wins over git config; that is the order implemented here.
//! The file is committed, hence untrusted: it is parsed by
//! [`ultragit_schema::team_config`] (the one model of that file and of its trust
//! rule) after a bounded, no-follow read.

use gitctx::Repo;
use ultragit_schema::team_config::{TEAM_CONFIG_LIMIT, TeamConfig, TeamRead};

use crate::error::ReadError;

/// The file name of the shared configuration.
pub const CONFIG_FILE: &str = ultragit_schema::team_config::TEAM_CONFIG_FILE;

/// Settings of the read pipeline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReadConfig {
    /// Most recent annotated commits scanned for `dependencies_on_this`.
    pub deps_scan_limit: u32,
    /// `--max-regions` when the query gives none.
    pub default_max_regions: u32,
    /// Days after which an annotation's recency score halves.
    pub recency_half_life: f64,
}

impl Default for ReadConfig {
    fn default() -> Self {
        ReadConfig {
            deps_scan_limit: 500,
            default_max_regions: 20,
            recency_half_life: 180.0,
        }
    }
}

impl ReadConfig {
    /// The configuration of `repo`: defaults, then git config, then
    /// `.ultragit-config.toml`. Out-of-range or malformed values are errors that
    /// name the key and its source. The team file is untrusted input: it is read
    /// only as a regular file of at most 1 MiB, never through a symbolic link
    /// (see [`ultragit_schema::team_config`]); every key it may set for `read`
    /// only tunes scoring and limits.
    pub fn load(repo: &Repo) -> Result<ReadConfig, ReadError> {
        let mut config = ReadConfig::default();
        let git_int = |key: &str| -> Result<Option<i64>, ReadError> {
            repo.config_get_i64(key)
                .map_err(|e| ReadError::Config(format!("git config {key}: {e}")))
        };
        if let Some(v) = git_int("ultragit.depsScanLimit")? {
            config.deps_scan_limit = count("git config ultragit.depsScanLimit", v, 0)?;
        }
        if let Some(v) = git_int("ultragit.defaultMaxRegions")? {
            config.default_max_regions = count("git config ultragit.defaultMaxRegions", v, 1)?;
        }
        if let Some(text) = repo
            .config_get("ultragit.recencyHalfLife")
            .map_err(|e| ReadError::Config(format!("git config ultragit.recencyHalfLife: {e}")))?
        {
            let days = text.trim().parse::<f64>().map_err(|_| {
                ReadError::Config(format!(
                    "git config ultragit.recencyHalfLife: '{text}' is not a number of days"
                ))
            })?;
            config.recency_half_life = half_life("git config ultragit.recencyHalfLife", days)?;
        }
        let bytes = repo
            .read_worktree_file(CONFIG_FILE, TEAM_CONFIG_LIMIT)
            .map_err(|e| ReadError::Config(e.to_string()))?;
        if let Some(bytes) = bytes {
            let read = TeamConfig::parse_bytes(&bytes)
                .and_then(|team| team.read())
                .map_err(|e| ReadError::Config(e.to_string()))?;
            config.apply(&read)?;
        }
        Ok(config)
    }

    /// Applies the `[ultragit.read]` values of the team file.
    pub fn apply(&mut self, read: &TeamRead) -> Result<(), ReadError> {
        let source = |key: &str| format!("{CONFIG_FILE} ultragit.read.{key}");
        if let Some(v) = read.deps_scan_limit {
            self.deps_scan_limit = count(&source("deps_scan_limit"), v, 0)?;
        }
        if let Some(v) = read.default_max_regions {
            self.default_max_regions = count(&source("default_max_regions"), v, 1)?;
        }
        if let Some(v) = read.recency_half_life {
            self.recency_half_life = half_life(&source("recency_half_life"), v)?;
        }
        Ok(())
    }
}

fn count(source: &str, value: i64, min: i64) -> Result<u32, ReadError> {
    if value < min || value > i64::from(u32::MAX) {
        return Err(ReadError::Config(format!(
            "{source} must be a whole number of at least {min}, not {value}"
        )));
    }
    Ok(value as u32)
}

fn half_life(source: &str, days: f64) -> Result<f64, ReadError> {
    if !days.is_finite() || days <= 0.0 {
        return Err(ReadError::Config(format!(
            "{source} must be a positive number of days, not {days}"
        )));
    }
    Ok(days)
}
