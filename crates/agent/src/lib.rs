//! `agent`: the bounded tool loop every LLM task runs through.
//!
//! - `tool`: the [`Tool`] trait, the [`ToolRegistry`] that dispatches calls, and
//!   the result envelope `{"ok", "tool", "data", "truncated"}` /
//!   `{"ok": false, "tool", "error": {"code", "message"}}` with explicit truncation
//!   metadata.
//! - [`ToolDef`]: a tool declared the one way ([`tool_def`]): name,
//!   description, its arguments' [`schema::Schema`] table and a function over
//!   a typed `Deserialize` struct and a context; bound to its context it is a
//!   [`Tool`], parsing the model's JSON in one place.
//! - [`schema`] (re-exported from `tool_def`): the JSON Schema subset tools and
//!   structured answers use: the [`schema::Schema`] builder, local validation,
//!   [`schema::parse`] (the one way model JSON becomes a typed value), and the
//!   strictness lint every registered tool passes.
//! - [`runner`]: the loop — budgets (model steps, tool calls, result caps, overall
//!   timeout), one final tool-free request when a budget runs out, the task's
//!   validator with exactly one repair pass, and the structured-output mode.
//! - [`trace`]: sinks for what happened — a session directory (`events.ndjson`,
//!   `session.json`, `artifacts/`), a console stream, or nothing.
//! - `window`: a run kept within a model's context window
//!   ([`Runner::with_context_window`]): tokens estimated as bytes / 4, every tool
//!   result cut to the room left, old results dropped oldest first.
//! - [`clip_middle`]: long text cut to a bound, head and tail kept around a
//!   marker that says how much was cut.
//!
//! - **Dependencies:** `llm` (providers and message types), `safe-io` (session
//!   directories through handles; terminal-safe text), `tool-def` (the tool
//!   declaration and the schema subset).
//! - **Invariant:** nothing the model sends stops the loop abnormally: unknown tools,
//!   invalid arguments and failing tools return error envelopes the model can read.
//! - **Invariant:** a tool's code sees only arguments that matched its schema:
//!   [`BoundTool`]'s adapter parses them through [`schema::parse`] before `run`,
//!   and the registry refuses a tool whose schema is not strict or declares other
//!   fields than its argument struct reads.
//! - **Invariant:** every budget is enforced here, locally; nothing relies on a
//!   provider honouring a limit.
//! - **Invariant:** traces redact known secrets before writing anything.
//! - **Invariant:** model text never balloons downstream: the repair request
//!   quotes at most 32 KiB of an invalid answer ([`runner::REPAIR_ANSWER_MAX`]),
//!   session traces are capped per artifact, per field, per events file and per
//!   session ([`trace`]), and the console sink escapes control characters.
//! - No printing, no environment: console traces go to a writer the binary passes.

mod clip;
pub mod runner;
mod tool;
pub mod trace;
mod typed;
mod window;

pub use clip::clip_middle;
pub use runner::{
    AgentError, Budgets, Outcome, Runner, StructuredTask, Task, Validator, extract_json,
    problem_summary,
};
pub use tool::{
    Envelope, RegistryError, Tool, ToolFailure, ToolLimits, ToolOutput, ToolRegistry, Truncation,
    TruncationLimit,
};
pub use tool_def::{NoArgs, schema};
pub use trace::{ConsoleSink, Event, Level, NullSink, SessionSink, TraceSink};
pub use typed::{BoundTool, ToolDef};
pub use window::{ContextWindow, estimate_tokens};
