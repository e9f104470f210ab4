//! Corrections: what people say about an annotation after it was written
//! (spec 003 Feature 11, `ultragit flag` and `ultragit correct`).
//!
//! A correction lives **in the note it corrects**, in the annotation's
//! top-level `corrections` array, so it travels wherever the note goes
//! (`ultragit sync`, `export`/`import`, amend and rebase). The array is omitted
//! when empty and reads as empty when missing, so notes without corrections
//! are byte-for-byte what they were and older readers ignore the member.
//!
//! **Append-only.** The annotation's own fields are never rewritten:
//! [`append_to_note`] adds one entry to the stored JSON text without touching
//! a byte of the rest (fields this version does not know included), and checks
//! by re-parsing that every other field is unchanged. Nothing is ever removed;
//! a correction that should no longer hold is answered by another one.
//!
//! **Kinds.** `flag` (the region — or, without a target, every region — is
//! doubtful; `reason` says why), `set` (replace a text field: `intent`,
//! `reasoning`, `risk_notes`), `add` and `remove` (an entry of a list field:
//! `constraints`, `tags`). [`CorrectionField`] is the table of what can be
//! corrected and how.
//!
//! **Applying** ([`apply`]) is what readers do: the corrections that target a
//! region are applied in timestamp order (the note's order for equal times,
//! so two clones that merged the same corrections agree), later `set`s win,
//! and each one that changed something (or is a flag) is returned with the
//! text it replaced. Corrections from other writers are untrusted: one with
//! an unknown kind or field, or that does not make sense
//! ([`Correction::problems`]), is never applied.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::annotation::{
    Annotation, Constraint, ConstraintSource, NoteParseError, RegionAnnotation, parse_timestamp,
};
// The stored form lives with the document it is part of (`annotation`, which
// knows nothing of this module); its checks and its application live here.
pub use crate::annotation::{Correction, CorrectionField, CorrectionKind, CorrectionTarget};

/// The longest `reason` or `value` of a correction, in bytes.
pub const MAX_CORRECTION_TEXT: usize = 4096;

/// A correction as applied to one region, for readers: the stored
/// correction and, for a `set`, the text it replaced (`None` when the field
/// was empty).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedCorrection {
    /// The correction as stored.
    #[serde(flatten)]
    pub correction: Correction,
    /// The field's text before a `set`; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<String>,
}

impl Correction {
    /// A flag of `target` for `reason`.
    pub fn flag(
        target: CorrectionTarget,
        reason: impl Into<String>,
        author: impl Into<String>,
        timestamp: impl Into<String>,
    ) -> Self {
        Self {
            target,
            kind: CorrectionKind::Flag,
            field: None,
            value: None,
            reason: reason.into(),
            author: author.into(),
            timestamp: timestamp.into(),
        }
    }

    /// The timestamp as UTC, when it is valid RFC 3339.
    pub fn timestamp_utc(&self) -> Option<DateTime<Utc>> {
        parse_timestamp(&self.timestamp)
    }

    /// Whether this is a flag.
    pub fn is_flag(&self) -> bool {
        self.kind == CorrectionKind::Flag
    }

    /// Everything that makes this correction unusable, as one-line messages
    /// naming the member (empty: it can be stored and applied). A usable
    /// correction has a non-blank reason and author, an RFC 3339 timestamp,
    /// texts within [`MAX_CORRECTION_TEXT`], an anchor only with a file, and:
    /// a flag has no field or value; `set` names a text field, `add`/`remove`
    /// a list field, each with a non-blank value and a file and anchor.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let blank = |text: &str| text.trim().is_empty();
        if blank(&self.reason) {
            problems.push("reason is empty; say why".to_owned());
        }
        if blank(&self.author) {
            problems.push("author is empty".to_owned());
        }
        if self.timestamp_utc().is_none() {
            problems.push(format!(
                "timestamp {:?} is not an RFC 3339 date-time with offset",
                self.timestamp
            ));
        }
        for (name, text) in [
            ("reason", Some(&self.reason)),
            ("value", self.value.as_ref()),
        ] {
            if let Some(text) = text
                && text.len() > MAX_CORRECTION_TEXT
            {
                problems.push(format!(
                    "{name} is {} bytes, over the limit of {MAX_CORRECTION_TEXT}",
                    text.len()
                ));
            }
        }
        if self.target.anchor.is_some() && self.target.file.is_none() {
            problems.push("target names an anchor without its file".to_owned());
        }
        let unit = self.target.file.is_some() && self.target.anchor.is_some();
        match (&self.kind, &self.field) {
            (CorrectionKind::Flag, None) if self.value.is_none() => {}
            (CorrectionKind::Flag, _) => {
                problems.push("a flag changes no field; it has no field or value".to_owned());
            }
            (CorrectionKind::Other(kind), _) => problems.push(format!(
                "kind {kind:?} is not one of: {}",
                CorrectionKind::KNOWN.join(", ")
            )),
            (kind, None) => problems.push(format!("a {kind} correction names a field")),
            (kind, Some(field)) => {
                match field.is_list() {
                    None => problems.push(format!(
                        "field {:?} cannot be corrected; it is one of: {}",
                        field.as_str(),
                        CorrectionField::KNOWN.join(", ")
                    )),
                    Some(list) if list != (*kind != CorrectionKind::Set) => {
                        problems.push(format!(
                            "{field} is {}; use {}",
                            if list { "a list" } else { "a text" },
                            field.kinds().join(" or ")
                        ));
                    }
                    Some(_) => {}
                }
                if self.value.as_deref().is_none_or(blank) {
                    problems.push(format!("a {kind} correction needs a non-empty value"));
                }
                if !unit {
                    problems.push(format!(
                        "a {kind} correction names one region: its file and anchor"
                    ));
                }
            }
        }
        problems
    }
}

/// `region` with the corrections among `corrections` that target it applied
/// (see the module docs), and the ones that took effect.
pub fn apply(
    region: &RegionAnnotation,
    corrections: &[Correction],
) -> (RegionAnnotation, Vec<AppliedCorrection>) {
    let mut targeting: Vec<&Correction> = corrections
        .iter()
        .filter(|c| c.target.covers(region) && c.problems().is_empty())
        .collect();
    // Stable: equal times keep the note's order.
    targeting.sort_by_key(|c| c.timestamp_utc());
    let mut corrected = region.clone();
    let mut applied = Vec::new();
    for correction in targeting {
        if let Some(previous) = apply_one(&mut corrected, correction) {
            applied.push(AppliedCorrection {
                correction: correction.clone(),
                previous,
            });
        }
    }
    (corrected, applied)
}

/// Applies one usable correction. `None`: it changed nothing (an entry
/// already added or already gone, a text already set); otherwise the
/// replaced text of a `set`.
fn apply_one(region: &mut RegionAnnotation, correction: &Correction) -> Option<Option<String>> {
    let Some(field) = &correction.field else {
        return Some(None); // a flag
    };
    let value = correction.value.as_deref().unwrap_or_default().trim();
    let previous = match field {
        CorrectionField::Intent => Some(std::mem::replace(&mut region.intent, value.to_owned())),
        CorrectionField::Reasoning => region.reasoning.replace(value.to_owned()),
        CorrectionField::RiskNotes => region.risk_notes.replace(value.to_owned()),
        CorrectionField::Constraints | CorrectionField::Tags | CorrectionField::Other(_) => {
            return edit_list_field(region, field, correction.kind == CorrectionKind::Add, value)
                .then_some(None);
        }
    };
    (previous.as_deref().map(str::trim) != Some(value)).then_some(previous)
}

/// `add` or remove `value` in the list `field` of `region`; whether it changed.
fn edit_list_field(
    region: &mut RegionAnnotation,
    field: &CorrectionField,
    add: bool,
    value: &str,
) -> bool {
    match field {
        CorrectionField::Constraints => edit_list(
            &mut region.constraints,
            |c| c.text.trim() == value,
            add.then(|| Constraint::new(value, ConstraintSource::Author)),
        ),
        CorrectionField::Tags => edit_list(
            &mut region.tags,
            |t| t.trim() == value,
            add.then(|| value.to_owned()),
        ),
        _ => false,
    }
}

/// Adds `added` when no entry `matches`, or (`added` is `None`) removes every
/// entry that `matches`. Returns whether the list changed.
fn edit_list<T>(list: &mut Vec<T>, matches: impl Fn(&T) -> bool, added: Option<T>) -> bool {
    let before = list.len();
    match added {
        Some(_) if list.iter().any(&matches) => false,
        Some(entry) => {
            list.push(entry);
            true
        }
        None => {
            list.retain(|entry| !matches(entry));
            list.len() != before
        }
    }
}

/// Why [`append_to_note`] could not append.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppendError {
    /// The note is not an `ultragit/v1` annotation.
    #[error(transparent)]
    Parse(#[from] NoteParseError),
    /// The appended text did not read back as the same annotation plus the
    /// correction (a bug; nothing is written).
    #[error("appending the correction would change the annotation: {0}")]
    Changed(String),
}

/// `note` (the stored JSON text of an annotation) with `correction` appended
/// to its `corrections` array, every other byte as it was: the array is
/// created before the closing `}` when the note has none, or the entry is
/// added before its closing `]`. The result is checked by parsing it: the
/// annotation must read back exactly as before, with one more correction.
pub fn append_to_note(note: &str, correction: &Correction) -> Result<String, AppendError> {
    append_all_to_note(note, std::slice::from_ref(correction))
}

/// [`append_to_note`] for several corrections at once, in order: the note is
/// parsed twice whatever their number (how pending corrections are folded
/// into a note).
pub fn append_all_to_note(note: &str, corrections: &[Correction]) -> Result<String, AppendError> {
    let before = Annotation::from_json(note)?;
    if corrections.is_empty() {
        return Ok(note.to_owned());
    }
    let entries: Vec<String> = corrections
        .iter()
        .map(|c| {
            serde_json::to_string(c)
                .expect("a correction has string keys and no floats, so it always serializes")
        })
        .collect();
    let entry = entries.join(",");
    let text = match top_level_value(note, "corrections") {
        Some((start, end)) => {
            let inner = &note[start + 1..end - 1];
            let separator = if inner.trim().is_empty() { "" } else { "," };
            format!("{}{separator}{entry}{}", &note[..end - 1], &note[end - 1..])
        }
        None => {
            let close = note
                .rfind('}')
                .ok_or_else(|| AppendError::Changed("the note has no closing brace".to_owned()))?;
            format!(
                "{},\"corrections\":[{entry}]{}",
                &note[..close],
                &note[close..]
            )
        }
    };
    let after =
        Annotation::from_json(&text).map_err(|err| AppendError::Changed(err.to_string()))?;
    let mut expected = before;
    expected.corrections.extend(corrections.iter().cloned());
    if after != expected {
        return Err(AppendError::Changed(
            "the note read back differently".to_owned(),
        ));
    }
    Ok(text)
}

/// The byte range of the value of `key` in the top-level object of `json`
/// (already known to be a valid JSON object), or `None` when it has no such
/// member.
fn top_level_value(json: &str, key: &str) -> Option<(usize, usize)> {
    let bytes = json.as_bytes();
    let mut at = skip_space(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    loop {
        at = skip_space(bytes, at);
        if bytes.get(at) != Some(&b'"') {
            return None; // `}`: no more members
        }
        let key_end = skip_string(bytes, at)?;
        let name: String = serde_json::from_str(&json[at..key_end]).ok()?;
        at = skip_space(bytes, key_end);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        let start = skip_space(bytes, at + 1);
        let end = skip_value(bytes, start)?;
        if name == key {
            return Some((start, end));
        }
        at = skip_space(bytes, end);
        if bytes.get(at) != Some(&b',') {
            return None;
        }
        at += 1;
    }
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(|b| b" \t\r\n".contains(b)) {
        at += 1;
    }
    at
}

/// The index just past the string starting at `at` (a `"`).
fn skip_string(bytes: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The index just past the value starting at `at`.
fn skip_value(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => skip_string(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            while let Some(&b) = bytes.get(i) {
                match b {
                    b'"' => {
                        i = skip_string(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let mut i = at;
            while bytes.get(i).is_some_and(|b| !b",}] \t\r\n".contains(b)) {
                i += 1;
            }
            Some(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_level_value_skips_nested_and_quoted_lookalikes() {
        let json = r#" { "a" : {"corrections":[1]}, "b":"\"corrections\":", "c": 12 ,
            "corrections" : [ {"x":"]"} ] } "#;
        let (start, end) = top_level_value(json, "corrections").unwrap();
        assert_eq!(&json[start..end], r#"[ {"x":"]"} ]"#);
        assert_eq!(
            top_level_value(json, "c").map(|(s, e)| &json[s..e]),
            Some("12")
        );
        assert_eq!(top_level_value(json, "d"), None);
        assert_eq!(top_level_value(r#"{"\u0063":true}"#, "c"), Some((10, 14)));
    }
}
