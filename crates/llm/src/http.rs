//! The HTTP layer every backend shares: one `reqwest` client per provider, retries
//! with backoff and jitter, `Retry-After`, per-attempt and overall timeouts, proxies.
//!
//! **Invariant:** only `2xx` answers leave this module as responses. Everything else
//! becomes an [`LlmError`] here, with the provider's message redacted — so no layer
//! above (async-openai included) ever formats a raw error body.
//!
//! Retried: HTTP 429, 500, 502, 503, 504 and 529 (Anthropic's "overloaded"),
//! attempts that time out, and transport failures (refused or reset connections,
//! bodies cut short). Not retried: other statuses (400, 401, 403, …: they fail
//! at once, whatever the budget), answers that arrive whole but cannot be
//! parsed (a server that sends garbage once will send it again), and answers
//! over the size limit. How long retries go on is the [`RetryPolicy`]'s: a
//! number of attempts, and optionally a time budget, so that a caller can ride
//! out a storm of minutes rather than give up after five quick attempts.
//!
//! **Invariant:** no body is read without a bound. A `2xx` body — plain JSON or
//! server-sent events alike — may hold at most [`HttpOptions::max_response_bytes`]
//! (default [`DEFAULT_MAX_RESPONSE_BYTES`], 16 MiB: a completion of even 100,000
//! tokens is well under 1 MiB of JSON, so only a broken or hostile server gets
//! near it). A larger declared `Content-Length` is refused before a byte of the
//! body is read; otherwise the body is read chunk by chunk and the read stops at
//! the first chunk over the limit, with [`LlmError::TooLarge`]. An error body is
//! only mined for a message, so at most `ERROR_BODY_LIMIT` bytes of it are read
//! and the rest is left unread.
//!
//! **Pool pause:** requests that share a [`PauseGate`] (set in
//! [`HttpOptions::pause`]; every clone is the same gate) wait on it before each
//! attempt, and an answer that carries `Retry-After` closes it for that long (a
//! 429 or 529 without one, for the back-off wait) — so when one of many
//! concurrent callers is told to slow down, none of the others sends a new
//! request until the wait has passed. When it has, one request goes first and
//! the rest wait for its answer ([`PauseGate`], "half-open"), so a storm costs
//! one request per pause, not one per caller. Waiting on the gate is not an
//! attempt; it is time, and counts against a retry budget. Requests already on
//! the wire are not affected. Without a gate (the default) each request only
//! waits out its own `Retry-After`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::LlmError;
use crate::secret::Redactor;

/// Timeouts, retries and proxies for one provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOptions {
    /// One attempt: connect, send, and read the whole answer.
    pub request_timeout: Duration,
    /// The whole call, retries and waits included.
    pub overall_timeout: Duration,
    /// Establishing a connection.
    pub connect_timeout: Duration,
    pub retry: RetryPolicy,
    pub proxy: ProxyConfig,
    /// The largest successful reply body read, in bytes (server-sent events
    /// included); a larger one fails with [`LlmError::TooLarge`] and is not
    /// retried.
    pub max_response_bytes: u64,
    /// A pause shared with other requests (see the module docs); `None`: this
    /// provider's requests pause only themselves.
    pub pause: Option<PauseGate>,
}

/// [`HttpOptions::max_response_bytes`] by default: 16 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 16 * 1024 * 1024;

/// The most of an error body (a non-`2xx` answer) that is read: 64 KiB. Only a
/// message is taken from it, and that is cut to 600 bytes anyway.
pub(crate) const ERROR_BODY_LIMIT: u64 = 64 * 1024;

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            request_timeout: Duration::from_secs(180),
            overall_timeout: Duration::from_secs(600),
            connect_timeout: Duration::from_secs(15),
            retry: RetryPolicy::default(),
            proxy: ProxyConfig::default(),
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            pause: None,
        }
    }
}

/// A pause shared by every request that holds a clone of it (see the module
/// docs): a pool of concurrent callers gives each of its providers the same gate,
/// and one `Retry-After` then holds back the whole pool.
///
/// **Half-open after a pause:** when a pause ends, one request goes first (the
/// probe) and the others keep waiting until its answer is in. An answer that
/// pauses again closes the gate for everyone; any other answer (a success, or
/// a failure that asks for no pause) opens it for all. So a pool of 64 that
/// meets a rate-limit storm sends one request per pause, not 64.
///
/// Equality is identity: two gates are equal when they are clones of one.
#[derive(Clone, Debug, Default)]
pub struct PauseGate {
    inner: Arc<GateState>,
}

#[derive(Debug, Default)]
struct GateState {
    hold: Mutex<Hold>,
    /// Woken when a probe's answer is in.
    settled: tokio::sync::Notify,
    /// How often the gate was closed.
    pauses: AtomicU64,
}

#[derive(Debug, Default)]
struct Hold {
    /// Requests wait until then.
    until: Option<Instant>,
    /// A pause has ended but no answer has come since: the next request is
    /// the probe.
    half_open: bool,
    /// The probe is on the wire.
    probing: bool,
}

impl PauseGate {
    /// An open gate.
    pub fn new() -> PauseGate {
        PauseGate::default()
    }

    fn hold(&self) -> std::sync::MutexGuard<'_, Hold> {
        self.inner.hold.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Holds back every request that waits on this gate until `wait` from now; a
    /// pause that already lasts longer stands. When it ends, one request goes
    /// first (see the type's docs).
    pub fn pause_for(&self, wait: Duration) {
        let until = Instant::now() + wait;
        let mut hold = self.hold();
        if hold.until.is_none_or(|c| c < until) {
            hold.until = Some(until);
        }
        hold.half_open = true;
        self.inner.pauses.fetch_add(1, Ordering::Relaxed);
    }

    /// How much longer the gate stays closed (zero when open, and while the
    /// first request after a pause is on the wire).
    pub fn remaining(&self) -> Duration {
        let until = self.hold().until;
        until.map_or(Duration::ZERO, |u| {
            u.saturating_duration_since(Instant::now())
        })
    }

    /// How many times the gate was closed ([`PauseGate::pause_for`] calls).
    pub fn pauses(&self) -> u64 {
        self.inner.pauses.load(Ordering::Relaxed)
    }

    /// Waits until this request may go, or `deadline` comes (`None`). A pause
    /// extended meanwhile is waited out too; after a pause, the first request
    /// through is the probe and the rest wait for its answer. The pass must be
    /// settled with that answer ([`Pass::settle`]); a pass dropped unsettled
    /// (the request was cancelled) lets the next request probe.
    pub(crate) async fn pass(&self, deadline: Instant) -> Option<Pass<'_>> {
        loop {
            // Registered before the state is read, so a probe that settles in
            // between still wakes us.
            let settled = self.inner.settled.notified();
            let mut settled = std::pin::pin!(settled);
            settled.as_mut().enable();
            let until = {
                let mut hold = self.hold();
                let now = Instant::now();
                match hold.until {
                    Some(until) if until > now => Some(until),
                    _ if !hold.half_open => {
                        return Some(Pass {
                            gate: self,
                            probe: false,
                        });
                    }
                    _ if !hold.probing => {
                        hold.probing = true;
                        return Some(Pass {
                            gate: self,
                            probe: true,
                        });
                    }
                    // The probe is out: wait for its answer.
                    _ => None,
                }
            };
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            let wake = until.map_or(deadline, |until| until.min(deadline));
            tokio::select! {
                () = &mut settled => {}
                () = tokio::time::sleep(wake - now) => {}
            }
        }
    }
}

/// Leave to send one request through a [`PauseGate`] (see
/// [`PauseGate::pass`]).
#[derive(Debug)]
pub(crate) struct Pass<'a> {
    gate: &'a PauseGate,
    /// The first request after a pause.
    probe: bool,
}

impl Pass<'_> {
    /// The request's answer is in. `paused`: it closed the gate again (a
    /// `Retry-After`); otherwise a probe opens the gate for everyone.
    pub(crate) fn settle(self, paused: bool) {
        if self.probe && !paused {
            let mut hold = self.gate.hold();
            // A pause that began meanwhile (an answer to a request sent before
            // it) stands, and is probed again when it ends.
            if hold.until.is_none_or(|until| until <= Instant::now()) {
                hold.half_open = false;
            }
        }
        // Dropping releases the probe.
    }
}

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        if self.probe {
            self.gate.hold().probing = false;
            self.gate.inner.settled.notify_waiters();
        }
    }
}

impl PartialEq for PauseGate {
    fn eq(&self, other: &PauseGate) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for PauseGate {}

/// How retryable failures are retried: until `max_attempts` attempts were
/// made, or — with a [`RetryPolicy::retry_budget`] — until the next wait would
/// end past the budget, whichever comes first (and never past
/// [`HttpOptions::overall_timeout`]).
///
/// **The budget** is wall-clock time from the start of the call: it holds the
/// attempts (each up to [`HttpOptions::request_timeout`]), the waits between
/// them, and the time spent waiting on a closed [`PauseGate`]. A retry is sent
/// only while the time spent so far plus the next wait (its back-off or
/// `Retry-After`, or the pool's pause when that lasts longer) stays within the
/// budget; an attempt started within it runs to its own timeout, so a call can
/// take up to the budget plus one `request_timeout`. Waiting on the gate is
/// never an attempt: a pool that sits out a storm at the gate spends its budget,
/// not its attempts. The first attempt always goes out (the overall timeout
/// aside). A call that runs out of budget fails with
/// [`LlmError::RetryBudgetSpent`], which names the budget.
///
/// [`RetryPolicy::within`] is the policy for a time budget alone (no cap on
/// attempts); other callers keep the five quick attempts of the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (at least 1); a cap in addition
    /// to the budget.
    pub max_attempts: u32,
    /// Wait before the second attempt; doubles each time, with jitter.
    pub initial_backoff: Duration,
    /// Longest computed wait.
    pub max_backoff: Duration,
    /// Longest wait a server's `Retry-After` may ask for; a longer one is cut to this.
    pub max_retry_after: Duration,
    /// Retries stop once the next one would start past this much time from the
    /// start of the call (see the type's docs); `None`: only `max_attempts`
    /// and the overall timeout bound them.
    pub retry_budget: Option<Duration>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(60),
            retry_budget: None,
        }
    }
}

impl RetryPolicy {
    /// `max_attempts` attempts in all (at least 1), each retry sent at once:
    /// no back-off, and a server's `Retry-After` is not waited for. For a
    /// server on this machine (a local model server, a test's fake server),
    /// where waiting gains nothing; `immediate(1)` never retries.
    pub fn immediate(max_attempts: u32) -> RetryPolicy {
        RetryPolicy {
            max_attempts,
            initial_backoff: Duration::ZERO,
            max_backoff: Duration::ZERO,
            max_retry_after: Duration::ZERO,
            retry_budget: None,
        }
    }

    /// Retries for as long as `budget` allows (see the type's docs), with the
    /// default back-off and `Retry-After` cap and no cap on attempts: for
    /// callers that would rather wait out a provider's storm than fail
    /// (`ultragit backfill`). Give the call an
    /// [`HttpOptions::overall_timeout`] of at least the budget plus one
    /// `request_timeout`, or the overall timeout ends it first.
    pub fn within(budget: Duration) -> RetryPolicy {
        RetryPolicy {
            max_attempts: u32::MAX,
            retry_budget: Some(budget),
            ..RetryPolicy::default()
        }
    }

    /// The wait before attempt `next` (2 for the first retry), with "equal jitter":
    /// between half and all of the exponential delay.
    fn backoff(&self, next: u32) -> Duration {
        let exponent = next.saturating_sub(2).min(20);
        let full = self
            .initial_backoff
            .saturating_mul(1u32 << exponent)
            .min(self.max_backoff);
        let half = full / 2;
        let jitter = random_below(half.as_micros() as u64 + 1);
        half + Duration::from_micros(jitter)
    }
}

/// Proxies, given explicitly (the binary reads `HTTPS_PROXY`, `HTTP_PROXY`,
/// `NO_PROXY`; this library reads no environment).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProxyConfig {
    /// Proxy for `http://` URLs.
    pub http: Option<String>,
    /// Proxy for `https://` URLs.
    pub https: Option<String>,
    /// Hosts that bypass the proxies, in `NO_PROXY` syntax (`a.com,.b.org,10.0.0.0/8`).
    pub no_proxy: Option<String>,
}

/// A whole answer (an error body possibly cut at `ERROR_BODY_LIMIT`).
#[derive(Debug, Clone)]
pub(crate) struct Buffered {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Vec<u8>,
}

/// One provider's HTTP client and policy.
#[derive(Clone, Debug)]
pub(crate) struct Transport {
    pub client: reqwest::Client,
    pub options: HttpOptions,
    pub redactor: Redactor,
    pub provider: &'static str,
}

impl Transport {
    pub fn new(
        provider: &'static str,
        options: HttpOptions,
        redactor: Redactor,
    ) -> Result<Transport, LlmError> {
        // rustls needs a process-wide crypto provider; ring is ours. Installing
        // twice is harmless (the second call reports the first and is ignored).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let config_error = |message: String| LlmError::Config { provider, message };
        let mut builder = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy();
        let no_proxy = options
            .proxy
            .no_proxy
            .as_deref()
            .and_then(reqwest::NoProxy::from_string);
        if let Some(url) = &options.proxy.http {
            let proxy = reqwest::Proxy::http(url)
                .map_err(|e| config_error(format!("HTTP proxy '{}': {e}", redactor.redact(url))))?
                .no_proxy(no_proxy.clone());
            builder = builder.proxy(proxy);
        }
        if let Some(url) = &options.proxy.https {
            let proxy = reqwest::Proxy::https(url)
                .map_err(|e| config_error(format!("HTTPS proxy '{}': {e}", redactor.redact(url))))?
                .no_proxy(no_proxy);
            builder = builder.proxy(proxy);
        }
        let client = builder
            .build()
            .map_err(|e| config_error(format!("could not build the HTTP client: {e}")))?;
        Ok(Transport {
            client,
            options,
            redactor,
            provider,
        })
    }

    /// Sends the request `build` makes (once per attempt) until it succeeds, fails
    /// for good, or the attempts, the retry budget or the overall time run out
    /// (see [`RetryPolicy`]).
    pub async fn send<F, Fut, E>(&self, build: F) -> Result<Buffered, LlmError>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<reqwest::Request, E>>,
        E: std::fmt::Display,
    {
        let provider = self.provider;
        let policy = self.options.retry;
        let started = Instant::now();
        let deadline = started + self.options.overall_timeout;
        let budget_end = policy.retry_budget.map(|budget| started + budget);
        let attempts = policy.max_attempts.max(1);
        let gate = self.options.pause.as_ref();
        let mut last: Option<LlmError> = None;
        let mut made = 0;
        let mut budget_spent = false;
        loop {
            // A pool's pause holds back every attempt, the first included; a
            // retry waits for it only within the budget.
            let limit = match budget_end {
                Some(end) if made > 0 => end.min(deadline),
                _ => deadline,
            };
            let pass = match gate {
                None => None,
                Some(gate) => match gate.pass(limit).await {
                    Some(pass) => Some(pass),
                    None => {
                        budget_spent = limit < deadline;
                        break;
                    }
                },
            };
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            made += 1;
            let request = build().await.map_err(|e| LlmError::Config {
                provider,
                message: self
                    .redactor
                    .redact(&format!("could not build the request: {e}")),
            })?;
            let window = self.options.request_timeout.min(deadline - now);
            let outcome = tokio::time::timeout(window, self.attempt(request)).await;
            let (error, retry_after, pausing) = match self.verdict(outcome, window) {
                Verdict::Done(result) => {
                    if let Some(pass) = pass {
                        pass.settle(false);
                    }
                    return result;
                }
                Verdict::Retry {
                    error,
                    retry_after,
                    pausing,
                } => (error, retry_after, pausing),
            };
            let wait = match retry_after {
                Some(asked) => asked.min(policy.max_retry_after),
                None => policy.backoff(made + 1),
            };
            // The provider asked the pool to slow down: everyone waits (even
            // when this request gives up).
            if pausing && let Some(gate) = gate {
                gate.pause_for(wait);
            }
            if let Some(pass) = pass {
                pass.settle(pausing);
            }
            last = Some(error);
            if made >= attempts {
                break;
            }
            let now = Instant::now();
            let ahead = wait.max(gate.map_or(Duration::ZERO, PauseGate::remaining));
            if budget_end.is_some_and(|end| now + ahead > end) {
                budget_spent = true;
                break;
            }
            if now + wait >= deadline {
                // The next attempt could not finish in time: stop now.
                break;
            }
            tokio::time::sleep(wait).await;
        }
        match last {
            None => Err(LlmError::Timeout {
                provider,
                after: self.options.overall_timeout,
                overall: true,
            }),
            Some(last) if budget_spent => Err(LlmError::RetryBudgetSpent {
                provider,
                budget: policy.retry_budget.unwrap_or_default(),
                attempts: made,
                last: Box::new(last),
            }),
            Some(last) if made <= 1 => Err(last),
            Some(last) => Err(LlmError::RetriesExhausted {
                provider,
                attempts: made,
                last: Box::new(last),
            }),
        }
    }

    /// What one attempt's outcome means: a result to return, or a failure
    /// worth retrying (with the server's `Retry-After`, and whether it asks
    /// the whole pool to slow down: any `Retry-After`, a 429 or a 529).
    fn verdict(
        &self,
        outcome: Result<Result<Buffered, Failure>, tokio::time::error::Elapsed>,
        window: Duration,
    ) -> Verdict {
        let provider = self.provider;
        let retry = |error| Verdict::Retry {
            error,
            retry_after: None,
            pausing: false,
        };
        match outcome {
            Err(_) => retry(LlmError::Timeout {
                provider,
                after: window,
                overall: window != self.options.request_timeout,
            }),
            Ok(Err(Failure::TooLarge)) => Verdict::Done(Err(LlmError::TooLarge {
                provider,
                limit: self.options.max_response_bytes,
            })),
            Ok(Err(Failure::Http(err))) if is_transient(&err) => retry(LlmError::Transport {
                provider,
                message: self.describe(&err),
            }),
            Ok(Err(Failure::Http(err))) => Verdict::Done(Err(LlmError::Transport {
                provider,
                message: self.describe(&err),
            })),
            Ok(Ok(answer)) if (200..300).contains(&answer.status) => Verdict::Done(Ok(answer)),
            Ok(Ok(answer)) => {
                let error = LlmError::Api {
                    provider,
                    status: answer.status,
                    message: self.error_message(&answer.body),
                };
                if !is_retryable_status(answer.status) {
                    return Verdict::Done(Err(error));
                }
                let retry_after = retry_after(&answer.headers);
                Verdict::Retry {
                    error,
                    pausing: retry_after.is_some() || matches!(answer.status, 429 | 529),
                    retry_after,
                }
            }
        }
    }

    /// One request and its answer, the body read within its bound: a `2xx`
    /// body over [`HttpOptions::max_response_bytes`] is refused (on its declared
    /// length, or at the first chunk past the limit); an error body is cut at
    /// `ERROR_BODY_LIMIT`.
    async fn attempt(&self, request: reqwest::Request) -> Result<Buffered, Failure> {
        let mut response = self.client.execute(request).await?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let success = (200..300).contains(&status);
        let limit = if success {
            self.options.max_response_bytes
        } else {
            self.options.max_response_bytes.min(ERROR_BODY_LIMIT)
        };
        let declared = response.content_length();
        if success && declared.is_some_and(|n| n > limit) {
            return Err(Failure::TooLarge);
        }
        // A declared length (within the limit) sizes the buffer once, so a long
        // body is not copied from buffer to doubled buffer as it arrives; a
        // server that declares more than it sends costs at most the limit.
        let capacity = declared.unwrap_or(0).min(limit);
        let mut body = Vec::with_capacity(usize::try_from(capacity).unwrap_or(0));
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        loop {
            let chunk = match response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                // An error answer's status is the news; a body cut short only
                // costs its message.
                Err(_) if !success => break,
                Err(err) => return Err(err.into()),
            };
            let room = limit - body.len();
            if chunk.len() > room {
                if success {
                    return Err(Failure::TooLarge);
                }
                body.extend_from_slice(&chunk[..room]);
                break;
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Buffered {
            status,
            headers,
            body,
        })
    }

    fn describe(&self, err: &reqwest::Error) -> String {
        let mut text = err.to_string();
        let mut source = std::error::Error::source(err);
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        self.redactor.redact(&text)
    }

    /// The provider's error message from an error body, tolerant of shapes
    /// (`{"error":{"message"}}`, `{"error":"…"}`, `{"message"}`, `{"detail"}`, plain
    /// text), cut to a readable length and redacted.
    pub(crate) fn error_message(&self, body: &[u8]) -> String {
        let text = String::from_utf8_lossy(body);
        let from_json = serde_json::from_slice::<Value>(body).ok().and_then(|v| {
            let candidates = [
                v.pointer("/error/message"),
                v.get("error").filter(|e| e.is_string()),
                v.get("message"),
                v.get("detail"),
            ];
            candidates
                .into_iter()
                .flatten()
                .find_map(|m| m.as_str().map(str::to_owned))
        });
        let message = from_json.unwrap_or_else(|| text.trim().to_owned());
        let message = if message.is_empty() {
            "(no message)".to_owned()
        } else {
            message
        };
        self.redactor.redact(&clip(&message, 600))
    }
}

/// What [`Transport::send`] does after an attempt.
enum Verdict {
    /// Return this.
    Done(Result<Buffered, LlmError>),
    /// A failure worth another attempt.
    Retry {
        error: LlmError,
        retry_after: Option<Duration>,
        /// The answer asks the whole pool to slow down.
        pausing: bool,
    },
}

/// Why one attempt produced no answer.
#[derive(Debug)]
enum Failure {
    Http(reqwest::Error),
    /// The body is (or says it is) larger than the limit.
    TooLarge,
}

impl From<reqwest::Error> for Failure {
    fn from(err: reqwest::Error) -> Self {
        Failure::Http(err)
    }
}

/// Cuts `text` to at most `max` bytes on a character boundary, marking the cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &text[..cut])
}

fn is_retryable_status(status: u16) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504 | 529)
}

/// Failures of the connection rather than of the request's content. reqwest
/// reports a body cut short while reading it as a "decode" error; we decode
/// nothing through reqwest (no compression, our own JSON parsing), so decode errors
/// are transport failures too.
fn is_transient(err: &reqwest::Error) -> bool {
    !err.is_builder()
        && !err.is_redirect()
        && (err.is_timeout()
            || err.is_connect()
            || err.is_request()
            || err.is_body()
            || err.is_decode())
}

/// `Retry-After` (seconds or an HTTP date) or `retry-after-ms`.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let when = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let delta = when.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(delta.to_std().unwrap_or(Duration::ZERO))
}

/// A small, lock-free pseudo-random source for jitter (xorshift seeded from the
/// clock); statistical quality does not matter here.
fn random_below(n: u64) -> u64 {
    static STATE: AtomicU64 = AtomicU64::new(0);
    let mut x = STATE.load(Ordering::Relaxed);
    if x == 0 {
        x = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9e37_79b9_7f4a_7c15)
            | 1;
    }
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    STATE.store(x, Ordering::Relaxed);
    if n == 0 { 0 } else { x % n }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    #[test]
    fn retry_after_seconds_dates_and_milliseconds() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("3"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        h.insert("retry-after", HeaderValue::from_static("0.25"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(
            retry_after(&h),
            Some(Duration::ZERO),
            "a past date means now"
        );
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(1500)));
    }

    #[test]
    fn an_immediate_policy_never_waits() {
        let policy = RetryPolicy::immediate(3);
        assert_eq!(policy.max_attempts, 3);
        for next in 2..=3 {
            assert_eq!(policy.backoff(next), Duration::ZERO);
        }
        assert_eq!(policy.max_retry_after, Duration::ZERO);
    }

    #[test]
    fn backoff_doubles_with_jitter_and_caps() {
        let policy = RetryPolicy {
            max_attempts: 10,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(1000),
            max_retry_after: Duration::from_secs(5),
            retry_budget: None,
        };
        for (next, full) in [(2, 100), (3, 200), (4, 400), (5, 800), (6, 1000), (9, 1000)] {
            for _ in 0..20 {
                let wait = policy.backoff(next).as_millis() as u64;
                assert!(
                    wait >= full / 2 && wait <= full,
                    "attempt {next}: {wait} ms"
                );
            }
        }
    }

    #[test]
    fn error_messages_are_extracted_and_redacted() {
        let secret = crate::Secret::new("sk-live-0123456789abcdefQQ");
        let transport =
            Transport::new("test", HttpOptions::default(), Redactor::new([&secret])).unwrap();
        let body = format!(
            r#"{{"error":{{"message":"Incorrect API key provided: {}","type":"x"}}}}"#,
            secret.expose()
        );
        assert_eq!(
            transport.error_message(body.as_bytes()),
            "Incorrect API key provided: ****QQ"
        );
        assert_eq!(transport.error_message(br#"{"error":"plain"}"#), "plain");
        assert_eq!(transport.error_message(br#"{"detail":"nope"}"#), "nope");
        assert_eq!(
            transport.error_message(b"  upstream exploded \n"),
            "upstream exploded"
        );
        assert_eq!(transport.error_message(b""), "(no message)");
        assert!(transport.error_message(&vec![b'x'; 5000]).len() < 700);
    }
}
