use super::*;

fn project(config: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(CONFIG_DIR)).unwrap();
    if let Some(text) = config {
        std::fs::write(dir.path().join(CONFIG_FILE), text).unwrap();
    }
    dir
}

fn none() -> UserFiles {
    UserFiles::default()
}

/// A user configuration directory with `config.toml` and/or `api-key`.
fn user(config: Option<&str>, key: Option<&str>) -> (tempfile::TempDir, UserFiles) {
    let dir = tempfile::tempdir().unwrap();
    let files = UserFiles {
        config: Some(dir.path().join("config.toml")),
        key: Some(dir.path().join("api-key")),
    };
    if let Some(text) = config {
        std::fs::write(dir.path().join("config.toml"), text).unwrap();
    }
    if let Some(text) = key {
        std::fs::write(dir.path().join("api-key"), text).unwrap();
    }
    (dir, files)
}

#[test]
fn defaults_without_a_file() {
    let dir = project(None);
    let c = load(dir.path(), &none(), &Flags::default()).unwrap();
    assert_eq!(c.provider, ProviderKind::OpenAiResponses);
    assert_eq!(c.model, "gpt-5-mini");
    assert_eq!(c.api_key_env, "OPENAI_API_KEY");
    assert_eq!(c.max_tokens, 32_000);
    assert_eq!(c.max_build_output_bytes, 256 * 1024);
    assert_eq!(c.build_timeout, Duration::from_secs(900));
    assert!(c.build_sandbox);
    assert!(c.build_writable.is_empty());
    // A missing user file is no error either.
    let (_home, files) = user(None, None);
    assert_eq!(load(dir.path(), &files, &Flags::default()).unwrap(), c);
}

#[test]
fn the_flag_wins_over_both_files_and_is_checked_by_the_key() {
    let dir = project(Some("max_build_output_bytes = 4096\n"));
    let (_home, files) = user(Some("max_build_output_bytes = 8192\n"), None);
    let flag = |bytes| Flags {
        max_build_output_bytes: Some(bytes),
    };
    let c = load(dir.path(), &files, &flag(2048)).unwrap();
    assert_eq!(c.max_build_output_bytes, 2048);
    assert_eq!(
        load(dir.path(), &files, &Flags::default())
            .unwrap()
            .max_build_output_bytes,
        4096
    );
    let err = load(dir.path(), &files, &flag(100)).unwrap_err();
    assert!(matches!(err, Error::ConfigValue(_)), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("--max-build-output-bytes") && text.contains("at least 1024"),
        "{text}"
    );
}

#[test]
fn the_file_sets_everything_and_is_checked() {
    let dir = project(Some(
        "provider = \"anthropic\"\nbase_url = \"http://127.0.0.1:9/\"\nmax_tokens = 1000\nmax_build_output_bytes = 4096\nbuild_timeout_secs = 5\nbuild_sandbox = false\nbuild_writable = [\"/opt/cache\"]\n",
    ));
    let c = load(dir.path(), &none(), &Flags::default()).unwrap();
    assert_eq!(c.provider, ProviderKind::Anthropic);
    assert_eq!(c.model, "claude-sonnet-4-5");
    assert_eq!(c.api_key_env, "ANTHROPIC_API_KEY");
    assert_eq!(c.max_tokens, 1000);
    assert_eq!(c.max_build_output_bytes, 4096);
    assert!(!c.build_sandbox);
    assert_eq!(c.build_writable, [PathBuf::from("/opt/cache")]);
    for (bad, says) in [
        ("provider = \"gemini\"", "not one of"),
        ("modle = \"x\"", "unknown field"),
        ("max_tokens = 0", "at least 1"),
        ("max_build_output_bytes = 100", "at least 1024"),
        ("api_key_file = \"../key\"", "inside agent-config"),
        ("api_key_file = \"/etc/key\"", "inside agent-config"),
        ("build_writable = [\"cache\"]", "absolute path"),
        ("build_writable = [\"/a/../b\"]", "absolute path"),
    ] {
        let dir = project(Some(bad));
        let err = load(dir.path(), &none(), &Flags::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains(says), "{bad}: {err}");
        assert!(err.starts_with(CONFIG_FILE), "{err}");
    }
}

#[test]
fn the_project_file_wins_over_the_user_file_key_by_key() {
    let dir = project(Some(
        "model = \"project-model\"\nbuild_writable = [\"/p\"]\n",
    ));
    let (_home, files) = user(
        Some(
            "provider = \"openai-chat\"\nmodel = \"user-model\"\nbase_url = \"http://127.0.0.1:1/v1\"\nbuild_writable = [\"/u\"]\n",
        ),
        None,
    );
    let c = load(dir.path(), &files, &Flags::default()).unwrap();
    assert_eq!(c.provider, ProviderKind::OpenAiChat);
    assert_eq!(c.model, "project-model");
    assert_eq!(c.base_url.as_deref(), Some("http://127.0.0.1:1/v1"));
    assert_eq!(c.build_writable, [PathBuf::from("/p"), PathBuf::from("/u")]);
    // Errors in the user file name it.
    let (home, files) = user(Some("provider = 3\n"), None);
    let err = load(dir.path(), &files, &Flags::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(&home.path().join("config.toml").display().to_string()),
        "{err}"
    );
}

#[test]
fn project_files_are_never_read_through_links_or_special_files() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("config.toml"), "model = \"evil\"\n").unwrap();
    std::fs::write(outside.path().join("secret"), "sk-outside-secret-1\n").unwrap();

    let dir = project(None);
    std::os::unix::fs::symlink(
        outside.path().join("config.toml"),
        dir.path().join(CONFIG_FILE),
    )
    .unwrap();
    let err = load(dir.path(), &none(), &Flags::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("agent-config/config.toml: is a symbolic link"),
        "{err}"
    );

    let dir = project(None);
    std::os::unix::fs::symlink(
        outside.path().join("secret"),
        dir.path().join("agent-config/api-key"),
    )
    .unwrap();
    let c = load(dir.path(), &none(), &Flags::default()).unwrap();
    let err = key(&c, dir.path(), &none(), |_| None)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("agent-config/api-key: is a symbolic link"),
        "{err}"
    );
    assert!(!err.contains("sk-outside"), "{err}");

    // agent-config/ itself a link.
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join(CONFIG_DIR)).unwrap();
    let err = load(dir.path(), &none(), &Flags::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("agent-config/ is a symbolic link"), "{err}");

    // A FIFO neither hangs nor counts as a file.
    let dir = project(None);
    testkit::mkfifo(&dir.path().join(CONFIG_FILE));
    let err = load(dir.path(), &none(), &Flags::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("is a FIFO, not a regular file"), "{err}");
    let dir = project(None);
    testkit::mkfifo(&dir.path().join("agent-config/api-key"));
    let c = load(dir.path(), &none(), &Flags::default()).unwrap();
    let err = key(&c, dir.path(), &none(), |_| None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("is a FIFO"), "{err}");

    // Size caps.
    let dir = project(Some(&"#".repeat(CONFIG_LIMIT as usize + 1)));
    let err = load(dir.path(), &none(), &Flags::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("larger than 1024 KiB"), "{err}");
    let dir = project(None);
    std::fs::write(
        dir.path().join("agent-config/api-key"),
        "k".repeat(KEY_LIMIT as usize + 1),
    )
    .unwrap();
    let c = load(dir.path(), &none(), &Flags::default()).unwrap();
    let err = key(&c, dir.path(), &none(), |_| None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("larger than 64 KiB"), "{err}");
}

#[test]
fn the_key_comes_from_the_project_then_the_user_then_the_environment() {
    let dir = project(None);
    let c = load(dir.path(), &none(), &Flags::default()).unwrap();
    let env = |name: &str| (name == "OPENAI_API_KEY").then(|| "sk-env-1234".to_owned());
    assert_eq!(
        key(&c, dir.path(), &none(), env).unwrap(),
        (
            Some(Secret::new("sk-env-1234")),
            KeySource::Env("OPENAI_API_KEY".into())
        )
    );
    let (home, files) = user(None, Some("sk-user-0000\n"));
    assert_eq!(
        key(&c, dir.path(), &files, env).unwrap(),
        (
            Some(Secret::new("sk-user-0000")),
            KeySource::UserFile(home.path().join("api-key"))
        )
    );
    std::fs::write(dir.path().join("agent-config/api-key"), "sk-file-5678\n").unwrap();
    assert_eq!(
        key(&c, dir.path(), &files, env).unwrap(),
        (
            Some(Secret::new("sk-file-5678")),
            KeySource::ProjectFile("agent-config/api-key".into())
        )
    );
    let none_dir = project(None);
    let c = load(none_dir.path(), &none(), &Flags::default()).unwrap();
    assert_eq!(
        key(&c, none_dir.path(), &none(), |_| None).unwrap(),
        (None, KeySource::None)
    );
    let err = provider_config(&c, None).unwrap_err().to_string();
    assert!(
        err.contains("OPENAI_API_KEY")
            && err.contains("agent-config/api-key")
            && err.contains("~/.config/code-commit/api-key"),
        "{err}"
    );
    let mut local = c.clone();
    local.base_url = Some("http://127.0.0.1:8080/v1".into());
    assert_eq!(provider_config(&local, None).unwrap().auth, Auth::None);
    // A named key file must exist.
    let named = project(Some("api_key_file = \"keys/mine\"\n"));
    let c = load(named.path(), &none(), &Flags::default()).unwrap();
    let err = key(&c, named.path(), &none(), env).unwrap_err().to_string();
    assert!(
        err.contains("agent-config/keys/mine does not exist"),
        "{err}"
    );
}

proptest::proptest! {
    /// The configuration parser over arbitrary bytes: a value or an
    /// error naming the file, never a panic.
    #[test]
    fn arbitrary_bytes_parse_or_fail_cleanly(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2048)
    ) {
        if let Err(err) = parse(&bytes, CONFIG_FILE) {
            proptest::prop_assert!(err.to_string().contains(CONFIG_FILE));
        }
    }
}
