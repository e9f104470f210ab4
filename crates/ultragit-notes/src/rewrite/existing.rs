//! The note git left on the new commit, and what of it the hook keeps when it
//! writes its own ([`super::store`]).
//!
//! Git copies the old commits' notes to the new one before the hook runs,
//! combined by `notes.rewriteMode` (or `GIT_NOTES_REWRITE_MODE`): one mode for
//! every notes ref git rewrites, the user's own `refs/notes/commits` included,
//! so it is the user's choice and the hook must cope with each. A squash of A
//! and B leaves on the new commit (checked against git 2.47):
//!
//! | mode | what git leaves in `refs/notes/ultragit` |
//! |---|---|
//! | `concatenate` (git's default) | A's note, a blank line, B's note: two JSON documents, which no reader parses |
//! | `cat_sort_uniq` | the lines of both notes, sorted, repeats removed (our notes are one line each, so one document a line) |
//! | `overwrite` | B's note, its `commit` naming B |
//! | `ignore` | A's note, its `commit` naming A |
//!
//! A note the new commit had already is combined with the copies the same way.
//!
//! **Rule.** A note written *for* the new commit (its `commit` is the new id)
//! is kept, and the hook's note merged into it: the whole note, or the
//! documents for the new commit found in what git combined ([`written_for`]:
//! blank-line separated, or one a line). Everything else on the new commit —
//! a copy whose `commit` names an old commit, a concatenation or a sorted mix
//! of copies, text that is no annotation — is what git derived from the
//! sources, and the hook's note replaces it. The hook writes only when a
//! source note parses; when none does, what git left stays (it is not ours to
//! judge). A current note over [`gitctx::MAX_NOTE_BYTES`] (two large notes
//! concatenated) is never read: no reader loads it, so it is replaced unread.

use ultragit_schema::Annotation;
use ultragit_schema::merge::merge;

/// What of the current note is a note written for the new commit.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Existing {
    /// Nothing: the current note (if any) is replaced.
    Nothing,
    /// The whole note is one annotation for the new commit.
    Whole(Annotation),
    /// Annotations for the new commit among the documents git combined with
    /// copies, merged in their order; the copies around them are dropped.
    Within(Annotation),
}

/// What of `current` (the note on the new commit, at most
/// [`gitctx::MAX_NOTE_BYTES`]) was written for `new_hex`.
pub(super) fn written_for(current: &str, new_hex: &str) -> Existing {
    let for_new = |annotation: &Annotation| annotation.commit.eq_ignore_ascii_case(new_hex);
    if let Ok(whole) = Annotation::from_json(current) {
        return if for_new(&whole) {
            Existing::Whole(whole)
        } else {
            Existing::Nothing
        };
    }
    documents(current)
        .into_iter()
        .filter_map(|text| Annotation::from_json(text).ok())
        .filter(for_new)
        .reduce(|merged, next| merge(&merged, &next))
        .map_or(Existing::Nothing, Existing::Within)
}

/// The documents git may have combined into `text`: its blank-line separated
/// chunks (`concatenate`), and the lines of a chunk that does not parse whole
/// (`cat_sort_uniq` sorts the lines of one-line notes). Each byte of `text` is
/// in at most two candidates, so parsing them all stays linear in its size.
fn documents(text: &str) -> Vec<&str> {
    let mut documents = Vec::new();
    for chunk in text.split("\n\n").map(str::trim) {
        if chunk.is_empty() {
            continue;
        }
        if !chunk.contains('\n') || Annotation::from_json(chunk).is_ok() {
            documents.push(chunk);
            continue;
        }
        documents.extend(
            chunk
                .lines()
                .map(str::trim)
                .filter(|line| line.starts_with('{')),
        );
    }
    documents
}

#[cfg(test)]
mod tests {
    use super::*;
    use ultragit_schema::ContextLevel;

    const NEW: &str = "2222222222222222222222222222222222222222";
    const OLD: &str = "1111111111111111111111111111111111111111";

    fn note(commit: &str, summary: &str) -> Annotation {
        Annotation::new(
            commit,
            "2024-01-01T00:00:00Z",
            summary,
            ContextLevel::Inferred,
        )
    }

    #[test]
    fn what_of_the_current_note_is_kept() {
        let ours = note(NEW, "Written for the new commit.");
        let copy = note(OLD, "Copied by git.");
        let (ours_json, copy_json) = (ours.to_json(), copy.to_json());
        let check = |current: &str, expected: Existing| {
            assert_eq!(written_for(current, NEW), expected, "{current}");
        };
        check(&ours_json, Existing::Whole(ours.clone()));
        check(&ours.to_json_pretty(), Existing::Whole(ours.clone()));
        // overwrite / ignore: a copy.
        check(&copy_json, Existing::Nothing);
        // concatenate: the current note first, then the copies.
        check(
            &format!("{ours_json}\n\n{copy_json}\n"),
            Existing::Within(ours.clone()),
        );
        check(&format!("{copy_json}\n\n{copy_json}\n"), Existing::Nothing);
        // A pretty note concatenated keeps its chunk whole.
        check(
            &format!("{}\n\n{copy_json}\n", ours.to_json_pretty()),
            Existing::Within(ours.clone()),
        );
        // cat_sort_uniq: one document a line, sorted.
        let mut lines = [ours_json.as_str(), copy_json.as_str()];
        lines.sort_unstable();
        check(
            &format!("{}\n", lines.join("\n")),
            Existing::Within(ours.clone()),
        );
        // Text that is no annotation, or sorted lines of pretty notes.
        check("{not json", Existing::Nothing);
        check("user text\n\nmore\n", Existing::Nothing);
        let mut pretty: Vec<&str> = Vec::new();
        let (a, b) = (ours.to_json_pretty(), copy.to_json_pretty());
        pretty.extend(a.lines().chain(b.lines()));
        pretty.sort_unstable();
        pretty.dedup();
        check(&pretty.join("\n"), Existing::Nothing);
        // Two notes for the new commit in one concatenation are merged.
        let mut other = note(NEW, "");
        other.task = Some("A task".into());
        let Existing::Within(merged) =
            written_for(&format!("{ours_json}\n\n{}", other.to_json()), NEW)
        else {
            panic!("both are for the new commit");
        };
        assert_eq!(merged.summary, ours.summary);
        assert_eq!(merged.task.as_deref(), Some("A task"));
    }
}
