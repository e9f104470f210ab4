//! The defaults every front end uses for a provider, defined once: the model it
//! talks to and the environment variable its key is read from when nothing else
//! says, and the one message for a provider name that is not known.

use crate::ProviderKind;

/// The model for the OpenAI APIs (Responses and Chat Completions) when none is
/// configured.
pub const OPENAI_MODEL: &str = "gpt-5-mini";
/// The model with ChatGPT (Codex) sign-in when neither the flags nor Codex's
/// own `config.toml` name one: the ChatGPT backend serves the models Codex
/// runs, and refuses others such as [`OPENAI_MODEL`].
pub const CHATGPT_MODEL: &str = "gpt-5-codex";
/// The model for Anthropic's Messages API when none is configured.
pub const ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
/// The variable the OpenAI key is read from when none is configured.
pub const OPENAI_API_KEY: &str = "OPENAI_API_KEY";
/// The variable the Anthropic key is read from when none is configured.
pub const ANTHROPIC_API_KEY: &str = "ANTHROPIC_API_KEY";

impl ProviderKind {
    /// The model used when the configuration names none.
    pub fn default_model(self) -> &'static str {
        match self {
            ProviderKind::OpenAiResponses | ProviderKind::OpenAiChat => OPENAI_MODEL,
            ProviderKind::Anthropic => ANTHROPIC_MODEL,
        }
    }

    /// The environment variable the key is read from when the configuration
    /// names none.
    pub fn default_key_variable(self) -> &'static str {
        match self {
            ProviderKind::OpenAiResponses | ProviderKind::OpenAiChat => OPENAI_API_KEY,
            ProviderKind::Anthropic => ANTHROPIC_API_KEY,
        }
    }

    /// Every variable some provider reads its key from by default.
    pub const DEFAULT_KEY_VARIABLES: &'static [&'static str] = &[OPENAI_API_KEY, ANTHROPIC_API_KEY];

    /// [`ProviderKind::parse`], or why `text` names no provider (for a message
    /// that goes after the name of the setting: `provider 'x' is not one of …`).
    pub fn parse_or_explain(text: &str) -> Result<ProviderKind, String> {
        ProviderKind::parse(text)
            .ok_or_else(|| format!("'{text}' is not one of {}", ProviderKind::NAMES.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_provider_has_a_model_and_a_key_variable() {
        assert_eq!(ProviderKind::OpenAiResponses.default_model(), "gpt-5-mini");
        assert_eq!(ProviderKind::OpenAiChat.default_model(), "gpt-5-mini");
        assert_eq!(ProviderKind::Anthropic.default_model(), "claude-sonnet-4-5");
        assert_eq!(
            ProviderKind::OpenAiChat.default_key_variable(),
            "OPENAI_API_KEY"
        );
        assert_eq!(
            ProviderKind::Anthropic.default_key_variable(),
            "ANTHROPIC_API_KEY"
        );
    }

    #[test]
    fn unknown_names_are_explained() {
        assert_eq!(
            ProviderKind::parse_or_explain("chat"),
            Ok(ProviderKind::OpenAiChat)
        );
        assert_eq!(
            ProviderKind::parse_or_explain("gemini").unwrap_err(),
            "'gemini' is not one of openai-responses, openai-chat, anthropic"
        );
    }
}
