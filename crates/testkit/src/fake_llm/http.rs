//! Just enough HTTP/1.1 for the fake servers: read one request (request line,
//! headers, a body framed by `Content-Length` or `Transfer-Encoding: chunked`) and
//! write one response with `Connection: close`.
//!
//! Nothing here panics on what a peer sends: bad input becomes a [`ReadError`].

use std::io::{self, Read as _, Write as _};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

use super::RecordedRequest;

/// Longest request line, header line or chunk-size line.
const MAX_LINE: usize = 64 * 1024;
/// Most header (or trailer) lines in one request.
const MAX_HEADERS: usize = 256;
/// Largest request body.
const MAX_BODY: usize = 64 * 1024 * 1024;
/// Empty lines tolerated before the request line (RFC 9112 §2.2).
const MAX_LEADING_EMPTY_LINES: usize = 8;

/// Why no request could be read.
#[derive(Debug)]
pub(super) enum ReadError {
    /// The peer closed before sending anything, or the connection failed or timed
    /// out: there is nobody to answer.
    Gone,
    /// Not a request we understand: answer `status` with `why` and record nothing.
    Bad { status: u16, why: String },
}

fn bad(why: impl Into<String>) -> ReadError {
    ReadError::Bad {
        status: 400,
        why: why.into(),
    }
}

/// A buffered reader over the connection that knows whether anything arrived.
struct Reader<'a> {
    stream: &'a TcpStream,
    buf: Vec<u8>,
    pos: usize,
    received: usize,
}

impl Reader<'_> {
    fn available(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// Reads more bytes; EOF before any byte is [`ReadError::Gone`], EOF later is a
    /// truncated request.
    fn fill(&mut self) -> Result<(), ReadError> {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match (&*self.stream).read(&mut chunk) {
                Ok(0) if self.received == 0 => return Err(ReadError::Gone),
                Ok(0) => return Err(bad("connection closed mid-request")),
                Ok(n) => {
                    self.received += n;
                    self.buf.extend_from_slice(&chunk[..n]);
                    return Ok(());
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Err(ReadError::Gone),
            }
        }
    }

    /// One line without its `\n` (and without a `\r` before it).
    fn line(&mut self) -> Result<Vec<u8>, ReadError> {
        loop {
            if let Some(end) = self.available().iter().position(|&b| b == b'\n') {
                let mut line = self.available()[..end].to_vec();
                self.pos += end + 1;
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(line);
            }
            if self.available().len() > MAX_LINE {
                return Err(ReadError::Bad {
                    status: 431,
                    why: format!("a line is longer than {MAX_LINE} bytes"),
                });
            }
            self.fill()?;
        }
    }

    /// Exactly `len` bytes.
    fn exact(&mut self, len: usize) -> Result<Vec<u8>, ReadError> {
        while self.available().len() < len {
            self.fill()?;
        }
        let bytes = self.available()[..len].to_vec();
        self.pos += len;
        Ok(bytes)
    }
}

/// RFC 9110 `tchar`: what a method or header name may contain.
fn is_token(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Reads one request. Writes `100 Continue` when the client expects it.
pub(super) fn read_request(stream: &TcpStream) -> Result<RecordedRequest, ReadError> {
    let mut reader = Reader {
        stream,
        buf: Vec::new(),
        pos: 0,
        received: 0,
    };

    let mut line = reader.line()?;
    let mut skipped = 0;
    while line.is_empty() {
        skipped += 1;
        if skipped > MAX_LEADING_EMPTY_LINES {
            return Err(bad("no request line"));
        }
        line = reader.line()?;
    }
    let (method, target) = parse_request_line(&line)?;

    let headers = read_fields(&mut reader)?;
    let header = |name: &'static str| {
        headers
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };

    if header("expect").any(|v| v.eq_ignore_ascii_case("100-continue")) {
        // The client waits for this before sending the body; if it has gone, the
        // body read below notices.
        let _ = (&*stream).write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
    }

    let body = if let Some(codings) = header("transfer-encoding").next_back() {
        let last = codings.rsplit(',').next().unwrap_or("").trim();
        if !last.eq_ignore_ascii_case("chunked") {
            return Err(bad(format!(
                "unsupported Transfer-Encoding {codings:?} (the last coding must be chunked)"
            )));
        }
        read_chunked(&mut reader)?
    } else {
        let mut length = None;
        for value in header("content-length").flat_map(|v| v.split(',')) {
            let value = value.trim();
            let parsed = value
                .parse::<usize>()
                .ok()
                .filter(|_| value.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| bad(format!("invalid Content-Length {value:?}")))?;
            if length.is_some_and(|seen| seen != parsed) {
                return Err(bad("conflicting Content-Length values"));
            }
            length = Some(parsed);
        }
        let length = length.unwrap_or(0);
        if length > MAX_BODY {
            return Err(too_large());
        }
        reader.exact(length)?
    };

    let path = path_of(&target);
    Ok(RecordedRequest {
        method,
        target,
        path,
        headers,
        body,
    })
}

fn too_large() -> ReadError {
    ReadError::Bad {
        status: 413,
        why: format!("request body larger than {MAX_BODY} bytes"),
    }
}

/// `METHOD SP request-target SP HTTP/1.x`, exactly.
fn parse_request_line(line: &[u8]) -> Result<(String, String), ReadError> {
    let text = std::str::from_utf8(line)
        .ok()
        .filter(|t| t.is_ascii())
        .ok_or_else(|| bad("request line is not ASCII"))?;
    let parts: Vec<&str> = text.split(' ').collect();
    let [method, target, version] = parts[..] else {
        return Err(bad(format!("malformed request line {text:?}")));
    };
    if !is_token(method) {
        return Err(bad(format!("malformed method {method:?}")));
    }
    if target.is_empty() || !target.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(bad(format!("malformed request-target {target:?}")));
    }
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err(bad(format!("unsupported version {version:?}")));
    }
    Ok((method.to_owned(), target.to_owned()))
}

/// Header (or trailer) lines up to the empty line; names lower-cased, values
/// trimmed and decoded lossily (obs-text is not UTF-8).
fn read_fields(reader: &mut Reader<'_>) -> Result<Vec<(String, String)>, ReadError> {
    let mut fields = Vec::new();
    loop {
        let line = reader.line()?;
        if line.is_empty() {
            return Ok(fields);
        }
        if fields.len() >= MAX_HEADERS {
            return Err(ReadError::Bad {
                status: 431,
                why: format!("more than {MAX_HEADERS} header lines"),
            });
        }
        if matches!(line[0], b' ' | b'\t') {
            return Err(bad("obsolete header line folding"));
        }
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or_else(|| bad("header line without a colon"))?;
        let name = std::str::from_utf8(&line[..colon])
            .ok()
            .filter(|n| is_token(n))
            .ok_or_else(|| bad("malformed header name"))?
            .to_ascii_lowercase();
        let value = String::from_utf8_lossy(&line[colon + 1..])
            .trim_matches([' ', '\t'])
            .to_owned();
        fields.push((name, value));
    }
}

/// A chunked body: `size[;ext] CRLF data CRLF` … `0 CRLF trailers CRLF`.
fn read_chunked(reader: &mut Reader<'_>) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::new();
    loop {
        let line = reader.line()?;
        let text = String::from_utf8_lossy(&line);
        let size_text = text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16)
            .ok()
            .filter(|_| !size_text.starts_with('+'))
            .ok_or_else(|| bad(format!("malformed chunk size {size_text:?}")))?;
        if size == 0 {
            // Trailers are read and dropped.
            read_fields(reader)?;
            return Ok(body);
        }
        if body.len().saturating_add(size) > MAX_BODY {
            return Err(too_large());
        }
        body.extend_from_slice(&reader.exact(size)?);
        if !reader.line()?.is_empty() {
            return Err(bad("chunk data longer than its size"));
        }
    }
}

/// The path of a request-target: origin-form as is, absolute-form without scheme
/// and authority; the query is dropped either way. Authority-form (`CONNECT`) and
/// asterisk-form targets are returned unchanged.
fn path_of(target: &str) -> String {
    let without_query = |t: &str| t.split(['?', '#']).next().unwrap_or("").to_owned();
    if target.starts_with('/') {
        return without_query(target);
    }
    match target.split_once("://") {
        Some((scheme, rest)) if is_token(scheme) => {
            let path = rest.find('/').map_or("/", |slash| &rest[slash..]);
            let path = without_query(path);
            if path.is_empty() {
                "/".to_owned()
            } else {
                path
            }
        }
        _ => target.to_owned(),
    }
}

/// One response, ready to write.
#[derive(Debug)]
pub(super) struct Response {
    pub status: u16,
    pub content_type: String,
    pub body: Body,
    /// `Content-Length` to declare when it is not the body's length (truncation).
    pub declared_len: Option<usize>,
    /// Send the body with `Transfer-Encoding: chunked` and no `Content-Length`.
    pub chunked: bool,
    /// Extra headers; one named like a default header replaces the default.
    pub headers: Vec<(String, String)>,
}

/// A response body: bytes as they are, or a long body described by its pieces
/// and written piece by piece, so that sending 100 MB costs the server a few
/// kilobytes of memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Body {
    Bytes(Vec<u8>),
    /// `parts[0]`, `unit` × `times`, `parts[1]`, `unit` × `times`, …, the last
    /// part: the parts joined by the repeated unit.
    Repeated {
        parts: Vec<Vec<u8>>,
        unit: Vec<u8>,
        times: usize,
    },
}

impl Body {
    /// The body's length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Body::Bytes(bytes) => bytes.len(),
            Body::Repeated { parts, unit, times } => {
                let joins = parts.len().saturating_sub(1);
                let repeated = unit.len().saturating_mul(*times).saturating_mul(joins);
                parts
                    .iter()
                    .map(Vec::len)
                    .fold(repeated, usize::saturating_add)
            }
        }
    }
}

impl Response {
    pub fn json(status: u16, body: &serde_json::Value) -> Response {
        Response {
            status,
            content_type: "application/json".to_owned(),
            body: Body::Bytes(body.to_string().into_bytes()),
            declared_len: None,
            chunked: false,
            headers: Vec::new(),
        }
    }
}

/// Bytes of the body written at a time (and the size of a chunk when chunked).
const WRITE_BLOCK: usize = 64 * 1024;

/// Writes the body in blocks of [`WRITE_BLOCK`] bytes, framed as chunks when
/// asked to; the status line and headers go out with the first block, so a
/// small response is one write.
struct BodyWriter<'a> {
    stream: &'a TcpStream,
    head: Vec<u8>,
    buf: Vec<u8>,
    chunked: bool,
}

impl BodyWriter<'_> {
    fn put(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let room = WRITE_BLOCK - self.buf.len();
            let (now, later) = bytes.split_at(room.min(bytes.len()));
            self.buf.extend_from_slice(now);
            bytes = later;
            if self.buf.len() == WRITE_BLOCK {
                self.flush()?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut stream = self.stream;
        if !self.chunked && self.head.is_empty() {
            stream.write_all(&self.buf)?;
        } else {
            let mut out = std::mem::take(&mut self.head);
            if !self.buf.is_empty() {
                if self.chunked {
                    out.extend_from_slice(format!("{:x}\r\n", self.buf.len()).as_bytes());
                    out.extend_from_slice(&self.buf);
                    out.extend_from_slice(b"\r\n");
                } else {
                    out.extend_from_slice(&self.buf);
                }
            }
            stream.write_all(&out)?;
        }
        self.buf.clear();
        Ok(())
    }

    fn finish(mut self) -> io::Result<()> {
        self.flush()?;
        let mut stream = self.stream;
        if self.chunked {
            stream.write_all(b"0\r\n\r\n")?;
        }
        stream.flush()
    }
}

/// Writes the status line, headers and body.
pub(super) fn write_response(stream: &TcpStream, response: &Response) -> io::Result<()> {
    let length = response
        .declared_len
        .unwrap_or(response.body.len())
        .to_string();
    let framing = if response.chunked {
        ("Transfer-Encoding", "chunked")
    } else {
        ("Content-Length", length.as_str())
    };
    let defaults = [
        ("Content-Type", response.content_type.as_str()),
        framing,
        ("Connection", "close"),
    ];
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        response.status,
        reason(response.status)
    );
    for (name, value) in defaults {
        if !response
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut out = BodyWriter {
        stream,
        head: head.into_bytes(),
        buf: Vec::with_capacity(WRITE_BLOCK),
        chunked: response.chunked,
    };
    match &response.body {
        Body::Bytes(bytes) => out.put(bytes)?,
        Body::Repeated { parts, unit, times } => {
            // A block of whole units, so most writes are one call.
            let per_block = (WRITE_BLOCK / unit.len().max(1)).max(1);
            let block = unit.repeat(per_block.min(*times));
            for (i, part) in parts.iter().enumerate() {
                if i > 0 {
                    let mut left = *times;
                    while left > 0 {
                        let n = left.min(per_block);
                        out.put(&block[..n * unit.len()])?;
                        left -= n;
                    }
                }
                out.put(part)?;
            }
        }
    }
    out.finish()
}

/// Closes after a response: send FIN, then read whatever the client still sends
/// (briefly) so that unread input does not turn the close into a reset that could
/// destroy the response before the client reads it.
pub(super) fn close(stream: TcpStream) {
    let _ = stream.shutdown(Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let mut sink = [0u8; 8 * 1024];
    let mut drained = 0;
    while drained < MAX_LINE * 16 {
        match (&stream).read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(n) => drained += n,
        }
    }
}

/// The reason phrase for a status code (any phrase is valid HTTP; clients ignore it).
fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::path_of;

    #[test]
    fn paths_of_targets() {
        let check =
            |target: &str, expected: &str| assert_eq!(path_of(target), expected, "{target}");
        check("/v1/responses", "/v1/responses");
        check("/v1/responses?api-version=1", "/v1/responses");
        check("http://llm.invalid/v1/responses", "/v1/responses");
        check("https://llm.invalid:8443/v1/messages?x=1", "/v1/messages");
        check("http://llm.invalid", "/");
        check("http://llm.invalid?x", "/");
        check("llm.invalid:443", "llm.invalid:443");
        check("*", "*");
    }
}
