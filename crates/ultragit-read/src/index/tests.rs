//! The base's binary layout: what is encoded decodes to the same index, and
//! what is inconsistent does not decode at all.

use super::*;

const REF: &str = "refs/notes/ultragit";

fn oid(byte: u8) -> ObjectId {
    ObjectId::from_bytes([byte; 20])
}

/// A noted commit whose regions are the sources of its dependencies (each
/// once) and, for commit 2, one region without any.
fn noted(commit: u8, time: Option<i64>, edges: &[[&str; 5]], concerns: &[&str]) -> Noted {
    let mut regions: Vec<[String; 2]> = Vec::new();
    for edge in edges {
        let region = [edge[2].to_owned(), edge[3].to_owned()];
        if !regions.contains(&region) {
            regions.push(region);
        }
    }
    if commit == 2 {
        regions.push(["src/c.rs".to_owned(), "c".to_owned()]);
    }
    Noted(
        oid(commit).to_hex(),
        time,
        edges.iter().map(|e| e.map(str::to_owned)).collect(),
        concerns.iter().map(|&c| c.to_owned()).collect(),
        regions,
        commit == 2,
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

/// Every annotated commit with its time, dependencies and concerns as text,
/// in commit order: what an index means, whatever its lists hold.
type Meaning = Vec<(
    ObjectId,
    Option<i64>,
    Vec<[String; 5]>,
    Vec<String>,
    Vec<[String; 2]>,
)>;

fn meaning(index: &DepsIndex) -> Meaning {
    let text = |i: &u32| index.strings.get(*i).to_owned();
    let mut out: Meaning = index
        .sources
        .iter()
        .map(|(commit, entry)| {
            (
                *commit,
                entry.time,
                index.edges[entry.edges.clone()]
                    .iter()
                    .map(|e| e.each_ref().map(text))
                    .collect(),
                index.concerns[entry.concerns.clone()]
                    .iter()
                    .map(text)
                    .collect(),
                index.regions[entry.regions.clone()]
                    .iter()
                    .map(|r| r.each_ref().map(text))
                    .collect(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn what_is_encoded_decodes_to_the_same_index() {
    let index = sample();
    let bytes = index.encode(oid(9));
    let decoded = DepsIndex::decode(&bytes, REF).expect("decodes");
    assert_eq!(decoded.notes_commit, Some(oid(9)));
    assert_eq!(meaning(&decoded), meaning(&index));
    assert_eq!(meaning(&index).len(), 3);
    assert_eq!(
        decoded.strings.len(),
        10,
        "each text once: src/a.rs a src/b.rs b, calls a, A::new src/ä.rs c, builds one, src/c.rs"
    );
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
    let first = index.sources[&oid(1)].edges.start;
    index.edges[first][3] = index.strings.len() as u32;
    assert!(DepsIndex::decode(&index.encode(oid(9)), REF).is_none());

    let mut index = sample();
    let first = index.sources[&oid(1)].concerns.start;
    index.concerns[first] = 4_000_000;
    assert!(DepsIndex::decode(&index.encode(oid(9)), REF).is_none());

    let mut index = sample();
    let first = index.sources[&oid(2)].regions.start;
    index.regions[first][1] = index.strings.len() as u32;
    assert!(DepsIndex::decode(&index.encode(oid(9)), REF).is_none());

    // Two sources with one id: the second's bytes spliced in after the first.
    let bytes = sample().encode(oid(9));
    let one = {
        let mut index = sample();
        index.sources.retain(|commit, _| *commit == oid(2));
        index.encode(oid(9))
    };
    // id, no time, no edges, no concerns, one region, the retiring flag.
    let source_of_2 = &one[one.len() - (20 + 1 + 4 + 4 + 4 + 8 + 1)..];
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
fn a_replayed_step_appends_and_a_fold_keeps_one_copy_of_each_text_in_use() {
    let mut index = sample();
    let before = index.strings.len();
    index.apply(&[Step {
        to: oid(10).to_hex(),
        dropped: vec![oid(2).to_hex(), oid(3).to_hex()],
        noted: vec![noted(
            4,
            Some(1),
            &[["src/a.rs", "a", "src/new.rs", "n", "calls a"]],
            &["src/a.rs"],
        )],
    }]);
    assert_eq!(index.strings.len(), before + 5, "appended, not searched");
    assert_eq!(index.notes_commit, Some(oid(10)));
    assert!(!index.sources.contains_key(&oid(2)));
    // Queries compare text: the copies in the table answer alike.
    let dependents = index.dependents("src/a.rs", Some("a"));
    let sources: Vec<&str> = dependents.iter().map(|d| d.source_file).collect();
    assert_eq!(sources, ["src/b.rs", "src/new.rs"], "newest first");
    assert_eq!(index.concerning("src/a.rs"), [oid(1), oid(4)]);
    assert!(index.dependents("src/b.rs", None).is_empty(), "dropped");

    let replayed = meaning(&index);
    index.compact();
    assert_eq!(meaning(&index), replayed, "folding keeps the meaning");
    let texts: Vec<&str> = (0..index.strings.len() as u32)
        .map(|i| index.strings.get(i))
        .collect();
    assert_eq!(
        texts,
        [
            "src/a.rs",
            "a",
            "src/b.rs",
            "b",
            "calls a",
            "src/new.rs",
            "n"
        ],
        "one copy of each text in use, in commit order"
    );
    assert_eq!(index.edges.len(), 2, "dropped commits' edges are gone");
    assert_eq!(index.concerns.len(), 2);
    let bytes = index.encode(oid(10));
    assert_eq!(
        meaning(&DepsIndex::decode(&bytes, REF).expect("decodes")),
        replayed
    );
}

#[test]
fn annotating_lists_the_commits_whose_regions_name_a_file_newest_first() {
    let index = sample();
    let listed = |files: &[&str], anchors: &[&str]| -> Vec<(ObjectId, Vec<(String, String)>)> {
        index
            .annotating(files, anchors)
            .into_iter()
            .map(|a| {
                let regions = a
                    .regions
                    .iter()
                    .map(|(f, n)| ((*f).to_owned(), (*n).to_owned()))
                    .collect();
                (a.commit, regions)
            })
            .collect()
    };
    let pair = |f: &str, a: &str| (f.to_owned(), a.to_owned());
    // Commit 1 (newest) has src/b.rs:b; commit 3 src/ä.rs:c; commit 2 (no
    // time: last) src/c.rs:c.
    assert_eq!(
        listed(&["src/b.rs"], &[]),
        [(oid(1), vec![pair("src/b.rs", "b")])]
    );
    assert_eq!(
        listed(&["src/ä.rs", "src/c.rs"], &[]),
        [
            (oid(3), vec![pair("src/ä.rs", "c")]),
            (oid(2), vec![pair("src/c.rs", "c")]),
        ]
    );
    // An anchor narrows to the regions of that unit, exactly or unqualified.
    assert_eq!(listed(&["src/ä.rs", "src/b.rs"], &["d"]), []);
    assert_eq!(
        listed(&["src/ä.rs", "src/b.rs"], &["b"]),
        [(oid(1), vec![pair("src/b.rs", "b")])]
    );
    // A dependency target is not a region: src/a.rs names none.
    assert_eq!(listed(&["src/a.rs"], &[]), []);
    assert_eq!(index.region_files(), ["src/b.rs", "src/c.rs", "src/ä.rs"]);
    // Dropping a commit drops its regions.
    let mut index = index;
    index.apply(&[Step {
        to: oid(10).to_hex(),
        dropped: vec![oid(2).to_hex()],
        noted: Vec::new(),
    }]);
    assert_eq!(index.region_files(), ["src/b.rs", "src/ä.rs"]);
    assert!(index.annotating(&["src/c.rs"], &[]).is_empty());
}

#[test]
fn retiring_lists_only_the_notes_that_retire_items_and_survives_encoding() {
    let index = sample();
    let retiring: Vec<ObjectId> = index.retiring(&[]).iter().map(|a| a.commit).collect();
    assert_eq!(retiring, [oid(2)]);
    assert!(index.retiring(&["other"]).is_empty());
    let encoded = index.encode(oid(9));
    let decoded = DepsIndex::decode(&encoded, REF).expect("the base decodes");
    let again: Vec<ObjectId> = decoded.retiring(&[]).iter().map(|a| a.commit).collect();
    assert_eq!(again, [oid(2)]);
}
