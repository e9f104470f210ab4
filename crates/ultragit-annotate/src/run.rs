//! The agent loop and assembly (spec 000 "Agent Loop", "Large Diff Chunking
//! Strategy", "Annotation Validation", step 8 "Structured-output fallback").
//!
//! - **Turns:** one model call is one turn; a run makes at most `maxAgentTurns`
//!   calls: the tool loop gets `maxAgentTurns - 1` of them and, if it is still
//!   calling tools then, one last call without tools finishes the run (its text is
//!   the summary). Whatever was emitted by then is kept: partial results, with a
//!   warning.
//! - **Stop reasons:** `end_turn` ends the run; `max_tokens` ends it too, keeping
//!   what was emitted (a warning says the answer was cut).
//! - **Chunks:** a commit touching more than 10 files or more than `maxDiffLines`
//!   changed lines is annotated in chunks: files sorted by changed lines
//!   (descending) and grouped `chunkSize` at a time, each chunk under 1,500 changed
//!   lines (a larger file is a chunk of its own). One agent run per chunk; then one
//!   more call that sees every emitted region and records cross-cutting concerns
//!   spanning chunks.
//! - **Structured output:** a provider without tool use gets one prompt with the
//!   whole context and answers with one JSON document, validated with one repair
//!   pass.
//! - **Assembly:** `$schema`, commit, timestamp (now, UTC), task, summary, context
//!   level, regions (exact duplicates removed — the last emission of a region wins),
//!   cross-cutting concerns (deduplicated), provenance (`initial`, or `squash` with
//!   `derived_from` when squash sources were given); then validation strips invalid
//!   regions with a warning and keeps the rest.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent::{Budgets, Runner, StructuredTask, Task, TraceSink};
use llm::{LlmProvider, Message, StopReason};
use serde_json::{Value, json};
use ultragit_schema::{
    Annotation, CrossCuttingConcern, Provenance, ProvenanceOperation, RegionAnnotation, SCHEMA_V1,
    ValidationContext,
};

use crate::config::{AnnotateConfig, CHUNK_FILE_THRESHOLD, CHUNK_LINE_BUDGET};
use crate::error::AgentError;
use crate::gather::AnnotationContext;
use crate::prompt;
use crate::tools::{self, Collected, Collector, Scope};

/// What an agent run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Annotated {
    pub annotation: Annotation,
    /// Validation problems that removed regions, partial-result notices.
    pub warnings: Vec<String>,
    /// Model calls made.
    pub turns: u32,
    /// The turn or token budget cut the run short.
    pub partial: bool,
}

/// The time one agent run may take, all model calls included.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Annotates the commit of `context` (spec 000 `annotate_commit`).
pub async fn annotate_commit(
    context: &AnnotationContext,
    provider: &dyn LlmProvider,
    config: &AnnotateConfig,
    trace: &mut dyn TraceSink,
) -> Result<Annotated, AgentError> {
    if !provider.supports_tool_use() {
        return structured(context, provider, config, trace).await;
    }
    let shared = Arc::new(context.clone());
    let collector: Collector = Arc::new(Mutex::new(Collected::default()));
    let chunks = plan_chunks(context, config);
    let chunked = chunks.len() > 1;
    let mut turns = 0;
    let mut summaries = Vec::new();
    let mut warnings = Vec::new();
    let mut ran_out = false;
    let mut cut_short = false;
    for (index, files) in chunks.iter().enumerate() {
        let lines: u32 = files
            .iter()
            .filter_map(|f| context.diff_for(f))
            .map(gitctx::FileDiff::changed_lines)
            .sum();
        let scope = Scope {
            files: files.clone(),
            summarize_diff: lines > config.max_diff_lines || (chunked && lines > CHUNK_LINE_BUDGET),
        };
        let task = Task {
            name: if chunked {
                format!("annotate chunk {}/{}", index + 1, chunks.len())
            } else {
                "annotate".to_owned()
            },
            system: prompt::system_prompt(context.author_context.as_ref()),
            messages: vec![Message::user(prompt::user_prompt(chunked.then_some((
                index,
                chunks.len(),
                files.as_slice(),
            ))))],
            tools: tools::registry(shared.clone(), scope, collector.clone()),
            format_reminder: "Reply with a one-sentence summary of the commit.".to_owned(),
            json_format: None,
        };
        let outcome = run(provider, config, trace, &task).await?;
        turns += outcome.steps;
        if outcome.finalized {
            ran_out = true;
            warnings.push(format!(
                "the agent used all {} turns{}; the annotations emitted so far are kept",
                config.max_agent_turns,
                if chunked {
                    format!(" on chunk {}", index + 1)
                } else {
                    String::new()
                }
            ));
        }
        if outcome.stop_reason == StopReason::MaxTokens {
            cut_short = true;
            warnings.push(format!(
                "an answer hit the {}-token limit; the annotations emitted so far are kept",
                config.max_tokens_per_response
            ));
        }
        if !outcome.output.trim().is_empty() {
            summaries.push(outcome.output);
        }
    }
    let mut collected = collector.lock().unwrap_or_else(|p| p.into_inner()).clone();
    if collected.regions.is_empty() {
        return Err(if cut_short {
            AgentError::TokenBudgetExceeded {
                budget: config.max_tokens_per_response,
            }
        } else if ran_out {
            AgentError::MaxTurnsExceeded {
                max_turns: config.max_agent_turns,
            }
        } else {
            AgentError::NoAnnotations { turns }
        });
    }
    if chunked {
        let (summary, steps) =
            cross_chunk_pass(provider, config, trace, context, &collector, &collected).await?;
        turns += steps;
        collected = collector.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(summary) = summary {
            summaries.insert(0, summary);
        }
    }
    let summary = summarize(summaries.first().map(String::as_str), &collected.regions);
    let (annotation, mut problems) =
        assemble(context, collected.regions, collected.cross_cutting, summary);
    warnings.append(&mut problems);
    if annotation.regions.is_empty() {
        return Err(AgentError::NoAnnotations { turns });
    }
    Ok(Annotated {
        annotation,
        warnings,
        turns,
        partial: ran_out || cut_short,
    })
}

/// One agent run with the writing agent's budgets.
async fn run(
    provider: &dyn LlmProvider,
    config: &AnnotateConfig,
    trace: &mut dyn TraceSink,
    task: &Task,
) -> Result<agent::Outcome, AgentError> {
    let budgets = Budgets {
        max_steps: config.max_agent_turns.saturating_sub(1).max(1),
        max_tool_calls: config.max_agent_turns.saturating_mul(20),
        tool_limits: tools::LIMITS,
        overall_timeout: RUN_TIMEOUT,
        max_tokens: Some(config.max_tokens_per_response),
    };
    // The annotations are what the tools collect; the final text (the summary)
    // may be empty.
    let accept_any = |text: &str| -> Result<String, Vec<String>> { Ok(text.trim().to_owned()) };
    let mut runner = Runner::new(provider, budgets, trace);
    match runner.run(task, Some(&accept_any)).await {
        Ok(outcome) => Ok(outcome),
        Err(agent::AgentError::Provider(err)) => Err(AgentError::Provider(err)),
        Err(agent::AgentError::Timeout { after }) => Err(AgentError::Timeout {
            seconds: after.as_secs(),
        }),
        // Still calling tools when told to stop: keep what was emitted.
        Err(agent::AgentError::KeptCallingTools) => Ok(agent::Outcome {
            output: String::new(),
            steps: config.max_agent_turns,
            tool_calls: 0,
            finalized: true,
            repaired: false,
            stop_reason: StopReason::ToolUse,
            usage: Default::default(),
            transcript: Vec::new(),
        }),
        Err(other) => Err(AgentError::InvalidAnnotation {
            message: other.to_string(),
        }),
    }
}

/// Files grouped for chunked annotation; one group for an ordinary commit.
pub fn plan_chunks(context: &AnnotationContext, config: &AnnotateConfig) -> Vec<Vec<String>> {
    let files = context.paths();
    let total = context.changed_lines();
    if files.len() <= CHUNK_FILE_THRESHOLD && total <= config.max_diff_lines {
        return vec![files];
    }
    let mut sized: Vec<(String, u32)> = context
        .diffs
        .iter()
        .map(|d| (d.path().to_owned(), d.changed_lines()))
        .collect();
    sized.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let per_chunk = config.chunk_size.max(1) as usize;
    let mut chunks: Vec<Vec<String>> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut current_lines = 0;
    for (path, lines) in sized {
        let full = current.len() >= per_chunk
            || (current_lines + lines > CHUNK_LINE_BUDGET && !current.is_empty());
        if full {
            chunks.push(std::mem::take(&mut current));
            current_lines = 0;
        }
        current.push(path);
        current_lines += lines;
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks
}

/// The call that looks across chunks for cross-cutting concerns. Returns its
/// summary and the turns it took.
async fn cross_chunk_pass(
    provider: &dyn LlmProvider,
    config: &AnnotateConfig,
    trace: &mut dyn TraceSink,
    context: &AnnotationContext,
    collector: &Collector,
    collected: &Collected,
) -> Result<(Option<String>, u32), AgentError> {
    let mut listing = String::new();
    for region in &collected.regions {
        listing.push_str(&format!(
            "- {}:{} — {}\n",
            region.file, region.ast_anchor.name, region.intent
        ));
    }
    let task = Task {
        name: "annotate cross-chunk".to_owned(),
        system: prompt::system_prompt(context.author_context.as_ref()),
        messages: vec![Message::user(prompt::cross_chunk_prompt(&listing))],
        tools: tools::cross_cutting_registry(collector.clone()),
        format_reminder: "Reply with a one-sentence summary of the commit.".to_owned(),
        json_format: None,
    };
    let outcome = run(provider, config, trace, &task).await?;
    let summary = Some(outcome.output)
        .filter(|s| !s.trim().is_empty() && !s.trim().eq_ignore_ascii_case("none"));
    Ok((summary, outcome.steps))
}

/// The summary: the model's final text (first paragraph, at most 400 characters),
/// or one made from the intents.
fn summarize(text: Option<&str>, regions: &[RegionAnnotation]) -> String {
    if let Some(text) = text {
        let first = text.trim().split("\n\n").next().unwrap_or("").trim();
        if !first.is_empty() {
            return clip(first, 400);
        }
    }
    let intents: Vec<&str> = regions.iter().map(|r| r.intent.trim()).take(3).collect();
    clip(&intents.join("; "), 400)
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// Builds and validates the annotation. Returns it with the validation warnings.
pub fn assemble(
    context: &AnnotationContext,
    regions: Vec<RegionAnnotation>,
    cross_cutting: Vec<CrossCuttingConcern>,
    summary: String,
) -> (Annotation, Vec<String>) {
    let mut unique: Vec<RegionAnnotation> = Vec::new();
    for region in regions {
        let same = |r: &RegionAnnotation| {
            r.file == region.file
                && r.ast_anchor.name == region.ast_anchor.name
                && r.lines == region.lines
        };
        match unique.iter_mut().find(|r| same(r)) {
            Some(existing) => *existing = region,
            None => unique.push(region),
        }
    }
    let mut concerns: Vec<CrossCuttingConcern> = Vec::new();
    for concern in cross_cutting {
        if !concerns
            .iter()
            .any(|c| c.description == concern.description && c.regions == concern.regions)
        {
            concerns.push(concern);
        }
    }
    let author = context.author_context.as_ref();
    let sources: Vec<String> = author
        .and_then(|a| a.squash_sources.clone())
        .unwrap_or_default();
    let provenance = if sources.is_empty() {
        Provenance::initial()
    } else {
        let preserved = context.recent_annotations.iter().any(|e| {
            sources
                .iter()
                .any(|s| e.commit_sha.starts_with(s.as_str()) || s == &e.commit_sha)
        });
        Provenance {
            operation: ProvenanceOperation::Squash,
            derived_from: sources,
            original_annotations_preserved: preserved,
            synthesis_notes: None,
        }
    };
    let mut annotation = Annotation {
        schema: SCHEMA_V1.to_owned(),
        commit: context.commit.sha.clone(),
        timestamp: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        task: author
            .and_then(|a| a.task.clone())
            .filter(|t| !t.trim().is_empty()),
        summary,
        context_level: context.context_level(),
        regions: unique,
        cross_cutting: concerns,
        provenance,
        corrections: Vec::new(),
    };
    let files = tools::commit_files(context);
    let problems = annotation.strip_invalid(&ValidationContext {
        expected_commit: Some(&context.commit.sha),
        commit_files: Some(&files),
    });
    let warnings = problems
        .iter()
        .map(|p| format!("dropped an invalid annotation: {p}"))
        .collect();
    (annotation, warnings)
}

/// The structured-output mode: the whole context in one prompt, one JSON answer.
async fn structured(
    context: &AnnotationContext,
    provider: &dyn LlmProvider,
    config: &AnnotateConfig,
    trace: &mut dyn TraceSink,
) -> Result<Annotated, AgentError> {
    let task = StructuredTask {
        name: "annotate (structured)".to_owned(),
        system: prompt::system_prompt(context.author_context.as_ref()),
        messages: vec![Message::user(prompt::structured_prompt(&context_text(
            context, config,
        )))],
        schema_name: "ultragit_annotation".to_owned(),
        schema: structured_schema(),
    };
    let budgets = Budgets {
        max_steps: 1,
        max_tool_calls: 0,
        tool_limits: tools::LIMITS,
        overall_timeout: RUN_TIMEOUT,
        max_tokens: Some(config.max_tokens_per_response),
    };
    let mut runner = Runner::new(provider, budgets, trace);
    let (value, outcome) = runner
        .run_structured(&task)
        .await
        .map_err(|err| match err {
            agent::AgentError::Provider(err) => AgentError::Provider(err),
            agent::AgentError::Timeout { after } => AgentError::Timeout {
                seconds: after.as_secs(),
            },
            other => AgentError::InvalidAnnotation {
                message: other.to_string(),
            },
        })?;
    let mut dropped = Vec::new();
    let regions: Vec<RegionAnnotation> = items(&value, "regions", &mut dropped);
    let cross_cutting: Vec<CrossCuttingConcern> = items(&value, "cross_cutting", &mut dropped);
    if regions.is_empty() {
        return Err(AgentError::NoAnnotations {
            turns: outcome.steps,
        });
    }
    let summary = summarize(value["summary"].as_str(), &regions);
    let (annotation, mut warnings) = assemble(context, regions, cross_cutting, summary);
    if annotation.regions.is_empty() {
        return Err(AgentError::NoAnnotations {
            turns: outcome.steps,
        });
    }
    dropped.append(&mut warnings);
    Ok(Annotated {
        annotation,
        warnings: dropped,
        turns: outcome.steps,
        partial: false,
    })
}

/// The entries of the array `value[key]` that read as `T`; each one that does not
/// is reported in `dropped` (the schema check makes that rare, not impossible).
fn items<T: serde::de::DeserializeOwned>(
    value: &Value,
    key: &str,
    dropped: &mut Vec<String>,
) -> Vec<T> {
    let Some(entries) = value[key].as_array() else {
        return Vec::new();
    };
    entries
        .iter()
        .enumerate()
        .filter_map(|(i, item)| match serde_json::from_value(item.clone()) {
            Ok(parsed) => Some(parsed),
            Err(err) => {
                dropped.push(format!(
                    "dropped {key}[{i}] of the structured answer: {err}"
                ));
                None
            }
        })
        .collect()
}

/// The JSON Schema of the structured answer.
pub(crate) fn structured_schema() -> Value {
    let region = tools::emit_annotation_schema();
    json!({
        "type": "object",
        "properties": {
            "summary": {"type": "string"},
            "regions": {"type": "array", "items": region},
            "cross_cutting": {"type": "array", "items": tools::emit_cross_cutting_schema()}
        },
        "required": ["summary", "regions", "cross_cutting"],
        "additionalProperties": false
    })
}

/// The context of the structured prompt: commit, author context, diff (or its
/// summary past `maxDiffLines`), outlines, recent annotations.
fn context_text(context: &AnnotationContext, config: &AnnotateConfig) -> String {
    let commit = &context.commit;
    let mut text = format!(
        "Commit {}\nAuthor: {}\nDate: {}\n\nMessage:\n{}\n",
        commit.sha,
        commit.author,
        commit.timestamp.to_rfc3339(),
        commit.message.trim_end()
    );
    if let Some(author) = &context.author_context {
        if author.has_context() {
            text.push_str(&format!(
                "\nAuthor context: {}\n",
                serde_json::to_string(author).unwrap_or_default()
            ));
        } else if let Some(sources) = author.squash_sources.as_ref().filter(|s| !s.is_empty()) {
            text.push_str(&format!("\nSquashed from: {}\n", sources.join(", ")));
        }
    }
    text.push_str("\nDiff (line numbers are the file's at this commit):\n");
    if context.changed_lines() > config.max_diff_lines {
        text.push_str(&tools::diff_summary(context, &context.paths()));
    } else {
        for diff in &context.diffs {
            text.push_str(&tools::render_file_diff(diff));
        }
    }
    for (path, units) in &context.ast_outlines {
        text.push_str(&format!("\nOutline of {path}:\n"));
        for unit in units {
            text.push_str(&format!(
                "  {} {} (lines {}-{})\n",
                unit.kind.as_str(),
                unit.qualified_name,
                unit.lines.start,
                unit.lines.end
            ));
        }
    }
    if !context.recent_annotations.is_empty() {
        text.push_str("\nRecent annotations of these files:\n");
        for existing in context.recent_annotations.iter().take(10) {
            for region in &existing.annotation.regions {
                text.push_str(&format!(
                    "  {} {}:{} — {}\n",
                    &existing.commit_sha[..existing.commit_sha.len().min(12)],
                    region.file,
                    region.ast_anchor.name,
                    region.intent
                ));
            }
        }
    }
    text
}
