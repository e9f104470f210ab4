//! Read-pipeline configuration (spec 003 §6): the table of its keys and their
//! resolution.
//!
//! Sources, highest precedence first: `.ultragit-config.toml` at the top of the
//! working tree (`[ultragit.read]`: `deps_scan_limit`, `default_max_regions`,
//! `recency_half_life`); git config `[ultragit]` (`depsScanLimit`,
//! `defaultMaxRegions`, `recencyHalfLife` — repository, user or system config,
//! as git resolves them); built-in defaults. The spec calls the TOML file an
//! override "for shared team defaults", so it wins over git config; that is the
//! order of the layers here. The file is committed, hence untrusted: it is read
//! bounded and never through a link, and every key it may set for `read` only
//! tunes scoring and limits. Resolution, and the errors that name the source
//! of a bad value, are `layered-config`'s.

use gitctx::Repo;
use layered_config::{ConfigError, Key, Layer, Stack, Value};
use ultragit_schema::team_config::{READ_SECTION, TEAM_CONFIG_LIMIT};

use crate::error::ReadError;

/// The file name of the shared configuration.
pub const CONFIG_FILE: &str = ultragit_schema::team_config::TEAM_CONFIG_FILE;

/// The table (the fields of [`ReadConfig`]): `[ultragit.read]` key, git config
/// key, parser.
const DEPS_SCAN_LIMIT: Key<u32> = Key::whole::<0>("deps_scan_limit", "ultragit.depsScanLimit");
const DEFAULT_MAX_REGIONS: Key<u32> =
    Key::whole::<1>("default_max_regions", "ultragit.defaultMaxRegions");
const RECENCY_HALF_LIFE: Key<f64> = Key {
    git: Some("ultragit.recencyHalfLife"),
    ..Key::new("recency_half_life", half_life)
};

/// Settings of the read pipeline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReadConfig {
    /// `dependencies_on_this` counts only the dependencies declared by the
    /// this many most recent annotated commits (by commit time); `None` (the
    /// default, when neither git config nor the team file sets it): every
    /// annotated commit, through the reverse dependency index.
    pub deps_scan_limit: Option<u32>,
    /// `--max-regions` when the query gives none.
    pub default_max_regions: u32,
    /// Days after which an annotation's recency score halves.
    pub recency_half_life: f64,
}

impl Default for ReadConfig {
    fn default() -> Self {
        ReadConfig {
            deps_scan_limit: None,
            default_max_regions: 20,
            recency_half_life: 180.0,
        }
    }
}

impl ReadConfig {
    /// The configuration of `repo`: `.ultragit-config.toml`, then git config,
    /// then the defaults. Out-of-range or malformed values are errors that name
    /// the key and its source. The team file is untrusted input: it is read only
    /// as a regular file of at most 1 MiB, never through a symbolic link (see
    /// [`ultragit_schema::team_config`]).
    pub fn load(repo: &Repo) -> Result<ReadConfig, ReadError> {
        let team = repo
            .read_worktree_file(CONFIG_FILE, TEAM_CONFIG_LIMIT)
            .map_err(ReadError::ConfigFile)?;
        let git = Layer::git_config(|key| repo.config_get(key), |key| repo.config_get_i64(key));
        resolve(team.as_deref(), git).map_err(ReadError::Config)
    }
}

/// The table resolved over the team file's bytes (if any) and `git`.
fn resolve(team: Option<&[u8]>, git: Layer<'_>) -> Result<ReadConfig, ConfigError> {
    let mut stack = Stack::new()
        .with_repo_file(team, CONFIG_FILE, READ_SECTION)?
        .with(git);
    let defaults = ReadConfig::default();
    let config = ReadConfig {
        deps_scan_limit: stack.get(&DEPS_SCAN_LIMIT)?.map(|set| set.value),
        default_max_regions: stack.value(&DEFAULT_MAX_REGIONS, defaults.default_max_regions)?,
        recency_half_life: stack.value(&RECENCY_HALF_LIFE, defaults.recency_half_life)?,
    };
    stack.finish()?;
    Ok(config)
}

/// A positive, finite number of days (text from git config is read as one).
fn half_life(value: &Value) -> Result<f64, String> {
    let days = match value {
        Value::Float(days) => Some(*days),
        Value::Int(days) => Some(*days as f64),
        Value::Text(text) => text.trim().parse::<f64>().ok(),
        _ => None,
    };
    match days {
        Some(days) if days.is_finite() && days > 0.0 => Ok(days),
        _ => Err(format!("must be a positive number of days, not {value}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_git() -> Layer<'static> {
        Layer::git_config(|_| Ok::<_, String>(None), |_| Ok(None))
    }

    fn load(team: &str) -> Result<ReadConfig, String> {
        resolve(Some(team.as_bytes()), no_git()).map_err(|e| e.to_string())
    }

    #[test]
    fn the_team_file_tunes_every_key() {
        let config = load(
            "[ultragit.read]\ndeps_scan_limit = 10\ndefault_max_regions = 2\nrecency_half_life = 90\n[ultragit.annotate]\nfuture = true\n[other.tool]\nanything = true\n",
        )
        .unwrap();
        assert_eq!(
            config,
            ReadConfig {
                deps_scan_limit: Some(10),
                default_max_regions: 2,
                recency_half_life: 90.0
            }
        );
        assert_eq!(load("").unwrap(), ReadConfig::default());
    }

    #[test]
    fn bad_values_and_unknown_keys_name_the_file_and_the_key() {
        for (text, message) in [
            (
                "[ultragit.read]\ndeps_scan_limit = \"x\"\n",
                ".ultragit-config.toml: ultragit.read.deps_scan_limit must be a whole number of at least 0, not \"x\"",
            ),
            (
                "[ultragit.read]\nrecency_half_life = 0.0\n",
                ".ultragit-config.toml: ultragit.read.recency_half_life must be a positive number of days, not 0",
            ),
            (
                "[ultragit.read]\ndeps_scan_limt = 3\n",
                ".ultragit-config.toml: [ultragit.read]: unknown field `deps_scan_limt`, expected one of `deps_scan_limit`, `default_max_regions`, `recency_half_life`",
            ),
            (
                "ultragit = 3\n",
                ".ultragit-config.toml: [ultragit] must be a table, not 3",
            ),
        ] {
            assert_eq!(load(text).unwrap_err(), message, "{text}");
        }
    }

    #[test]
    fn git_config_text_is_read_as_days() {
        let git = Layer::git_config(
            |key| Ok::<_, String>((key == "ultragit.recencyHalfLife").then(|| " 90.5 ".to_owned())),
            |_| Ok(None),
        );
        assert_eq!(resolve(None, git).unwrap().recency_half_life, 90.5);
        let git = Layer::git_config(|_| Ok::<_, String>(Some("soon".to_owned())), |_| Ok(None));
        assert_eq!(
            resolve(None, git).unwrap_err().to_string(),
            "git config ultragit.recencyHalfLife must be a positive number of days, not \"soon\""
        );
    }
}
