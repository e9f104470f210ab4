//! `tool-def`: the one way a tool is declared, for every tool a model (or an
//! MCP client) can call — the writer's, git-agent's, the repo tools and
//! ultragit's MCP tools.
//!
//! A tool is a [`ToolDef`]: its name, what it does, its arguments' schema as
//! one [`schema::Schema`] table, and a handler taking the arguments as a typed
//! `Deserialize` struct, over a context `C` (the repository, the commit being
//! annotated, …) bound once with [`ToolDef::bind`]. The host decides the rest
//! through two type parameters: what it hands every call besides (`E`: the
//! agent loop's result caps; nothing for MCP) and what a call returns (`O`).
//! [`ToolDef::parse`] is the one way a caller's JSON becomes the typed
//! arguments ([`schema::parse`]: `null` optionals dropped, checked against the
//! schema, deserialized), and [`ToolDef::problems`] is what a registry refuses
//! to register: a schema that is not strict, or one declaring other fields
//! than the argument struct reads.
//!
//! ```
//! use serde::Deserialize;
//! use tool_def::schema::Schema;
//! use tool_def::ToolDef;
//!
//! #[derive(Debug, Deserialize)]
//! struct Args {
//!     text: String,
//!     times: Option<usize>,
//! }
//!
//! const ECHO: ToolDef<String, Args, (), String> = ToolDef {
//!     name: "echo",
//!     description: "Echoes its text after a prefix.",
//!     schema: || {
//!         Schema::object()
//!             .required("text", Schema::string())
//!             .optional("times", Schema::integer(1, 3))
//!     },
//!     run: |prefix, args, ()| format!("{prefix}{}", args.text.repeat(args.times.unwrap_or(1))),
//! };
//!
//! assert!(ECHO.problems().is_empty());
//! let echo = ECHO.bind("> ".to_owned());
//! let reply = echo.parse_and_run(&serde_json::json!({"text": "hi", "times": null}), &());
//! assert_eq!(reply, Ok("> hi".to_owned()));
//! assert!(echo.parse_and_run(&serde_json::json!({"text": "hi", "times": 9}), &()).is_err());
//! ```
//!
//! - **Dependencies:** `serde`, `serde_json` only: the MCP server declares its
//!   tools this way without the LLM stack.
//! - **Invariant:** a handler sees only arguments that matched the schema.

use std::cell::Cell;

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde_json::Value;

pub mod schema;

use schema::Schema;

/// One tool: a name, a description, an argument schema and a handler over a
/// context `C`, taking typed arguments `A` and what the host passes every call
/// (`E`), returning `O`. [`bind`](Self::bind) gives it its context.
pub struct ToolDef<C, A, E, O> {
    /// Stable name, e.g. `get_diff`.
    pub name: &'static str,
    /// What the tool does and when to call it, for the model.
    pub description: &'static str,
    /// The arguments' schema: one entry per field of `A`.
    pub schema: fn() -> Schema,
    /// Runs the tool on arguments that matched the schema.
    pub run: fn(&C, A, &E) -> O,
}

impl<C, A, E, O> Clone for ToolDef<C, A, E, O> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C, A, E, O> Copy for ToolDef<C, A, E, O> {}

impl<C, A, E, O> std::fmt::Debug for ToolDef<C, A, E, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef").field("name", &self.name).finish()
    }
}

impl<C, A: DeserializeOwned, E, O> ToolDef<C, A, E, O> {
    /// The tool over `context`.
    pub fn bind(self, context: C) -> Bound<C, A, E, O> {
        Bound { def: self, context }
    }

    /// The arguments' schema as JSON.
    pub fn parameters(&self) -> Value {
        (self.schema)().into()
    }

    /// `arguments` (a caller's JSON) as the typed arguments, or the first
    /// problem with them ([`schema::parse`]).
    pub fn parse(&self, arguments: &Value) -> Result<A, String> {
        schema::parse::<A>(arguments, &self.parameters())
    }

    /// Why the declaration cannot be offered: its schema is not strict
    /// ([`schema::strictness_problems`]), or it declares a property the
    /// argument struct does not read (the table and the struct drifted apart).
    pub fn problems(&self) -> Vec<String> {
        let parameters = self.parameters();
        let mut problems: Vec<String> = schema::strictness_problems(&parameters)
            .into_iter()
            .map(|problem| format!("{}: {problem}", self.name))
            .collect();
        if let (Some(fields), Some(Value::Object(properties))) =
            (argument_names::<A>(), parameters.get("properties"))
        {
            for name in properties.keys() {
                if !fields.contains(&name.as_str()) {
                    problems.push(format!(
                        "{}: the schema declares `{name}`, which the arguments do not read",
                        self.name
                    ));
                }
            }
        }
        problems
    }
}

/// A [`ToolDef`] with its context: what a registry holds.
pub struct Bound<C, A, E, O> {
    def: ToolDef<C, A, E, O>,
    context: C,
}

impl<C, A, E, O> std::fmt::Debug for Bound<C, A, E, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bound")
            .field("name", &self.def.name)
            .finish()
    }
}

impl<C, A: DeserializeOwned, E, O> Bound<C, A, E, O> {
    /// The declaration.
    pub fn def(&self) -> &ToolDef<C, A, E, O> {
        &self.def
    }

    /// Runs the tool on arguments that already matched the schema.
    pub fn run(&self, arguments: A, env: &E) -> O {
        (self.def.run)(&self.context, arguments, env)
    }

    /// Parses `arguments` ([`ToolDef::parse`]) and runs the tool; the problem
    /// with the arguments when they do not match.
    pub fn parse_and_run(&self, arguments: &Value, env: &E) -> Result<O, String> {
        Ok(self.run(self.def.parse(arguments)?, env))
    }
}

/// The arguments of a tool that takes none: `{}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// The field names `T`'s derived `Deserialize` asks for, when `T` is a struct
/// with named fields (serde hands them to `deserialize_struct`); `None` for
/// anything else.
pub fn argument_names<T: DeserializeOwned>() -> Option<&'static [&'static str]> {
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
        assert_eq!(argument_names::<Renamed>(), Some(&["type", "name"][..]));
        assert_eq!(argument_names::<NoArgs>(), Some(&[][..]));
        assert_eq!(argument_names::<u32>(), None);
        assert_eq!(
            argument_names::<std::collections::BTreeMap<String, u32>>(),
            None
        );
    }

    const DRIFTED: ToolDef<(), Renamed, (), ()> = ToolDef {
        name: "drifted",
        description: "A table that names a field the struct does not read.",
        schema: || {
            Schema::object()
                .required("type", Schema::string())
                .optional("label", Schema::string())
        },
        run: |_, _, _| (),
    };

    #[test]
    fn a_table_that_drifted_from_its_struct_is_a_problem() {
        assert_eq!(
            DRIFTED.problems(),
            ["drifted: the schema declares `label`, which the arguments do not read"]
        );
        let err = DRIFTED
            .bind(())
            .parse_and_run(&serde_json::json!({"type": 3}), &())
            .unwrap_err();
        assert!(err.contains("type"), "{err}");
    }
}
