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

/// Each read output in both JSON shapes, as `<name>_compact` and `<name>_verbose`.
#[test]
fn read_outputs() {
    for (name, output) in [
        ("read_output", full_read_output()),
        ("sparse_read_output", sparse_output()),
    ] {
        for (verbose, shape) in [(false, "compact"), (true, "verbose")] {
            let json = output.to_json_string(verbose, true);
            insta::assert_snapshot!(format!("{name}_{shape}"), json);
        }
    }
}
