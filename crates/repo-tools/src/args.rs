//! Reading a tool's arguments.
//!
//! The registry validates arguments against each tool's schema before the call (and
//! drops `null` optionals); these checks repeat the essentials so that a tool called
//! directly still refuses bad input with `INVALID_ARGUMENT` instead of guessing.

use agent::ToolFailure;
use serde_json::{Map, Value};

use crate::paths::{self, RelPath};

/// The arguments of one call.
#[derive(Debug)]
pub(crate) struct Args<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    /// `value` must be an object whose keys are all in `allowed`.
    pub(crate) fn new(value: &'a Value, allowed: &[&str]) -> Result<Args<'a>, ToolFailure> {
        let Some(map) = value.as_object() else {
            return Err(ToolFailure::invalid_argument(
                "arguments must be a JSON object",
            ));
        };
        if let Some(key) = map.keys().find(|key| !allowed.contains(&key.as_str())) {
            return Err(ToolFailure::invalid_argument(format!(
                "unknown argument '{key}' (allowed: {})",
                allowed.join(", ")
            )));
        }
        Ok(Args { map })
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|value| !value.is_null())
    }

    /// An optional string.
    pub(crate) fn str(&self, key: &str) -> Result<Option<&'a str>, ToolFailure> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(_) => Err(ToolFailure::invalid_argument(format!(
                "{key} must be a string"
            ))),
        }
    }

    /// A required, non-empty string.
    pub(crate) fn required_str(&self, key: &str) -> Result<&'a str, ToolFailure> {
        match self.str(key)? {
            Some(text) if !text.is_empty() => Ok(text),
            Some(_) => Err(ToolFailure::invalid_argument(format!(
                "{key} must not be empty"
            ))),
            None => Err(ToolFailure::invalid_argument(format!("{key} is required"))),
        }
    }

    /// An optional integer in `1..=max`.
    pub(crate) fn count(&self, key: &str, max: usize) -> Result<Option<usize>, ToolFailure> {
        let Some(value) = self.get(key) else {
            return Ok(None);
        };
        match value.as_u64().and_then(|n| usize::try_from(n).ok()) {
            Some(n) if (1..=max).contains(&n) => Ok(Some(n)),
            _ => Err(ToolFailure::invalid_argument(format!(
                "{key} must be an integer from 1 to {max}, got {value}"
            ))),
        }
    }

    /// An optional boolean.
    pub(crate) fn bool(&self, key: &str) -> Result<Option<bool>, ToolFailure> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(ToolFailure::invalid_argument(format!(
                "{key} must be true or false"
            ))),
        }
    }

    /// An optional workspace-relative path prefix; absent or empty is the whole
    /// workspace.
    pub(crate) fn prefix(&self, key: &str) -> Result<RelPath, ToolFailure> {
        match self.str(key)? {
            None | Some("") => Ok(RelPath::root()),
            Some(text) => paths::normalize(text)
                .map_err(|err| ToolFailure::invalid_argument(format!("{key}: {err}"))),
        }
    }
}
