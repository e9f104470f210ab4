//! Where a run's events go: a session directory, a human console stream, or
//! nowhere.
//!
//! **Invariant:** every sink redacts known secrets from every string before it
//! writes anything (its [`llm::Redactor`]), so a key never reaches a trace file or
//! a terminal — only its masked form (`****Yz`).
//!
//! Session directory (`events.ndjson`, `session.json`, `artifacts/`):
//! - `events.ndjson`: one JSON object per event, appended as it happens:
//!   `{"seq":1,"time":"…","level":"info","event":"request",…fields}`; a
//!   `request` event's `request` field is the JSON body the provider sent over
//!   the wire (`llm::LlmProvider::wire_body`: model, service tier, reasoning,
//!   `store`, `stream`, the output cap), redacted like every field; keys travel
//!   in headers and are never part of it;
//! - `session.json`: a compact snapshot rewritten after every event (metadata,
//!   counts per event kind, the last event, the final artifact or error);
//! - `artifacts/<sha256>.txt`: strings longer than `ARTIFACT_THRESHOLD` bytes,
//!   replaced in both files by `{"artifact":"artifacts/<sha256>.txt","bytes":…,
//!   "lines":…,"preview":"…"}`.
//!
//! **Invariant:** a session's size is bounded whatever a model or a tool sends.
//! - One artifact holds at most [`ARTIFACT_MAX`] (1 MiB) of its text: a longer
//!   one keeps its head and tail around a marker line that says how many bytes
//!   were cut ([`crate::clip_middle`]), and its reference says
//!   `"clipped": true` (`bytes` and `lines` are always the whole text's).
//! - A session writes at most [`SESSION_ARTIFACTS_MAX`] (32 MiB) of artifacts;
//!   past that, references carry `"artifact": null` and an `omitted` note.
//! - A field whose JSON is still over [`INLINE_FIELD_MAX`] (256 KiB) after
//!   long strings went to artifacts (a reply of a million short strings)
//!   becomes an artifact of its own (`"format": "json"`).
//! - `events.ndjson` grows to at most [`EVENTS_MAX`] (8 MiB); later events are
//!   written without their fields, with an `omitted` note.
//!
//! A normal session (a few dozen events, prompts under 100 KiB) stays far from
//! every bound.
//!
//! Console lines look like `15:04:05 INF tool.output tool=read_file ok=true`; long
//! or multi-line values follow as indented preview blocks that say how much was
//! left out. Colour (keys and levels) only when the caller says the output is a
//! terminal.
//!
//! **Invariant:** the console sink prints no control character it did not put
//! there itself: event kinds, keys and values (model text, tool output) pass
//! through [`safe_io::term::sanitize_line`] (inline) or
//! [`safe_io::term::sanitize`] (preview lines), so `ESC`, `CR`, C1 controls and
//! bidi overrides show as visible escapes.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use llm::Redactor;
use safe_io::Dir;
use safe_io::term::{sanitize, sanitize_line};

use crate::clip::clip_middle;

/// Strings longer than this many bytes go to `artifacts/` in session traces.
pub(crate) const ARTIFACT_THRESHOLD: usize = 2048;

/// The most of one text an artifact holds: 1 MiB (head and tail).
pub const ARTIFACT_MAX: usize = 1024 * 1024;

/// The most bytes of artifacts one session writes: 32 MiB.
pub const SESSION_ARTIFACTS_MAX: u64 = 32 * 1024 * 1024;

/// A field whose JSON is longer than this after externalizing goes to an
/// artifact as a whole: 256 KiB.
pub const INLINE_FIELD_MAX: usize = 256 * 1024;

/// The most bytes `events.ndjson` grows to with full events: 8 MiB.
pub const EVENTS_MAX: u64 = 8 * 1024 * 1024;

/// Console values longer than this (or multi-line) print as preview blocks.
const INLINE_MAX: usize = 100;
/// Fields a summarized console sink shows only the size of.
pub(crate) const SUMMARIZED_AWAY: &[&str] = &["request", "raw"];

/// Lines of a preview block.
const PREVIEW_LINES: usize = 8;
/// Characters of one preview line.
const PREVIEW_WIDTH: usize = 160;

/// How important an event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warn,
    Error,
}

impl Level {
    fn tag(self) -> &'static str {
        match self {
            Level::Info => "INF",
            Level::Warn => "WRN",
            Level::Error => "ERR",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

/// One thing that happened.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Dotted kind, e.g. `request`, `tool.output`, `final`.
    pub kind: String,
    pub level: Level,
    /// Ordered fields.
    pub fields: Vec<(String, Value)>,
}

impl Event {
    /// An info event.
    pub fn info(kind: &str) -> Self {
        Event {
            kind: kind.to_owned(),
            level: Level::Info,
            fields: Vec::new(),
        }
    }

    /// A warning.
    pub fn warn(kind: &str) -> Self {
        Event {
            level: Level::Warn,
            ..Event::info(kind)
        }
    }

    /// An error.
    pub fn error(kind: &str) -> Self {
        Event {
            level: Level::Error,
            ..Event::info(kind)
        }
    }

    /// Adds a field.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.fields.push((key.to_owned(), value.into()));
        self
    }
}

/// A destination for events. Writing a trace never fails a run: sinks report I/O
/// problems through [`TraceSink::problems`] instead.
pub trait TraceSink: Send {
    /// Records one event.
    fn record(&mut self, event: &Event);
    /// I/O problems met so far (a full disk, a deleted directory).
    fn problems(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Discards everything.
#[derive(Debug, Default)]
pub struct NullSink;

impl TraceSink for NullSink {
    fn record(&mut self, _event: &Event) {}
}

/// Replaces secrets in every string of a value.
fn redact_value(value: &Value, redactor: &Redactor) -> Value {
    match value {
        Value::String(s) => Value::String(redactor.redact(s)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| redact_value(v, redactor)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (redactor.redact(k), redact_value(v, redactor)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A session directory: `events.ndjson`, `session.json`, `artifacts/`.
///
/// Everything is written through directory handles ([`safe_io::Dir`]): no file
/// or directory of the session is reached through a symbolic link, so a link
/// planted in a repository cannot send a trace elsewhere.
#[derive(Debug)]
pub struct SessionSink {
    dir: Dir,
    artifacts: Dir,
    redactor: Redactor,
    metadata: Value,
    started_at: String,
    seq: u64,
    counts: BTreeMap<String, u64>,
    last: Option<String>,
    outcome: Option<Value>,
    problems: Vec<String>,
    /// Bytes written to `artifacts/` so far.
    artifact_bytes: u64,
    /// Bytes appended to `events.ndjson` so far.
    event_bytes: u64,
}

impl SessionSink {
    /// Starts a session in the (empty) directory `dir`: creates `artifacts/`
    /// and `events.ndjson` and writes the first `session.json`. `metadata`
    /// describes the session (command, mode, repository, paths).
    pub fn create(dir: Dir, metadata: Value, redactor: Redactor) -> io::Result<SessionSink> {
        let artifacts = dir.create_dir_all("artifacts").map_err(io::Error::other)?;
        dir.append("events.ndjson").map_err(io::Error::other)?;
        let sink = SessionSink {
            dir,
            artifacts,
            metadata: redact_value(&metadata, &redactor),
            redactor,
            started_at: now_rfc3339(),
            seq: 0,
            counts: BTreeMap::new(),
            last: None,
            outcome: None,
            problems: Vec::new(),
            artifact_bytes: 0,
            event_bytes: 0,
        };
        sink.write_snapshot()?;
        Ok(sink)
    }

    /// The session directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Large strings become artifact references.
    fn externalize(&mut self, value: &Value) -> Value {
        match value {
            Value::String(s) if s.len() > ARTIFACT_THRESHOLD => self.artifact(s, None),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.externalize(v)).collect())
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.externalize(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// One event field as stored: long strings externalized, and the whole
    /// field an artifact of its own if its JSON is still too long.
    fn field(&mut self, value: &Value) -> Value {
        let value = self.externalize(value);
        if value.is_string() {
            return value;
        }
        let json = value.to_string();
        if json.len() > INLINE_FIELD_MAX {
            self.artifact(&json, Some("json"))
        } else {
            value
        }
    }

    /// The reference to an artifact holding `text` (cut to [`ARTIFACT_MAX`]),
    /// or, once the session's artifacts reached [`SESSION_ARTIFACTS_MAX`] or
    /// the write failed, a reference with `"artifact": null`.
    fn artifact(&mut self, text: &str, format: Option<&str>) -> Value {
        let kept = clip_middle(text, ARTIFACT_MAX);
        let mut reference = json!({
            "artifact": null,
            "bytes": text.len(),
            "lines": text.lines().count(),
            "preview": preview_head(text, 200),
        });
        if let Some(format) = format {
            reference["format"] = json!(format);
        }
        if kept.len() < text.len() {
            reference["clipped"] = json!(true);
        }
        match self.write_artifact(&kept) {
            Ok(Some(name)) => reference["artifact"] = json!(format!("artifacts/{name}")),
            Ok(None) => {
                reference["omitted"] = json!(format!(
                    "the session's {} MiB of artifacts are used up",
                    SESSION_ARTIFACTS_MAX / (1024 * 1024)
                ));
            }
            Err(err) => {
                self.problems.push(format!("artifact: {err}"));
                reference["omitted"] = json!(format!("could not be written: {err}"));
            }
        }
        reference
    }

    /// Writes `text` as `artifacts/<sha256>.txt` (once per content) and returns
    /// the name; `None` when the session's artifact budget cannot hold it.
    fn write_artifact(&mut self, text: &str) -> io::Result<Option<String>> {
        let digest = Sha256::digest(text.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        let name = format!("{hex}.txt");
        if self
            .artifacts
            .kind(&name)
            .map_err(io::Error::other)?
            .is_some()
        {
            return Ok(Some(name));
        }
        let size = text.len() as u64;
        if self.artifact_bytes + size > SESSION_ARTIFACTS_MAX {
            return Ok(None);
        }
        self.artifacts
            .write(&name, text.as_bytes())
            .map_err(io::Error::other)?;
        self.artifact_bytes += size;
        Ok(Some(name))
    }

    fn write_snapshot(&self) -> io::Result<()> {
        let snapshot = json!({
            "session": self.metadata,
            "started_at": self.started_at,
            "updated_at": now_rfc3339(),
            "events": self.seq,
            "event_counts": self.counts,
            "last_event": self.last,
            "outcome": self.outcome,
        });
        let text = serde_json::to_string_pretty(&snapshot).unwrap_or_default();
        self.dir
            .write("session.json", text.as_bytes())
            .map_err(io::Error::other)
    }

    fn append(&mut self, line: &str) -> io::Result<()> {
        let mut file = self.dir.append("events.ndjson").map_err(io::Error::other)?;
        file.write_all(line.as_bytes())?;
        file.write_all(b"\n")?;
        self.event_bytes += line.len() as u64 + 1;
        Ok(())
    }
}

impl TraceSink for SessionSink {
    fn record(&mut self, event: &Event) {
        self.seq += 1;
        let mut object = Map::new();
        object.insert("seq".into(), json!(self.seq));
        object.insert("time".into(), json!(now_rfc3339()));
        object.insert("level".into(), json!(event.level.name()));
        object.insert("event".into(), json!(event.kind));
        let head = object.clone();
        for (key, value) in &event.fields {
            let value = redact_value(value, &self.redactor);
            let value = self.field(&value);
            object.insert(self.redactor.redact(key), value);
        }
        *self.counts.entry(event.kind.clone()).or_default() += 1;
        self.last = Some(event.kind.clone());
        if matches!(event.kind.as_str(), "final" | "error") {
            let mut outcome = object.clone();
            outcome.remove("seq");
            self.outcome = Some(Value::Object(outcome));
        }
        let mut line = Value::Object(object).to_string();
        if self.event_bytes + line.len() as u64 > EVENTS_MAX {
            let mut short = head;
            short.insert(
                "omitted".into(),
                json!(format!(
                    "fields left out: events.ndjson reached {} MiB",
                    EVENTS_MAX / (1024 * 1024)
                )),
            );
            line = Value::Object(short).to_string();
        }
        if let Err(err) = self.append(&line) {
            self.problems.push(format!("events.ndjson: {err}"));
        }
        if let Err(err) = self.write_snapshot() {
            self.problems.push(format!("session.json: {err}"));
        }
    }

    fn problems(&self) -> Vec<String> {
        self.problems.clone()
    }
}

/// Human-readable lines on a writer (the binary passes stdout or stderr).
pub struct ConsoleSink<W: Write + Send> {
    out: W,
    color: bool,
    redactor: Redactor,
    clock: fn() -> String,
    problems: Vec<String>,
    summarized: bool,
}

impl<W: Write + Send> std::fmt::Debug for ConsoleSink<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsoleSink")
            .field("color", &self.color)
            .finish_non_exhaustive()
    }
}

impl<W: Write + Send> ConsoleSink<W> {
    /// Lines on `out`; `color` only when `out` is a terminal.
    pub fn new(out: W, color: bool, redactor: Redactor) -> Self {
        ConsoleSink {
            out,
            color,
            redactor,
            clock: local_clock,
            problems: Vec::new(),
            summarized: false,
        }
    }

    /// Summarized lines: the raw request and response JSON (fields
    /// `SUMMARIZED_AWAY`) are replaced by their size (`request_bytes=…`), so a
    /// console trace keeps event types and counters without dumping payloads.
    pub fn summarized(mut self) -> Self {
        self.summarized = true;
        self
    }

    /// Uses `clock` for the time column (tests pin it).
    pub fn with_clock(mut self, clock: fn() -> String) -> Self {
        self.clock = clock;
        self
    }

    /// The writer back.
    pub fn into_inner(self) -> W {
        self.out
    }

    fn render(&self, event: &Event) -> String {
        let (key_on, level_on, off) = if self.color {
            let level = match event.level {
                Level::Info => "\x1b[32m",
                Level::Warn => "\x1b[33m",
                Level::Error => "\x1b[31m",
            };
            ("\x1b[36m", level, "\x1b[0m")
        } else {
            ("", "", "")
        };
        let mut line = format!(
            "{} {level_on}{}{off} {}",
            (self.clock)(),
            event.level.tag(),
            sanitize_line(&event.kind)
        );
        let mut blocks = String::new();
        for (key, value) in &event.fields {
            let key = sanitize_line(&self.redactor.redact(key)).into_owned();
            if self.summarized && SUMMARIZED_AWAY.contains(&key.as_str()) {
                let bytes = match value {
                    Value::String(s) => s.len(),
                    Value::Null => continue,
                    other => other.to_string().len(),
                };
                line.push_str(&format!(" {key_on}{key}_bytes{off}={bytes}"));
                continue;
            }
            let value = redact_value(value, &self.redactor);
            let text = match &value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if text.len() > INLINE_MAX || text.contains('\n') {
                line.push_str(&format!(" {key_on}{key}{off}=<{}>", size_note(&text)));
                blocks.push_str(&preview_block(&key, &text));
            } else {
                line.push_str(&format!(" {key_on}{key}{off}={}", inline(&text, &value)));
            }
        }
        line.push('\n');
        line.push_str(&blocks);
        line
    }
}

impl<W: Write + Send> TraceSink for ConsoleSink<W> {
    fn record(&mut self, event: &Event) {
        let text = self.render(event);
        if let Err(err) = self
            .out
            .write_all(text.as_bytes())
            .and_then(|()| self.out.flush())
        {
            self.problems.push(format!("console: {err}"));
        }
    }

    fn problems(&self) -> Vec<String> {
        self.problems.clone()
    }
}

/// A short value for the line itself: as it is when it is one plain word (or
/// not a string), quoted otherwise; either way with control characters shown
/// as escapes.
fn inline(text: &str, value: &Value) -> String {
    let plain = value.is_string()
        && !text.is_empty()
        && !text
            .chars()
            .any(|c| c.is_whitespace() || c == '"' || c == '=');
    if plain || !value.is_string() {
        sanitize_line(text).into_owned()
    } else {
        // Debug quoting escapes controls already; bidi marks it may keep.
        sanitize_line(&format!("{text:?}")).into_owned()
    }
}

fn size_note(text: &str) -> String {
    let lines = text.lines().count();
    format!("{lines} lines, {} bytes", text.len())
}

/// `    key: 312 lines, 12034 bytes (first 8 lines shown)` then `      | …` lines.
fn preview_block(key: &str, text: &str) -> String {
    let total = text.lines().count();
    let shown = total.min(PREVIEW_LINES);
    let mut out = format!("    {key}: {}", size_note(text));
    if shown < total {
        out.push_str(&format!(
            " (first {shown} lines shown, {} more)",
            total - shown
        ));
    }
    out.push('\n');
    for line in text.lines().take(shown) {
        out.push_str("      | ");
        out.push_str(&sanitize(&preview_head(line, PREVIEW_WIDTH)));
        out.push('\n');
    }
    out
}

/// The first `max` characters, with `…` when cut.
fn preview_head(text: &str, max: usize) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(max).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

fn local_clock() -> String {
    chrono::Local::now().format("%H:%M:%S").to_string()
}

fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock() -> String {
        "15:04:05".to_owned()
    }

    #[test]
    fn console_lines_and_preview_blocks() {
        let mut sink = ConsoleSink::new(Vec::new(), false, Redactor::default()).with_clock(clock);
        sink.record(
            &Event::info("session.started")
                .with("command", "commit")
                .with("steps", 3),
        );
        let diff: String = (1..=12).map(|i| format!("+line {i}\n")).collect();
        sink.record(
            &Event::warn("tool.output")
                .with("tool", "git_staged_diff")
                .with("output", diff)
                .with("note", "two words"),
        );
        let text = String::from_utf8(sink.into_inner()).unwrap();
        assert_eq!(
            text,
            "15:04:05 INF session.started command=commit steps=3\n\
             15:04:05 WRN tool.output tool=git_staged_diff output=<12 lines, 99 bytes> note=\"two words\"\n    \
             output: 12 lines, 99 bytes (first 8 lines shown, 4 more)\n      | +line 1\n      | +line 2\n      | +line 3\n      \
             | +line 4\n      | +line 5\n      | +line 6\n      | +line 7\n      | +line 8\n"
        );
    }

    #[test]
    fn summarized_console_lines_drop_payloads() {
        let mut sink = ConsoleSink::new(Vec::new(), false, Redactor::default())
            .with_clock(clock)
            .summarized();
        sink.record(
            &Event::info("request")
                .with("step", 1)
                .with("request", json!({"messages": ["a long prompt"]})),
        );
        sink.record(
            &Event::info("response")
                .with("raw", Value::Null)
                .with("text", "ok"),
        );
        let text = String::from_utf8(sink.into_inner()).unwrap();
        assert_eq!(
            text,
            "15:04:05 INF request step=1 request_bytes=30\n15:04:05 INF response text=ok\n"
        );
    }

    #[test]
    fn console_colour_only_when_asked() {
        let mut sink = ConsoleSink::new(Vec::new(), true, Redactor::default()).with_clock(clock);
        sink.record(&Event::error("error").with("message", "x"));
        let text = String::from_utf8(sink.into_inner()).unwrap();
        assert_eq!(
            text,
            "15:04:05 \x1b[31mERR\x1b[0m error \x1b[36mmessage\x1b[0m=x\n"
        );
    }
}
