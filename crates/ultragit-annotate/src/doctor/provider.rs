//! The provider check: the configuration resolves and the key's variable is
//! set; never a network call.

use super::{Check, Doctor};
use crate::config::{ProviderFlags, Settings};

impl Doctor<'_> {
    pub(super) fn provider(&self) -> Check {
        let id = "provider";
        let settings = match Settings::load(self.repo, &ProviderFlags::default()) {
            Ok(settings) => settings,
            Err(err) => {
                return Check::fail(id, format!("the provider configuration does not resolve: {err}"))
                    .with_fix("correct the value named above (git config ultragit.provider, ultragit.model, ultragit.baseUrl, ultragit.apiKeyEnv)");
            }
        };
        let provider = &settings.provider;
        let mut config = llm::ProviderConfig::new(provider.kind, provider.model.trim());
        config.base_url = provider
            .base_url
            .as_deref()
            .map(str::trim)
            .filter(|url| !url.is_empty())
            .map(str::to_owned);
        // Built without a key: nothing is sent, this only checks the settings.
        if let Err(err) = llm::build_provider(config) {
            return Check::fail(id, format!("the provider cannot be set up: {err}")).with_fix(
                "git config ultragit.provider, ultragit.model or ultragit.baseUrl (see `ultragit annotate --help`)",
            );
        }
        let described = provider.describe();
        let key = match &provider.api_key_env {
            None => "no key (ultragit.apiKeyEnv=none)".to_owned(),
            Some(variable) if (self.inputs.key_is_set)(variable) => format!("key from ${variable}"),
            Some(variable) => {
                return Check::fail(
                    id,
                    format!("{described}: the key's variable {variable} is not set, so every annotation fails"),
                )
                .with_fix(format!(
                    "export {variable}=… (or git config ultragit.apiKeyEnv NAME; `none` for a server without keys)"
                ));
            }
        };
        if !settings.warnings.is_empty() {
            return Check::warn(
                id,
                format!("{described}, {key}; {}", settings.warnings.join("; ")),
            )
            .with_fix(format!(
                "remove those keys from {} and set them with git config",
                crate::config::CONFIG_FILE
            ));
        }
        Check::ok(id, format!("{described}, {key}"))
    }
}
