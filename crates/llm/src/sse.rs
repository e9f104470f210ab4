//! Server-sent events read from a whole, bounded body.
//!
//! The transport reads every answer whole (within
//! [`crate::HttpOptions::max_response_bytes`]) before anything parses it, so a
//! stream is split into events here, one at a time, straight from the buffered
//! bytes: each event's data is handed over and dropped before the next is read,
//! so what a caller keeps is all the memory a stream costs beyond its body (a
//! queue of parsed events would cost several times the body for a stream of
//! small events).
//!
//! The format is the WHATWG one: lines end with CRLF, LF or CR; `data:` lines
//! of one event are joined with `\n`; `event:` names it; lines starting with `:`
//! are comments; a blank line ends an event; an event without data is skipped.
//! Leniently, an event the body ends in without a blank line still counts.

use std::borrow::Cow;

/// One event: its name (`event:`, empty when not given) and its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    pub name: String,
    pub data: String,
}

/// The events of `body`, in order.
pub(crate) struct Events<'a> {
    rest: &'a [u8],
}

/// Iterates over the events in `body` (a leading byte-order mark is skipped).
pub(crate) fn events(body: &[u8]) -> Events<'_> {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    Events { rest: body }
}

impl Events<'_> {
    /// The next line without its terminator, or `None` at the end of the body.
    fn line(&mut self) -> Option<&[u8]> {
        if self.rest.is_empty() {
            return None;
        }
        let rest = self.rest;
        match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            Some(end) => {
                let skip = if rest[end] == b'\r' && rest.get(end + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                self.rest = &rest[end + skip..];
                Some(&rest[..end])
            }
            None => {
                self.rest = &[];
                Some(rest)
            }
        }
    }
}

impl Iterator for Events<'_> {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        let mut name = String::new();
        let mut data: Option<String> = None;
        loop {
            let Some(line) = self.line() else {
                // The end of the body ends a last event too.
                return data.map(|data| Event { name, data });
            };
            if line.is_empty() {
                match data.take() {
                    Some(data) => return Some(Event { name, data }),
                    None => {
                        name.clear();
                        continue;
                    }
                }
            }
            if line[0] == b':' {
                continue;
            }
            let (field, value) = match line.iter().position(|&b| b == b':') {
                Some(colon) => {
                    let value = &line[colon + 1..];
                    (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
                }
                None => (line, &b""[..]),
            };
            let value: Cow<'_, str> = String::from_utf8_lossy(value);
            match field {
                b"event" => name = value.into_owned(),
                b"data" => match &mut data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(&value);
                    }
                    None => data = Some(value.into_owned()),
                },
                // `id`, `retry` and unknown fields mean nothing to a one-shot read.
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(body: &str) -> Vec<(String, String)> {
        events(body.as_bytes()).map(|e| (e.name, e.data)).collect()
    }

    fn pair(name: &str, data: &str) -> (String, String) {
        (name.to_owned(), data.to_owned())
    }

    #[test]
    fn events_lines_and_comments() {
        assert_eq!(
            all("event: a\ndata: {\"x\":1}\n\n: keep-alive\n\ndata:two\ndata: lines\n\n"),
            vec![pair("a", "{\"x\":1}"), pair("", "two\nlines")]
        );
        assert_eq!(
            all("\u{feff}event: a\r\ndata: crlf\r\n\r\nevent: b\rdata: cr\r\r"),
            vec![pair("a", "crlf"), pair("b", "cr")]
        );
        assert_eq!(
            all("event: only a name\n\ndata: last without a blank line"),
            vec![pair("", "last without a blank line")]
        );
        assert_eq!(
            all("data\n\nid: 7\nretry: 10\ndata: x\n\n"),
            vec![pair("", ""), pair("", "x")]
        );
        assert!(all("").is_empty());
        assert!(all("\n\n\n:comment").is_empty());
    }

    #[test]
    fn invalid_utf8_is_read_lossily() {
        let body = b"data: \xff\xfe ok\n\n";
        let got: Vec<Event> = events(body).collect();
        assert_eq!(got.len(), 1);
        assert!(got[0].data.ends_with(" ok"));
    }
}
