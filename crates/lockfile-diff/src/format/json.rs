//! What the JSON lockfiles (npm, Composer) share: error classification and
//! the top-level object check.

use serde::de::IgnoredAny;

use crate::packages::ParseError;

/// A syntax error is [`ParseError::NotJson`], a well-formed document of the
/// wrong shape [`ParseError::UnexpectedJson`].
pub(super) fn error(err: serde_json::Error) -> ParseError {
    match err.classify() {
        serde_json::error::Category::Data => ParseError::UnexpectedJson(err),
        _ => ParseError::NotJson(err),
    }
}

/// Rejects JSON whose top level is not an object before `serde` gets to it:
/// a derived struct would also accept an array, field by field, and report a
/// confusing error about its first element.
pub(super) fn require_object(text: &str) -> Result<(), ParseError> {
    if text.trim_start().starts_with('{') {
        return Ok(());
    }
    serde_json::from_str::<IgnoredAny>(text).map_err(error)?;
    Err(ParseError::UnexpectedJson(serde::de::Error::custom(
        "the top level is not an object",
    )))
}
