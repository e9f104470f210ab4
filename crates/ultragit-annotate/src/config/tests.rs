use testkit::TestRepo;

use super::*;

/// A repository whose git config names a trusted OpenAI-compatible server.
fn configured() -> TestRepo {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "a\n", "first");
    for (key, value) in [
        ("ultragit.provider", "openai-chat"),
        ("ultragit.baseUrl", "http://127.0.0.1:1/v1"),
        ("ultragit.model", "test-model"),
        ("ultragit.apiKeyEnv", "MY_KEY"),
    ] {
        repo.git(&["config", key, value]);
    }
    repo
}

fn load(repo: &TestRepo, flags: &ProviderFlags) -> Result<Settings, String> {
    let repo = Repo::discover(repo.path()).unwrap();
    Settings::load(&repo, flags).map_err(|e| e.to_string())
}

fn trusted() -> ProviderSettings {
    ProviderSettings {
        kind: ProviderKind::OpenAiChat,
        model: "test-model".to_owned(),
        base_url: Some("http://127.0.0.1:1/v1".to_owned()),
        api_key_env: Some("MY_KEY".to_owned()),
    }
}

#[test]
fn tuning_keys_are_read_and_steering_keys_ignored_with_a_warning() {
    let repo = configured();
    repo.git(&["config", "ultragit.maxAgentTurns", "9"]);
    repo.git(&["config", "ultragit.chunkSize", "2"]);
    repo.write(
        CONFIG_FILE,
        r#"
        [ultragit.read]
        deps_scan_limit = 10
        [ultragit.annotate]
        max_agent_turns = 3
        base_url = "http://attacker.example/v1"
        api_key_env = "AWS_SECRET_ACCESS_KEY"
        [other.tool]
        anything = true
        "#,
    );
    let settings = load(&repo, &ProviderFlags::default()).unwrap();
    // The file wins over git config for the limits it sets.
    assert_eq!(settings.limits.max_agent_turns, 3);
    assert_eq!(settings.limits.chunk_size, 2);
    assert_eq!(settings.limits.max_diff_lines, 2000);
    assert_eq!(settings.provider, trusted());
    assert_eq!(
        settings.warnings,
        [
            "ignoring ultragit.annotate.base_url in .ultragit-config.toml: a file in the repository may not choose where requests go; set it with `git config ultragit.baseUrl` or `--base-url`",
            "ignoring ultragit.annotate.api_key_env in .ultragit-config.toml: a file in the repository may not choose which credential is sent; set it with `git config ultragit.apiKeyEnv` or `--api-key-env`",
        ]
    );
}

#[test]
fn flags_win_over_git_config_and_none_means_no_key() {
    let repo = configured();
    repo.git(&["config", "ultragit.provider", "bogus-provider"]);
    let flags = ProviderFlags {
        provider: Some("anthropic".to_owned()),
        model: Some("flag-model".to_owned()),
        base_url: Some(String::new()),
        api_key_env: Some("none".to_owned()),
    };
    let settings = load(&repo, &flags).unwrap();
    assert_eq!(
        settings.provider,
        ProviderSettings {
            kind: ProviderKind::Anthropic,
            model: "flag-model".to_owned(),
            // An empty --base-url means the API's own, whatever git config says.
            base_url: None,
            api_key_env: None,
        }
    );
    // Blank git config values are not set, except the key variable's: no key.
    let repo = TestRepo::new();
    repo.git(&["config", "ultragit.provider", " "]);
    repo.git(&["config", "ultragit.model", ""]);
    repo.git(&["config", "ultragit.apiKeyEnv", ""]);
    let settings = load(&repo, &ProviderFlags::default()).unwrap();
    assert_eq!(settings.provider.kind, ProviderKind::OpenAiResponses);
    assert_eq!(settings.provider.model, "gpt-5-mini");
    assert_eq!(settings.provider.api_key_env, None);
}

#[test]
fn defaults_follow_the_provider() {
    let repo = TestRepo::new();
    let settings = load(&repo, &ProviderFlags::default()).unwrap();
    assert_eq!(settings.limits, AnnotateConfig::default());
    assert_eq!(settings.provider.model, "gpt-5-mini");
    assert_eq!(
        settings.provider.api_key_env.as_deref(),
        Some("OPENAI_API_KEY")
    );
    assert!(settings.warnings.is_empty());
    repo.git(&["config", "ultragit.provider", "claude"]);
    let settings = load(&repo, &ProviderFlags::default()).unwrap();
    assert_eq!(settings.provider.kind, ProviderKind::Anthropic);
    assert_eq!(settings.provider.model, "claude-sonnet-4-5");
    assert_eq!(
        settings.provider.api_key_env.as_deref(),
        Some("ANTHROPIC_API_KEY")
    );
}

#[test]
fn bad_values_and_unknown_keys_name_their_source() {
    let repo = TestRepo::new();
    repo.git(&["config", "ultragit.maxDiffLines", "0"]);
    assert_eq!(
        load(&repo, &ProviderFlags::default()).unwrap_err(),
        "invalid configuration: git config ultragit.maxDiffLines must be a whole number of at least 1, not 0"
    );
    repo.git(&["config", "--unset", "ultragit.maxDiffLines"]);
    repo.git(&["config", "ultragit.provider", "bogus"]);
    assert_eq!(
        load(&repo, &ProviderFlags::default()).unwrap_err(),
        "invalid configuration: git config ultragit.provider 'bogus' is not one of openai-responses, openai-chat, anthropic"
    );
    repo.git(&["config", "--unset", "ultragit.provider"]);
    for (text, message) in [
        (
            "[ultragit.annotate]\nrecent_annotations_limit = -1\n",
            ".ultragit-config.toml: ultragit.annotate.recent_annotations_limit must be a whole number of at least 0, not -1",
        ),
        (
            "[ultragit.annotate]\nmax_agent_turn = 3\n",
            "[ultragit.annotate]: unknown field `max_agent_turn`",
        ),
        ("[ultragit.annotate\n", ".ultragit-config.toml: "),
    ] {
        repo.write(CONFIG_FILE, text);
        let err = load(&repo, &ProviderFlags::default()).unwrap_err();
        assert!(err.contains(message), "{text}: {err}");
    }
    // Each reader judges only its own section.
    repo.write(CONFIG_FILE, "[ultragit.read]\nfuture = true\n");
    assert!(load(&repo, &ProviderFlags::default()).is_ok());
}

fn no_git() -> Layer<'static> {
    Layer::git_config(|_| Ok::<_, String>(None), |_| Ok(None))
}

proptest::proptest! {
    /// TOML-shaped text with steering keys of any type and value: each is
    /// ignored, once, and changes nothing.
    #[test]
    fn steering_keys_of_any_shape_are_ignored(
        key in proptest::sample::select(vec!["provider", "model", "base_url", "api_key_env"]),
        value in "[ -~]{0,40}",
        quoted in proptest::prelude::any::<bool>(),
    ) {
        let value = if quoted { format!("{value:?}") } else { value };
        let text = format!("[ultragit.annotate]\n{key} = {value}\n");
        if let Ok(settings) = resolve(&ProviderFlags::default(), Some(text.as_bytes()), no_git()) {
            proptest::prop_assert_eq!(settings.warnings.len(), 1);
            proptest::prop_assert_eq!(settings.limits, AnnotateConfig::default());
            proptest::prop_assert_eq!(settings.provider.model, "gpt-5-mini");
            proptest::prop_assert_eq!(settings.provider.base_url, None);
        }
    }
}

#[test]
fn each_steering_key_is_ignored_with_its_own_warning_and_git_config_wins() {
    let repo = configured();
    for (key, value, chooses, place) in [
        (
            "provider",
            "\"anthropic\"",
            "which provider is used",
            "`git config ultragit.provider` or `--provider`",
        ),
        (
            "model",
            "\"evil-model\"",
            "which model is used",
            "`git config ultragit.model` or `--model`",
        ),
        (
            "base_url",
            "\"http://attacker.example/v1\"",
            "where requests go",
            "`git config ultragit.baseUrl` or `--base-url`",
        ),
        (
            "api_key_env",
            "\"AWS_SECRET_ACCESS_KEY\"",
            "which credential is sent",
            "`git config ultragit.apiKeyEnv` or `--api-key-env`",
        ),
    ] {
        repo.write(
            CONFIG_FILE,
            format!("[ultragit.annotate]\n{key} = {value}\nchunk_size = 3\n"),
        );
        let settings = load(&repo, &ProviderFlags::default()).unwrap();
        assert_eq!(settings.provider, trusted(), "{key}");
        assert_eq!(settings.limits.chunk_size, 3, "{key}");
        assert_eq!(
            settings.warnings,
            [format!(
                "ignoring ultragit.annotate.{key} in .ultragit-config.toml: a file in the repository may not choose {chooses}; set it with {place}"
            )]
        );
        assert_eq!(
            settings.sources.kind,
            Source::GitConfig("ultragit.provider"),
            "{key}"
        );
    }
}

/// Spec 000's defaults: large commits chunked, every chunk, no per-commit
/// cap on calls beyond each run's turns, 4,096-token answers.
#[test]
fn the_defaults_follow_spec_000() {
    let limits = load(&TestRepo::new(), &ProviderFlags::default())
        .unwrap()
        .limits;
    assert_eq!(limits.large_commits, LargeCommits::Chunk);
    assert_eq!((limits.max_chunks, limits.max_calls), (None, None));
    assert_eq!(limits.max_tokens_per_response, 4_096);
    assert!(limits.is_docs("Documentation/RelNotes/2.48.0.adoc"));
    assert!(limits.is_docs("CHANGELOG"));
    assert!(!limits.is_docs("Documentation/Makefile"));
}

#[test]
fn docs_path_rules_match_names_and_components() {
    use super::path_rule_matches as m;
    assert!(m("*.md", "README.md") && m("*.md", "docs/a/b.MD"));
    assert!(m("CHANGELOG*", "sub/changelog.txt"));
    assert!(m("**/RelNotes/*", "Documentation/RelNotes/2.0.txt"));
    assert!(m("**/RelNotes/*", "RelNotes/2.0.txt"));
    assert!(!m("**/RelNotes/*", "Documentation/RelNotes/old/2.0.txt"));
    assert!(m("docs/**", "docs/a/b/c.rs") && !m("docs/**", "src/docs.rs"));
    assert!(m("a/*/c", "a/b/c") && !m("a/*/c", "a/b/x/c"));
    assert!(!m("*.md", "src/lib.rs"));
    // git config: one text of rules; the team file: a list; empty: none.
    let repo = TestRepo::new();
    repo.git(&["config", "ultragit.docsPaths", "notes/**, *.txt"]);
    let limits = load(&repo, &ProviderFlags::default()).unwrap().limits;
    assert_eq!(limits.docs_paths, ["notes/**", "*.txt"]);
    repo.write(CONFIG_FILE, "[ultragit.annotate]\ndocs_paths = []\n");
    let limits = load(&repo, &ProviderFlags::default()).unwrap().limits;
    assert!(limits.docs_paths.is_empty() && !limits.is_docs("README.md"));
}

#[test]
fn the_window_large_commits_tool_use_and_max_calls_are_read_and_checked() {
    let repo = TestRepo::new();
    for (key, value) in [
        ("ultragit.contextWindow", "32768"),
        ("ultragit.largeCommits", "Chunk"),
        ("ultragit.toolUse", "off"),
        ("ultragit.maxCalls", "12"),
        ("ultragit.maxChunks", "3"),
    ] {
        repo.git(&["config", key, value]);
    }
    let limits = load(&repo, &ProviderFlags::default()).unwrap().limits;
    assert_eq!(limits.context_window, Some(32_768));
    assert_eq!(limits.large_commits, LargeCommits::Chunk);
    assert_eq!(limits.tool_use, ToolUse::Off);
    assert_eq!(limits.max_calls, Some(12));
    assert_eq!(limits.max_chunks, Some(3));
    // Every spelling of each value.
    for (value, expected) in [
        ("auto", ToolUse::Auto),
        ("on", ToolUse::On),
        ("true", ToolUse::On),
        ("yes", ToolUse::On),
        ("OFF", ToolUse::Off),
        ("false", ToolUse::Off),
        ("no", ToolUse::Off),
    ] {
        repo.git(&["config", "ultragit.toolUse", value]);
        let limits = load(&repo, &ProviderFlags::default()).unwrap().limits;
        assert_eq!(limits.tool_use, expected, "{value}");
    }
    repo.git(&["config", "ultragit.largeCommits", "skip"]);
    let limits = load(&repo, &ProviderFlags::default()).unwrap().limits;
    assert_eq!(limits.large_commits, LargeCommits::Skip);
    // The team file sets them too, and wins over git config.
    repo.write(
        CONFIG_FILE,
        "[ultragit.annotate]\ncontext_window = 65536\nlarge_commits = \"chunk\"\n\
         tool_use = \"on\"\nmax_calls = 7\n",
    );
    let limits = load(&repo, &ProviderFlags::default()).unwrap().limits;
    assert_eq!(limits.context_window, Some(65_536));
    assert_eq!(limits.large_commits, LargeCommits::Chunk);
    assert_eq!(limits.tool_use, ToolUse::On);
    assert_eq!(limits.max_calls, Some(7));
}

#[test]
fn bad_windows_and_values_are_clear_errors_naming_their_source() {
    let repo = TestRepo::new();
    for (key, value, message) in [
        (
            "ultragit.contextWindow",
            "4095",
            "invalid configuration: git config ultragit.contextWindow expected at least 4096 \
             tokens (the prompt and tools alone take about 2,500)",
        ),
        (
            "ultragit.contextWindow",
            "0",
            "invalid configuration: git config ultragit.contextWindow must be a whole number of \
             at least 1, not 0",
        ),
        (
            "ultragit.largeCommits",
            "split",
            "invalid configuration: git config ultragit.largeCommits expected skip or chunk",
        ),
        (
            "ultragit.toolUse",
            "sometimes",
            "invalid configuration: git config ultragit.toolUse expected auto, on or off",
        ),
        (
            "ultragit.maxCalls",
            "0",
            "invalid configuration: git config ultragit.maxCalls must be a whole number of at \
             least 1, not 0",
        ),
    ] {
        repo.git(&["config", key, value]);
        let err = load(&repo, &ProviderFlags::default()).unwrap_err();
        assert!(err.starts_with(message), "{key}={value}: {err}");
        repo.git(&["config", "--unset", key]);
    }
    repo.write(CONFIG_FILE, "[ultragit.annotate]\ncontext_window = 2048\n");
    let err = load(&repo, &ProviderFlags::default()).unwrap_err();
    assert!(
        err.contains(".ultragit-config.toml: ultragit.annotate.context_window")
            && err.contains("at least 4096 tokens"),
        "{err}"
    );
    // The smallest window allowed is accepted.
    repo.write(CONFIG_FILE, "[ultragit.annotate]\ncontext_window = 4096\n");
    let limits = load(&repo, &ProviderFlags::default()).unwrap().limits;
    assert_eq!(limits.context_window, Some(MIN_CONTEXT_WINDOW));
}

#[test]
fn the_default_window_follows_the_model_family() {
    for model in [
        "gpt-4o-mini",
        "gpt-4.1",
        "gpt-5-mini",
        "o3",
        "o4-mini",
        "claude-sonnet-4-5",
        "gemini-2.5-pro",
        "openrouter/anthropic/claude-3.7-sonnet",
        "GPT-5",
    ] {
        assert_eq!(default_context_window(model), 128_000, "{model}");
    }
    for model in ["qwen3", "llama3.1:8b", "test-model", "gpt-3.5-turbo", ""] {
        assert_eq!(default_context_window(model), 8_192, "{model}");
    }
    let config = AnnotateConfig::default();
    assert_eq!(config.window_for("gpt-5-mini"), 128_000);
    assert_eq!(config.window_for("qwen3"), 8_192);
    let set = AnnotateConfig {
        context_window: Some(32_768),
        ..config
    };
    assert_eq!(set.window_for("gpt-5-mini"), 32_768);
}

#[test]
fn the_backfill_budget_and_timeout_are_durations_from_git_config() {
    let repo = TestRepo::new();
    let backfill = load(&repo, &ProviderFlags::default()).unwrap().backfill;
    assert_eq!(backfill, BackfillConfig::default());
    assert_eq!(backfill.retry_budget, Duration::from_secs(300));
    assert_eq!(backfill.request_timeout, Duration::from_secs(180));
    for (budget, timeout, expected) in [
        ("90", "30", (90, 30)),
        ("90s", "2 min", (90, 120)),
        ("10m", "1m", (600, 60)),
        ("2h", "1h", (7200, 3600)),
        (" 5 minutes ", "45 sec", (300, 45)),
    ] {
        repo.git(&["config", "ultragit.backfill.retryBudget", budget]);
        repo.git(&["config", "ultragit.backfill.requestTimeout", timeout]);
        let backfill = load(&repo, &ProviderFlags::default()).unwrap().backfill;
        assert_eq!(
            (
                backfill.retry_budget.as_secs(),
                backfill.request_timeout.as_secs()
            ),
            expected,
            "{budget}, {timeout}"
        );
    }
    for (key, value, message) in [
        (
            "ultragit.backfill.retryBudget",
            "soon",
            "invalid configuration: git config ultragit.backfill.retryBudget must be a duration \
             such as 90s, 5m or 1h, not \"soon\"",
        ),
        (
            "ultragit.backfill.retryBudget",
            "0",
            "invalid configuration: git config ultragit.backfill.retryBudget must be between 1 s \
             and 24 h, not \"0\"",
        ),
        (
            "ultragit.backfill.requestTimeout",
            "2h",
            "invalid configuration: git config ultragit.backfill.requestTimeout must be between \
             1 s and 1 h, not \"2h\"",
        ),
        (
            "ultragit.backfill.requestTimeout",
            "5d",
            "invalid configuration: git config ultragit.backfill.requestTimeout must be a \
             duration such as 90s, 5m or 1h, not \"5d\"",
        ),
    ] {
        repo.git(&["config", key, value]);
        let err = load(&repo, &ProviderFlags::default()).unwrap_err();
        assert_eq!(err, message, "{key}={value}");
        repo.git(&["config", "--unset", key]);
    }
}

/// The team file may tune the backfill keys only within narrower bounds: a
/// value outside is brought to the nearest bound, with a warning.
#[test]
fn the_team_file_tunes_the_backfill_keys_only_within_bounds() {
    let repo = TestRepo::new();
    repo.git(&["config", "ultragit.backfill.retryBudget", "20m"]);
    repo.write(
        CONFIG_FILE,
        "[ultragit.annotate]\nbackfill_retry_budget = \"10m\"\nbackfill_request_timeout = 60\n",
    );
    let settings = load(&repo, &ProviderFlags::default()).unwrap();
    assert_eq!(settings.backfill.retry_budget, Duration::from_secs(600));
    assert_eq!(settings.backfill.request_timeout, Duration::from_secs(60));
    assert!(settings.warnings.is_empty(), "{:?}", settings.warnings);

    repo.write(
        CONFIG_FILE,
        "[ultragit.annotate]\nbackfill_retry_budget = \"1s\"\nbackfill_request_timeout = \"1h\"\n",
    );
    let settings = load(&repo, &ProviderFlags::default()).unwrap();
    assert_eq!(settings.backfill.retry_budget, Duration::from_secs(30));
    assert_eq!(
        settings.backfill.request_timeout,
        Duration::from_secs(30 * 60)
    );
    assert_eq!(
        settings.warnings,
        [
            "using 30 s for ultragit.annotate.backfill_retry_budget in .ultragit-config.toml \
             rather than 1 s: a file in the repository may set it only between 30 s and 1 h; for \
             another value use `--retry-budget` (or `git config ultragit.backfill.retryBudget` \
             without the file's setting)",
            "using 30 min for ultragit.annotate.backfill_request_timeout in .ultragit-config.toml \
             rather than 1 h: a file in the repository may set it only between 10 s and 30 min; \
             for another value use `--request-timeout` (or `git config \
             ultragit.backfill.requestTimeout` without the file's setting)",
        ]
    );
    // Past the bounds every source has, the file's value is an error like any.
    repo.write(
        CONFIG_FILE,
        "[ultragit.annotate]\nbackfill_retry_budget = \"48h\"\n",
    );
    let err = load(&repo, &ProviderFlags::default()).unwrap_err();
    assert_eq!(
        err,
        "invalid configuration: .ultragit-config.toml: ultragit.annotate.backfill_retry_budget \
         must be between 1 s and 24 h, not \"48h\""
    );
}

#[test]
fn the_backfill_flags_take_the_same_durations() {
    assert_eq!(parse_retry_budget("10m"), Ok(Duration::from_secs(600)));
    assert_eq!(parse_retry_budget("3"), Ok(Duration::from_secs(3)));
    assert_eq!(parse_request_timeout("2s"), Ok(Duration::from_secs(2)));
    assert_eq!(
        parse_retry_budget("0s").unwrap_err(),
        "expected between 1 s and 24 h"
    );
    assert_eq!(
        parse_request_timeout("forever").unwrap_err(),
        "expected a duration such as 90s, 5m or 1h, not 'forever'"
    );
}
