//! The lockfile formats we know, in one table: each [`LockKind`]'s file
//! names, label and parser. Every lookup — the kind of a path, the label of a
//! kind, the parser of a kind, the list of all kinds — goes through
//! [`FORMATS`], so adding a format is one enum variant and one table row.

use std::fmt;

use crate::format::{composer, gemfile, go_sum, npm, pnpm, toml_lock, yarn};
use crate::packages::{Packages, ParseError};

/// The lockfile formats we can summarize, one per package manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LockKind {
    /// Rust's `Cargo.lock`.
    Cargo,
    /// npm's `package-lock.json` or `npm-shrinkwrap.json`.
    Npm,
    /// Yarn's `yarn.lock`, classic (v1) or berry.
    Yarn,
    /// pnpm's `pnpm-lock.yaml` (lockfile versions 5, 6 and 9).
    Pnpm,
    /// Poetry's `poetry.lock`.
    Poetry,
    /// uv's `uv.lock`.
    Uv,
    /// Go's `go.sum`.
    GoSum,
    /// Bundler's `Gemfile.lock`.
    Bundler,
    /// Composer's `composer.lock`.
    Composer,
}

/// One row of the table: everything we know about a lockfile format.
struct Format {
    kind: LockKind,
    /// Exact, case-sensitive file names (the last path component).
    file_names: &'static [&'static str],
    /// The ecosystem label shown to the model.
    label: &'static str,
    /// Reads the package versions of non-blank text, BOM already removed.
    parse: fn(&str) -> Result<Packages, ParseError>,
}

/// The one table of formats, in [`LockKind`] declaration order (checked at
/// compile time below, so `FORMATS[kind as usize]` is the kind's row).
const FORMATS: &[Format] = &[
    Format {
        kind: LockKind::Cargo,
        file_names: &["Cargo.lock"],
        label: "Cargo",
        parse: toml_lock::parse,
    },
    Format {
        kind: LockKind::Npm,
        file_names: &["package-lock.json", "npm-shrinkwrap.json"],
        label: "npm",
        parse: npm::parse,
    },
    Format {
        kind: LockKind::Yarn,
        file_names: &["yarn.lock"],
        label: "Yarn",
        parse: yarn::parse,
    },
    Format {
        kind: LockKind::Pnpm,
        file_names: &["pnpm-lock.yaml"],
        label: "pnpm",
        parse: pnpm::parse,
    },
    Format {
        kind: LockKind::Poetry,
        file_names: &["poetry.lock"],
        label: "Poetry",
        parse: toml_lock::parse,
    },
    Format {
        kind: LockKind::Uv,
        file_names: &["uv.lock"],
        label: "uv",
        parse: toml_lock::parse,
    },
    Format {
        kind: LockKind::GoSum,
        file_names: &["go.sum"],
        label: "Go",
        parse: go_sum::parse,
    },
    Format {
        kind: LockKind::Bundler,
        file_names: &["Gemfile.lock"],
        label: "Bundler",
        parse: gemfile::parse,
    },
    Format {
        kind: LockKind::Composer,
        file_names: &["composer.lock"],
        label: "Composer",
        parse: composer::parse,
    },
];

const _: () = {
    let mut i = 0;
    while i < FORMATS.len() {
        assert!(
            FORMATS[i].kind as usize == i,
            "FORMATS must list the kinds in declaration order"
        );
        i += 1;
    }
};

impl LockKind {
    /// Every kind, in declaration order.
    pub const ALL: [LockKind; FORMATS.len()] = {
        let mut all = [LockKind::Cargo; FORMATS.len()];
        let mut i = 0;
        while i < FORMATS.len() {
            all[i] = FORMATS[i].kind;
            i += 1;
        }
        all
    };

    /// The ecosystem label shown to the model, such as `"Cargo"` or `"npm"`.
    pub fn name(self) -> &'static str {
        self.format().label
    }

    fn format(self) -> &'static Format {
        &FORMATS[self as usize]
    }
}

impl fmt::Display for LockKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The lockfile kind of `path`, judged by its file name alone (the last path
/// component, exact and case-sensitive), or `None` for any other file.
///
/// Both `/` and `\` separate components, so Windows-style paths work too.
pub fn kind_of(path: &str) -> Option<LockKind> {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    FORMATS
        .iter()
        .find(|format| format.file_names.contains(&file))
        .map(|format| format.kind)
}

/// Reads the package versions held in `text`, a lockfile of `kind`.
///
/// Blank text holds no packages. Otherwise the text must show the format's
/// structure (for example a `[[package]]` table, a `packages` object or a
/// `specs:` section), though that structure may list no packages: a
/// structurally valid but empty lockfile is `Ok` with no packages, while text
/// in which nothing is recognized is [`ParseError::NoPackages`]. Entries
/// without a version, and names or versions containing control characters,
/// are skipped. A leading byte-order mark is ignored.
pub fn parse(kind: LockKind, text: &str) -> Result<Packages, ParseError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Ok(Packages::new());
    }
    (kind.format().parse)(text)
}
