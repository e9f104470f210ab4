//! `ultragit context set|show|clear`: the author context the next annotation
//! consumes, and how the `ULTRAGIT_*` environment variables add to it.
//!
//! `set` writes `.git/ultragit/pending-context.json` (in the common git directory,
//! so every worktree shares it). It updates the fields it is given and keeps the
//! others; `clear` starts over. The next `ultragit annotate` reads the file, lays
//! the environment variables over it ([`from_env`]: a variable that is set wins
//! over the file's field), and removes the file once the note is stored or the
//! commit was skipped as trivial (not when the annotation failed).

use std::fmt::Write as _;

use crate::invocation::Invocation;
use clap::{ArgGroup, Args, Subcommand};
use frontend::env::{ULTRAGIT_DEPENDENCIES, ULTRAGIT_REASONING, ULTRAGIT_TAGS, ULTRAGIT_TASK};
use frontend::{CommandError, Outcome};
use gitctx::Repo;
use ultragit_notes::author;
use ultragit_notes::author::AuthorContext;

/// The arguments of `ultragit context`.
#[derive(Debug, Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct ContextArgs {
    #[command(subcommand)]
    command: ContextCommand,
}

#[derive(Debug, Subcommand)]
enum ContextCommand {
    /// Record what the next commit is for; its annotation becomes `enhanced`
    Set(SetArgs),
    /// Print the author context the next annotation will use
    Show,
    /// Forget the pending author context
    Clear,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("fields").required(true).multiple(true)))]
struct SetArgs {
    /// The task the commit is part of (e.g. an issue title)
    #[arg(long, value_name = "TEXT", group = "fields")]
    task: Option<String>,

    /// Why the change is made this way: alternatives rejected, constraints known
    #[arg(long, value_name = "TEXT", group = "fields")]
    reasoning: Option<String>,

    /// What the changed code depends on, or what depends on it
    #[arg(long, value_name = "TEXT", group = "fields")]
    dependencies: Option<String>,

    /// Tags for the annotated regions (comma-separated)
    #[arg(long, value_name = "TAG,...", value_delimiter = ',', group = "fields")]
    tags: Option<Vec<String>>,
}

const AFTER_HELP: &str = "\
Examples:
  ultragit context set --task \"Retry broker connects\" --reasoning \"The broker drops the first attempt after a failover\"
  ultragit context set --tags networking,retry
  git commit -m \"Retry connect\"      # the post-commit annotation consumes the context

`set` updates the fields it is given and keeps the others. The environment variables \
ULTRAGIT_TASK, ULTRAGIT_REASONING, ULTRAGIT_DEPENDENCIES and ULTRAGIT_TAGS \
(comma-separated) work too, and win over the file's fields. The context is stored in \
.git/ultragit/pending-context.json and removed once the next annotation is stored \
(or its commit skipped as trivial).

Exit status: 0 on success, 1 on failure (not a repository, an unreadable context \
file), 2 on usage errors.";

/// Runs `ultragit context …` in the repository containing `cwd`; `lookup` reads
/// the environment.
pub fn run(args: &ContextArgs, at: &Invocation) -> Result<Outcome, CommandError> {
    let cwd = at.cwd();
    let lookup = |name: &str| at.env(name);
    let ctx = at.ctx;
    let repo = Repo::discover(cwd)?;
    let common = repo.common_dir();
    let pending = author::pending_path(&common);
    match &args.command {
        ContextCommand::Set(set) => {
            let given = AuthorContext {
                task: set.task.clone(),
                reasoning: set.reasoning.clone(),
                dependencies: set.dependencies.clone(),
                tags: set.tags.clone(),
                squash_sources: None,
            };
            let (path, _) = author::set_pending(&common, given)?;
            Ok(Outcome::text(format!(
                "recorded the author context for the next annotation in {}\n",
                path.display()
            )))
        }
        ContextCommand::Show => {
            let file = author::read_context(&pending)?;
            let env = from_env(lookup);
            let overrides = set_variables(lookup);
            let effective = file.clone().unwrap_or_default().merged_with(env);
            if effective.is_empty() {
                return Ok(Outcome::text(
                    "no author context is pending: the next annotation will be inferred\n",
                ));
            }
            let mut text = describe(&effective);
            let mut sources = Vec::new();
            if file.is_some() {
                sources.push(pending.display().to_string());
            }
            if !overrides.is_empty() {
                sources.push(format!(
                    "the environment ({}, which wins)",
                    overrides.join(", ")
                ));
            }
            let _ = writeln!(text, "(from {})", sources.join(" and "));
            Ok(Outcome::text(safe_io::term::sanitize(&text)))
        }
        ContextCommand::Clear => {
            let existed = pending.exists();
            author::discard(&pending)?;
            for name in set_variables(lookup) {
                ctx.warn(format!(
                    "{name} is set in the environment and still applies"
                ));
            }
            Ok(Outcome::text(if existed {
                "cleared the pending author context\n"
            } else {
                "no author context was pending\n"
            }))
        }
    }
}

/// The author context the `ULTRAGIT_*` variables describe (empty values count as
/// unset; tags are comma-separated).
pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> AuthorContext {
    AuthorContext {
        task: lookup(ULTRAGIT_TASK),
        reasoning: lookup(ULTRAGIT_REASONING),
        dependencies: lookup(ULTRAGIT_DEPENDENCIES),
        // An empty variable is unset, not "no tags".
        tags: non_blank(lookup(ULTRAGIT_TAGS).as_deref())
            .map(|tags| tags.split(',').map(str::to_owned).collect()),
        squash_sources: None,
    }
    .cleaned()
}

/// The `ULTRAGIT_*` variables that are set (non-empty).
fn set_variables(lookup: impl Fn(&str) -> Option<String>) -> Vec<&'static str> {
    [
        ULTRAGIT_TASK,
        ULTRAGIT_REASONING,
        ULTRAGIT_DEPENDENCIES,
        ULTRAGIT_TAGS,
    ]
    .into_iter()
    .filter(|name| non_blank(lookup(name).as_deref()).is_some())
    .collect()
}

fn non_blank(text: Option<&str>) -> Option<String> {
    text.map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
}

/// The context, one field a line.
fn describe(context: &AuthorContext) -> String {
    let mut text = String::new();
    let mut field = |name: &str, value: &Option<String>| {
        if let Some(value) = value {
            let _ = writeln!(text, "{name}: {value}");
        }
    };
    field("task", &context.task);
    field("reasoning", &context.reasoning);
    field("dependencies", &context.dependencies);
    if let Some(tags) = context.tags.as_ref().filter(|t| !t.is_empty()) {
        let _ = writeln!(text, "tags: {}", tags.join(", "));
    }
    text
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn env(vars: &[(&str, &str)]) -> AuthorContext {
        let map: HashMap<&str, &str> = vars.iter().copied().collect();
        from_env(|name| map.get(name).map(|v| v.to_string()))
    }

    #[test]
    fn reads_the_variables() {
        assert!(env(&[]).is_empty());
        assert!(env(&[("ULTRAGIT_TASK", "  ")]).is_empty());
        assert_eq!(
            env(&[
                ("ULTRAGIT_TASK", " Retry connects "),
                ("ULTRAGIT_REASONING", "failover"),
                ("ULTRAGIT_DEPENDENCIES", "probe.py"),
                ("ULTRAGIT_TAGS", "net, retry,,net"),
            ]),
            AuthorContext {
                task: Some("Retry connects".to_owned()),
                reasoning: Some("failover".to_owned()),
                dependencies: Some("probe.py".to_owned()),
                tags: Some(vec!["net".to_owned(), "retry".to_owned()]),
                squash_sources: None,
            }
        );
    }

    #[test]
    fn the_environment_wins_over_the_file() {
        let file = AuthorContext {
            task: Some("from the file".to_owned()),
            reasoning: Some("kept".to_owned()),
            ..AuthorContext::default()
        };
        let merged = file.merged_with(env(&[("ULTRAGIT_TASK", "from the environment")]));
        assert_eq!(merged.task.as_deref(), Some("from the environment"));
        assert_eq!(merged.reasoning.as_deref(), Some("kept"));
    }

    #[test]
    fn describes_the_fields_that_are_set() {
        let context = AuthorContext {
            task: Some("T".to_owned()),
            tags: Some(vec!["a".to_owned(), "b".to_owned()]),
            ..AuthorContext::default()
        };
        assert_eq!(describe(&context), "task: T\ntags: a, b\n");
    }
}
