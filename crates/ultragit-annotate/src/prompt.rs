//! The writing agent's prompts (spec 000 "System Prompt"), word for word where the
//! spec gives them.

use crate::gather::AnnotationContext;
use crate::tools;
use ultragit_notes::author::AuthorContext;

/// The base system prompt.
pub const BASE: &str =
    "You are a code annotation agent for Ultragit. Your job is to analyze a git commit
and produce structured metadata that captures the reasoning, intent, constraints,
and semantic dependencies behind the changes.

Your audience is a future AI agent that will modify this code. Write for machines:
be precise, structured, and comprehensive. Do not write prose or documentation.

For each meaningful semantic unit affected by the commit (function, method, struct,
type, impl block, configuration stanza), produce one annotation via the
emit_annotation tool. Annotations must include:

- intent: What the change accomplishes in the context of the broader task.
  Not \"added retry logic\" but \"the cloud MQTT broker silently drops idle connections
  after 30 minutes; this implements application-level heartbeats.\"
- constraints: Invariants this code protects or assumes. State explicitly.
  Mark each constraint with source \"author\" if it comes from the provided
  task context, \"inferred\" if you deduced it from code analysis.
- semantic_dependencies: Non-obvious couplings to other code. Things that
  imports and call graphs don't reveal.
- reasoning: What alternatives existed and why this path was chosen.
  Only include when the choice is non-obvious.
- risk_notes: Anything a future modifier should be cautious about.
- retires: Constraints, risks or dependency natures an earlier annotation of
  this unit recorded that this change makes untrue, copied exactly.

Skip trivial changes: formatting, import reordering, whitespace, version bumps.
Only annotate changes where a future agent would benefit from knowing the reasoning.

Use the provided tools to inspect the diff, read file contents, examine AST
structure, and check existing annotations. Do not guess about code you haven't read.";

/// Appended for `inferred` annotations (no author context).
pub(crate) const INFERRED: &str =
    "No author-provided context is available. All annotations will be inferred from
diff analysis, code structure, commit message, and surrounding context. Mark all
constraints as source: \"inferred\". Be more conservative in your claims — state
when you are uncertain.";

/// How the agent reports lines and anchors; not in the spec's template, needed
/// for annotations the read pipeline can use.
pub(crate) const MECHANICS: &str =
    "Give `lines` as numbered at this commit (as the diff and file tools show them). For
ast_anchor.name use the qualified name the AST outline gives (`MqttClient::connect`,
`Session.refresh`, a C function's plain name). Use emit_cross_cutting for groups of
regions that must change together.";

/// How the tool loop ends, and when it may record nothing: for the agent runs
/// only (the cross-chunk pass and the structured mode are told how to answer
/// in their own prompts).
pub(crate) const FINISH: &str =
    "When you have read enough, make every emit call in one reply whose text is a
one-sentence summary of the commit; the run ends there if all are accepted. If nothing
is worth annotating, call decline_annotation instead.";

/// The enhanced addition, with the author's context filled in.
pub(crate) fn enhanced(author: &AuthorContext) -> String {
    let value = |v: Option<&str>| {
        v.map(str::trim)
            .filter(|v| !v.is_empty())
            .map_or_else(|| "(not given)".to_owned(), author_field)
    };
    let tags = author
        .tags
        .as_ref()
        .filter(|t| !t.is_empty())
        .map(|t| author_field(&t.join(", ")))
        .unwrap_or_else(|| "(not given)".to_owned());
    format!(
        "The commit author has provided explicit context:
  Task: {}
  Reasoning: {}
  Dependencies: {}
  Tags: {}

This is high-value information. Incorporate it into annotations and mark
constraints derived from it as source: \"author\". This context has been verified
by the person who made the change — weight it heavily.",
        value(author.task.as_deref()),
        value(author.reasoning.as_deref()),
        value(author.dependencies.as_deref()),
        tags
    )
}

/// The most bytes of one author-context field the system prompt quotes: it is
/// sent with every request, so a long one is cut (the first message and
/// `get_commit_info` carry more of it).
pub(crate) const AUTHOR_FIELD_MAX: usize = 1_000;

/// `value` within [`AUTHOR_FIELD_MAX`] bytes, cut at a character boundary with
/// a note.
fn author_field(value: &str) -> String {
    if value.len() <= AUTHOR_FIELD_MAX {
        return value.to_owned();
    }
    let end = floor_boundary(value, AUTHOR_FIELD_MAX);
    format!(
        "{}… [{} more bytes: see the commit's context in get_commit_info]",
        &value[..end],
        value.len() - end
    )
}

/// The system prompt of an agent run (the tool loop) for a commit with (or
/// without) author context.
pub fn system_prompt(author: Option<&AuthorContext>) -> String {
    format!("{}\n{FINISH}", pass_system_prompt(author))
}

/// The system prompt without the tool loop's finishing rules ([`FINISH`]):
/// for the cross-chunk pass and the structured mode.
pub(crate) fn pass_system_prompt(author: Option<&AuthorContext>) -> String {
    let level = match author {
        Some(author) if author.has_context() => enhanced(author),
        _ => INFERRED.to_owned(),
    };
    format!("{BASE}\n\n{level}\n\n{MECHANICS}")
}

/// The first user message (spec 000 "Agent Loop", step 1), with the chunk named
/// when the commit is annotated in chunks.
pub fn user_prompt(chunk: Option<(usize, usize, &[String])>) -> String {
    let base = "Analyze the following commit and emit annotations for each meaningful semantic unit affected.";
    match chunk {
        None => base.to_owned(),
        Some((index, count, files)) => format!(
            "{base}\n\nThis commit is large, so it is annotated in {count} chunks. This is chunk {} of {count} \
             ({} remaining after it); annotate only these files: {}.",
            index + 1,
            count - index - 1,
            files.join(", ")
        ),
    }
}

/// The prompt of the cross-chunk pass: the emitted regions, for cross-cutting
/// concerns that span chunks.
pub(crate) fn cross_chunk_prompt(summaries: &str) -> String {
    format!(
        "The commit was annotated in chunks. These regions were annotated:\n{summaries}\n\
         Find groups of these regions, in different files, that must change together, \
         and record each group with emit_cross_cutting (regions as \"file:anchor\"), all \
         in one reply whose text is a one-sentence summary of the whole commit. If there \
         are none, reply with that summary alone."
    )
}

/// The single prompt of the structured-output mode (providers without tools):
/// the whole context up front.
pub(crate) fn structured_prompt(context_text: &str) -> String {
    format!(
        "Analyze the following commit and produce its annotations.\n\n{context_text}\n\n\
         Reply with one JSON object: {{\"summary\": one sentence, \"regions\": [annotations, each \
         with file, ast_anchor {{type, name, signature?}}, lines {{start, end}}, intent, and \
         optionally reasoning, constraints [{{text, source}}], semantic_dependencies \
         [{{file, anchor, nature}}], related_annotations [{{commit, anchor, relationship}}], \
         tags, risk_notes, retires], \"cross_cutting\": [{{description, regions, nature}}], \
         \"decline\": null, or, when nothing in the commit is worth annotating (no regions), \
         the reason in one sentence}}."
    )
}

/// The grounded first message: the task ([`user_prompt`]), the commit (SHA,
/// author, date, parents, message, author context or squash sources), the
/// files of this run with their change statistics, and their diff when it fits
/// `diff_budget` tokens — otherwise the per-file tool to call. Tools remain for
/// more.
///
/// Everything but the diff stays within `commit_budget` tokens (the budget's
/// `commit` share): a long message or author context is cut in the middle and
/// a long file list after the files that fit, each with a note naming the
/// tool that shows the rest (`get_commit_info`, `get_diff`). So the first
/// message never exceeds `diff_budget + commit_budget` tokens, give or take the
/// few fixed lines around them.
pub fn first_message(
    context: &AnnotationContext,
    files: &[String],
    chunk: Option<(usize, usize)>,
    diff_budget: u32,
    commit_budget: u32,
) -> String {
    grounded_message(context, files, chunk, diff_budget, commit_budget).0
}

/// [`first_message`], and whether it carries the run's whole diff and whole
/// file list (then the diff tools have nothing to add: [`tools::Scope::lean`]).
pub(crate) fn grounded_message(
    context: &AnnotationContext,
    files: &[String],
    chunk: Option<(usize, usize)>,
    diff_budget: u32,
    commit_budget: u32,
) -> (String, bool) {
    let room = commit_budget as usize * 4;
    // A chunk names its files in the task too: as many as fit a tenth.
    let named = chunk.map(|_| named_files(files, room / 10));
    let mut text = user_prompt(
        chunk
            .zip(named.as_ref())
            .map(|((index, count), named)| (index, count, named.as_slice())),
    );
    text.push_str("\n\n");
    let diffs: Vec<&gitctx::FileDiff> = files.iter().filter_map(|f| context.diff_for(f)).collect();
    let (added, deleted) = diffs
        .iter()
        .fold((0, 0), |(a, d), f| (a + f.additions, d + f.deletions));
    let header = format!(
        "\nFiles changed ({} {}, +{added} -{deleted}):\n",
        diffs.len(),
        if diffs.len() == 1 { "file" } else { "files" }
    );
    let rows: Vec<String> = diffs
        .iter()
        .map(|diff| {
            format!(
                "  {} ({}, +{} -{})\n",
                diff.path(),
                tools::status_word(diff.status),
                diff.additions,
                diff.deletions
            )
        })
        .collect();
    let commit = tools::commit_text(context);
    // What is left of the share after the task, for the commit and the list:
    // each gets what it needs when both fit, else the list at least a third.
    let left = room
        .saturating_sub(text.len() + header.len())
        .max(MIN_PART * 2);
    let listing: usize = rows.iter().map(String::len).sum();
    let listing_room = listing.min((left / 3).max(left.saturating_sub(commit.len())));
    let commit_room = left.saturating_sub(listing_room).max(MIN_PART);
    text.push_str(&cut_commit(&commit, commit_room));
    text.push_str(&header);
    let (listed, whole_list) = file_rows(&rows, listing_room.max(MIN_PART));
    text.push_str(&listed);
    let (diff, _) = tools::scope_diff(context, files);
    let tokens = agent::estimate_tokens(&diff);
    let whole_diff = tokens <= diff_budget;
    if whole_diff {
        text.push_str("\nDiff (line numbers are the file's at this commit):\n");
        text.push_str(&diff);
    } else {
        text.push_str(&format!(
            "\nThe diff (about {} tokens) is larger than this conversation's diff budget ({} \
             tokens): call get_diff_for_file with each path you need (largest first), or \
             get_file_content / get_surrounding_context for parts of a file.\n",
            tools::thousands(u64::from(tokens)),
            tools::thousands(u64::from(diff_budget))
        ));
    }
    (text, whole_diff && whole_list)
}

/// The least room, in bytes, the commit's description and the file list each
/// get however small the window: the commit's SHA, author and date lines.
const MIN_PART: usize = 256;

/// The chunk's files for the task's sentence: as many as fit `room` bytes,
/// then how many more there are.
fn named_files(files: &[String], room: usize) -> Vec<String> {
    let mut named = Vec::new();
    let mut used = 0;
    for (i, file) in files.iter().enumerate() {
        if used + file.len() + 2 > room && i > 0 {
            named.push(format!("and {} more listed below", files.len() - i));
            break;
        }
        used += file.len() + 2;
        named.push(file.clone());
    }
    named
}

/// The commit's description within `room` bytes: whole, or its head and tail
/// around a note that says how much was cut and where the rest is.
fn cut_commit(text: &str, room: usize) -> String {
    if text.len() <= room {
        return text.to_owned();
    }
    let note = |cut: usize| {
        format!(
            "\n[… {cut} bytes of the commit's message and context cut here to keep the first \
             message within the context window; call get_commit_info to read more …]\n"
        )
    };
    let keep = room.saturating_sub(note(text.len()).len());
    let head = floor_boundary(text, keep - keep / 4);
    let tail = ceil_boundary(text, text.len() - keep / 4).max(head);
    format!(
        "{}{}{}\n",
        &text[..head],
        note(tail - head),
        &text[tail..].trim_end()
    )
}

/// The rows of the file list that fit `room` bytes, then how many more there
/// are and where they are listed; and whether every row fit.
fn file_rows(rows: &[String], room: usize) -> (String, bool) {
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        if out.len() + row.len() > room {
            out.push_str(&format!(
                "  … and {} more files: get_diff lists them all, get_diff_for_file shows one\n",
                rows.len() - i
            ));
            return (out, false);
        }
        out.push_str(row);
    }
    (out, true)
}

/// The largest char boundary of `text` at or below `at`.
fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest char boundary of `text` at or above `at`.
fn ceil_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}
