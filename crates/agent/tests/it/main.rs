//! The runner end to end over real HTTP against `testkit`'s fake servers.

mod finishing;
mod limits;
mod registry;
mod runs;
mod traces;

use std::sync::Arc;

use agent::schema::Schema;
use agent::{
    AgentError, Budgets, NullSink, Outcome, Runner, Task, ToolDef, ToolLimits, ToolOutput,
    ToolRegistry, Truncation, TruncationLimit, Validator,
};
use llm::{Auth, LlmProvider, ProviderConfig, ProviderKind, RetryPolicy, Secret};
use serde::Deserialize;
use serde_json::json;
use testkit::{FakeLlm, Flavor, Reply, runtime};

pub const KEY: &str = "sk-agent-test-KEY-9876543210-zyxwvutsR7";

/// A fake server imitating `kind`'s API that answers with `script`.
pub fn serve(kind: ProviderKind, script: Vec<Reply>) -> FakeLlm {
    let flavor = match kind {
        ProviderKind::OpenAiResponses => Flavor::OpenAiResponses,
        ProviderKind::OpenAiChat => Flavor::OpenAiChat,
        ProviderKind::Anthropic => Flavor::Anthropic,
    };
    FakeLlm::start(flavor, script)
}

pub const KINDS: [ProviderKind; 3] = [
    ProviderKind::OpenAiResponses,
    ProviderKind::OpenAiChat,
    ProviderKind::Anthropic,
];

/// A provider of `kind` for `server`, with the test key. It never retries: no
/// test here sends a retryable failure (retrying is `llm`'s business, tested
/// there), so a retry would only hide a scripting mistake.
pub fn provider(kind: ProviderKind, server: &FakeLlm) -> Arc<dyn LlmProvider> {
    let mut config = ProviderConfig::new(kind, "test-model");
    config.base_url = Some(server.base_url());
    config.auth = Auth::ApiKey(Secret::new(KEY));
    config.http.retry = RetryPolicy::immediate(1);
    llm::build_provider(config).unwrap()
}

/// Runs `task` once with the default budgets, without traces, against the fake
/// `server` (of `kind`).
pub fn run_task(
    kind: ProviderKind,
    server: &FakeLlm,
    task: &Task,
    validator: Option<&dyn Validator>,
) -> Result<Outcome, AgentError> {
    run_task_within(kind, server, Budgets::default(), task, validator)
}

/// [`run_task`] within `budgets`.
pub fn run_task_within(
    kind: ProviderKind,
    server: &FakeLlm,
    budgets: Budgets,
    task: &Task,
    validator: Option<&dyn Validator>,
) -> Result<Outcome, AgentError> {
    let provider = provider(kind, server);
    let mut sink = NullSink;
    let mut runner = Runner::new(provider.as_ref(), budgets, &mut sink);
    runtime().block_on(runner.run(task, validator))
}

/// The events a session sink wrote to `dir`, parsed.
pub fn events(dir: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("events.ndjson"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[derive(Debug, Deserialize)]
pub struct WordCountArgs {
    text: String,
}

/// Counts the words of a text.
pub const WORD_COUNT: ToolDef<(), WordCountArgs> = ToolDef {
    name: "word_count",
    description: "Counts the words of a text.",
    schema: || Schema::object().required("text", Schema::string()),
    run: |(), args, _| {
        Ok(ToolOutput::complete(
            json!({"words": args.text.split_whitespace().count()}),
        ))
    },
};

#[derive(Debug, Deserialize)]
pub struct LinesArgs {
    count: usize,
    echo: Option<String>,
}

/// Returns `count` numbered lines, honouring the line cap.
pub const LINES: ToolDef<(), LinesArgs> = ToolDef {
    name: "lines",
    description: "Returns numbered lines.",
    schema: || {
        Schema::object()
            .required("count", Schema::integer(1, 100_000))
            .optional("echo", Schema::string())
    },
    run: |(), args, limits| {
        let count = args.count;
        let shown = count.min(limits.max_lines);
        let text: String = (1..=shown).map(|i| format!("{i}| line {i}\n")).collect();
        let echo = args.echo.unwrap_or_default();
        let data = json!({"text": text, "echo": echo});
        if shown < count {
            return Ok(ToolOutput::truncated(
                data,
                Truncation {
                    limit: TruncationLimit::Lines,
                    max: limits.max_lines,
                    total: Some(count),
                    shown,
                    hint: format!("ask for lines from {} on", shown + 1),
                },
            ));
        }
        Ok(ToolOutput::complete(data))
    },
};

pub fn tools(limits: ToolLimits) -> ToolRegistry {
    ToolRegistry::new(limits)
        .with(Arc::new(WORD_COUNT.bind(())))
        .unwrap()
        .with(Arc::new(LINES.bind(())))
        .unwrap()
}
