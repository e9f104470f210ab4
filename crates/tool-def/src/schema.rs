//! The JSON Schema subset our tools and structured outputs use, checked locally:
//! `type` (one or several), `properties`, `required`, `additionalProperties: false`,
//! `enum`, `minimum`/`maximum`, `minLength`/`maxLength`, `items`,
//! `minItems`/`maxItems`. Other keywords (`description`, `default`,
//! `pattern`, …) are annotations and ignored.
//!
//! Models are not trusted to honour a schema, even in strict mode, so every tool
//! call and every structured answer is validated here before it is used.
//!
//! - [`Schema`] declares a schema in code, one entry per field; what it builds is
//!   strict ([`strictness_problems`] finds nothing) by construction.
//! - [`parse`] is the one way a model's JSON becomes a typed value: `null`
//!   optionals dropped, [`validate`]d, deserialized.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// A JSON Schema of the subset, declared in code: a tool's arguments (or a
/// structured answer) as one table, an entry per field.
///
/// Objects always say `additionalProperties: false` and list `required` (possibly
/// empty); integers always carry both bounds. So every schema built here passes
/// [`strictness_problems`].
///
/// ```
/// use tool_def::schema::Schema;
///
/// let schema = Schema::object()
///     .required("path", Schema::string().min_length(1).description("A file."))
///     .optional("limit", Schema::integer(1, 50));
/// assert_eq!(
///     serde_json::Value::from(schema),
///     serde_json::json!({
///         "type": "object",
///         "properties": {
///             "path": {"type": "string", "minLength": 1, "description": "A file."},
///             "limit": {"type": "integer", "minimum": 1, "maximum": 50}
///         },
///         "required": ["path"],
///         "additionalProperties": false
///     })
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Schema(Map<String, Value>);

impl Schema {
    fn of_type(name: &str) -> Schema {
        let mut map = Map::new();
        map.insert("type".to_owned(), Value::from(name));
        Schema(map)
    }

    fn with(mut self, keyword: &str, value: Value) -> Schema {
        self.0.insert(keyword.to_owned(), value);
        self
    }

    /// `{"type": "string"}`.
    pub fn string() -> Schema {
        Schema::of_type("string")
    }

    /// `{"type": "integer", "minimum", "maximum"}`: caps are always bounded.
    pub fn integer(minimum: u64, maximum: u64) -> Schema {
        Schema::of_type("integer")
            .with("minimum", Value::from(minimum))
            .with("maximum", Value::from(maximum))
    }

    /// `{"type": "number", "minimum", "maximum"}`: bounded, as integers are.
    pub fn number(minimum: f64, maximum: f64) -> Schema {
        Schema::of_type("number")
            .with("minimum", Value::from(minimum))
            .with("maximum", Value::from(maximum))
    }

    /// `{"type": "boolean"}`.
    pub fn boolean() -> Schema {
        Schema::of_type("boolean")
    }

    /// `{"type": "array", "items"}`.
    pub fn array(items: Schema) -> Schema {
        Schema::of_type("array").with("items", items.into())
    }

    /// An object without fields yet: `{"type": "object", "properties": {},
    /// "required": [], "additionalProperties": false}`. Add fields with
    /// [`required`](Self::required) and [`optional`](Self::optional).
    pub fn object() -> Schema {
        Schema::of_type("object")
            .with("properties", Value::Object(Map::new()))
            .with("required", Value::Array(Vec::new()))
            .with("additionalProperties", Value::Bool(false))
    }

    /// Adds the property `name`, which must be present.
    pub fn required(self, name: &str, schema: Schema) -> Schema {
        let mut object = self.optional(name, schema);
        if let Some(Value::Array(required)) = object.0.get_mut("required") {
            required.push(Value::from(name));
        }
        object
    }

    /// Adds the property `name`, which may be left out (or sent as `null`).
    pub fn optional(mut self, name: &str, schema: Schema) -> Schema {
        if let Some(Value::Object(properties)) = self.0.get_mut("properties") {
            properties.insert(name.to_owned(), schema.into());
        }
        self
    }

    /// What the value means, for the model.
    pub fn description(self, text: impl Into<String>) -> Schema {
        self.with("description", Value::String(text.into()))
    }

    /// The value assumed when the field is left out (an annotation).
    pub fn default_value(self, value: impl Into<Value>) -> Schema {
        self.with("default", value.into())
    }

    /// The only values allowed (`enum`).
    pub fn one_of<S: Into<String>>(self, values: impl IntoIterator<Item = S>) -> Schema {
        let values = values
            .into_iter()
            .map(|v| Value::String(v.into()))
            .collect();
        self.with("enum", Value::Array(values))
    }

    /// `minLength`, in characters.
    pub fn min_length(self, n: u64) -> Schema {
        self.with("minLength", json!(n))
    }

    /// `maxLength`, in characters.
    pub fn max_length(self, n: u64) -> Schema {
        self.with("maxLength", json!(n))
    }

    /// `pattern`: the regular expression a string matches, for the caller;
    /// an annotation [`validate`] does not check (the tool parses the value
    /// itself, with a clearer message).
    pub fn pattern(self, regex: &str) -> Schema {
        self.with("pattern", Value::from(regex))
    }

    /// `minItems`.
    pub fn min_items(self, n: u64) -> Schema {
        self.with("minItems", json!(n))
    }

    /// `maxItems`.
    pub fn max_items(self, n: u64) -> Schema {
        self.with("maxItems", json!(n))
    }
}

impl From<Schema> for Value {
    fn from(schema: Schema) -> Value {
        Value::Object(schema.0)
    }
}

/// The one way a model's JSON becomes a typed value: `null`s of optional
/// properties dropped ([`drop_null_optionals`]), the rest checked against
/// `schema` ([`validate`]), whole numbers given where integers are asked for made
/// integers (`3.0` counts as the integer 3, as [`validate`] says), then
/// deserialized into `T`. The error names the first problem, as [`validate`]
/// does.
pub fn parse<T: DeserializeOwned>(value: &Value, schema: &Value) -> Result<T, String> {
    let mut value = drop_null_optionals(value, schema);
    validate(&value, schema)?;
    whole_numbers_as_integers(&mut value, schema);
    serde_json::from_value(value).map_err(|err| format!("$: {err}"))
}

/// Rewrites numbers like `3.0` as integers where `schema` asks for an integer, so
/// that what [`validate`] accepts also deserializes.
fn whole_numbers_as_integers(value: &mut Value, schema: &Value) {
    match value {
        Value::Number(n) if n.is_f64() && types(schema).contains(&"integer") => {
            // `validate` checked that the value is whole; one too large for a
            // 64-bit integer stays as it is, and fails to deserialize.
            let whole = n.as_f64().unwrap_or(f64::NAN);
            if (0.0..u64::MAX as f64).contains(&whole) {
                *value = json!(whole as u64);
            } else if (i64::MIN as f64..0.0).contains(&whole) {
                *value = json!(whole as i64);
            }
        }
        Value::Array(items) => {
            let sub = schema.get("items").unwrap_or(&Value::Null);
            for item in items {
                whole_numbers_as_integers(item, sub);
            }
        }
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            for (key, item) in map.iter_mut() {
                if let Some(sub) = properties.and_then(|p| p.get(key)) {
                    whole_numbers_as_integers(item, sub);
                }
            }
        }
        _ => {}
    }
}

/// The types `schema` allows (`"type"`, one or several); empty when it does not
/// say.
fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Checks `value` against `schema`. The error names the first offending path,
/// e.g. `$.lines.start: expected integer, got string`.
pub fn validate(value: &Value, schema: &Value) -> Result<(), String> {
    check(value, schema, "$")
}

fn check(value: &Value, schema: &Value, path: &str) -> Result<(), String> {
    let allowed = types(schema);
    let Some(schema) = schema.as_object() else {
        return Ok(()); // `true`/absent schemas accept anything
    };
    if !allowed.is_empty() && !allowed.iter().any(|t| has_type(value, t)) {
        return Err(format!(
            "{path}: expected {}, got {}",
            allowed.join(" or "),
            type_name(value)
        ));
    }
    if let Some(Value::Array(options)) = schema.get("enum")
        && !options.contains(value)
    {
        let list: Vec<String> = options.iter().map(Value::to_string).collect();
        return Err(format!("{path}: must be one of {}", list.join(", ")));
    }
    match value {
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            if let Some((side, bound)) = outside(schema, ["minimum", "maximum"], x, Value::as_f64) {
                let (word, name) = side.pick(("below", "minimum"), ("above", "maximum"));
                return Err(format!("{path}: {n} is {word} the {name} {bound}"));
            }
        }
        Value::String(s) => {
            let len = s.chars().count() as u64;
            if let Some((side, bound)) =
                outside(schema, ["minLength", "maxLength"], len, Value::as_u64)
            {
                let word = side.pick("shorter", "longer");
                return Err(format!("{path}: {word} than {bound} characters"));
            }
        }
        Value::Array(items) => {
            let len = items.len() as u64;
            if let Some((side, bound)) =
                outside(schema, ["minItems", "maxItems"], len, Value::as_u64)
            {
                let word = side.pick("fewer", "more");
                return Err(format!("{path}: {word} than {bound} items"));
            }
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(item, item_schema, &format!("{path}[{i}]"))?;
                }
            }
        }
        Value::Object(map) => check_object(map, schema, path)?,
        Value::Bool(_) | Value::Null => {}
    }
    Ok(())
}

/// The side of its range a value falls out on.
#[derive(Debug, Clone, Copy)]
enum Side {
    Below,
    Above,
}

impl Side {
    fn pick<T>(self, below: T, above: T) -> T {
        match self {
            Side::Below => below,
            Side::Above => above,
        }
    }
}

/// Where `x` falls outside `schema`'s range `[low, high]` (keywords, read by
/// `read`), and the bound it breaks; `None` inside.
fn outside<T: PartialOrd>(
    schema: &Map<String, Value>,
    [low, high]: [&str; 2],
    x: T,
    read: fn(&Value) -> Option<T>,
) -> Option<(Side, T)> {
    if let Some(min) = schema.get(low).and_then(read)
        && x < min
    {
        return Some((Side::Below, min));
    }
    match schema.get(high).and_then(read) {
        Some(max) if x > max => Some((Side::Above, max)),
        _ => None,
    }
}

fn check_object(
    map: &Map<String, Value>,
    schema: &Map<String, Value>,
    path: &str,
) -> Result<(), String> {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(name) {
                return Err(format!("{path}: missing required field '{name}'"));
            }
        }
    }
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        for key in map.keys() {
            if !properties.contains_key(key) {
                let known: Vec<&str> = properties.keys().map(String::as_str).collect();
                return Err(format!(
                    "{path}: unknown field '{key}' (allowed: {})",
                    known.join(", ")
                ));
            }
        }
    }
    for (key, item) in map {
        if let Some(prop) = properties.get(key) {
            check(item, prop, &format!("{path}.{key}"))?;
        }
    }
    Ok(())
}

fn has_type(value: &Value, name: &str) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => {
            value.as_i64().is_some()
                || value.as_u64().is_some()
                || value
                    .as_f64()
                    .is_some_and(|f| f.fract() == 0.0 && f.is_finite())
        }
        _ => true,
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Removes `null` values of properties the schema does not require, at every
/// level: OpenAI's strict mode makes models send `null` for an optional argument
/// they leave out.
pub fn drop_null_optionals(value: &Value, schema: &Value) -> Value {
    match (value, schema.as_object()) {
        (Value::Object(map), Some(schema)) => {
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let properties = schema.get("properties").and_then(Value::as_object);
            let mut out = Map::new();
            for (key, item) in map {
                if item.is_null() && !required.contains(&key.as_str()) {
                    continue;
                }
                let sub = properties.and_then(|p| p.get(key)).unwrap_or(&Value::Null);
                out.insert(key.clone(), drop_null_optionals(item, sub));
            }
            Value::Object(out)
        }
        (Value::Array(items), Some(schema)) => {
            let sub = schema.get("items").unwrap_or(&Value::Null);
            Value::Array(items.iter().map(|i| drop_null_optionals(i, sub)).collect())
        }
        _ => value.clone(),
    }
}

/// What keeps `schema` from being a strict tool schema: the top level must be an
/// object; every object must say `additionalProperties: false` and list only known
/// properties as required; every integer or number must have `minimum` and
/// `maximum` (caps are bounded). Empty when strict.
pub fn strictness_problems(schema: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        problems.push("$: the top level must be an object schema".to_owned());
    }
    lint(schema, "$", &mut problems);
    problems
}

fn lint(schema: &Value, path: &str, problems: &mut Vec<String>) {
    let types = types(schema);
    let Some(map) = schema.as_object() else {
        return;
    };
    if types.contains(&"object") {
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            problems.push(format!("{path}: needs additionalProperties: false"));
        }
        let props = map.get("properties").and_then(Value::as_object);
        if let Some(Value::Array(required)) = map.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !props.is_some_and(|p| p.contains_key(name)) {
                    problems.push(format!("{path}: requires unknown property '{name}'"));
                }
            }
        }
        if let Some(props) = props {
            for (key, sub) in props {
                lint(sub, &format!("{path}.{key}"), problems);
            }
        }
    }
    if (types.contains(&"integer") || types.contains(&"number"))
        && (!map.contains_key("minimum") || !map.contains_key("maximum"))
    {
        problems.push(format!("{path}: numbers need minimum and maximum bounds"));
    }
    if types.contains(&"array")
        && let Some(items) = map.get("items")
    {
        lint(items, &format!("{path}[]"), problems);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1},
                "lines": {
                    "type": "object",
                    "properties": {
                        "start": {"type": "integer", "minimum": 1, "maximum": 1000000},
                        "end": {"type": ["integer", "null"], "minimum": 1, "maximum": 1000000}
                    },
                    "required": ["start"],
                    "additionalProperties": false
                },
                "mode": {"type": "string", "enum": ["a", "b"]},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn check(value: Value, expected: Result<(), &str>) {
        let got = validate(&value, &schema());
        match expected {
            Ok(()) => assert_eq!(got, Ok(()), "{value}"),
            Err(fragment) => {
                let err = got.expect_err(&value.to_string());
                assert!(err.contains(fragment), "{err} should mention {fragment}");
            }
        }
    }

    #[test]
    fn validates_the_subset() {
        check(json!({"path": "a"}), Ok(()));
        check(
            json!({"path": "a", "lines": {"start": 1, "end": null}, "mode": "b", "tags": ["x"]}),
            Ok(()),
        );
        check(
            json!({"path": 1}),
            Err("$.path: expected string, got integer"),
        );
        check(json!({}), Err("missing required field 'path'"));
        check(json!({"path": ""}), Err("shorter than 1"));
        check(json!({"path": "a", "x": 1}), Err("unknown field 'x'"));
        check(
            json!({"path": "a", "lines": {"start": 0}}),
            Err("$.lines.start: 0 is below the minimum"),
        );
        check(
            json!({"path": "a", "lines": {"start": 1.5}}),
            Err("expected integer, got number"),
        );
        check(
            json!({"path": "a", "mode": "c"}),
            Err("must be one of \"a\", \"b\""),
        );
        check(
            json!({"path": "a", "tags": ["x", "y", "z"]}),
            Err("more than 2 items"),
        );
        check(
            json!({"path": "a", "tags": [1]}),
            Err("$.tags[0]: expected string"),
        );
        check(json!([1]), Err("$: expected object, got array"));
    }

    #[test]
    fn nulls_of_optional_fields_are_dropped_recursively() {
        let value = json!({"path": "a", "mode": null, "lines": {"start": 2, "end": null}});
        assert_eq!(
            drop_null_optionals(&value, &schema()),
            json!({"path": "a", "lines": {"start": 2}})
        );
        // A required field sent as null stays, and fails validation.
        let value = json!({"path": null});
        assert_eq!(drop_null_optionals(&value, &schema()), value);
    }

    #[test]
    fn strictness_lint() {
        assert!(strictness_problems(&schema()).is_empty());
        let lax = json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}, "o": {"type": "object", "properties": {}}},
            "required": ["m"]
        });
        let problems = strictness_problems(&lax);
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(strictness_problems(&json!({"type": "string"}))[0].contains("top level"));
    }

    #[test]
    fn built_schemas_are_strict_and_keep_the_required_order() {
        let built: Value = Schema::object()
            .required("b", Schema::string().one_of(["x", "y"]))
            .optional("c", Schema::boolean().default_value(true))
            .required(
                "a",
                Schema::array(Schema::object().required("n", Schema::integer(0, 9)))
                    .min_items(0)
                    .max_items(3)
                    .description("some"),
            )
            .into();
        assert!(strictness_problems(&built).is_empty(), "{built}");
        assert_eq!(built["required"], json!(["b", "a"]));
        assert_eq!(built["properties"]["b"]["enum"], json!(["x", "y"]));
        assert_eq!(built["properties"]["c"]["default"], json!(true));
        assert_eq!(built["properties"]["a"]["minItems"], json!(0));
        assert_eq!(
            built["properties"]["a"]["items"]["additionalProperties"],
            json!(false)
        );
        assert!(strictness_problems(&Schema::object().into()).is_empty());
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Lines {
        start: u32,
        end: Option<u32>,
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Args {
        path: String,
        lines: Option<Lines>,
        mode: Option<String>,
    }

    #[test]
    fn parse_drops_nulls_checks_and_deserializes() {
        let value = json!({"path": "a", "mode": null, "lines": {"start": 2.0, "end": null}});
        assert_eq!(
            parse::<Args>(&value, &schema()),
            Ok(Args {
                path: "a".into(),
                lines: Some(Lines {
                    start: 2,
                    end: None
                }),
                mode: None,
            })
        );
        let err = parse::<Args>(&json!({"path": "a", "lines": {"start": 1.5}}), &schema());
        assert_eq!(
            err,
            Err("$.lines.start: expected integer, got number".to_owned())
        );
        let err = parse::<Args>(&json!({"path": "a", "x": 1}), &schema()).unwrap_err();
        assert!(err.contains("unknown field 'x'"), "{err}");
        // What the schema allows but the type cannot hold is still an error, not a
        // panic.
        let err = parse::<u8>(&json!(300), &json!({"type": "integer"})).unwrap_err();
        assert!(err.starts_with("$: invalid value"), "{err}");
    }
}
