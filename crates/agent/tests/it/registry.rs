//! The registry: envelopes for every outcome, the byte cap, and the tools it
//! refuses to register.

use std::sync::Arc;

use agent::schema::Schema;
use agent::{RegistryError, Tool, ToolDef, ToolFailure, ToolLimits, ToolOutput, ToolRegistry};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize)]
struct EchoArgs {
    text: String,
    times: Option<usize>,
}

/// Echoes its text `times` times; fails on "boom", panics on "panic".
const ECHO: ToolDef<(), EchoArgs> = ToolDef {
    name: "echo",
    description: "Echoes its text.",
    schema: || {
        Schema::object()
            .required("text", Schema::string())
            .optional("times", Schema::integer(1, 3))
    },
    run: |(), args, _| {
        if args.text == "boom" {
            return Err(ToolFailure::new("NOPE", "cannot echo boom"));
        }
        if args.text == "panic" {
            panic!("tool bug");
        }
        Ok(ToolOutput::complete(
            json!({"echo": args.text.repeat(args.times.unwrap_or(1))}),
        ))
    },
};

fn registry(limits: ToolLimits) -> ToolRegistry {
    ToolRegistry::new(limits)
        .with(Arc::new(ECHO.bind(())))
        .unwrap()
}

#[test]
fn envelopes_for_success_failure_unknown_and_invalid() {
    let reg = registry(ToolLimits::default());
    assert_eq!(
        reg.dispatch("echo", &json!({"text": "hi", "times": 2}))
            .to_value(),
        json!({"ok": true, "tool": "echo", "data": {"echo": "hihi"}, "truncated": false})
    );
    assert_eq!(
        reg.dispatch("echo", &json!({"text": "boom"})).to_value(),
        json!({"ok": false, "tool": "echo", "error": {"code": "NOPE", "message": "cannot echo boom"}})
    );
    let unknown = reg.dispatch("rm_rf", &json!({})).to_value();
    assert_eq!(unknown["error"]["code"], "UNKNOWN_TOOL");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("echo")
    );
    for bad in [
        json!({}),
        json!({"text": 1}),
        json!({"text": "x", "times": 9}),
        json!({"text": "x", "extra": 1}),
        json!("text"),
    ] {
        let env = reg.dispatch("echo", &bad).to_value();
        assert_eq!(env["error"]["code"], "INVALID_ARGUMENT", "{bad}");
    }
    // Optional values sent as null (OpenAI strict mode) count as absent.
    let env = reg.dispatch("echo", &json!({"text": "x", "times": null}));
    assert!(env.ok());
    let crashed = reg.dispatch("echo", &json!({"text": "panic"})).to_value();
    assert_eq!(crashed["error"]["code"], "INTERNAL");
}

#[test]
fn invalid_arguments_name_the_problem_and_whole_numbers_are_integers() {
    let reg = registry(ToolLimits::default());
    let env = reg
        .dispatch("echo", &json!({"text": "x", "times": 9}))
        .to_value();
    assert_eq!(
        env["error"]["message"],
        "arguments do not match the schema: $.times: 9 is above the maximum 3"
    );
    let env = reg
        .dispatch("echo", &json!({"text": "x", "times": 2.0}))
        .to_value();
    assert_eq!(env["data"], json!({"echo": "xx"}));
    // Called directly, without the registry, the arguments are checked the same way.
    let direct = ECHO
        .bind(())
        .call(&json!({"text": "x", "extra": 1}), &ToolLimits::default());
    assert_eq!(
        direct.unwrap_err().message,
        "arguments do not match the schema: $: unknown field 'extra' (allowed: text, times)"
    );
}

#[test]
fn oversized_results_are_cut_and_marked() {
    let limits = ToolLimits {
        max_bytes: 200,
        ..ToolLimits::default()
    };
    let reg = registry(limits);
    let env = reg
        .dispatch("echo", &json!({"text": "x".repeat(150), "times": 3}))
        .to_value();
    assert_eq!(env["truncated"], true);
    assert_eq!(env["truncation"]["limit"], "bytes");
    assert_eq!(env["truncation"]["max"], 200);
    assert!(env["data"].to_string().len() <= 200 + 64, "{env}");
}

#[test]
fn duplicate_and_lax_tools_are_refused() {
    let mut reg = registry(ToolLimits::default());
    assert_eq!(
        reg.register(Arc::new(ECHO.bind(()))),
        Err(RegistryError::Duplicate("echo".into()))
    );
    struct Lax;
    impl Tool for Lax {
        fn name(&self) -> &str {
            "lax"
        }
        fn description(&self) -> &str {
            "lax"
        }
        fn parameters(&self) -> Value {
            json!({"type": "object", "properties": {"n": {"type": "integer"}}})
        }
        fn call(&self, _: &Value, _: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
            unreachable!()
        }
    }
    assert!(matches!(
        reg.register(Arc::new(Lax)),
        Err(RegistryError::NotStrict { .. })
    ));
}

#[test]
fn a_schema_that_declares_an_argument_the_tool_does_not_read_is_refused() {
    // Its schema names `count`, which its arguments call `times`.
    let drifted = ToolDef {
        name: "drifted",
        schema: || {
            Schema::object()
                .required("text", Schema::string())
                .optional("count", Schema::integer(1, 3))
        },
        ..ECHO
    };
    let refused = ToolRegistry::default().register(Arc::new(drifted.bind(())));
    assert_eq!(
        refused,
        Err(RegistryError::UnreadArguments {
            name: "drifted".into(),
            arguments: "count".into()
        })
    );
    assert_eq!(
        refused.unwrap_err().to_string(),
        "tool 'drifted' declares arguments it does not read: count"
    );
    // A field the schema leaves out is never sent: the tool may read fewer.
    let narrow = ToolDef {
        name: "narrow",
        schema: || Schema::object().required("text", Schema::string()),
        run: |(), args: EchoArgs, _| Ok(ToolOutput::complete(json!({"times": args.times}))),
        ..ECHO
    };
    let registry = ToolRegistry::default()
        .with(Arc::new(narrow.bind(())))
        .unwrap();
    let env = registry
        .dispatch("narrow", &json!({"text": "x"}))
        .to_value();
    assert_eq!(env["data"], json!({"times": null}));
}
