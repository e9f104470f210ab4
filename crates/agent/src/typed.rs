//! Tools with typed arguments: the one way a tool is declared.
//!
//! A [`TypedTool`] names its arguments as a `Deserialize` struct and declares
//! their schema once, as a [`Schema`] table; a [`ToolDef`] is the same as one
//! table entry (name, description, schema, function) bound to a context. Every `TypedTool` is a [`Tool`]: the
//! blanket adapter parses the model's JSON into the struct in one place
//! ([`schema::parse`]: `null` optionals dropped, checked against the schema,
//! deserialized) and turns a failure into an `INVALID_ARGUMENT` envelope
//! (`arguments do not match the schema: …`), so a tool's own code only ever sees
//! well-formed arguments. The registry refuses a tool whose schema declares a
//! field its struct does not read ([`Tool::argument_names`]), so the table and
//! the struct cannot drift apart unnoticed.
//!
//! ```
//! use agent::schema::Schema;
//! use agent::{ToolFailure, ToolLimits, ToolOutput, ToolRegistry, TypedTool};
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
//! struct Echo;
//!
//! impl TypedTool for Echo {
//!     type Args = Args;
//!     fn name(&self) -> &str {
//!         "echo"
//!     }
//!     fn description(&self) -> &str {
//!         "Echoes its text."
//!     }
//!     fn schema(&self) -> Schema {
//!         Schema::object()
//!             .required("text", Schema::string())
//!             .optional("times", Schema::integer(1, 3))
//!     }
//!     fn run(&self, args: Args, _: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
//!         let text = args.text.repeat(args.times.unwrap_or(1));
//!         Ok(ToolOutput::complete(json!({ "echo": text })))
//!     }
//! }
//!
//! let registry = ToolRegistry::default().with(Arc::new(Echo)).unwrap();
//! let envelope = registry.dispatch("echo", &json!({"text": "hi", "times": null}));
//! assert_eq!(envelope.to_value()["data"], json!({"echo": "hi"}));
//! let envelope = registry.dispatch("echo", &json!({"text": "hi", "times": 9}));
//! assert_eq!(envelope.to_value()["error"]["code"], "INVALID_ARGUMENT");
//! ```

use std::cell::Cell;

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde_json::Value;

use crate::schema::{self, Schema};
use crate::tool::{Tool, ToolFailure, ToolLimits, ToolOutput};

/// A tool whose arguments are a typed struct with a schema declared once.
///
/// Implementations do blocking work (git, files) and are called off the async
/// executor.
pub trait TypedTool: Send + Sync {
    /// The arguments: a struct with one field per property of [`schema`](Self::schema)
    /// (`Option` for the optional ones), or [`NoArgs`].
    type Args: DeserializeOwned;
    /// Stable name, e.g. `git_status_summary`.
    fn name(&self) -> &str;
    /// What the tool does, for the model.
    fn description(&self) -> &str;
    /// The arguments' schema: an [`Schema::object`] with one entry per field of
    /// [`Args`](Self::Args).
    fn schema(&self) -> Schema;
    /// Runs the tool on arguments that matched the schema.
    fn run(&self, args: Self::Args, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure>;
}

impl<T: TypedTool> Tool for T {
    fn name(&self) -> &str {
        TypedTool::name(self)
    }

    fn description(&self) -> &str {
        TypedTool::description(self)
    }

    fn parameters(&self) -> Value {
        self.schema().into()
    }

    fn call(&self, args: &Value, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
        let args = schema::parse::<T::Args>(args, &self.parameters()).map_err(|problem| {
            ToolFailure::invalid_argument(format!("arguments do not match the schema: {problem}"))
        })?;
        self.run(args, limits)
    }

    fn argument_names(&self) -> Option<&'static [&'static str]> {
        struct_fields::<T::Args>()
    }
}

/// A tool declared as one table entry: its name, description and argument
/// schema, and the function that runs it over a context `C` (the repository,
/// the commit being annotated, …). [`bind`](Self::bind) makes it a tool.
///
/// ```
/// use agent::schema::Schema;
/// use agent::{NoArgs, ToolDef, ToolOutput, ToolRegistry};
/// use serde_json::json;
/// use std::sync::Arc;
///
/// const GREETING: ToolDef<String, NoArgs> = ToolDef {
///     name: "greeting",
///     description: "Says hello.",
///     schema: Schema::object,
///     run: |name, _, _| Ok(ToolOutput::complete(json!(format!("hello {name}")))),
/// };
///
/// let registry = ToolRegistry::default()
///     .with(Arc::new(GREETING.bind("you".to_owned())))
///     .unwrap();
/// let envelope = registry.dispatch("greeting", &json!({})).to_value();
/// assert_eq!(envelope["data"], "hello you");
/// ```
pub struct ToolDef<C, A> {
    /// Stable name, e.g. `get_diff`.
    pub name: &'static str,
    /// What the tool does, for the model.
    pub description: &'static str,
    /// The arguments' schema: one entry per field of `A`.
    pub schema: fn() -> Schema,
    /// Runs the tool on arguments that matched the schema.
    pub run: fn(&C, A, &ToolLimits) -> Result<ToolOutput, ToolFailure>,
}

impl<C, A> Clone for ToolDef<C, A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C, A> Copy for ToolDef<C, A> {}

impl<C, A> std::fmt::Debug for ToolDef<C, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef").field("name", &self.name).finish()
    }
}

impl<C, A> ToolDef<C, A> {
    /// The tool over `context`.
    pub fn bind(self, context: C) -> BoundTool<C, A> {
        BoundTool { def: self, context }
    }
}

/// A [`ToolDef`] with its context: a [`TypedTool`].
pub struct BoundTool<C, A> {
    def: ToolDef<C, A>,
    context: C,
}

impl<C, A> std::fmt::Debug for BoundTool<C, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundTool")
            .field("name", &self.def.name)
            .finish()
    }
}

impl<C: Send + Sync, A: DeserializeOwned> TypedTool for BoundTool<C, A> {
    type Args = A;

    fn name(&self) -> &str {
        self.def.name
    }

    fn description(&self) -> &str {
        self.def.description
    }

    fn schema(&self) -> Schema {
        (self.def.schema)()
    }

    fn run(&self, args: A, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
        (self.def.run)(&self.context, args, limits)
    }
}

/// The arguments of a tool that takes none: `{}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// The field names `T`'s derived `Deserialize` asks for, when `T` is a struct
/// with named fields (serde hands them to `deserialize_struct`).
fn struct_fields<T: DeserializeOwned>() -> Option<&'static [&'static str]> {
    let seen = Cell::new(None);
    // The probe answers every request with an error: only the request is wanted.
    let _ = T::deserialize(FieldProbe(&seen));
    seen.get()
}

/// A deserializer that records the fields a struct asks for, and fails.
struct FieldProbe<'a>(&'a Cell<Option<&'static [&'static str]>>);

impl<'de> Deserializer<'de> for FieldProbe<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.set(Some(fields));
        Err(de::Error::custom("fields recorded"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
        enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Renamed {
        #[serde(rename = "type")]
        kind: String,
        name: Option<String>,
    }

    #[test]
    fn the_probe_reads_a_structs_field_names() {
        assert_eq!(struct_fields::<Renamed>(), Some(&["type", "name"][..]));
        assert_eq!(struct_fields::<NoArgs>(), Some(&[][..]));
        assert_eq!(struct_fields::<u32>(), None);
        assert_eq!(
            struct_fields::<std::collections::BTreeMap<String, u32>>(),
            None
        );
    }
}
