//! The command line of `code-commit` ([`Cli`], its help) and the one run it
//! asks for ([`run`]): the settings, the loop with its progress on stderr
//! (through the runner's [`Context`], which masks the key), the outcome on
//! stdout.

use std::path::PathBuf;

use clap::Parser;
use code_commit_core::Error;
use code_commit_core::run::{self, Step};
use frontend::{CommandError, Context, ErrorKind, Outcome};

use crate::describe::describe;
use crate::settings;

#[derive(Debug, Parser)]
#[command(name = "code-commit", version, about, long_about = LONG_ABOUT, after_long_help = AFTER_HELP)]
pub struct Cli {
    /// The project directory (it holds build.sh and agent-config/)
    #[arg(long, value_name = "DIR", default_value = ".")]
    project: PathBuf,
    /// Repair rounds after the first attempt (0-10)
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=10))]
    max_repairs: u32,
    /// The build output a repair prompt carries, at most, in bytes (default:
    /// max_build_output_bytes in config.toml, else 262144); beyond it the start and
    /// the end are kept and the cut is marked
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1024..=1 << 32))]
    max_build_output_bytes: Option<u64>,
    /// When the run fails, put back exactly the files it changed and remove
    /// those it created (by default they stay for review, and the run says how
    /// to undo them)
    #[arg(long)]
    revert_on_failure: bool,
    /// Print only the outcome, not each step
    #[arg(long, short)]
    quiet: bool,
    /// Print the causes of an error (its full chain) on stderr
    #[arg(long)]
    debug: bool,
}

impl frontend::Cli for Cli {
    fn debug(&self) -> bool {
        self.debug
    }
}

const LONG_ABOUT: &str = "code-commit performs one agentic edit: it sends your query and a rollup of the code to an LLM, checks the whole-file replacements it returns, applies them all-or-nothing, runs build.sh, and asks for up to three repairs if the build fails.";

const AFTER_HELP: &str = "Files, relative to the project directory:
  agent-config/query.txt        what you want changed (required; at most 4 MiB)
  agent-config/codeRollup.txt   the codebase, as codeRollup.sh writes it (required; at most 32 MiB)
  agent-config/config.toml      provider, model, base_url, api_key_file, api_key_env, max_tokens,
                                max_build_output_bytes, build_timeout_secs, request_timeout_secs,
                                build_sandbox, build_writable (optional; at most 1 MiB)
  agent-config/api-key          the API key (optional; at most 64 KiB)
  agent-config/logs/NNNN-<time>/  one folder per run: 1-query.txt, 1-response.txt, 1-build.txt, … summary.txt
  .gitignore                    must contain the line /agent-config
  build.sh                      the build; it passes when it exits 0
Every file in agent-config/ is read only as a regular file, never through a symbolic link, and
code-commit refuses to run when git tracks anything under agent-config/ (a tracked one came with
the repository: `git rm -r --cached agent-config`).

Your own files, outside every project ($XDG_CONFIG_HOME, default ~/.config):
  ~/.config/code-commit/config.toml   the same keys; agent-config/config.toml wins key by key
  ~/.config/code-commit/api-key       the API key, kept out of every project (recommended)
The key is the first of: agent-config/api-key (or the file api_key_file names),
~/.config/code-commit/api-key, the environment variable api_key_env names (default
OPENAI_API_KEY, or ANTHROPIC_API_KEY for anthropic). It is sent only in a request header.

build.sh runs in a Landlock sandbox (Linux 5.13+): it cannot read the folder the key file is in,
and it may write only the project, the temporary directory, /dev/shm, /dev/null and friends, the
build caches ($CARGO_HOME or ~/.cargo, $RUSTUP_HOME or ~/.rustup, $XDG_CACHE_HOME or ~/.cache,
~/.npm, ~/.yarn, ~/.m2, ~/.gradle, $GOPATH or ~/go, $GOCACHE, $GOMODCACHE) and the absolute paths
in build_writable. With the key in agent-config/, files build.sh creates directly in the project
root are unreadable to it during that build (a failing build that created some is run again, up
to three times); keep the key in ~/.config/code-commit/api-key to avoid this. Without Landlock
the run says so and continues. build_sandbox = false turns the sandbox off.

Before and after every build, build.sh, .gitignore, Cargo.lock, codeRollup.sh, agent-config/
(except logs/), .git/hooks/ and .git/config are hashed: a build that changes one fails, names it,
and stops the run (cargo may update Cargo.lock after the model changed a Cargo.toml).

The model may not touch .gitignore, Cargo.lock, build.sh, codeRollup.sh, LLMInstructions.md, UserSpecification.md, .git/, agent-config/, target/ or anything .gitignore ignores; one such block rejects the whole response.

A failed run leaves its changes in the working tree for review (code-commit never stages) and
prints the files and the commands that undo them (git restore --source=HEAD --worktree -- ...,
rm -- ...). --revert-on-failure puts back exactly the files the run changed, with their earlier
content and permissions, and removes the files and directories it created; nothing else is touched.

The build output a repair prompt carries is at most max_build_output_bytes (default 262144, i.e.
256 KiB; --max-build-output-bytes overrides it): beyond it the start and the end are kept and the
cut is marked [... N bytes (M lines) of output cut here ...].

Exit status: 0 when build.sh passes; 1 when it still fails after the repair rounds, a build changed a protected file, or the run cannot start (`error: ...` on stderr; --debug adds its causes); 2 on usage errors.";

/// Text that may hold model or build output, safe for a terminal.
fn sanitize(text: &str) -> String {
    safe_io::term::sanitize(text).into_owned()
}

/// Makes this process non-dumpable: no core dump, and no other process of the
/// user (a build, a process it left behind) may read its memory or its
/// `/proc/<pid>/environ`, where a key taken from a variable sits. (A build
/// running as root can still read the environment: the kernel lets root read
/// `/proc/<pid>/environ` of a non-dumpable root process even without
/// `CAP_SYS_PTRACE`. Running as root, keep the key in a file.)
pub fn protect_process() {
    #[cfg(target_os = "linux")]
    {
        let _ =
            rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
    }
}

/// One run: the settings, then the loop.
pub fn run(cli: Cli, ctx: &Context) -> Result<Outcome, CommandError> {
    let project = std::fs::canonicalize(&cli.project).map_err(|err| {
        CommandError::from_error(ErrorKind::User, err).context(cli.project.display())
    })?;
    let inputs = run::preflight(&project)?;
    let settings::Settings {
        provider,
        redactor,
        options,
    } = settings::load(
        &project,
        &settings::Flags {
            max_repairs: cli.max_repairs,
            max_build_output_bytes: cli.max_build_output_bytes,
            revert_on_failure: cli.revert_on_failure,
        },
        ctx,
    )?;
    let quiet = cli.quiet;
    let mut progress = |step: &Step| {
        // Tampering is always shown, so is a sandbox that could not be had, and
        // what a failed run left in the working tree.
        let always = match step {
            Step::Tampered { .. } | Step::Undo(_) => true,
            Step::Sandbox { status } => status.contains("unavailable"),
            _ => false,
        };
        if !quiet || always {
            ctx.progress(describe(step, &project));
        }
    };
    let report = ctx
        .block_on(run::run(
            &project,
            &inputs,
            provider.as_ref(),
            &redactor,
            &options,
            &mut progress,
        ))?
        .map_err(|err| match err {
            Error::Provider(_) => CommandError::from(err).context("the model could not be asked"),
            _ => err.into(),
        })?;
    let mut out = String::new();
    if report.passed {
        out.push_str(&format!(
            "build.sh passed after {} attempt(s)\n",
            report.attempts
        ));
    } else {
        out.push_str(&format!(
            "failed after {} attempt(s): {}\n",
            report.attempts,
            report.failure.as_deref().unwrap_or("build.sh still fails")
        ));
    }
    for path in &report.changed {
        out.push_str(&format!("changed: {path}\n"));
    }
    out.push_str(&format!("log: {}\n", report.log_dir.display()));
    let outcome = Outcome::text(sanitize(&redactor.redact(&out)));
    Ok(if report.passed {
        outcome
    } else {
        outcome.failed()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
