//! The runner end to end over real HTTP against `testkit`'s fake servers.

mod limits;
mod runs;
mod traces;

use std::sync::Arc;
use std::time::Duration;

use agent::{Tool, ToolFailure, ToolLimits, ToolOutput, ToolRegistry, Truncation, TruncationLimit};
use llm::{Auth, HttpOptions, LlmProvider, ProviderConfig, ProviderKind, RetryPolicy, Secret};
use serde_json::{Value, json};
use testkit::{FakeLlm, Flavor};

pub const KEY: &str = "sk-agent-test-KEY-9876543210-zyxwvutsR7";

pub fn flavor(kind: ProviderKind) -> Flavor {
    match kind {
        ProviderKind::OpenAiResponses => Flavor::OpenAiResponses,
        ProviderKind::OpenAiChat => Flavor::OpenAiChat,
        ProviderKind::Anthropic => Flavor::Anthropic,
    }
}

pub const KINDS: [ProviderKind; 3] = [
    ProviderKind::OpenAiResponses,
    ProviderKind::OpenAiChat,
    ProviderKind::Anthropic,
];

pub fn provider(kind: ProviderKind, server: &FakeLlm) -> Arc<dyn LlmProvider> {
    let mut config = ProviderConfig::new(kind, "test-model");
    config.base_url = Some(server.base_url());
    config.auth = Auth::ApiKey(Secret::new(KEY));
    config.http = HttpOptions {
        retry: RetryPolicy {
            max_attempts: 2,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(2),
            max_retry_after: Duration::from_millis(10),
        },
        ..HttpOptions::default()
    };
    llm::build_provider(config).unwrap()
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Counts the words of a text.
#[derive(Debug)]
pub struct WordCount;

impl Tool for WordCount {
    fn name(&self) -> &str {
        "word_count"
    }
    fn description(&self) -> &str {
        "Counts the words of a text."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": false})
    }
    fn call(&self, args: &Value, _: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
        let text = args["text"].as_str().unwrap_or_default();
        Ok(ToolOutput::complete(
            json!({"words": text.split_whitespace().count()}),
        ))
    }
}

/// Returns `count` numbered lines, honouring the line cap.
#[derive(Debug)]
pub struct Lines;

impl Tool for Lines {
    fn name(&self) -> &str {
        "lines"
    }
    fn description(&self) -> &str {
        "Returns numbered lines."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"count": {"type": "integer", "minimum": 1, "maximum": 100000}, "echo": {"type": "string"}},
               "required": ["count"], "additionalProperties": false})
    }
    fn call(&self, args: &Value, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
        let count = args["count"].as_u64().unwrap_or(0) as usize;
        let shown = count.min(limits.max_lines);
        let text: String = (1..=shown).map(|i| format!("{i}| line {i}\n")).collect();
        let echo = args.get("echo").and_then(Value::as_str).unwrap_or_default();
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
    }
}

pub fn tools(limits: ToolLimits) -> ToolRegistry {
    ToolRegistry::new(limits)
        .with(Arc::new(WordCount))
        .unwrap()
        .with(Arc::new(Lines))
        .unwrap()
}
