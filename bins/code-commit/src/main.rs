//! `code-commit`: applies one LLM-driven code edit, checked, all-or-nothing, with build repair.
//!
//! A thin front end over `code_commit_core`, run by `frontend::run` (parsing,
//! printing, the error shape and exit codes are the same in all three
//! binaries): it resolves the settings ([`settings`]: the user's own files
//! `$XDG_CONFIG_HOME/code-commit/config.toml` and `api-key`, by default under
//! `~/.config/`, the configuration, the key, the provider, and the temporary
//! directory and build caches the sandbox lets `build.sh` write), runs the
//! loop, prints
//! progress on stderr and the outcome on stdout. A failed run that changed
//! files says on stderr, even with `--quiet`, which files it left and the
//! commands that undo them, or, with `--revert-on-failure`, what it put back. Exit status: 0 when `build.sh`
//! passes; 1 when it still fails (the outcome on stdout, no error), a build
//! tampered with a protected file, or the run cannot start (`error: …`, with
//! `--debug` its causes); 2 on usage errors. The hidden `--generate KIND` flag
//! (shell completions for `make install`) is handled by the runner before clap.
//!
//! Before anything else it makes itself non-dumpable (see [`cli::protect_process`]),
//! so `build.sh` cannot read a key from its environment or memory.
//!
//! Precedence: for each configuration key, `agent-config/config.toml` over the
//! user's `config.toml`; for the key, `agent-config/api-key` (or the file
//! `api_key_file` names) over the user's `api-key` file over the environment
//! variable `api_key_env` names. The run refuses to start when git tracks
//! anything under `agent-config/`.

mod cli;
mod describe;
mod settings;

fn main() -> std::process::ExitCode {
    cli::protect_process();
    frontend::run(std::env::args_os(), cli::run)
}
