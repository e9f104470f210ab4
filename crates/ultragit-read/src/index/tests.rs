//! The base's binary layout: what is encoded decodes to the same index, and
//! what is inconsistent does not decode at all.

use super::*;

const REF: &str = "refs/notes/ultragit";

fn oid(byte: u8) -> ObjectId {
    ObjectId::from_bytes([byte; 20])
}

fn noted(commit: u8, time: Option<i64>, edges: &[[&str; 5]], concerns: &[&str]) -> Noted {
    Noted(
        oid(commit).to_hex(),
        time,
        edges.iter().map(|e| e.map(str::to_owned)).collect(),
        concerns.iter().map(|&c| c.to_owned()).collect(),
    )
}

fn sample() -> DepsIndex {
    let mut index = DepsIndex::empty(REF, None, IndexUpdate::NoNotes);
    index.apply(&[Step {
        to: oid(9).to_hex(),
        dropped: Vec::new(),
        noted: vec![
            noted(
                1,
                Some(1_700_000_000),
                &[["src/a.rs", "a", "src/b.rs", "b", "calls a"]],
                &["src/a.rs"],
            ),
            noted(2, None, &[], &[]),
            noted(
                3,
                Some(-5),
                &[
                    ["src/a.rs", "A::new", "src/ä.rs", "c", "builds one"],
                    ["src/b.rs", "b", "src/ä.rs", "c", "calls a"],
                ],
                &[],
            ),
        ],
    }]);
    index
}

#[test]
fn what_is_encoded_decodes_to_the_same_index() {
    let index = sample();
    let bytes = index.encode(oid(9));
    let decoded = DepsIndex::decode(&bytes, REF).expect("decodes");
    assert_eq!(decoded.notes_commit, Some(oid(9)));
    assert_eq!(decoded.strings, index.strings);
    assert_eq!(decoded.sources, index.sources);
    assert_eq!(decoded.update, IndexUpdate::Fresh);
    assert_eq!(
        decoded.encode(oid(9)),
        bytes,
        "the same index, the same bytes"
    );
    assert!(DepsIndex::decode(&bytes, "refs/notes/other").is_none());
}

#[test]
fn an_index_past_the_table_or_a_repeated_commit_does_not_decode() {
    let mut index = sample();
    let entry = index.sources.get_mut(&oid(1)).expect("noted");
    entry.edges[0][3] = index.strings.len() as u32;
    assert!(DepsIndex::decode(&index.encode(oid(9)), REF).is_none());

    let mut index = sample();
    index.sources.get_mut(&oid(3)).expect("noted").concerns = vec![4_000_000];
    assert!(DepsIndex::decode(&index.encode(oid(9)), REF).is_none());

    // Two sources with one id: the second's bytes spliced in after the first.
    let bytes = sample().encode(oid(9));
    let one = {
        let mut index = sample();
        index.sources.retain(|commit, _| *commit == oid(2));
        index.encode(oid(9))
    };
    let source_of_2 = &one[one.len() - (20 + 1 + 4 + 4)..];
    let count_at = bytes
        .windows(20)
        .position(|w| w == oid(1).as_bytes())
        .expect("the first source")
        - 4;
    let mut doubled = bytes[..count_at].to_vec();
    doubled.extend_from_slice(&4u32.to_le_bytes());
    doubled.extend_from_slice(source_of_2);
    doubled.extend_from_slice(&bytes[count_at + 4..]);
    assert!(DepsIndex::decode(&doubled, REF).is_none());
    // The splice itself is well formed: with another id it decodes.
    let mut other = doubled.clone();
    other[count_at + 4..count_at + 24].copy_from_slice(oid(7).as_bytes());
    assert_eq!(
        DepsIndex::decode(&other, REF)
            .expect("decodes")
            .sources
            .len(),
        4
    );
}

#[test]
fn a_count_larger_than_the_bytes_left_allocates_nothing_and_fails() {
    let bytes = sample().encode(oid(9));
    // The string count sits right after magic, version, ref and commit.
    let at = 8 + 4 + 4 + REF.len() + 20;
    let mut huge = bytes.clone();
    huge[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(DepsIndex::decode(&huge, REF).is_none());
    assert!(DepsIndex::decode(&bytes, REF).is_some());
}

#[test]
fn applying_a_step_reuses_the_strings_already_in_the_table() {
    let mut index = sample();
    let before = index.strings.clone();
    index.apply(&[Step {
        to: oid(10).to_hex(),
        dropped: vec![oid(2).to_hex()],
        noted: vec![noted(
            4,
            Some(1),
            &[["src/a.rs", "a", "src/new.rs", "n", "calls a"]],
            &["src/b.rs"],
        )],
    }]);
    assert_eq!(index.strings[..before.len()], before[..], "nothing moved");
    assert_eq!(index.strings[before.len()..], ["src/new.rs", "n"]);
    assert_eq!(index.notes_commit, Some(oid(10)));
    assert!(!index.sources.contains_key(&oid(2)));
    let dependents = index.dependents("src/a.rs", Some("a"));
    assert_eq!(dependents.len(), 2);
    assert_eq!(dependents[0].source_file, "src/b.rs", "newest first");
    assert_eq!(dependents[1].source_file, "src/new.rs");
}
