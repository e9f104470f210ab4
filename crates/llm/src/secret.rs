//! Keys that never show: [`Secret`] and the [`Redactor`] that scrubs them from text.

use std::fmt;

/// A credential. `Debug` and `Display` show at most its last two characters
/// (`****Yz`), and nothing at all for short values; [`Secret::expose`] is the only
/// way to the value, used to build HTTP headers.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

/// Values shorter than this are shown as `****` only.
const MIN_LEN_FOR_HINT: usize = 8;

impl Secret {
    /// Wraps a credential (surrounding whitespace removed).
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into().trim().to_owned())
    }

    /// The value itself. Only for HTTP headers and for building a [`Redactor`].
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The masked form: `****` plus the last two characters of long values.
    pub fn masked(&self) -> String {
        mask(&self.0)
    }

    /// True for an empty value.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn mask(value: &str) -> String {
    let count = value.chars().count();
    if count < MIN_LEN_FOR_HINT {
        return "****".to_owned();
    }
    let tail: String = value.chars().skip(count - 2).collect();
    format!("****{tail}")
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({})", self.masked())
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.masked())
    }
}

/// Replaces every known secret in a text with its masked form. Applied to every
/// error message built from a provider's reply and to everything a trace writes.
///
/// Besides the plain value, a redactor masks the usual encodings of each secret,
/// so a build or a model that prints the key encoded does not get it into a log:
///
/// - **base64**, standard (`+/`) and URL-safe (`-_`) alphabets, padded or not, at
///   each of the three byte alignments: the secret embedded in a longer base64
///   stream (`base64 api-key` encodes the key and a newline; `key=…` before it
///   shifts the alignment) is caught by the characters that encode the secret's
///   bytes alone. The one or two characters at each edge that mix in a
///   neighbouring byte may stay visible; they carry at most a few bits.
/// - **hex**, lower and upper case.
/// - **URL encoding**: reserved characters percent-encoded (`%2B`, `%2b`), and
///   every byte percent-encoded (`%73%6B…`, upper and lower case).
///
/// Base64 and hex are also found when wrapped over several lines (`base64` wraps
/// at 76 columns, `xxd -p` at 60): line breaks inside an occurrence are ignored
/// and masked with it. Encoded forms are masked as `****` (no hint). Not covered:
/// other encodings (rot13, gzip, …), mixed case within one hex or
/// percent-encoded occurrence, and hex dumps with offsets or spaces.
#[derive(Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
    /// Encoded forms of the secrets, longest first.
    encoded: Vec<String>,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Redactor({} secrets)", self.secrets.len())
    }
}

/// Encoded forms shorter than this are not masked: they would garble ordinary
/// text (a base64 core of a short secret is a few letters).
const MIN_ENCODED_LEN: usize = 8;

/// What an encoded occurrence is replaced with.
const ENCODED_MASK: &str = "****";

impl Redactor {
    /// A redactor that knows `secrets`.
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a Secret>) -> Self {
        let mut redactor = Redactor::default();
        for secret in secrets {
            redactor.add(secret);
        }
        redactor
    }

    /// Learns one more secret. Values under 4 characters are ignored: masking
    /// them would garble ordinary text and they protect nothing.
    pub fn add(&mut self, secret: &Secret) {
        let value = secret.expose();
        if value.chars().count() >= 4 && !self.secrets.iter().any(|s| s == value) {
            self.secrets.push(value.to_owned());
            // Longest first, so a secret containing another is masked whole.
            self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
            for form in encodings(value.as_bytes()) {
                if form.len() >= MIN_ENCODED_LEN && form != value && !self.encoded.contains(&form) {
                    self.encoded.push(form);
                }
            }
            self.encoded.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }

    /// `text` with every known secret masked, in plain and encoded forms.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), &mask(secret));
            }
        }
        if self.encoded.is_empty() {
            return out;
        }
        let ranges = Unwrapped::new(&out).find_all(&self.encoded);
        if ranges.is_empty() {
            return out;
        }
        let mut clean = String::with_capacity(out.len());
        let mut at = 0;
        for (start, end) in ranges {
            clean.push_str(&out[at..start]);
            clean.push_str(ENCODED_MASK);
            at = end;
        }
        clean.push_str(&out[at..]);
        clean
    }

    /// True when `text` contains a known secret, plain or encoded (the
    /// tests' check that [`redact`](Self::redact) leaves nothing behind).
    #[cfg(test)]
    pub(crate) fn leaks(&self, text: &str) -> bool {
        self.secrets.iter().any(|s| text.contains(s.as_str()))
            || (!self.encoded.is_empty()
                && !Unwrapped::new(text).find_all(&self.encoded).is_empty())
    }
}

/// A text with its line breaks (`\r`, `\n`) removed, and the way back to the
/// original byte offsets: wrapped base64 and hex are found across lines.
struct Unwrapped<'a> {
    original: &'a str,
    joined: std::borrow::Cow<'a, str>,
    /// For each removed byte, in order: its offset in `joined` (the number of
    /// kept bytes before it).
    removed_at: Vec<usize>,
}

impl<'a> Unwrapped<'a> {
    fn new(original: &'a str) -> Self {
        if !original.contains(['\r', '\n']) {
            return Unwrapped {
                original,
                joined: std::borrow::Cow::Borrowed(original),
                removed_at: Vec::new(),
            };
        }
        let mut joined = String::with_capacity(original.len());
        let mut removed_at = Vec::new();
        for c in original.chars() {
            if c == '\r' || c == '\n' {
                removed_at.push(joined.len());
            } else {
                joined.push(c);
            }
        }
        Unwrapped {
            original,
            joined: std::borrow::Cow::Owned(joined),
            removed_at,
        }
    }

    /// The offset in the original text of the byte at `joined` offset `at`.
    fn original_offset(&self, at: usize) -> usize {
        // Removed bytes sitting before position `at` of the joined text.
        at + self.removed_at.partition_point(|&r| r <= at)
    }

    /// The merged, sorted byte ranges of the original text that hold one of
    /// `needles` (line breaks inside an occurrence belong to it).
    fn find_all(&self, needles: &[String]) -> Vec<(usize, usize)> {
        let mut ranges = Vec::new();
        for needle in needles {
            for (start, _) in self.joined.match_indices(needle.as_str()) {
                let first = self.original_offset(start);
                let last = self.original_offset(start + needle.len() - 1);
                ranges.push((first, last + 1));
            }
        }
        ranges.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
        for (start, end) in ranges {
            match merged.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        debug_assert!(merged.iter().all(|&(s, e)| {
            self.original.is_char_boundary(s) && self.original.is_char_boundary(e)
        }));
        merged
    }
}

const BASE64_STANDARD: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const BASE64_URL_SAFE: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Base64 of `bytes` without padding (the last character's spare bits are zero).
fn base64(bytes: &[u8], alphabet: &[u8; 64]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let group = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..chars {
            let index = (group >> (18 - 6 * i)) & 0x3f;
            out.push(char::from(alphabet[index as usize]));
        }
    }
    out
}

/// The base64 characters that encode `secret`'s bits alone when it starts
/// `offset` bytes (0, 1 or 2) into a base64 stream: whatever surrounds it, an
/// encoding of the stream holds these characters.
fn base64_core(secret: &[u8], offset: usize, alphabet: &[u8; 64]) -> String {
    let mut shifted = vec![0u8; offset];
    shifted.extend_from_slice(secret);
    let encoded = base64(&shifted, alphabet);
    // Character i covers bits [6i, 6i + 6); the secret covers
    // [8 * offset, 8 * (offset + len)).
    let first = (8 * offset).div_ceil(6);
    let end = (8 * (offset + secret.len())) / 6;
    encoded.get(first..end).unwrap_or_default().to_owned()
}

/// Every encoded form of `secret` a redactor masks (see [`Redactor`]).
fn encodings(secret: &[u8]) -> Vec<String> {
    let mut forms = Vec::new();
    for alphabet in [BASE64_STANDARD, BASE64_URL_SAFE] {
        for offset in 0..3 {
            forms.push(base64_core(secret, offset, alphabet));
        }
    }
    let hex_lower: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    forms.push(hex_lower.to_ascii_uppercase());
    forms.push(hex_lower);
    let every_byte: String = secret.iter().map(|b| format!("%{b:02X}")).collect();
    forms.push(every_byte.to_ascii_lowercase());
    forms.push(every_byte);
    let reserved: String = secret
        .iter()
        .map(|&b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    // Lower-case escapes only (the letters outside escapes stay as they are).
    let mut reserved_lower = String::with_capacity(reserved.len());
    let mut rest = reserved.as_str();
    while let Some(i) = rest.find('%') {
        reserved_lower.push_str(&rest[..i]);
        reserved_lower.push_str(&rest[i..i + 3].to_ascii_lowercase());
        rest = &rest[i + 3..];
    }
    reserved_lower.push_str(rest);
    forms.push(reserved);
    forms.push(reserved_lower);
    forms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_at_most_the_last_two_characters() {
        let key = Secret::new("sk-test-1234567890abcdefXY");
        assert_eq!(key.to_string(), "****XY");
        assert_eq!(format!("{key:?}"), "Secret(****XY)");
        assert_eq!(Secret::new("short").to_string(), "****");
        assert_eq!(
            Secret::new("  spaced-key-value \n").expose(),
            "spaced-key-value"
        );
    }

    #[test]
    fn redacts_every_occurrence() {
        let a = Secret::new("sk-aaaaaaaaaaaaaaaa12");
        let b = Secret::new("tok-bbbbbbbbbbbbbb34");
        let r = Redactor::new([&a, &b]);
        let text = format!(
            "Bearer {} and x-api-key: {} and {} again",
            a.expose(),
            b.expose(),
            a.expose()
        );
        let clean = r.redact(&text);
        assert_eq!(
            clean,
            "Bearer ****12 and x-api-key: ****34 and ****12 again"
        );
        assert!(r.leaks(&text));
        assert!(!r.leaks(&clean));
        assert_eq!(Redactor::new([&Secret::new("ab")]).redact("abc"), "abc");
    }
    /// A key with characters that base64, URL encoding and the URL-safe
    /// alphabet all treat differently (`?`, `+`, `/`, `~`, `>`).
    const KEY: &str = "sk-proj-Zx9?Q2+w/abc~DEF>>>123";

    fn check(encoded: &str, expected: &str) {
        let r = Redactor::new([&Secret::new(KEY)]);
        let text = format!("output: {encoded} end");
        assert!(r.leaks(&text), "{encoded}");
        let clean = r.redact(&text);
        assert_eq!(clean, format!("output: {expected} end"), "{encoded}");
        assert!(!r.leaks(&clean), "{clean}");
    }

    // Expected values come from Python's base64 module; the masked span is the
    // characters that encode the key's bytes alone.
    #[test]
    fn base64_at_every_alignment_padded_or_not() {
        for (encoded, expected) in [
            // The key alone (offset 0), then followed by "\n" as `base64 api-key`
            // prints it.
            ("c2stcHJvai1aeDk/UTIrdy9hYmN+REVGPj4+MTIz", "****"),
            ("c2stcHJvai1aeDk/UTIrdy9hYmN+REVGPj4+MTIzCg==", "****Cg=="),
            // One byte before it ("k"), with and without padding.
            ("a3NrLXByb2otWng5P1EyK3cvYWJjfkRFRj4+PjEyMw==", "a3****w=="),
            ("a3NrLXByb2otWng5P1EyK3cvYWJjfkRFRj4+PjEyMw", "a3****w"),
            ("a3NrLXByb2otWng5P1EyK3cvYWJjfkRFRj4+PjEyMwo=", "a3****wo="),
            // Two bytes before it ("ke").
            ("a2Vzay1wcm9qLVp4OT9RMit3L2FiY35ERUY+Pj4xMjM=", "a2V****M="),
            ("a2Vzay1wcm9qLVp4OT9RMit3L2FiY35ERUY+Pj4xMjMK", "a2V****MK"),
            // Inside a longer stream ("key=" before it: offset 1 again).
            (
                "a2V5PXNrLXByb2otWng5P1EyK3cvYWJjfkRFRj4+PjEyMwo=",
                "a2V5PX****wo=",
            ),
        ] {
            check(encoded, expected);
        }
    }

    #[test]
    fn url_safe_base64_at_every_alignment() {
        for (encoded, expected) in [
            ("c2stcHJvai1aeDk_UTIrdy9hYmN-REVGPj4-MTIzCg==", "****Cg=="),
            ("a3NrLXByb2otWng5P1EyK3cvYWJjfkRFRj4-PjEyMw==", "a3****w=="),
            ("a2Vzay1wcm9qLVp4OT9RMit3L2FiY35ERUY-Pj4xMjMK", "a2V****MK"),
        ] {
            check(encoded, expected);
        }
    }

    #[test]
    fn base64_wrapped_over_lines_is_masked_with_its_line_breaks() {
        // `base64 -w 16` style wrapping, with CRLF in one place.
        let r = Redactor::new([&Secret::new(KEY)]);
        let text = "c2stcHJvai1aeDk/\nUTIrdy9hYmN+REVG\r\nPj4+MTIzCg==\nnext line\n";
        assert!(r.leaks(text));
        assert_eq!(r.redact(text), "****Cg==\nnext line\n");
    }

    #[test]
    fn hex_in_both_cases_and_wrapped() {
        let hex = "736b2d70726f6a2d5a78393f51322b772f6162637e4445463e3e3e313233";
        check(hex, "****");
        check(&hex.to_ascii_uppercase(), "****");
        // Inside a longer dump (the key and a newline), wrapped like `xxd -p`.
        let r = Redactor::new([&Secret::new(KEY)]);
        let text = format!("{}\n{}0a\n", &hex[..20], &hex[20..]);
        assert_eq!(r.redact(&text), "****0a\n");
    }

    #[test]
    fn url_encoding_reserved_and_every_byte() {
        check("sk-proj-Zx9%3FQ2%2Bw%2Fabc~DEF%3E%3E%3E123", "****");
        check("sk-proj-Zx9%3fQ2%2bw%2fabc~DEF%3e%3e%3e123", "****");
        let every: String = KEY.bytes().map(|b| format!("%{b:02X}")).collect();
        check(&every, "****");
        check(&every.to_ascii_lowercase(), "****");
    }

    #[test]
    fn encodings_are_not_matched_in_ordinary_text() {
        let r = Redactor::new([&Secret::new(KEY)]);
        let text = "building crate v1.0\nhex deadbeef, base64 aGVsbG8gd29ybGQ=\n";
        assert_eq!(r.redact(text), text);
        assert!(!r.leaks(text));
        // A short secret has no encoded forms long enough to be safe to mask.
        let short = Redactor::new([&Secret::new("abcd")]);
        assert_eq!(short.redact("YWJjZA== 61626364"), "YWJjZA== ****");
    }

    #[test]
    fn plain_masking_is_unchanged_next_to_encoded_forms() {
        let r = Redactor::new([&Secret::new(KEY)]);
        let text = format!("plain {KEY} and base64 c2stcHJvai1aeDk/UTIrdy9hYmN+REVGPj4+MTIz");
        assert_eq!(r.redact(&text), "plain ****23 and base64 ****");
    }
}
