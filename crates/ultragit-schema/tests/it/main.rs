//! Integration tests of `ultragit-schema` (one test binary, one module per
//! topic).

mod annotation;
mod correction;
mod fixtures;
mod golden;
mod properties;
mod read;
mod validate;
