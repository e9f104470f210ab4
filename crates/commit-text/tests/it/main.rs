//! Integration tests of `commit-text`: its parsers on text from history,
//! whatever the bytes.

mod untrusted_text;
