//! What a read asks for (spec 003 §3.2 `ReadQuery`), and parsing of the CLI's
//! textual forms.

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};

use crate::error::ReadError;

pub use ultragit_schema::{ContextLevelFilter, LineRange};

/// `--since`: a point in time, or a commit whose time is the point. An
/// annotation passes when its *commit* was made at or after the point (the
/// committer date, not the note's timestamp: see [`crate::score`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SinceFilter {
    Date(DateTime<Utc>),
    /// A commit (any revision git resolves); its committer time is the cutoff.
    Sha(String),
}

impl SinceFilter {
    /// Parses an ISO 8601 date (`2025-01-31`), date-time (`2025-01-31T12:00:00Z`,
    /// with any offset, or without one meaning UTC); anything else is taken as a
    /// commit, checked when the query runs.
    pub fn parse(text: &str) -> Result<SinceFilter, ReadError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(ReadError::InvalidSince {
                value: text.to_owned(),
            });
        }
        if let Ok(when) = DateTime::parse_from_rfc3339(text) {
            return Ok(SinceFilter::Date(when.with_timezone(&Utc)));
        }
        for format in ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M"] {
            if let Ok(naive) = NaiveDateTime::parse_from_str(text, format) {
                return Ok(SinceFilter::Date(Utc.from_utc_datetime(&naive)));
            }
        }
        if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
            let midnight = date.and_hms_opt(0, 0, 0).expect("midnight exists");
            return Ok(SinceFilter::Date(Utc.from_utc_datetime(&midnight)));
        }
        if looks_like_a_date(text) {
            // `2025-13-45` is a broken date, not a branch name.
            return Err(ReadError::InvalidSince {
                value: text.to_owned(),
            });
        }
        Ok(SinceFilter::Sha(text.to_owned()))
    }
}

fn looks_like_a_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() >= 8
        && bytes[..4].iter().all(u8::is_ascii_digit)
        && bytes[4] == b'-'
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || "-:T ZzZ+.".contains(c))
}

/// Parses `--lines START:END` (1-based, inclusive, START ≤ END). Bounds against
/// the file are checked when the query runs.
pub fn parse_lines(text: &str) -> Result<LineRange, ReadError> {
    let invalid = |reason: &str| ReadError::InvalidLineRange {
        text: text.to_owned(),
        reason: reason.to_owned(),
    };
    let (start, end) = text
        .split_once(':')
        .ok_or_else(|| invalid("expected START:END, e.g. 10:20"))?;
    let number = |s: &str| {
        s.trim()
            .parse::<u32>()
            .map_err(|_| invalid("START and END must be whole numbers, e.g. 10:20"))
    };
    let (start, end) = (number(start)?, number(end)?);
    validate_range(start, end, text)?;
    Ok(LineRange { start, end })
}

pub(crate) fn validate_range(start: u32, end: u32, text: &str) -> Result<(), ReadError> {
    if start == 0 {
        return Err(ReadError::InvalidLineRange {
            text: text.to_owned(),
            reason: "lines are numbered from 1".to_owned(),
        });
    }
    if start > end {
        return Err(ReadError::InvalidLineRange {
            text: text.to_owned(),
            reason: "START is after END".to_owned(),
        });
    }
    Ok(())
}

/// A read query (spec 003 §3.2).
#[derive(Debug, Clone, PartialEq)]
pub struct ReadQuery {
    /// Repository-relative files (`/`-separated). Several: multi-file mode.
    pub files: Vec<String>,
    /// A named unit (`connect`, `MqttClient::connect`), resolved with tree-sitter.
    pub anchor: Option<String>,
    /// A line range; exclusive with `anchor`.
    pub lines: Option<LineRange>,
    /// Only annotations of commits made at or after this point.
    pub since: Option<SinceFilter>,
    /// Keep only regions with one of these tags (compared case-insensitively).
    pub tags: Option<Vec<String>>,
    pub context_level: ContextLevelFilter,
    /// Drop regions scoring below this.
    pub min_confidence: f64,
    /// Hops of `related_annotations` to follow; 0 = direct only.
    pub depth: u32,
    /// Cap on returned regions; `None`: the configured default
    /// (`ultragit.defaultMaxRegions`, 20).
    pub max_regions: Option<u32>,
    /// Token budget of the rendered output.
    pub max_tokens: Option<u32>,
    /// Include every field, even empty ones.
    pub verbose: bool,
    /// The output format the token budget is measured in.
    pub format: Format,
}

impl ReadQuery {
    /// A query for one file with the CLI's defaults.
    pub fn file(path: impl Into<String>) -> ReadQuery {
        ReadQuery {
            files: vec![path.into()],
            anchor: None,
            lines: None,
            since: None,
            tags: None,
            context_level: ContextLevelFilter::All,
            min_confidence: 0.0,
            depth: 1,
            max_regions: None,
            max_tokens: None,
            verbose: false,
            format: Format::Markdown,
        }
    }

    /// The same query with an anchor.
    pub fn with_anchor(mut self, anchor: impl Into<String>) -> ReadQuery {
        self.anchor = Some(anchor.into());
        self
    }

    /// The same query with a line range.
    pub fn with_lines(mut self, start: u32, end: u32) -> ReadQuery {
        self.lines = Some(LineRange { start, end });
        self
    }
}

/// How output is rendered (and measured for `--max-tokens`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Structured markdown, the most token-efficient for a model (default).
    #[default]
    Markdown,
    /// `ultragit-read/v1` JSON.
    Json,
    /// Plain text for people.
    Pretty,
}

impl Format {
    /// Parses `markdown`, `json`, `pretty`.
    pub fn parse(text: &str) -> Option<Format> {
        match text {
            "markdown" | "md" => Some(Format::Markdown),
            "json" => Some(Format::Json),
            "pretty" => Some(Format::Pretty),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_line_ranges() {
        assert_eq!(
            parse_lines("10:20").unwrap(),
            LineRange { start: 10, end: 20 }
        );
        assert_eq!(
            parse_lines(" 3 : 3 ").unwrap(),
            LineRange { start: 3, end: 3 }
        );
        for (bad, fragment) in [
            ("20:10", "START is after END"),
            ("0:5", "numbered from 1"),
            ("10-20", "expected START:END"),
            ("a:b", "whole numbers"),
            ("-1:5", "whole numbers"),
        ] {
            let err = parse_lines(bad).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("Invalid line range {bad}: ")),
                "{err}"
            );
            assert!(err.contains(fragment), "{err}");
        }
    }

    #[test]
    fn parses_since() {
        let date = |s| match SinceFilter::parse(s).unwrap() {
            SinceFilter::Date(d) => d.to_rfc3339(),
            other => panic!("{other:?}"),
        };
        assert_eq!(date("2025-01-31"), "2025-01-31T00:00:00+00:00");
        assert_eq!(date("2025-01-31T12:30:00Z"), "2025-01-31T12:30:00+00:00");
        assert_eq!(
            date("2025-01-31T12:30:00+02:00"),
            "2025-01-31T10:30:00+00:00"
        );
        assert_eq!(date("2025-01-31T12:30:00"), "2025-01-31T12:30:00+00:00");
        assert_eq!(
            SinceFilter::parse("abc1234").unwrap(),
            SinceFilter::Sha("abc1234".into())
        );
        assert_eq!(
            SinceFilter::parse("HEAD~3").unwrap(),
            SinceFilter::Sha("HEAD~3".into())
        );
        assert!(SinceFilter::parse("2025-13-45").is_err());
        assert!(SinceFilter::parse("").is_err());
    }
}
