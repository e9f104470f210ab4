//! Text of replies and of repair requests: a reply's text taken out, clipped
//! for traces and the transcript; problem lists and summaries; the default
//! check; JSON found in an answer.

use llm::{CompletionResponse, ContentBlock, StopReason};
use serde_json::Value;

use super::{REPAIR_ANSWER_MAX, REPAIR_PROBLEM_MAX, REPAIR_PROBLEMS_MAX, Validator};
use crate::clip::{clip_middle, clip_strings};

/// The reply's text and stop reason, the reply consumed: a reply of one text
/// block (the usual answer) gives its string up without a copy.
pub(super) fn into_text(response: CompletionResponse) -> (String, StopReason) {
    let CompletionResponse {
        mut content,
        stop_reason,
        raw,
        ..
    } = response;
    drop(raw);
    let texts = content
        .iter()
        .filter(|b| matches!(b, ContentBlock::Text { .. }))
        .count();
    if texts == 1
        && let Some(ContentBlock::Text { text }) = content
            .iter_mut()
            .find(|b| matches!(b, ContentBlock::Text { .. }))
    {
        return (std::mem::take(text), stop_reason);
    }
    (llm::text_of(&content), stop_reason)
}

/// The reply's text for a trace, cut to `max` bytes, without first joining a
/// long single block into a copy.
pub(super) fn clipped_text(response: &CompletionResponse, max: usize) -> String {
    let mut texts = response.content.iter().filter_map(|b| match b {
        ContentBlock::Text { text } => Some(text.as_str()),
        _ => None,
    });
    match (texts.next(), texts.next()) {
        (None, _) => String::new(),
        (Some(only), None) => clip_middle(only, max).into_owned(),
        _ => clip_middle(&response.text(), max).into_owned(),
    }
}

/// A block of a model turn as the transcript keeps it (and sends it back on
/// every later request): text and the strings of tool arguments cut to
/// [`REPAIR_ANSWER_MAX`] bytes each.
pub(super) fn transcript_block(block: &ContentBlock) -> ContentBlock {
    match block {
        ContentBlock::Text { text } => ContentBlock::Text {
            text: clip_middle(text, REPAIR_ANSWER_MAX).into_owned(),
        },
        ContentBlock::ToolUse { id, name, input } => ContentBlock::ToolUse {
            id: id.clone(),
            name: name.clone(),
            input: clip_strings(input, REPAIR_ANSWER_MAX),
        },
        other => other.clone(),
    }
}

/// The problems as a `- …` list for the repair request: at most
/// [`REPAIR_PROBLEMS_MAX`] of them, each cut to `REPAIR_PROBLEM_MAX` bytes.
pub(super) fn problem_list(problems: &[String]) -> String {
    let mut list: String = problems
        .iter()
        .take(REPAIR_PROBLEMS_MAX)
        .map(|p| format!("- {}\n", clip_middle(p, REPAIR_PROBLEM_MAX)))
        .collect();
    if problems.len() > REPAIR_PROBLEMS_MAX {
        list.push_str(&format!(
            "- … and {} more problems like these\n",
            problems.len() - REPAIR_PROBLEMS_MAX
        ));
    }
    list
}

/// The problems joined with `; ` for one line of an error message: at most
/// five, each cut to `REPAIR_PROBLEM_MAX` bytes, the rest counted.
pub fn problem_summary(problems: &[String]) -> String {
    let mut text = problems
        .iter()
        .take(5)
        .map(|p| clip_middle(p, REPAIR_PROBLEM_MAX))
        .collect::<Vec<_>>()
        .join("; ");
    if problems.len() > 5 {
        text.push_str(&format!("; and {} more", problems.len() - 5));
    }
    text
}

/// The task's validator decides; without one, any non-empty answer passes.
/// (A task whose real output is collected by its tools, like annotation, passes a
/// validator that accepts an empty final text.)
pub(super) fn check(validator: Option<&dyn Validator>, text: &str) -> Result<String, Vec<String>> {
    match validator {
        Some(v) => v.validate(text),
        None if text.trim().is_empty() => Err(vec!["the answer is empty".to_owned()]),
        None => Ok(text.to_owned()),
    }
}

/// The JSON value in a model's answer: the whole text, or the text inside a code
/// fence, or the span from the first `{`/`[` to the last `}`/`]`.
pub fn extract_json(text: &str) -> Result<Value, String> {
    let trimmed = text.trim();
    if let Ok(value) = serde_json::from_str(trimmed) {
        return Ok(value);
    }
    let fenced = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.trim_end().strip_suffix("```"));
    if let Some(inner) = fenced
        && let Ok(value) = serde_json::from_str(inner.trim())
    {
        return Ok(value);
    }
    let start = trimmed.find(['{', '[']);
    let end = trimmed.rfind(['}', ']']);
    if let (Some(start), Some(end)) = (start, end)
        && start < end
        && let Ok(value) = serde_json::from_str(&trimmed[start..=end])
    {
        return Ok(value);
    }
    Err("the answer is not valid JSON".to_owned())
}
