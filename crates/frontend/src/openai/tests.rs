use llm::defaults::OPENAI_MODEL as DEFAULT_MODEL;

use super::*;
use crate::test_support::lookup;

const CHATGPT: &str = r#"{"auth_mode": "chatgpt", "OPENAI_API_KEY": null,
        "tokens": {"id_token": "x", "access_token": "at-secret-123", "refresh_token": "r", "account_id": "acct-9"}}"#;

fn file() -> PathBuf {
    PathBuf::from("/home/u/.codex/auth.json")
}

/// Codex's files with only `auth.json`.
fn auth<'a>(path: &'a Path, text: &'a str) -> CodexFiles<'a> {
    CodexFiles {
        auth: Some((path, text)),
        config: None,
    }
}

#[test]
fn chatgpt_sign_in_wins_over_the_api_key() {
    let path = file();
    let r = resolve(
        Flags::default(),
        auth(&path, CHATGPT),
        lookup(&[
            ("OPENAI_API_KEY", "sk-env"),
            ("OPENAI_BASE_URL", "http://x/v1"),
        ]),
    )
    .unwrap();
    assert_eq!(r.source, AuthSource::ChatGpt(path));
    assert_eq!(
        r.config.auth,
        Auth::ChatGpt {
            access_token: Secret::new("at-secret-123"),
            account_id: "acct-9".into()
        }
    );
    // OPENAI_BASE_URL belongs to the API-key path only.
    assert_eq!(r.config.base_url, None);
    assert_eq!(r.config.kind, ProviderKind::OpenAiResponses);
    // Not the API default: the ChatGPT backend serves Codex's models.
    assert_eq!(r.config.model, llm::defaults::CHATGPT_MODEL);
    assert_ne!(r.config.model, DEFAULT_MODEL);
}

#[test]
fn chatgpt_sign_in_takes_codex_s_own_model() {
    let path = file();
    let config = PathBuf::from("/home/u/.codex/config.toml");
    let files = |text| CodexFiles {
        auth: Some((&path, CHATGPT)),
        config: Some((&config, text)),
    };
    let codex = "model = \"gpt-codex-9\"\nbase_url = \"http://elsewhere/v1\"\n[profiles.fast]\nmodel = \"other\"\n";
    let r = resolve(
        Flags::default(),
        files(codex),
        lookup(&[("OPENAI_MODEL", "env-model")]),
    )
    .unwrap();
    assert_eq!(r.config.model, "gpt-codex-9");
    // Codex's file chooses no endpoint of ours.
    assert_eq!(r.config.base_url, None);
    // The flag still wins; a file without `model` leaves the environment.
    let flagged = Flags {
        model: Some("gpt-x"),
        ..Flags::default()
    };
    assert_eq!(
        resolve(flagged, files(codex), lookup(&[]))
            .unwrap()
            .config
            .model,
        "gpt-x"
    );
    let r = resolve(
        Flags::default(),
        files("approval_policy = \"never\"\n"),
        lookup(&[("OPENAI_MODEL", "env-model")]),
    )
    .unwrap();
    assert_eq!(r.config.model, "env-model");
    // With an API key, Codex's file is not read at all.
    let r = resolve(
        Flags::default(),
        CodexFiles {
            auth: None,
            config: Some((&config, codex)),
        },
        lookup(&[("OPENAI_API_KEY", "sk")]),
    )
    .unwrap();
    assert_eq!(r.config.model, DEFAULT_MODEL);
    // A broken file is named.
    let err = resolve(Flags::default(), files("model = "), lookup(&[])).unwrap_err();
    assert!(
        err.to_string().contains("/home/u/.codex/config.toml"),
        "{err}"
    );
    let err = resolve(Flags::default(), files("model = 5"), lookup(&[])).unwrap_err();
    assert!(err.to_string().contains("model"), "{err}");
}

#[test]
fn flags_win_over_everything() {
    let path = file();
    let r = resolve(
        Flags {
            model: Some("gpt-x"),
            base_url: Some("http://127.0.0.1:1/v1"),
            chat: false,
        },
        auth(&path, CHATGPT),
        lookup(&[("OPENAI_MODEL", "env-model")]),
    )
    .unwrap();
    assert_eq!(r.config.model, "gpt-x");
    assert_eq!(r.config.base_url.as_deref(), Some("http://127.0.0.1:1/v1"));
}

#[test]
fn the_environment_is_the_fallback() {
    let r = resolve(
        Flags::default(),
        CodexFiles::default(),
        lookup(&[
            ("OPENAI_API_KEY", " sk-env "),
            ("OPENAI_BASE_URL", "http://127.0.0.1:2/v1"),
            ("OPENAI_MODEL", "env-model"),
        ]),
    )
    .unwrap();
    assert_eq!(r.source, AuthSource::ApiKey);
    assert_eq!(r.config.auth, Auth::ApiKey(Secret::new("sk-env")));
    assert_eq!(r.config.base_url.as_deref(), Some("http://127.0.0.1:2/v1"));
    assert_eq!(r.config.model, "env-model");
    // Another auth mode in auth.json falls through to the environment.
    let path = file();
    let r = resolve(
        Flags::default(),
        auth(
            &path,
            r#"{"auth_mode": "apikey", "OPENAI_API_KEY": "sk-file"}"#,
        ),
        lookup(&[("OPENAI_API_KEY", "sk-env")]),
    )
    .unwrap();
    assert_eq!(r.source, AuthSource::ApiKey);
}

#[test]
fn chat_skips_chatgpt_and_local_servers_need_no_key() {
    let path = file();
    let r = resolve(
        Flags {
            chat: true,
            base_url: Some("http://127.0.0.1:8080/v1"),
            model: Some("qwen"),
        },
        auth(&path, CHATGPT),
        lookup(&[]),
    )
    .unwrap();
    assert_eq!(r.source, AuthSource::None);
    assert_eq!(r.config.kind, ProviderKind::OpenAiChat);
    assert_eq!(r.config.auth, Auth::None);
}

#[test]
fn missing_credentials_and_bad_files_are_clear() {
    let err = resolve(Flags::default(), CodexFiles::default(), lookup(&[])).unwrap_err();
    assert!(err.to_string().contains("OPENAI_API_KEY"), "{err}");
    let err = resolve(
        Flags {
            base_url: Some("https://api.openai.com/v1"),
            ..Flags::default()
        },
        CodexFiles::default(),
        lookup(&[]),
    )
    .unwrap_err();
    assert!(matches!(err, AuthError::NoCredentials { .. }));
    let path = file();
    let err = resolve(Flags::default(), auth(&path, "{not json"), lookup(&[])).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("/home/u/.codex/auth.json: not valid JSON"),
        "{err}"
    );
    let err = resolve(
        Flags::default(),
        auth(
            &path,
            r#"{"auth_mode": "chatgpt", "tokens": {"access_token": "a"}}"#,
        ),
        lookup(&[]),
    )
    .unwrap_err();
    assert!(err.to_string().contains("tokens.account_id"), "{err}");
    assert!(!err.to_string().contains("\"a\""));
}

#[test]
fn the_auth_file_lives_in_codex_home() {
    assert_eq!(
        codex_auth_path(lookup(&[("HOME", "/home/u")])),
        Some(PathBuf::from("/home/u/.codex/auth.json"))
    );
    assert_eq!(
        codex_auth_path(lookup(&[("HOME", "/home/u"), ("CODEX_HOME", "/c")])),
        Some(PathBuf::from("/c/auth.json"))
    );
    assert_eq!(codex_auth_path(lookup(&[])), None);
}
