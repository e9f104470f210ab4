//! `code-commit`: applies one LLM-driven code edit, checked, all-or-nothing, with build repair.
//!
//! A thin front end over `code_commit_core`: it reads the configuration and the
//! key (a file under `agent-config/` or an environment variable), runs the
//! loop, prints progress on stderr and the outcome on stdout, and maps it to an
//! exit code: 0 when `build.sh` passes, 1 when it still fails or the run cannot
//! start, 2 on usage errors. The hidden `--generate KIND` flag (shell
//! completions for `make install`) is handled before clap.

// Binaries are where output happens.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use code_commit_core::run::{self, RunOptions, Step};
use code_commit_core::{Error, config};

#[derive(Debug, Parser)]
#[command(name = "code-commit", version, about, long_about = LONG_ABOUT, after_long_help = AFTER_HELP)]
struct Cli {
    /// The project directory (it holds build.sh and agent-config/)
    #[arg(long, value_name = "DIR", default_value = ".")]
    project: PathBuf,
    /// Repair rounds after the first attempt (0-10)
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=10))]
    max_repairs: u32,
    /// Print only the outcome, not each step
    #[arg(long, short)]
    quiet: bool,
}

const LONG_ABOUT: &str = "code-commit performs one agentic edit: it sends your query and a rollup of the code to an LLM, checks the whole-file replacements it returns, applies them all-or-nothing, runs build.sh, and asks for up to three repairs if the build fails.";

const AFTER_HELP: &str = "Files, relative to the project directory:
  agent-config/query.txt        what you want changed (required)
  agent-config/codeRollup.txt   the codebase, as codeRollup.sh writes it (required)
  agent-config/config.toml      provider, model, base_url, api_key_file, api_key_env, max_tokens, build_timeout_secs (optional)
  agent-config/api-key          the API key (optional; else the variable api_key_env names, default OPENAI_API_KEY)
  agent-config/logs/NNNN-<time>/  one folder per run: 1-query.txt, 1-response.txt, 1-build.txt, … summary.txt
  .gitignore                    must contain the line /agent-config
  build.sh                      the build; it passes when it exits 0

The model may not touch .gitignore, Cargo.lock, build.sh, codeRollup.sh, LLMInstructions.md, UserSpecification.md, .git/, agent-config/, target/ or anything .gitignore ignores; one such block rejects the whole response.

Exit status: 0 when build.sh passes; 1 when it still fails after the repair rounds, or the run cannot start; 2 on usage errors.";

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

fn describe(step: &Step) -> String {
    match step {
        Step::Asking { attempt: 1 } => "attempt 1: asking the model".to_owned(),
        Step::Asking { attempt } => format!("attempt {attempt}: asking the model for a repair"),
        Step::Rejected { attempt, reasons } => format!(
            "attempt {attempt}: response rejected, nothing applied:\n{}",
            reasons
                .iter()
                .map(|r| format!("  - {r}"))
                .collect::<Vec<_>>()
                .join("\n")
        ),
        Step::Applied {
            attempt,
            written,
            deleted,
        } => format!(
            "attempt {attempt}: applied {} file(s){}{}",
            written.len() + deleted.len(),
            if written.is_empty() {
                String::new()
            } else {
                format!("; written: {}", written.join(", "))
            },
            if deleted.is_empty() {
                String::new()
            } else {
                format!("; removed: {}", deleted.join(", "))
            }
        ),
        Step::Built {
            attempt,
            passed: true,
            status,
        } => format!("attempt {attempt}: build.sh passed ({status})"),
        Step::Built {
            attempt,
            passed: false,
            status,
        } => format!("attempt {attempt}: build.sh failed ({status})"),
    }
}

fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().collect();
    match frontend::generate_request(&args) {
        Some(Ok(kind)) => {
            let text = frontend::generate(kind, Cli::command());
            return frontend::output_status(std::io::stdout().write_all(&text));
        }
        Some(Err(message)) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
        None => {}
    }
    let cli = Cli::parse_from(args);
    let project = match std::fs::canonicalize(&cli.project) {
        Ok(p) => p,
        Err(err) => return fail(format!("{}: {err}", cli.project.display())),
    };
    let inputs = match run::preflight(&project) {
        Ok(inputs) => inputs,
        Err(err) => return fail(err),
    };
    let config = match config::load(&project) {
        Ok(c) => c,
        Err(err) => return fail(err),
    };
    let lookup = |name: &str| std::env::var(name).ok();
    let key = match config::key(&config, &project, lookup) {
        Ok(k) => k,
        Err(err) => return fail(err),
    };
    let mut provider_config = match config::provider_config(&config, key.clone()) {
        Ok(c) => c,
        Err(err) => return fail(err),
    };
    provider_config.http.proxy = frontend::env::proxy_config(lookup);
    let redactor = provider_config.redactor();
    let provider = match llm::build_provider(provider_config) {
        Ok(p) => p,
        Err(err) => return fail(redactor.redact(&err.to_string())),
    };
    let options = RunOptions {
        max_repairs: cli.max_repairs,
        max_tokens: config.max_tokens,
        build_timeout: config.build_timeout,
        build_remove_env: vec![
            config.api_key_env.clone(),
            frontend::env::OPENAI_API_KEY.to_owned(),
            "ANTHROPIC_API_KEY".to_owned(),
        ],
        build_scrub_values: key.iter().map(|k| k.expose().to_owned()).collect(),
        ..RunOptions::default()
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(err) => return fail(format!("cannot start the async runtime: {err}")),
    };
    let quiet = cli.quiet;
    let mut progress = |step: &Step| {
        if !quiet {
            eprintln!("{}", redactor.redact(&describe(step)));
        }
    };
    let result = runtime.block_on(run::run(
        &project,
        &inputs,
        provider.as_ref(),
        &redactor,
        &options,
        &mut progress,
    ));
    match result {
        Ok(report) => {
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
            let status = frontend::output_status(
                std::io::stdout().write_all(redactor.redact(&out).as_bytes()),
            );
            if report.passed {
                status
            } else {
                ExitCode::FAILURE
            }
        }
        Err(err) => {
            let text = match &err {
                Error::Provider(_) => format!("the model could not be asked: {err}"),
                _ => err.to_string(),
            };
            fail(redactor.redact(&text))
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
