//! `search_code`: a bounded `git grep` in the commit's tree.

use super::*;

/// The arguments of `search_code`.
#[derive(Debug, Deserialize)]
pub(super) struct SearchArgs {
    pattern: String,
    path: Option<String>,
    regex: Option<bool>,
    max_results: Option<usize>,
}

/// The longest matched line `search_code` shows, in characters.
const SEARCH_LINE_MAX: usize = 200;

/// The most output `search_code` reads from `git grep`: `--max-count` bounds
/// the matches per file, not in all, so a common pattern in a large tree
/// (or one long minified line) could otherwise produce any amount. Past it
/// git is stopped and the lines read so far are the answer.
const SEARCH_OUTPUT_MAX: usize = 256 * 1024;

pub(super) const SEARCH_CODE: ToolDef<Shared, SearchArgs> = ToolDef {
    name: "search_code",
    description: "git grep in the commit's files: path:line: text, to find callers, definitions, uses.",
    schema: || {
        Schema::object()
            .required(
                "pattern",
                Schema::string().description("Fixed text, unless regex."),
            )
            .optional(
                "path",
                Schema::string().description("Path prefix (e.g. src/net)."),
            )
            .optional(
                "regex",
                Schema::boolean().description("pattern is a POSIX ERE. Default: false."),
            )
            .optional(
                "max_results",
                Schema::integer(1, 200).description("Most lines. Default: 50."),
            )
    },
    run: search_code,
};

fn search_code(
    shared: &Shared,
    args: SearchArgs,
    limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    if args.pattern.is_empty() || args.pattern.len() > 500 || args.pattern.contains('\n') {
        return Err(ToolFailure::invalid_argument(
            "pattern must be one line of 1 to 500 bytes",
        ));
    }
    let prefix = match args
        .path
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        Some(path) => {
            let path = clean_path("path", path)?;
            if path.starts_with('/') || path.split('/').any(|c| c == "..") {
                return Err(ToolFailure::invalid_argument(format!(
                    "path '{path}' must be relative and stay inside the repository"
                )));
            }
            Some(path)
        }
        None => None,
    };
    let max = args
        .max_results
        .unwrap_or(50)
        .min(limits.max_entries)
        .max(1);
    let context = &shared.context;
    let repo = open_repo(context)?;
    let mut command = repo
        .git()
        .args(["grep", "-n", "-I", "--no-color", "--full-name"])
        .arg(if args.regex.unwrap_or(false) {
            "-E"
        } else {
            "-F"
        })
        // One more than shown, to tell that more lines match.
        .arg(format!("--max-count={}", max + 1))
        .arg("-e")
        .arg(&args.pattern)
        .arg(&context.commit.sha)
        .arg("--")
        .timeout(std::time::Duration::from_secs(20))
        .max_stdout(SEARCH_OUTPUT_MAX);
    if let Some(prefix) = &prefix {
        // gitctx runs git with literal pathspecs: a prefix is a path, never a glob.
        command = command.arg(prefix);
    }
    let output = command
        .run_unchecked()
        .map_err(|e| ToolFailure::internal(e.to_string()))?;
    // Stopped at the bound: more lines match than were read.
    let stopped = output.stdout.len() >= SEARCH_OUTPUT_MAX;
    match output.status.code() {
        _ if stopped => {}
        Some(0) | Some(1) => {}
        _ => {
            let message = String::from_utf8_lossy(&output.stderr);
            return Err(ToolFailure::invalid_argument(format!(
                "git grep refused the search: {}",
                message.lines().next().unwrap_or("unknown error")
            )));
        }
    }
    let mut stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if stopped {
        // The last line may be cut anywhere.
        stdout.truncate(stdout.rfind('\n').map_or(0, |end| end + 1));
    }
    let tree = format!("{}:", context.commit.sha);
    let all: Vec<String> = stdout
        .lines()
        .map(|line| {
            let line = line.strip_prefix(&tree).unwrap_or(line);
            if line.chars().count() > SEARCH_LINE_MAX {
                let cut: String = line.chars().take(SEARCH_LINE_MAX).collect();
                format!("{cut}…")
            } else {
                line.to_owned()
            }
        })
        .collect();
    // Stopped early: at least one more line matches than were read.
    let total = all.len() + usize::from(stopped);
    let text: String = all.iter().take(max).map(|l| format!("{l}\n")).collect();
    if total == 0 {
        return Ok(ToolOutput::complete(json!({
            "matches": "",
            "note": format!("no line matches '{}'", args.pattern),
        })));
    }
    let mut output = capped(
        "matches",
        text,
        json!({"count": all.len().min(max)}),
        limits,
        |n| {
            format!(
                "the matches were cut after {} lines; narrow the search with path or a longer pattern",
                n - 1
            )
        },
    );
    if (total > max || stopped) && output.truncation.is_none() {
        output.truncation = Some(Truncation {
            limit: TruncationLimit::Entries,
            max,
            total: None,
            shown: all.len().min(max),
            hint: "more lines match; narrow the search with path or a longer pattern, or raise max_results".to_owned(),
        });
    }
    Ok(output)
}
