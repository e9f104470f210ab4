//! What every git-agent task is run with: the operator's [`Settings`] (the
//! binary's flags as plain values), the [`Options`] built from them (budgets,
//! guidance, the operator hint), the output cap's default by reasoning effort
//! ([`default_output_cap`]) and the limits of tool results ([`TOOL_LIMITS`]).

use std::time::Duration;

use agent::{Budgets, ToolLimits};
use guidance::FamilyChoice;
use llm::ReasoningEffort;

use crate::error::Error;
use crate::prompt;

/// The limits of a task's tool results.
pub const TOOL_LIMITS: ToolLimits = ToolLimits {
    max_bytes: 32 * 1024,
    max_lines: 800,
    max_entries: 300,
};

/// What the operator asked for, as the binary read it from its flags.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The reasoning effort asked for (`None`: the model's default).
    pub effort: Option<ReasoningEffort>,
    /// `--max-output-tokens` (`None`: [`default_output_cap`] for the effort).
    pub max_output_tokens: Option<u32>,
    /// The whole run's time limit.
    pub timeout: Duration,
    /// Model calls the tool loop may make before it must answer.
    pub max_steps: u32,
    pub guidance_family: FamilyChoice,
    /// `--append-prompt`: the operator hint.
    pub append_prompt: Option<String>,
}

impl Settings {
    /// The output cap of one model call: `max_output_tokens`, else
    /// [`default_output_cap`] for the effort.
    pub fn output_cap(&self) -> u32 {
        self.max_output_tokens
            .unwrap_or_else(|| default_output_cap(self.effort))
    }
}

/// The output cap when `--max-output-tokens` is not given. Reasoning tokens
/// count against the cap, so it grows with the effort asked for:
///
/// | effort | cap |
/// |---|---|
/// | `--low` | 4,096 |
/// | none (the model's default, usually medium) | 8,192 |
/// | `--medium` | 8,192 |
/// | `--high` | 16,384 |
/// | `--xhigh` | 32,768 |
pub const fn default_output_cap(effort: Option<ReasoningEffort>) -> u32 {
    match effort {
        Some(ReasoningEffort::Low) => 4096,
        None | Some(ReasoningEffort::Medium) => 8192,
        Some(ReasoningEffort::High) => 16_384,
        Some(ReasoningEffort::Xhigh) => 32_768,
    }
}

/// What every task is run with: its budgets, the project guidance to read and
/// the operator hint.
#[derive(Debug, Clone)]
pub struct Options {
    pub guidance_family: FamilyChoice,
    /// `--append-prompt`: an operator hint (at most
    /// [`prompt::MAX_OPERATOR_HINT`] characters).
    pub operator_hint: Option<String>,
    pub budgets: Budgets,
    pub guidance: guidance::Options,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            guidance_family: FamilyChoice::Auto,
            operator_hint: None,
            budgets: default_budgets(),
            guidance: guidance::Options {
                max_file_bytes: 16 * 1024,
                max_total_bytes: 16 * 1024,
            },
        }
    }
}

impl Options {
    /// The options `settings` ask for: their guidance family, hint, steps,
    /// output cap and time limit over the defaults.
    pub fn from_settings(settings: &Settings) -> Options {
        let mut options = Options {
            guidance_family: settings.guidance_family,
            operator_hint: settings.append_prompt.clone(),
            ..Options::default()
        };
        options.budgets.max_steps = settings.max_steps;
        options.budgets.max_tokens = Some(settings.output_cap());
        options.budgets.overall_timeout = settings.timeout;
        options
    }

    /// Refuses an operator hint over [`prompt::MAX_OPERATOR_HINT`] characters.
    pub fn check_hint(&self) -> Result<(), Error> {
        if let Some(hint) = &self.operator_hint {
            let chars = hint.chars().count();
            if chars > prompt::MAX_OPERATOR_HINT {
                return Err(Error::InvalidOption(format!(
                    "--append-prompt is {chars} characters long; the limit is {}",
                    prompt::MAX_OPERATOR_HINT
                )));
            }
        }
        Ok(())
    }
}

/// The default budgets of a run: 8 model steps, 12 tool calls, 5 minutes,
/// 8,192 output tokens per call — `git-agent`'s cap when no reasoning effort is
/// asked for ([`Options::from_settings`] sets the cap of every run from
/// `--max-output-tokens` or the effort; reasoning tokens count against it).
fn default_budgets() -> Budgets {
    Budgets {
        max_steps: 8,
        max_tool_calls: 12,
        tool_limits: TOOL_LIMITS,
        overall_timeout: Duration::from_secs(300),
        max_tokens: Some(8192),
    }
}
