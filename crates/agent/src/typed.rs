//! Tools declared the one way ([`tool_def::ToolDef`]), as the agent loop runs
//! them.
//!
//! A [`ToolDef`] here is `tool_def`'s declaration whose handler takes the
//! loop's [`ToolLimits`] and returns a [`ToolOutput`] or a [`ToolFailure`];
//! bound to its context it is a [`BoundTool`], which is a [`Tool`]. The
//! adapter parses the model's JSON into the argument struct in one place
//! ([`ToolDef::parse`]: `null` optionals dropped, checked against the schema,
//! deserialized) and turns a failure into an `INVALID_ARGUMENT` envelope
//! (`arguments do not match the schema: …`), so a tool's own code only ever
//! sees well-formed arguments. The registry refuses a tool whose schema
//! declares a field its struct does not read ([`Tool::argument_names`]), so
//! the table and the struct cannot drift apart unnoticed.
//!
//! ```
//! use agent::schema::Schema;
//! use agent::{ToolDef, ToolOutput, ToolRegistry};
//! use serde::Deserialize;
//! use serde_json::json;
//! use std::sync::Arc;
//!
//! #[derive(Debug, Deserialize)]
//! struct Args {
//!     text: String,
//!     times: Option<usize>,
//! }
//!
//! const ECHO: ToolDef<String, Args> = ToolDef {
//!     name: "echo",
//!     description: "Echoes its text.",
//!     schema: || {
//!         Schema::object()
//!             .required("text", Schema::string())
//!             .optional("times", Schema::integer(1, 3))
//!     },
//!     run: |prefix, args, _limits| {
//!         let text = args.text.repeat(args.times.unwrap_or(1));
//!         Ok(ToolOutput::complete(json!({ "echo": format!("{prefix}{text}") })))
//!     },
//! };
//!
//! let registry = ToolRegistry::default()
//!     .with(Arc::new(ECHO.bind(String::new())))
//!     .unwrap();
//! let envelope = registry.dispatch("echo", &json!({"text": "hi", "times": null}));
//! assert_eq!(envelope.to_value()["data"], json!({"echo": "hi"}));
//! let envelope = registry.dispatch("echo", &json!({"text": "hi", "times": 9}));
//! assert_eq!(envelope.to_value()["error"]["code"], "INVALID_ARGUMENT");
//! ```

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::tool::{Tool, ToolFailure, ToolLimits, ToolOutput};

/// A tool of the agent loop, declared as one table entry: its name,
/// description and argument schema, and the function that runs it over a
/// context `C` with typed arguments `A`. [`bind`](tool_def::ToolDef::bind)
/// makes it a [`BoundTool`].
pub type ToolDef<C, A> = tool_def::ToolDef<C, A, ToolLimits, Result<ToolOutput, ToolFailure>>;

/// A [`ToolDef`] with its context: a [`Tool`].
pub type BoundTool<C, A> = tool_def::Bound<C, A, ToolLimits, Result<ToolOutput, ToolFailure>>;

impl<C: Send + Sync, A: DeserializeOwned> Tool for BoundTool<C, A> {
    fn name(&self) -> &str {
        self.def().name
    }

    fn description(&self) -> &str {
        self.def().description
    }

    fn parameters(&self) -> Value {
        self.def().parameters()
    }

    fn call(&self, args: &Value, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
        let args = self.def().parse(args).map_err(|problem| {
            ToolFailure::invalid_argument(format!("arguments do not match the schema: {problem}"))
        })?;
        self.run(args, limits)
    }

    fn argument_names(&self) -> Option<&'static [&'static str]> {
        tool_def::argument_names::<A>()
    }
}
