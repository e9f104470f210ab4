//! The file tools: `get_file_content`, `get_ast_outline` and
//! `get_surrounding_context`, each reading the file as of the commit.

use super::*;

/// The file's text at the commit: from the context, or read from git.
fn file_at_commit(context: &AnnotationContext, path: &str) -> Result<String, ToolFailure> {
    if let Some(text) = context.file_contents.get(path) {
        return Ok(text.clone());
    }
    let repo = gitctx::Repo::open(&context.repo_root)
        .map_err(|e| ToolFailure::internal(format!("cannot open the repository: {e}")))?;
    match repo.file_at(&context.commit.sha, path) {
        Ok(bytes) if bytes.contains(&0) => Err(ToolFailure::new(
            "NOT_TEXT",
            format!("'{path}' is a binary file"),
        )),
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(gitctx::Error::PathNotFound { .. }) => Err(ToolFailure::new(
            "NOT_FOUND",
            format!(
                "'{path}' does not exist at commit {}",
                &context.commit.sha[..12]
            ),
        )),
        Err(gitctx::Error::NotAFile { .. }) => Err(ToolFailure::new(
            "NOT_A_FILE",
            format!("'{path}' is a directory"),
        )),
        Err(e) => Err(ToolFailure::internal(e.to_string())),
    }
}

pub(super) const GET_FILE_CONTENT: ToolDef<Shared, PathArgs> = ToolDef {
    name: "get_file_content",
    description: "Returns the full content of a file at the commit being annotated, with line numbers.",
    schema: PathArgs::schema,
    run: get_file_content,
};

fn get_file_content(
    shared: &Shared,
    args: PathArgs,
    limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let path = args.path()?;
    let from = args.from();
    let text = file_at_commit(&shared.context, &path)?;
    let total = text.lines().count();
    Ok(capped(
        "content",
        numbered(&text, from, total),
        json!({"path": path, "lines": total}),
        limits,
        |n| {
            format!(
                "the file was cut; call get_file_content with path={path} and offset={}",
                from + n - 1
            )
        },
    ))
}

pub(super) const GET_AST_OUTLINE: ToolDef<Shared, PathArgs> = ToolDef {
    name: "get_ast_outline",
    description: "Returns the structural outline of a file: functions, types, methods, impl blocks with names, signatures, and line ranges.",
    schema: PathArgs::schema,
    run: get_ast_outline,
};

fn get_ast_outline(
    shared: &Shared,
    args: PathArgs,
    limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let path = args.path()?;
    let from = args.from();
    let context = &shared.context;
    let units = match context.ast_outlines.get(&path) {
        Some(units) => Some(units.clone()),
        None => {
            let text = file_at_commit(context, &path)?;
            outline::outline(&path, &text).ok()
        }
    };
    let Some(units) = units else {
        return Ok(ToolOutput::complete(json!({
            "path": path,
            "outline": null,
            "message": "AST parsing is not available for this file type. Annotate it by line ranges: use ast_anchor type \"config\" (or the closest kind) with a name that identifies the block, and give its lines."
        })));
    };
    let room = limits.max_bytes.saturating_sub(TRUNCATION_OVERHEAD);
    let mut outline: Vec<String> = Vec::new();
    let mut bytes = 0;
    for unit in units.iter().skip(from - 1) {
        let entry = unit.to_string();
        // Its size in the JSON answer: quoted, escaped, and a comma.
        bytes += serde_json::to_string(&entry).map_or(entry.len() + 2, |json| json.len()) + 1;
        if bytes > room || outline.len() >= limits.max_entries {
            break;
        }
        outline.push(entry);
    }
    let shown = outline.len();
    let rest = units.len().saturating_sub(from - 1);
    let data = json!({"path": path, "format": OUTLINE_FORMAT, "outline": outline});
    if shown >= rest {
        return Ok(ToolOutput::complete(data));
    }
    Ok(ToolOutput::truncated(
        data,
        Truncation {
            limit: TruncationLimit::Bytes,
            max: limits.max_bytes,
            total: Some(units.len()),
            shown,
            hint: format!(
                "the outline was cut; call get_ast_outline with path={path} and offset={}",
                from + shown
            ),
        },
    ))
}

/// How an outline unit reads in `get_ast_outline`'s answer (`Unit`'s
/// `Display`: one line per unit, a third of the bytes of a JSON object, on
/// every later request of the conversation).
const OUTLINE_FORMAT: &str = "L<start>-<end> <kind> <name> | <signature>";

/// The arguments of `get_surrounding_context`.
#[derive(Debug, Deserialize)]
pub(super) struct SurroundingArgs {
    path: String,
    line: usize,
    radius: Option<usize>,
}

pub(super) const GET_SURROUNDING_CONTEXT: ToolDef<Shared, SurroundingArgs> = ToolDef {
    name: "get_surrounding_context",
    description: "Returns lines around a specific point in a file. Useful for understanding the neighborhood of a change without reading the entire file.",
    schema: || {
        Schema::object()
            .required("path", Schema::string().description(PATH_DESCRIPTION))
            .required(
                "line",
                Schema::integer(1, MAX_LINE).description("Center line number."),
            )
            .optional(
                "radius",
                Schema::integer(0, 500)
                    .description("Number of lines above and below to include. Default: 20."),
            )
    },
    run: get_surrounding_context,
};

fn get_surrounding_context(
    shared: &Shared,
    args: SurroundingArgs,
    limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let path = clean_path("path", &args.path)?;
    let line = args.line;
    let radius = args.radius.unwrap_or(20);
    let text = file_at_commit(&shared.context, &path)?;
    let total = text.lines().count();
    if line > total.max(1) {
        return Err(ToolFailure::invalid_argument(format!(
            "line {line} is past the end of '{path}' ({total} lines)"
        )));
    }
    let from = line.saturating_sub(radius).max(1);
    let to = (line + radius).min(total);
    Ok(capped(
        "content",
        numbered(&text, from, to),
        json!({"path": path, "from": from, "to": to, "lines": total}),
        limits,
        |n| {
            format!(
                "the lines were cut; ask for a smaller radius, or call get_file_content with path={path} and offset={}",
                from + n - 1
            )
        },
    ))
}
