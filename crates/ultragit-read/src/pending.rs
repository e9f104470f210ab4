//! Reading pending corrections (see [`ultragit_schema::pending`]): the
//! readers here join them to the notes they parse.

use std::collections::HashMap;

use gitctx::{ObjectId, Repo};
use ultragit_schema::Correction;
pub use ultragit_schema::pending::{CORRECTIONS_REF, join};

use crate::ReadError;

/// The pending corrections of `commits` (those that have any). Cheap when
/// there are none: the ref does not exist.
pub fn read(
    repo: &Repo,
    commits: &[ObjectId],
) -> Result<HashMap<ObjectId, Vec<Correction>>, ReadError> {
    let notes = repo.notes(CORRECTIONS_REF)?;
    if commits.is_empty() || notes.tip()?.is_none() {
        return Ok(HashMap::new());
    }
    let read = notes.read_many(commits)?;
    Ok(read
        .found
        .into_iter()
        .map(|(commit, text)| (commit, ultragit_schema::pending::parse_record(&text)))
        .filter(|(_, corrections)| !corrections.is_empty())
        .collect())
}
