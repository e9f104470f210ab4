//! `ultragit doctor`'s `provider` check ([`provider_check`]), which
//! `ultragit_notes::doctor` takes from its caller: the notes lifecycle knows no
//! model provider.

use gitctx::Repo;
use ultragit_notes::doctor::Check;

use crate::config::{ProviderFlags, Settings};

/// The `provider` check of `ultragit doctor`: the provider configuration of
/// `repo` resolves (provider, model, base URL) and the key's variable is set
/// (`key_is_set` says whether the variable of that name is set and not empty;
/// the key itself never reaches the library). Never a network call.
pub fn provider_check(repo: &Repo, key_is_set: &dyn Fn(&str) -> bool) -> Check {
    let id = "provider";
    let settings = match Settings::load(repo, &ProviderFlags::default()) {
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
        Some(variable) if key_is_set(variable) => format!("key from ${variable}"),
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

#[cfg(test)]
mod tests {
    use super::*;
    use ultragit_notes::doctor::Status;

    fn repo_with_key_variable(variable: &str) -> (testkit::TestRepo, Repo) {
        let test = testkit::TestRepo::new();
        test.git(&["config", "ultragit.apiKeyEnv", variable]);
        let repo = Repo::discover(test.path()).unwrap();
        (test, repo)
    }

    #[test]
    fn the_key_variable_set_is_ok_and_names_it() {
        let (_test, repo) = repo_with_key_variable("PROVIDER_CHECK_KEY");
        let check = provider_check(&repo, &|name| name == "PROVIDER_CHECK_KEY");
        assert_eq!(check.status, Status::Ok, "{check:?}");
        assert!(
            check.message.contains("key from $PROVIDER_CHECK_KEY"),
            "{check:?}"
        );
    }

    #[test]
    fn the_key_variable_unset_fails_with_the_fix() {
        let (_test, repo) = repo_with_key_variable("PROVIDER_CHECK_KEY");
        let check = provider_check(&repo, &|_| false);
        assert_eq!(check.status, Status::Fail, "{check:?}");
        assert!(
            check.message.contains("PROVIDER_CHECK_KEY is not set"),
            "{check:?}"
        );
        assert!(
            check
                .fix
                .as_deref()
                .unwrap()
                .contains("export PROVIDER_CHECK_KEY="),
            "{check:?}"
        );
    }
}
