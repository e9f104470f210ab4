//! Notes: reading, writing, fan-out trees, interoperability with `git notes`, and
//! concurrent compare-and-swap writers.

use gitctx::{ObjectId, Repo};
use testkit::{TestRepo, assert_contains};

use crate::{Fixture, child, git_note, id, import_notes, open};

const REF: &str = "refs/notes/ultragit";

#[test]
fn write_read_overwrite_remove_and_list() {
    let (f, [a, b]) = Fixture::with_commits();
    let notes = f.notes("ultragit");
    assert_eq!(notes.refname(), REF);
    assert_eq!(notes.tip().unwrap(), None);
    assert_eq!(notes.read(a).unwrap(), None);
    assert!(notes.list().unwrap().is_empty());
    assert!(!notes.remove(a).unwrap());

    let outcome = notes.write(a, "{\"note\":\"é\"}").unwrap();
    assert_eq!(outcome.attempts, 1);
    assert_eq!(notes.tip().unwrap(), Some(outcome.notes_commit));
    assert_eq!(notes.read(a).unwrap().as_deref(), Some("{\"note\":\"é\"}"));
    notes.write(b, "second").unwrap();
    notes.write(a, "replaced").unwrap();
    assert_eq!(notes.read(a).unwrap().as_deref(), Some("replaced"));

    let listed: Vec<String> = notes
        .list()
        .unwrap()
        .iter()
        .map(|e| e.target.to_hex())
        .collect();
    let mut expected = vec![a.to_hex(), b.to_hex()];
    expected.sort();
    assert_eq!(listed, expected);

    let many = notes.read_many(&[b, a, ObjectId::ZERO]).unwrap();
    assert_eq!(
        many.found,
        vec![(b, "second".to_owned()), (a, "replaced".to_owned())]
    );
    assert!(many.too_large.is_empty());

    assert!(notes.remove(a).unwrap());
    assert_eq!(notes.read(a).unwrap(), None);
    assert_eq!(notes.list().unwrap().len(), 1);
    // History of the notes ref is kept: each write is a commit on top of the last.
    let count = f
        .repo
        .command()
        .args(["rev-list", "--count", REF])
        .run_text()
        .unwrap();
    assert_eq!(count.trim(), "4");
}

#[test]
fn git_reads_our_notes_and_we_read_gits() {
    let (f, [a, b]) = Fixture::with_commits();
    let notes = f.notes(REF);
    notes.write(a, "ours\n").unwrap();
    assert_eq!(git_note(&f.repo, &a.to_hex()).as_deref(), Some("ours\n"));
    f.repo.git(&[
        "notes",
        "--ref=ultragit",
        "add",
        "-m",
        "theirs",
        &b.to_hex(),
    ]);
    assert_eq!(notes.read(b).unwrap().as_deref(), Some("theirs\n"));
    assert_eq!(notes.read(a).unwrap().as_deref(), Some("ours\n"));
}

#[test]
fn fanned_out_notes_trees_are_read_and_written_in_place() {
    let repo = TestRepo::new();
    let shas = repo.commit_many(400, "counter.txt");
    import_notes(&repo, REF, &shas[..300]);
    let top = repo.command().args(["ls-tree", REF]).run_text().unwrap();
    assert!(
        top.lines().all(|l| l.contains(" tree ")),
        "fan-out expected:\n{top}"
    );

    let r = open(&repo);
    let notes = r.notes(REF).unwrap();
    assert_eq!(notes.list().unwrap().len(), 300);
    let ids: Vec<ObjectId> = shas.iter().map(|s| id(s)).collect();
    let many = notes.read_many(&ids).unwrap();
    assert_eq!(many.found.len(), 300);
    assert_eq!(many.found[17].1, format!("note of {}\n", shas[17]));

    // Overwrite one that exists (inside the fan-out) and add a new one.
    notes.write(ids[5], "rewritten\n").unwrap();
    notes.write(ids[350], "brand new\n").unwrap();
    assert!(notes.remove(ids[6]).unwrap());
    assert_eq!(notes.list().unwrap().len(), 300);
    let top = repo.command().args(["ls-tree", REF]).run_text().unwrap();
    assert!(
        top.lines().all(|l| l.contains(" tree ")),
        "still fanned out:\n{top}"
    );
    assert_eq!(git_note(&repo, &shas[5]).as_deref(), Some("rewritten\n"));
    assert_eq!(git_note(&repo, &shas[350]).as_deref(), Some("brand new\n"));
    assert_eq!(git_note(&repo, &shas[6]), None);
}

#[test]
fn write_with_decides_on_the_current_note() {
    let (f, [a]) = Fixture::with_commits();
    let notes = f.notes(REF);
    // Only if absent: the first write happens, the second is declined.
    let absent = |text: &'static str| {
        move |current: Option<&str>| current.is_none().then(|| text.to_owned())
    };
    assert!(notes.write_with(a, absent("first")).unwrap().is_some());
    let tip = notes.tip().unwrap();
    assert_eq!(notes.write_with(a, absent("second")).unwrap(), None);
    assert_eq!(
        notes.tip().unwrap(),
        tip,
        "a declined write makes no commit"
    );
    assert_eq!(notes.read(a).unwrap().as_deref(), Some("first"));
    // Built on the current note.
    notes
        .write_with(a, |current| current.map(|c| format!("{c}+more")))
        .unwrap();
    assert_eq!(notes.read(a).unwrap().as_deref(), Some("first+more"));
    assert_eq!(
        git_note(&f.repo, &a.to_hex()).as_deref(),
        Some("first+more")
    );
}

#[test]
fn invalid_notes_ref_names_are_rejected() {
    let repo = TestRepo::new();
    let r = open(&repo);
    assert!(r.notes("bad..name").is_err());
    assert!(r.notes("refs/notes/ok").is_ok());
}

const WRITERS_THREADS: usize = 4;
const WRITERS_PROCESSES: usize = 4;
const NOTES_PER_WRITER: usize = 50;

fn note_text(sha: &str, writer: usize) -> String {
    format!("{{\"commit\":\"{sha}\",\"writer\":{writer}}}")
}

fn write_batch(path: &std::path::Path, writer: usize, shas: &[String]) {
    let repo = Repo::discover(path).unwrap();
    let notes = repo.notes(REF).unwrap();
    for sha in shas {
        notes.write(id(sha), &note_text(sha, writer)).unwrap();
    }
}

/// Eight writers at once — four threads of this process and four separate
/// processes — each annotate their own 50 commits. Compare-and-swap with retry must
/// leave all 400 notes in place.
#[test]
fn concurrent_writers_in_threads_and_processes_lose_nothing() {
    let repo = TestRepo::new();
    let writers = WRITERS_THREADS + WRITERS_PROCESSES;
    let shas = repo.commit_many(writers * NOTES_PER_WRITER, "counter.txt");
    let batches: Vec<Vec<String>> = shas
        .chunks(NOTES_PER_WRITER)
        .map(<[String]>::to_vec)
        .collect();

    let children: Vec<_> = (0..WRITERS_PROCESSES)
        .map(|p| {
            let writer = WRITERS_THREADS + p;
            let instructions = format!(
                "{}\n{writer}\n{}",
                repo.path().display(),
                batches[writer].join(" ")
            );
            child::spawn("notes::child_writer", &instructions, &[])
        })
        .collect();
    std::thread::scope(|scope| {
        for (writer, batch) in batches.iter().enumerate().take(WRITERS_THREADS) {
            let path = repo.path();
            scope.spawn(move || write_batch(path, writer, batch));
        }
    });
    for child in children {
        child::expect_success(child);
    }

    let r = open(&repo);
    let notes = r.notes(REF).unwrap();
    assert_eq!(notes.list().unwrap().len(), writers * NOTES_PER_WRITER);
    for (writer, batch) in batches.iter().enumerate() {
        for sha in batch {
            assert_eq!(
                notes.read(id(sha)).unwrap(),
                Some(note_text(sha, writer)),
                "note of {sha} by writer {writer}"
            );
        }
    }
    let commits = repo
        .command()
        .args(["rev-list", "--count", REF])
        .run_text()
        .unwrap();
    assert_eq!(commits.trim(), (writers * NOTES_PER_WRITER).to_string());
}

#[test]
fn child_writer() {
    let Some([path, writer, shas]) = child::instruction_lines() else {
        return;
    };
    let writer: usize = writer.parse().unwrap();
    let shas: Vec<String> = shas.split(' ').map(str::to_owned).collect();
    write_batch(std::path::Path::new(&path), writer, &shas);
}

#[test]
fn a_stale_lock_is_reported_with_its_path() {
    let (f, [a]) = Fixture::with_commits();
    let notes = f.notes(REF);
    notes.write(a, "one").unwrap();
    let lock = f.repo.join(".git/refs/notes/ultragit.lock");
    std::fs::write(&lock, "").unwrap();
    match notes.write(a, "two") {
        Err(gitctx::Error::Locked { path }) => assert_eq!(path, lock),
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(notes.read(a).unwrap().as_deref(), Some("one"));
}

#[test]
fn ensure_creates_an_empty_notes_ref_once() {
    let (f, [a]) = Fixture::with_commits();
    let notes = f.notes(REF);
    assert!(notes.ensure().unwrap());
    assert!(!notes.ensure().unwrap());
    assert!(notes.list().unwrap().is_empty());
    notes.write(a, "x").unwrap();
    assert!(!notes.ensure().unwrap());
    assert_eq!(notes.read(a).unwrap().as_deref(), Some("x"));
    assert_eq!(git_note(&f.repo, &a.to_hex()).as_deref(), Some("x"));
}

#[test]
fn notes_over_the_limit_are_not_read() {
    let (f, [small, big]) = Fixture::with_commits();
    let notes = f.notes(REF);
    notes.write(small, "small").unwrap();
    let huge = "x".repeat(gitctx::MAX_NOTE_BYTES as usize + 1);
    notes.write(big, &huge).unwrap();
    let many = notes.read_many(&[small, big]).unwrap();
    assert_eq!(many.found, vec![(small, "small".to_owned())]);
    assert_eq!(many.too_large, vec![(big, gitctx::MAX_NOTE_BYTES + 1)]);
    let err = notes.read(big).unwrap_err();
    assert_contains(&err.to_string(), "over the limit of 4194304");
}

/// Creating the notes ref races like moving it: a writer that finds no ref must
/// not overwrite one that another writer creates before it takes the ref lock.
///
/// `.git/packed-refs` is made a FIFO, so the first writer stops (its open
/// blocks) each time libgit2 reloads the packed refs; this thread sees that in
/// `/proc` and lets it go on by opening the FIFO for writing. At its `stop`-th
/// reload — for every `stop` in turn, so every such point of its write is
/// tried — a second writer creates the ref first, unless the stopped writer
/// holds the ref lock (then the second can only go after it).
#[cfg(target_os = "linux")]
#[test]
fn a_writer_that_finds_no_ref_keeps_a_ref_created_meanwhile() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc;

    // Without a visible wchan the writer cannot be steered: nothing to test
    // here (the threads-and-processes test still covers the write path).
    if !blocked_fifo_opens_show_in_wchan() {
        return;
    }
    for stop in 1.. {
        let repo = TestRepo::new();
        let first = id(&repo.commit_file("a.txt", "a\n", "a"));
        let second = id(&repo.commit_file("a.txt", "b\n", "b"));
        let packed = repo.join(".git/packed-refs");
        let held = repo.join(".git/packed-refs.held");
        let lock = repo.join(".git/refs/notes/ultragit.lock");
        let other = open(&repo);
        let other = other.notes(REF).unwrap();
        testkit::mkfifo(&packed);
        let done = AtomicBool::new(false);
        let path = repo.path();
        let (reached, other_wrote) = std::thread::scope(|scope| {
            let (tid_tx, tid_rx) = mpsc::channel();
            let done = &done;
            let writer = scope.spawn(move || {
                let thread = std::fs::read_link("/proc/thread-self").unwrap();
                tid_tx.send(thread).unwrap();
                let outcome = Repo::discover(path)
                    .unwrap()
                    .notes(REF)
                    .unwrap()
                    .write(first, "first");
                done.store(true, Ordering::SeqCst);
                outcome
            });
            let wchan = std::path::Path::new("/proc")
                .join(tid_rx.recv().unwrap())
                .join("wchan");
            let mut reached = false;
            let mut other_wrote = false;
            for reload in 1.. {
                // Wait until the writer is finished or blocked opening the FIFO.
                while !done.load(Ordering::SeqCst)
                    && std::fs::read_to_string(&wchan).unwrap_or_default() != "wait_for_partner"
                {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                if done.load(Ordering::SeqCst) {
                    break;
                }
                // The writer waits on this FIFO's inode, wherever its name is.
                std::fs::rename(&packed, &held).unwrap();
                if reload == stop {
                    reached = true;
                    if !lock.exists() {
                        other.write(second, "second").unwrap();
                        other_wrote = true;
                    }
                } else {
                    // A new FIFO (a new inode) makes its next reload block again.
                    testkit::mkfifo(&packed);
                }
                drop(std::fs::OpenOptions::new().write(true).open(&held).unwrap());
                std::fs::remove_file(&held).unwrap();
                if reached {
                    break;
                }
            }
            writer.join().unwrap().unwrap();
            (reached, other_wrote)
        });
        let _ = std::fs::remove_file(&packed);
        if !other_wrote {
            other.write(second, "second").unwrap();
        }
        let notes = other.list().unwrap();
        assert_eq!(notes.len(), 2, "stopped at reload {stop}: {notes:?}");
        assert_eq!(other.read(first).unwrap().as_deref(), Some("first"));
        assert_eq!(other.read(second).unwrap().as_deref(), Some("second"));
        if !reached {
            break;
        }
    }
}

/// Whether a thread blocked opening a FIFO reads `wait_for_partner` in its
/// `/proc/<tid>/wchan` (some kernels and sandboxes hide it): the test above
/// steers a writer by that, and would wait forever without it. A probe thread
/// blocks on a FIFO; it is looked for a bounded number of times (a capability
/// check, not a timing assertion) and always released.
#[cfg(target_os = "linux")]
fn blocked_fifo_opens_show_in_wchan() -> bool {
    use std::sync::mpsc;

    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("probe");
    testkit::mkfifo(&fifo);
    let (tid_tx, tid_rx) = mpsc::channel();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            tid_tx
                .send(std::fs::read_link("/proc/thread-self").ok())
                .unwrap();
            drop(std::fs::File::open(&fifo));
        })
    };
    let seen = match tid_rx.recv().unwrap() {
        Some(thread) => {
            let wchan = std::path::Path::new("/proc").join(thread).join("wchan");
            (0..5_000).any(|_| {
                let shown =
                    std::fs::read_to_string(&wchan).unwrap_or_default() == "wait_for_partner";
                if !shown {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                shown
            })
        }
        None => false,
    };
    // Release the reader whether or not it was seen.
    drop(std::fs::OpenOptions::new().write(true).open(&fifo).unwrap());
    reader.join().unwrap();
    seen
}
