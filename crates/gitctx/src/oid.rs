//! Object ids as a plain value type.

use std::fmt;
use std::str::FromStr;

/// A SHA-1 object id (commit, tree, blob, tag).
///
/// Displayed as 40 lowercase hex digits; [`ObjectId::short`] gives the usual 7.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectId([u8; 20]);

impl ObjectId {
    /// The all-zero id git uses for "no object".
    pub const ZERO: ObjectId = ObjectId([0; 20]);

    /// Builds an id from its raw bytes.
    pub fn from_bytes(bytes: [u8; 20]) -> Self {
        ObjectId(bytes)
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8; 20] {
        &self.0
    }

    /// The full 40-digit lowercase hex form.
    pub fn to_hex(&self) -> String {
        self.to_string()
    }

    /// The first 7 hex digits, as `git log --oneline` shows.
    pub fn short(&self) -> String {
        let mut hex = self.to_hex();
        hex.truncate(7);
        hex
    }

    /// True for [`ObjectId::ZERO`].
    pub fn is_zero(&self) -> bool {
        self.0 == [0; 20]
    }

    pub(crate) fn from_git(oid: git2::Oid) -> Self {
        let mut bytes = [0u8; 20];
        // libgit2 built without SHA-256 support only produces 20-byte ids.
        let raw = oid.as_bytes();
        let n = raw.len().min(20);
        bytes[..n].copy_from_slice(&raw[..n]);
        ObjectId(bytes)
    }

    pub(crate) fn to_git(self) -> git2::Oid {
        git2::Oid::from_bytes(&self.0).expect("20 bytes are always a valid SHA-1 oid")
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in self.0 {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ObjectId({self})")
    }
}

/// The text was not 40 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a full 40-digit hex object id")]
pub struct ParseObjectIdError(pub String);

impl FromStr for ObjectId {
    type Err = ParseObjectIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseObjectIdError(s.to_owned());
        let digits = s.as_bytes();
        if digits.len() != 40 {
            return Err(err());
        }
        let mut bytes = [0u8; 20];
        for (i, pair) in digits.chunks_exact(2).enumerate() {
            let hi = hex_value(pair[0]).ok_or_else(err)?;
            let lo = hex_value(pair[1]).ok_or_else(err)?;
            bytes[i] = (hi << 4) | lo;
        }
        Ok(ObjectId(bytes))
    }
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        let hex = "0123456789abcdef0123456789abcdef01234567";
        let id: ObjectId = hex.parse().unwrap();
        assert_eq!(id.to_string(), hex);
        assert_eq!(id.short(), "0123456");
        assert!(!id.is_zero());
        assert_eq!(id.to_git().to_string(), hex);
        assert_eq!(ObjectId::from_git(id.to_git()), id);
    }

    #[test]
    fn uppercase_is_accepted_and_normalised() {
        let id: ObjectId = "ABCDEF0123456789ABCDEF0123456789ABCDEF01".parse().unwrap();
        assert_eq!(id.to_string(), "abcdef0123456789abcdef0123456789abcdef01");
    }

    #[test]
    fn rejects_bad_text() {
        for bad in ["", "abc", "g123456789abcdef0123456789abcdef01234567", "é"] {
            assert!(bad.parse::<ObjectId>().is_err(), "{bad:?}");
        }
        assert!(ObjectId::ZERO.is_zero());
    }
}
