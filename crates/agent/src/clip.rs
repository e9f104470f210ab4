//! Cutting long text down to a bound, keeping both ends.
//!
//! A model's answer, a tool's output or a reply can be far longer than anything
//! worth storing, sending back or printing. [`clip_middle`] keeps the first
//! three quarters and the last quarter of the allowed bytes (an answer's
//! beginning says what it is, its end often where it went wrong) and puts a
//! marker line between them that says how many bytes were cut, so nobody
//! mistakes the result for the whole.

use std::borrow::Cow;

use serde_json::Value;

/// `text` if it is at most `max` bytes; otherwise its head and tail around a
/// marker line, at most `max` bytes in all, cut on character boundaries. So
/// clipping again with the same bound changes nothing. (A `max` shorter than
/// the marker itself, under 100 bytes, yields the marker alone.)
pub fn clip_middle(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let marker = |cut: usize| {
        format!(
            "\n[… {cut} bytes cut here: the text is {} bytes, more than the {max} kept …]\n",
            text.len()
        )
    };
    // The marker with the longest count it can hold, so the real one fits.
    let keep = max.saturating_sub(marker(text.len()).len());
    let head_end = floor_boundary(text, keep - keep / 4);
    let tail_start = ceil_boundary(text, text.len() - keep / 4).max(head_end);
    Cow::Owned(format!(
        "{}{}{}",
        &text[..head_end],
        marker(tail_start - head_end),
        &text[tail_start..]
    ))
}

/// A copy of `value` with every string longer than `max` bytes clipped by
/// [`clip_middle`], without copying the long strings first.
pub(crate) fn clip_strings(value: &Value, max: usize) -> Value {
    match value {
        Value::String(s) => Value::String(clip_middle(s, max).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(|v| clip_strings(v, max)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (clip_middle(k, max).into_owned(), clip_strings(v, max)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn short_text_is_kept_and_long_text_keeps_both_ends() {
        assert!(matches!(clip_middle("short", 10), Cow::Borrowed("short")));
        let text = format!("{}{}", "a".repeat(600), "z".repeat(400));
        let clipped = clip_middle(&text, 200);
        let marker = "\n[… 879 bytes cut here: the text is 1000 bytes, more than the 200 kept …]\n";
        assert_eq!(
            clipped,
            format!("{}{marker}{}", "a".repeat(91), "z".repeat(30))
        );
        assert_eq!(
            clipped.len(),
            200 - 1,
            "the marker's count is a digit short of the bound"
        );
        assert_eq!(
            clip_middle(&clipped, 200),
            clipped,
            "clipping twice is clipping once"
        );
        // Multi-byte characters are never split.
        let wide = "é".repeat(1000);
        let clipped = clip_middle(&wide, 201);
        assert!(clipped.len() <= 201);
        assert!(
            clipped.starts_with("éé") && clipped.ends_with("éé"),
            "{clipped}"
        );
        assert!(clip_middle(&wide, 0).contains("2000 bytes cut here"));
    }

    #[test]
    fn strings_inside_values_are_clipped() {
        let value = json!({"a": "x".repeat(100), "b": [1, "short"]});
        let clipped = clip_strings(&value, 98);
        assert_eq!(clipped["b"], json!([1, "short"]));
        assert!(clipped["a"].as_str().unwrap().contains("bytes cut here"));
    }
}
