//! What git-agent sends, and in what environment: the request bodies each
//! backend gets (ChatGPT's Codex backend included), the output cap and the
//! repair of a cut-off answer, the wire body in traces, and the user's own
//! environment for the hooks `git commit` runs.

use serde_json::{Value, json};
use testkit::{Reply, texts_under};

use crate::support::{
    KEY, MESSAGE, codex_home, git_agent, home, project, responses, sessions, with_key,
};

#[test]
fn chatgpt_sign_in_sends_what_codex_sends_with_codex_s_model() {
    let repo = project();
    let home = home();
    let codex = codex_home(
        &home,
        Some("model = \"gpt-codex-test\"\nmodel_reasoning_effort = \"high\"\n"),
    );
    let (server, url) = responses(vec![Reply::text(MESSAGE)]);
    let run = git_agent(
        repo.path(),
        home.path(),
        &["commit-msg", "--base-url", &url],
        &[
            ("CODEX_HOME", codex.to_str().unwrap()),
            ("OPENAI_MODEL", "gpt-5-mini"),
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, format!("{MESSAGE}\n"));
    let body = server.requests()[0].json();
    // Codex's own model, before the environment's.
    assert_eq!(body["model"], json!("gpt-codex-test"));
    // What the ChatGPT backend accepts: no output cap, not stored, streamed.
    assert!(body.get("max_output_tokens").is_none(), "{body}");
    assert_eq!(body["store"], json!(false));
    assert_eq!(body["stream"], json!(true));
}

#[test]
fn commit_hooks_run_in_the_users_environment() {
    let repo = project();
    let spy = tempfile::tempdir().unwrap();
    // A hook like lint-staged's: it lists the staged Rust files with a glob.
    repo.write_executable(
        ".git/hooks/pre-commit",
        format!(
            "#!/bin/sh\nenv > '{dir}/env'\ngit diff --cached --name-only -- '*.rs' > '{dir}/glob'\n",
            dir = spy.path().display()
        ),
    );
    let home = home();
    let (_server, url) = responses(vec![Reply::text(MESSAGE)]);
    let run = git_agent(
        repo.path(),
        home.path(),
        &["commit"],
        &[
            ("OPENAI_API_KEY", KEY),
            ("OPENAI_BASE_URL", &url),
            ("USERS_OWN_SETTING", "kept"),
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let read = |name: &str| std::fs::read_to_string(spy.path().join(name)).unwrap();
    assert_eq!(read("glob"), "src/net.rs\n", "the glob pathspec matched");
    let env_text = read("env");
    let env: std::collections::HashMap<&str, &str> = env_text
        .lines()
        .filter_map(|line| line.split_once('='))
        .collect();
    assert_eq!(env.get("USERS_OWN_SETTING"), Some(&"kept"));
    for ours in [
        "GIT_LITERAL_PATHSPECS",
        "GIT_OPTIONAL_LOCKS",
        "GIT_TERMINAL_PROMPT",
        "GIT_CONFIG_COUNT",
        "GIT_CONFIG_KEY_0",
        "GIT_ATTR_SOURCE",
        "GIT_PAGER",
    ] {
        assert_eq!(env.get(ours), None, "{ours} reached the hook");
    }
    // The locale is the user's, not the C of our read-only git processes.
    assert_eq!(
        env.get("LC_ALL").map(|v| v.to_string()),
        std::env::var("LC_ALL").ok()
    );
    assert_eq!(repo.git(&["rev-list", "--count", "HEAD"]).trim(), "2");
}

/// The bodies `git-agent commit-msg ARGS…` sent to a Responses server that
/// plays `script`, after a successful run.
fn bodies(args: &[&str], script: Vec<Reply>) -> Vec<Value> {
    let repo = project();
    let home = home();
    let (server, url) = responses(script);
    let mut all = vec!["commit-msg"];
    all.extend_from_slice(args);
    let run = with_key(&repo, &home, &all, &url);
    assert_eq!(run.code, 0, "{run:?}");
    server.requests().iter().map(|r| r.json()).collect()
}

#[test]
fn the_output_cap_scales_with_the_effort_unless_given() {
    for (args, cap) in [
        (&[][..], 8192),
        (&["--low"][..], 4096),
        (&["--medium"][..], 8192),
        (&["--high"][..], 16_384),
        (&["--xhigh"][..], 32_768),
        (&["--xhigh", "--max-output-tokens", "1000"][..], 1000),
    ] {
        let body = &bodies(args, vec![Reply::text(MESSAGE)])[0];
        assert_eq!(body["max_output_tokens"], json!(cap), "{args:?}");
    }
    let repo = project();
    let run = git_agent(
        repo.path(),
        home().path(),
        &["commit-msg", "--max-output-tokens", "10"],
        &[],
    );
    assert_eq!(run.code, 2, "{run:?}");
    run.stderr_contains("--max-output-tokens");
}

#[test]
fn a_cut_off_answer_is_repaired_once_with_twice_the_cap() {
    let sent = bodies(
        &["--max-output-tokens", "1000"],
        vec![
            Reply::max_tokens("fix(net): retry con"),
            Reply::text(MESSAGE),
        ],
    );
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0]["max_output_tokens"], json!(1000));
    assert_eq!(sent[1]["max_output_tokens"], json!(2000));
    let repair = sent[1]["input"].to_string();
    assert!(
        repair.contains("cut off by the output token limit (1000 tokens)"),
        "{repair}"
    );
    // Cut off twice: a clear failure, not a half message.
    let repo = project();
    let home = home();
    let (_server, url) = responses(vec![
        Reply::max_tokens("fix(net): retry con"),
        Reply::max_tokens("fix(net): retry connect th"),
    ]);
    let run = with_key(&repo, &home, &["commit-msg"], &url);
    assert_eq!(run.code, 1, "{run:?}");
    run.stderr_contains("cut off by the output token limit");
}

#[test]
fn traces_record_the_body_sent() {
    let repo = project();
    let home = home();
    let (server, url) = responses(vec![Reply::text(MESSAGE)]);
    let run = with_key(&repo, &home, &["commit-msg", "--high", "--fast"], &url);
    assert_eq!(run.code, 0, "{run:?}");
    // The key was sent, so there was a key to leak.
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let session = &sessions(&repo)[0];
    let events = std::fs::read_to_string(session.join("events.ndjson")).unwrap();
    let request = events
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|event| event["event"] == "request")
        .expect("a request event");
    let body = &request["request"];
    // The wire body of the Responses API, not our normalized request.
    assert_eq!(body["model"], json!("gpt-5-mini"));
    assert_eq!(body["service_tier"], json!("priority"));
    assert_eq!(body["reasoning"], json!({"effort": "high"}));
    assert_eq!(body["store"], json!(false));
    assert_eq!(body["max_output_tokens"], json!(16_384));
    assert!(
        body.get("input").is_some() && body.get("messages").is_none(),
        "{body}"
    );
    // The key is only ever in a header: in no file of the session directory,
    // neither as it is nor hex-encoded.
    let files = texts_under(&repo.join(".git-agent"));
    let names: Vec<String> = files
        .iter()
        .filter_map(|(path, _)| path.strip_prefix(session).ok())
        .map(|path| path.display().to_string())
        .collect();
    for name in ["events.ndjson", "session.json"] {
        assert!(names.iter().any(|n| n == name), "{names:?}");
    }
    assert!(
        names.iter().any(|n| n.starts_with("artifacts/")),
        "{names:?}"
    );
    let hex: String = KEY.bytes().map(|b| format!("{b:02x}")).collect();
    for (path, text) in &files {
        for form in [KEY, &hex, &hex.to_uppercase()] {
            assert!(!text.contains(form), "{form} in {}", path.display());
        }
    }
}

#[test]
fn the_previous_commit_is_contrast_only_when_small() {
    let prompt = |repo: &testkit::TestRepo| {
        let home = home();
        let (server, url) = responses(vec![Reply::text(MESSAGE)]);
        let run = with_key(repo, &home, &["commit-msg"], &url);
        assert_eq!(run.code, 0, "{run:?}");
        server.requests()[0].json()["input"].to_string()
    };
    // The usual project: its one commit is small, and shown as contrast.
    let small = project();
    assert!(prompt(&small).contains("<previous_head commit="));
    // A large previous commit (over 2 KiB of hand-written diff) is left out.
    let large = project();
    let big: String = (0..200)
        .map(|i| format!("pub const C{i}: u32 = {i};\n"))
        .collect();
    large.git(&["stash", "--quiet"]);
    large.commit_file("src/consts.rs", &big, "feat: add constants");
    large.git(&["stash", "pop", "--quiet"]);
    large.stage(&["src/net.rs"]);
    let text = prompt(&large);
    assert!(!text.contains("<previous_head"), "{text}");
    assert!(!text.contains("C199"), "{text}");
}
