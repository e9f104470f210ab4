//! Pinned JSON of a fully populated note and read output. A change here is a
//! change to the on-disk or on-the-wire format: review it as one.

use crate::fixtures::{full_annotation, full_read_output, sparse_output};

#[test]
fn annotation_compact() {
    insta::assert_snapshot!(full_annotation().to_json());
}

#[test]
fn annotation_pretty() {
    insta::assert_snapshot!(full_annotation().to_json_pretty());
}

#[test]
fn read_output_compact() {
    insta::assert_snapshot!(full_read_output().to_json_string(false, true));
}

#[test]
fn read_output_verbose() {
    insta::assert_snapshot!(full_read_output().to_json_string(true, true));
}

#[test]
fn sparse_read_output_compact() {
    insta::assert_snapshot!(sparse_output().to_json_string(false, true));
}

#[test]
fn sparse_read_output_verbose() {
    insta::assert_snapshot!(sparse_output().to_json_string(true, true));
}
