//! code-commit's settings, resolved in one place before the run starts.
//!
//! - The user's own files, outside every project:
//!   `$XDG_CONFIG_HOME/code-commit/config.toml` and `api-key` (by default under
//!   `~/.config/`; a relative `$XDG_CONFIG_HOME` is ignored, as the XDG
//!   specification asks).
//! - The configuration (`code_commit_core::config::load`, one table resolved by
//!   `layered-config`): for each key the flag (`--max-build-output-bytes`) over
//!   `agent-config/config.toml` over the user's `config.toml` over the defaults (`llm::defaults` for the model and the key
//!   variable); `build_writable` lists are joined.
//! - The key (`code_commit_core::config::key`): `agent-config/api-key` (or the
//!   file `api_key_file` names) over the user's `api-key` file over the
//!   environment variable `api_key_env` names.
//! - The provider, with the proxies of the usual variables
//!   (`frontend::env::proxy_config`), and its redactor.
//! - The run's options: the build's environment without any key variable or the
//!   key's value, and the sandbox: what `build.sh` may write (the project, the
//!   temporary directory, the build caches, `build_writable`) and the folder of
//!   the key file it may not read.
//!
//! The variables read are constants in `frontend::env`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use code_commit_core::build::BuildOptions;
use code_commit_core::config::{self, Config, KeySource, UserFiles};
use code_commit_core::run::RunOptions;
use code_commit_core::sandbox::SandboxPolicy;
use frontend::{CommandError, Context, env};
use llm::{LlmProvider, ProviderKind, Redactor};

/// Caches under the home directory build.sh may write, besides those the
/// variables of `frontend::env` name.
const HOME_CACHES: &[&str] = &[".npm", ".yarn", ".m2", ".gradle"];

/// What a run needs from its settings.
pub struct Settings {
    pub provider: Arc<dyn LlmProvider>,
    /// Masks the key in everything printed.
    pub redactor: Redactor,
    pub options: RunOptions,
}

/// What the command line sets for the run (over the configuration).
pub struct Flags {
    /// Repair rounds after the first attempt.
    pub max_repairs: u32,
    /// The build output a repair prompt carries: the flags layer over
    /// `max_build_output_bytes` in the files.
    pub max_build_output_bytes: Option<u64>,
    /// A failed run puts back the files it changed.
    pub revert_on_failure: bool,
}

/// Resolves the settings for a run in `project` (canonical) with `flags`. From
/// the moment the key is known, `ctx` masks it in every message.
pub fn load(project: &Path, flags: &Flags, ctx: &Context) -> Result<Settings, CommandError> {
    let lookup = |name: &str| std::env::var(name).ok();
    let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
    // An absolute path from a variable (relative values are ignored, as the XDG
    // specification asks).
    let var_path = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute());

    let user = user_files(&var_path);
    let config = config::load(
        project,
        &user,
        &config::Flags {
            max_build_output_bytes: flags.max_build_output_bytes,
        },
    )?;
    let (key, key_source) = config::key(&config, project, &user, lookup)?;
    let mut provider_config = config::provider_config(&config, key.clone())?;
    provider_config.http.proxy = env::proxy_config(lookup);
    let (provider, redactor) = frontend::provider::connect(provider_config, ctx)?;

    let temp = std::env::temp_dir();
    let mut build_remove_env = vec![config.api_key_env.clone()];
    build_remove_env.extend(
        ProviderKind::DEFAULT_KEY_VARIABLES
            .iter()
            .map(|name| (*name).to_owned()),
    );
    let options = RunOptions {
        max_repairs: flags.max_repairs,
        max_tokens: config.max_tokens,
        build_output_bytes: config.max_build_output_bytes,
        revert_on_failure: flags.revert_on_failure,
        build: BuildOptions {
            timeout: config.build_timeout,
            remove_env: build_remove_env,
            scrub_values: key.iter().map(|k| k.expose().to_owned()).collect(),
            sandbox: sandbox(&config, project, &key_source, &temp, &var_path),
            temp_root: Some(temp),
        },
    };
    Ok(Settings {
        provider,
        redactor,
        options,
    })
}

/// The user's own code-commit files.
fn user_files(var_path: &impl Fn(&str) -> Option<PathBuf>) -> UserFiles {
    let home = var_path(env::HOME);
    let config_home = var_path(env::XDG_CONFIG_HOME).or_else(|| home.map(|h| h.join(".config")));
    match config_home {
        Some(dir) => {
            let dir = dir.join("code-commit");
            UserFiles {
                config: Some(dir.join("config.toml")),
                key: Some(dir.join("api-key")),
            }
        }
        None => UserFiles::default(),
    }
}

/// The sandbox `build.sh` runs in, unless the configuration turns it off.
fn sandbox(
    config: &Config,
    project: &Path,
    key_source: &KeySource,
    temp: &Path,
    var_path: &impl Fn(&str) -> Option<PathBuf>,
) -> Option<SandboxPolicy> {
    config.build_sandbox.then(|| {
        SandboxPolicy::new(
            project,
            denied(project, key_source),
            writable(temp, &config.build_writable, var_path),
        )
    })
}

/// What build.sh may write besides the project: the temporary directory, the
/// build caches and `extra`.
fn writable(
    temp: &Path,
    extra: &[PathBuf],
    var_path: &impl Fn(&str) -> Option<PathBuf>,
) -> Vec<PathBuf> {
    let home = var_path(env::HOME);
    let under_home = |rel: &str| home.as_ref().map(|h| h.join(rel));
    let mut out = vec![temp.to_path_buf()];
    out.extend(var_path(env::CARGO_HOME).or_else(|| under_home(".cargo")));
    out.extend(var_path(env::RUSTUP_HOME).or_else(|| under_home(".rustup")));
    out.extend(var_path(env::XDG_CACHE_HOME).or_else(|| under_home(".cache")));
    out.extend(HOME_CACHES.iter().filter_map(|rel| under_home(rel)));
    out.extend(var_path(env::GOPATH).or_else(|| under_home("go")));
    out.extend(var_path(env::GOCACHE));
    out.extend(var_path(env::GOMODCACHE));
    out.extend(extra.iter().cloned());
    out
}

/// What build.sh must not read: the folder the key file is in.
fn denied(project: &Path, source: &KeySource) -> Vec<PathBuf> {
    match source {
        KeySource::ProjectFile(_) => vec![project.join(config::CONFIG_DIR)],
        KeySource::UserFile(path) => path.parent().map(Path::to_path_buf).into_iter().collect(),
        KeySource::Env(_) | KeySource::None => Vec::new(),
    }
}
