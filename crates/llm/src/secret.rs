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
#[derive(Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Redactor({} secrets)", self.secrets.len())
    }
}

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
        }
    }

    /// `text` with every known secret masked.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), &mask(secret));
            }
        }
        out
    }

    /// True when `text` contains a known secret.
    pub fn leaks(&self, text: &str) -> bool {
        self.secrets.iter().any(|s| text.contains(s.as_str()))
    }
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
}
