//! The two guidance families and the caller's choice among them.

use std::fmt;
use std::str::FromStr;

/// A family of guidance files. One request uses at most one family; files of
/// different families are never mixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// `AGENTS.override.md`, then `AGENTS.md`.
    Agents,
    /// `CLAUDE.md`.
    Claude,
}

impl Family {
    /// The file names of this family, in precedence order within one
    /// directory. Names are matched exactly (case-sensitive on every file
    /// system that is): `agents.md` is not an `AGENTS.md`.
    pub fn candidates(self) -> &'static [&'static str] {
        match self {
            Self::Agents => &["AGENTS.override.md", "AGENTS.md"],
            Self::Claude => &["CLAUDE.md"],
        }
    }

    /// The lower-case name, as accepted by [`FamilyChoice`]'s parser.
    pub fn name(self) -> &'static str {
        match self {
            Self::Agents => "agents",
            Self::Claude => "claude",
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which family a request uses (`--guidance-family auto|agents|claude|none`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FamilyChoice {
    /// AGENTS-family if any directory on any target's chain has one, else
    /// CLAUDE-family if any has a `CLAUDE.md`, else no guidance.
    #[default]
    Auto,
    /// Only the AGENTS-family, even where none is found.
    Agents,
    /// Only the CLAUDE-family, even where AGENTS-family files exist.
    Claude,
    /// No guidance at all; nothing is read.
    None,
}

impl FamilyChoice {
    /// Every accepted spelling, in the order shown to users.
    const VALUES: [&'static str; 4] = ["auto", "agents", "claude", "none"];

    /// The lower-case name, as accepted by the parser.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Agents => "agents",
            Self::Claude => "claude",
            Self::None => "none",
        }
    }
}

impl fmt::Display for FamilyChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A `--guidance-family` value that is none of `auto`, `agents`, `claude` or `none`:
/// the error of [`FamilyChoice`]'s `FromStr` (clap shows its message), so it is
/// public with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown guidance family {value:?}: expected one of {}",
    FamilyChoice::VALUES.join(", ")
)]
pub struct ParseFamilyChoiceError {
    /// The rejected input, as given.
    pub value: String,
}

impl FromStr for FamilyChoice {
    type Err = ParseFamilyChoiceError;

    /// Parses `auto`, `agents`, `claude` or `none`, ignoring ASCII case and
    /// surrounding whitespace.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let trimmed = s.trim();
        [Self::Auto, Self::Agents, Self::Claude, Self::None]
            .into_iter()
            .find(|choice| choice.name().eq_ignore_ascii_case(trimmed))
            .ok_or_else(|| ParseFamilyChoiceError {
                value: s.to_owned(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_value_in_any_case() {
        let cases = [
            ("auto", FamilyChoice::Auto),
            ("agents", FamilyChoice::Agents),
            ("claude", FamilyChoice::Claude),
            ("none", FamilyChoice::None),
            ("AUTO", FamilyChoice::Auto),
            ("Agents", FamilyChoice::Agents),
            ("cLaUdE", FamilyChoice::Claude),
            (" none\n", FamilyChoice::None),
        ];
        for (input, expected) in cases {
            assert_eq!(input.parse::<FamilyChoice>(), Ok(expected), "{input:?}");
        }
    }

    #[test]
    fn names_round_trip() {
        for value in FamilyChoice::VALUES {
            let choice: FamilyChoice = value.parse().unwrap();
            assert_eq!(choice.to_string(), value);
        }
    }

    #[test]
    fn rejects_unknown_values_listing_the_accepted_ones() {
        for input in ["", "agent", "AGENTS.md", "claude.md", "yes", "auto,none"] {
            let err = input.parse::<FamilyChoice>().unwrap_err();
            assert_eq!(err.value, input);
            assert_eq!(
                err.to_string(),
                format!(
                    "unknown guidance family {input:?}: expected one of auto, agents, claude, none"
                )
            );
        }
    }

    #[test]
    fn default_is_auto() {
        assert_eq!(FamilyChoice::default(), FamilyChoice::Auto);
    }

    #[test]
    fn family_candidates_and_names() {
        assert_eq!(
            Family::Agents.candidates(),
            &["AGENTS.override.md", "AGENTS.md"]
        );
        assert_eq!(Family::Claude.candidates(), &["CLAUDE.md"]);
        assert_eq!(Family::Agents.to_string(), "agents");
        assert_eq!(Family::Claude.name(), "claude");
    }
}
