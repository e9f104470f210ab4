//! Fake LLM HTTP servers on loopback: scripted replies, recorded requests.
//!
//! One [`FakeLlm`] speaks one [`Flavor`]. It does not route by path: each request,
//! whatever its method and path, consumes the next scripted [`Reply`] (tests assert
//! on the recorded path). A request after the script ran out gets a 500 with the
//! flavor's error body, message `fake server: script exhausted after N requests` —
//! unless a responder is set ([`FakeLlm::respond_with`]): it then answers every
//! request the script does not, from the request itself (a server that goes on
//! forever, e.g. for many annotations at once; [`Reply::delayed`] gives each
//! answer a latency). A [`Storm`] puts a stretch of trouble in front of such a
//! responder: 429s with `Retry-After`, 500s, hangs or cut bodies for a while
//! from the first request, then normal answers, counting what it answered.
//!
//! Each exchange is timed ([`FakeLlm::exchanges`]): when the request arrived and
//! when its answer had been written, so tests can assert on the order of events
//! (e.g. that no request arrived while a `Retry-After` was running).
//!
//! Each connection carries one request and one response (`Connection: close`) and
//! is served on its own thread, so a delayed reply never holds up another request.
//!
//! **Malformed requests** (a bad request line or header, an invalid
//! `Content-Length`, a broken chunked body, a connection closed mid-request) are
//! answered `400` (`413`/`431` for oversized input) with the flavor's error body,
//! and are neither recorded nor allowed to consume a reply: a test sees only
//! requests a real client could have sent. A connection closed before its first
//! byte is ignored.

mod http;
mod reply;
mod storm;

use std::collections::VecDeque;
use std::fmt;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

pub use reply::{FAKE_MODEL, Reply, ToolCall, call};
pub use storm::Storm;

/// How long a connection may stall while we read a request or write a response.
const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// The API a [`FakeLlm`] imitates. `base_url()` ends in `/v1` for all three.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// OpenAI Responses API: `POST {base}/responses`.
    OpenAiResponses,
    /// OpenAI Chat Completions: `POST {base}/chat/completions`.
    OpenAiChat,
    /// Anthropic Messages: `POST {base}/messages`.
    Anthropic,
}

impl Flavor {
    /// The path a client of this flavor posts to, e.g. `/v1/responses`.
    pub fn path(self) -> &'static str {
        match self {
            Flavor::OpenAiResponses => "/v1/responses",
            Flavor::OpenAiChat => "/v1/chat/completions",
            Flavor::Anthropic => "/v1/messages",
        }
    }
}

/// A request as the fake server received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedRequest {
    /// `POST`, `GET`, …
    pub method: String,
    /// The request-target as sent: `/v1/responses?x=1`, or absolute-form
    /// (`http://host/v1/responses`) when sent to a proxy.
    pub target: String,
    /// The target's path: scheme, authority and query stripped.
    pub path: String,
    /// Header names lower-cased, values trimmed, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked when it was sent chunked.
    pub body: Vec<u8>,
}

impl RecordedRequest {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON; panics with the body text if it is not JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|err| {
            panic!(
                "request body is not JSON ({err}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// Request line, headers and body as one lossy string, for "the secret appears
    /// nowhere" assertions. Rebuilt from the parsed parts: header names are
    /// lower-cased and a chunked body appears de-chunked.
    pub fn raw_text(&self) -> String {
        let mut text = format!("{} {} HTTP/1.1\r\n", self.method, self.target);
        for (name, value) in &self.headers {
            text.push_str(&format!("{name}: {value}\r\n"));
        }
        text.push_str("\r\n");
        text.push_str(&String::from_utf8_lossy(&self.body));
        text
    }
}

/// When a request arrived and when its answer went out (see [`FakeLlm::exchanges`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// The request had been read whole.
    pub arrived: Instant,
    /// The answer had been written (`None`: not yet, or the connection was hung
    /// up or went away).
    pub answered: Option<Instant>,
    /// The answer's HTTP status (`None` for a hang-up).
    pub status: Option<u16>,
}

/// Answers the requests the script does not (see [`FakeLlm::respond_with`]).
type Responder = Arc<dyn Fn(&RecordedRequest) -> Reply + Send + Sync>;

/// A responder ([`FakeLlm::respond_with`]) that plays ultragit's writing agent
/// over Chat Completions, for any number of commits at once: it reads each
/// request's conversation and
/// 1. before it has emitted, emits an `emit_annotation` for line 1 of `file`,
///    or of the first file a diff in the conversation shows (`=== <path> (`:
///    the first message carries the diff when it fits), with the one-sentence
///    summary as the reply's text (the writer's run ends there) — and when
///    there is no diff to read yet, calls `get_diff`;
/// 2. asked again after its emission's result, ends with the same summary.
///
/// Every reply is delayed by `delay` (the model's latency; zero for none).
pub fn annotator(
    delay: Duration,
    file: Option<&str>,
) -> impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static {
    let file = file.map(str::to_owned);
    move |request| {
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let results: Vec<&serde_json::Value> =
            messages.iter().filter(|m| m["role"] == "tool").collect();
        // The anchor: the first word of the file's line 1 as the diff shows
        // it (`    1 +text`), a `config` anchor the writer finds in that line.
        let texts: Vec<String> = messages
            .iter()
            .filter_map(|m| m["content"].as_str().map(str::to_owned))
            .collect();
        let first_word = |path: &str| -> String {
            texts
                .iter()
                .filter_map(|text| text.split(&format!("=== {path} (")).nth(1))
                .flat_map(|part| part.lines().take_while(|l| !l.starts_with("=== ")))
                .find_map(|line| {
                    let rest = line.strip_prefix("    1 ")?;
                    let rest = rest.strip_prefix(['+', ' '])?;
                    rest.split_whitespace().next().map(str::to_owned)
                })
                .unwrap_or_else(|| "unit".to_owned())
        };
        let emit = |path: &str| {
            Reply::tool_calls(vec![call(
                "call_emit",
                "emit_annotation",
                serde_json::json!({
                    "file": path,
                    "ast_anchor": {"type": "config", "name": first_word(path)},
                    "lines": {"start": 1, "end": 1},
                    "intent": format!("Records why {path} changed."),
                    "constraints": [{"text": "Line 1 stays first.", "source": "inferred"}]
                }),
            )])
            .with_text("Annotated by the fake annotator.")
        };
        let emitted = results.iter().any(|m| m["tool_call_id"] == "call_emit");
        // The first file a diff in the conversation shows.
        let shown = || {
            texts
                .iter()
                .find_map(|text| text.split("=== ").nth(1))
                .and_then(|rest| rest.split(" (").next())
                .map(str::to_owned)
        };
        let reply = match (emitted, &file) {
            (true, _) => Reply::text("Annotated by the fake annotator."),
            (false, Some(file)) => emit(file),
            (false, None) => match shown() {
                Some(path) => emit(&path),
                None => {
                    Reply::tool_calls(vec![call("call_diff", "get_diff", serde_json::json!({}))])
                }
            },
        };
        if delay.is_zero() {
            reply
        } else {
            reply.delayed(delay)
        }
    }
}

/// A fake LLM server on `127.0.0.1`, answering from a script. Dropping it stops
/// the server.
///
/// ```
/// use serde_json::json;
/// use testkit::{FakeLlm, Flavor, Reply, call};
///
/// let server = FakeLlm::start(
///     Flavor::Anthropic,
///     vec![
///         Reply::tool_calls(vec![call("toolu_1", "read_file", json!({"path": "a.rs"}))]),
///         Reply::error(529, "overloaded").retry_after("1"),
///         Reply::text("done").usage(120, 30),
///     ],
/// );
/// assert!(server.base_url().starts_with("http://127.0.0.1:"));
/// // … point the client under test at `server.base_url()` and run the flow, then:
/// // assert_eq!(server.requests()[0].path, "/v1/messages");
/// assert_eq!(server.remaining(), 3);
/// ```
pub struct FakeLlm {
    flavor: Flavor,
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl fmt::Debug for FakeLlm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeLlm")
            .field("flavor", &self.flavor)
            .field("addr", &self.addr)
            .field("remaining", &self.remaining())
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// Signalled when the server stops, to cut delays short.
    stopped: Condvar,
}

#[derive(Default)]
struct State {
    script: VecDeque<Reply>,
    consumed: usize,
    requests: Vec<RecordedRequest>,
    exchanges: Vec<Exchange>,
    responder: Option<Responder>,
    ids: reply::Ids,
    stopped: bool,
}

impl fmt::Debug for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("State")
            .field("script", &self.script.len())
            .field("consumed", &self.consumed)
            .field("requests", &self.requests.len())
            .field("responder", &self.responder.is_some())
            .field("stopped", &self.stopped)
            .finish_non_exhaustive()
    }
}

impl Shared {
    /// The state, even if a connection thread panicked while holding it.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records `request` and renders the reply it consumes (under one lock, so the
    /// order of requests is the order of replies). Returns the exchange's index
    /// too.
    fn take(&self, request: RecordedRequest, flavor: Flavor) -> (usize, reply::Outgoing) {
        // A Responses request with `"stream": true` gets its turn as server-sent
        // events.
        let stream = serde_json::from_slice::<serde_json::Value>(&request.body)
            .ok()
            .and_then(|body| body.get("stream").and_then(serde_json::Value::as_bool))
            .unwrap_or(false);
        let mut state = self.lock();
        let state = &mut *state;
        let index = state.exchanges.len();
        state.exchanges.push(Exchange {
            arrived: Instant::now(),
            answered: None,
            status: None,
        });
        let scripted = state.script.pop_front();
        let reply = match (scripted, &state.responder) {
            (Some(reply), _) => {
                state.consumed += 1;
                Some(reply)
            }
            (None, Some(responder)) => Some(responder(&request)),
            (None, None) => None,
        };
        state.requests.push(request);
        let outgoing = match reply {
            Some(reply) => reply.render(flavor, &mut state.ids, stream),
            None => {
                let message = format!(
                    "fake server: script exhausted after {} requests",
                    state.consumed
                );
                reply::Outgoing {
                    delay: None,
                    response: Some(http::Response::json(
                        500,
                        &reply::error_body(flavor, 500, &message),
                    )),
                }
            }
        };
        (index, outgoing)
    }

    /// Notes that the answer of exchange `index` went out with `status`.
    fn answered(&self, index: usize, status: u16) {
        if let Some(exchange) = self.lock().exchanges.get_mut(index) {
            exchange.answered = Some(Instant::now());
            exchange.status = Some(status);
        }
    }

    /// Sleeps for `by`; false if the server stopped meanwhile.
    fn sleep(&self, by: Duration) -> bool {
        let deadline = Instant::now() + by;
        let mut state = self.lock();
        loop {
            if state.stopped {
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                return true;
            }
            state = self
                .stopped
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
    }
}

impl FakeLlm {
    /// Starts a server on `127.0.0.1` (an ephemeral port) answering with `script`
    /// in order.
    ///
    /// # Panics
    /// If no loopback port can be bound or no thread spawned.
    pub fn start(flavor: Flavor, script: Vec<Reply>) -> FakeLlm {
        let listener =
            TcpListener::bind(("127.0.0.1", 0)).expect("bind a loopback port for a fake LLM");
        let addr = listener
            .local_addr()
            .expect("a bound listener has an address");
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                script: script.into(),
                ..State::default()
            }),
            stopped: Condvar::new(),
        });
        let accept = thread::Builder::new()
            .name(format!("fake-llm-{}", addr.port()))
            .spawn({
                let shared = Arc::clone(&shared);
                move || accept_loop(&listener, &shared, flavor)
            })
            .expect("spawn the fake LLM accept thread");
        FakeLlm {
            flavor,
            addr,
            shared,
            accept: Some(accept),
        }
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The flavor this server speaks.
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }

    /// Appends `reply` to the script.
    pub fn push(&self, reply: Reply) {
        self.shared.lock().script.push_back(reply);
    }

    /// Every request received so far, in arrival order (including those answered
    /// after the script ran out; not malformed ones).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// Answers every request the script leaves unanswered with `responder(request)`
    /// instead of the "script exhausted" error. The responder runs under the
    /// server's lock: it should only build a reply (a [`Reply::delayed`] one
    /// waits outside the lock).
    pub fn respond_with(
        &self,
        responder: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static,
    ) {
        self.shared.lock().responder = Some(Arc::new(responder));
    }

    /// The timing of every recorded request, in the order of
    /// [`FakeLlm::requests`].
    pub fn exchanges(&self) -> Vec<Exchange> {
        self.shared.lock().exchanges.clone()
    }

    /// Scripted replies not yet consumed.
    pub fn remaining(&self) -> usize {
        self.shared.lock().script.len()
    }
}

impl Drop for FakeLlm {
    /// Stops accepting, cuts pending delays short (those connections close without
    /// a response), and joins the accept thread. Connection threads still reading
    /// or writing finish on their own.
    fn drop(&mut self) {
        self.shared.lock().stopped = true;
        self.shared.stopped.notify_all();
        if let Some(accept) = self.accept.take() {
            // Wake the blocking `accept` with a connection of our own; the loop
            // sees `stopped` and returns, closing the listener. Should that
            // connection fail, the thread is left blocked rather than joined
            // forever.
            if TcpStream::connect_timeout(&self.addr, Duration::from_secs(5)).is_ok() {
                let _ = accept.join();
            }
        }
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>, flavor: Flavor) {
    for stream in listener.incoming() {
        if shared.lock().stopped {
            return;
        }
        match stream {
            Ok(stream) => {
                let shared = Arc::clone(shared);
                // Without a thread the connection is dropped: the client sees a
                // closed connection, which is the best we can do.
                let _ = thread::Builder::new()
                    .name("fake-llm-conn".to_owned())
                    .spawn(move || serve(stream, &shared, flavor));
            }
            // E.g. out of file descriptors: back off instead of spinning.
            Err(_) => thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Serves one connection: one request, one reply. I/O errors (the client went
/// away) end the connection quietly.
fn serve(stream: TcpStream, shared: &Shared, flavor: Flavor) {
    let _ = stream.set_read_timeout(Some(IO_TIMEOUT));
    let _ = stream.set_write_timeout(Some(IO_TIMEOUT));
    let request = match http::read_request(&stream) {
        Ok(request) => request,
        Err(http::ReadError::Gone) => return,
        Err(http::ReadError::Bad { status, why }) => {
            let message = format!("fake server: malformed request: {why}");
            let body = reply::error_body(flavor, status, &message);
            let _ = http::write_response(&stream, &http::Response::json(status, &body));
            http::close(stream);
            return;
        }
    };
    let (index, outgoing) = shared.take(request, flavor);
    if let Some(delay) = outgoing.delay
        && !shared.sleep(delay)
    {
        return;
    }
    match outgoing.response {
        Some(response) => {
            if http::write_response(&stream, &response).is_ok() {
                shared.answered(index, response.status);
            }
            http::close(stream);
        }
        None => drop(stream),
    }
}
