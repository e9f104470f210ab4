//! `open_enum!`: string enums that survive values from newer writers.
//!
//! A note written by a newer ultragit may carry an enum value this version
//! does not know (`"context_level": "verified"`). Failing the whole document
//! for that would throw away every region in it, so each such enum has an
//! `Other(String)` variant that keeps the value verbatim: it reads without
//! error, validates as a problem, and writes back unchanged.
//!
//! Matching is exact (case-sensitive): `"Author"` is `Other("Author")`, which
//! validation reports, rather than silently becoming `Author`.

/// Defines a string enum with an `Other(String)` fallback, plus `as_str`,
/// `is_known`, `KNOWN`, `From<&str>`, `From<String>`, `Display`, and serde
/// impls that read and write the bare string.
macro_rules! open_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value this version does not know, kept verbatim so it
            /// round-trips unchanged. Validation reports it as a problem.
            ///
            /// Build values with `From<&str>` so that a known string never
            /// ends up in `Other`.
            Other(String),
        }

        impl $name {
            /// Every value this version knows, in declaration order.
            pub const KNOWN: &'static [&'static str] = &[$($text),+];

            /// The JSON string of this value (the verbatim text for `Other`).
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $text, )+
                    Self::Other(text) => text,
                }
            }

            /// Whether this is one of the values this version knows. Part of
            /// the published API (a reader's test for `Other`), though this
            /// workspace matches on `Other` instead.
            pub fn is_known(&self) -> bool {
                !matches!(self, Self::Other(_))
            }
        }

        impl From<&str> for $name {
            fn from(text: &str) -> Self {
                match text {
                    $( $text => Self::$variant, )+
                    other => Self::Other(other.to_owned()),
                }
            }
        }

        impl From<String> for $name {
            fn from(text: String) -> Self {
                match text.as_str() {
                    $( $text => Self::$variant, )+
                    _ => Self::Other(text),
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Visitor;

                impl ::serde::de::Visitor<'_> for Visitor {
                    type Value = $name;

                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        write!(f, "a string (known values: {})", $name::KNOWN.join(", "))
                    }

                    fn visit_str<E: ::serde::de::Error>(self, text: &str) -> Result<$name, E> {
                        Ok($name::from(text))
                    }

                    fn visit_string<E: ::serde::de::Error>(self, text: String) -> Result<$name, E> {
                        Ok($name::from(text))
                    }
                }

                deserializer.deserialize_str(Visitor)
            }
        }
    };
}
