use std::collections::HashMap;

use super::*;

/// A tuning key every kind of source can set.
const TURNS: Key<u32> = Key {
    flag: Some("--turns"),
    env: Some("TOOL_TURNS"),
    ..Key::whole::<1>("turns", "tool.turns")
};

/// A steering key.
const URL: Key<Option<String>> = Key {
    flag: Some("--url"),
    git: Some("tool.url"),
    untrusted: Untrusted::MayNotChoose("where requests go"),
    ..Key::new("url", parse::optional_text)
};

/// Blank counts as unset.
const MODEL: Key<String> = Key {
    flag: Some("--model"),
    env: Some("TOOL_MODEL"),
    untrusted: Untrusted::MayNotChoose("which model is used"),
    blank_is_unset: true,
    ..Key::new("model", parse::text)
};

fn env(vars: &[(&str, &str)]) -> Layer<'static> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Layer::env(move |name| map.get(name).cloned())
}

/// git config from a map: text as is, integers parsed (`lots` is an error, as
/// git's own reader says).
fn git(vars: &[(&'static str, &'static str)]) -> Layer<'static> {
    let map: HashMap<&str, &str> = vars.iter().copied().collect();
    let ints = map.clone();
    Layer::git_config(
        move |key| Ok::<_, String>(map.get(key).map(|v| v.to_string())),
        move |key| {
            ints.get(key)
                .map(|v| {
                    v.parse::<i64>()
                        .map_err(|_| format!("invalid integer '{v}'"))
                })
                .transpose()
        },
    )
}

fn file(text: &str, name: &str) -> Section {
    Section::parse(text, name).unwrap()
}

/// A flags layer with `turns`, `url` and `model` given as in `pairs`.
fn flags(pairs: &[(&'static str, &str)]) -> Layer<'static> {
    let given = |flag: &str| {
        pairs
            .iter()
            .find(|(f, _)| *f == flag)
            .map(|(_, v)| v.to_string())
    };
    Layer::flags()
        .flag(&TURNS, given("--turns"))
        .flag(&URL, given("--url"))
        .flag(&MODEL, given("--model"))
}

/// Every layer kind, each setting `turns` to a different number.
fn full_stack() -> Vec<(Source, Layer<'static>)> {
    vec![
        (Source::Flag("--turns"), flags(&[("--turns", "1")])),
        (Source::Env("TOOL_TURNS"), env(&[("TOOL_TURNS", "2")])),
        (Source::GitConfig("tool.turns"), git(&[("tool.turns", "3")])),
        (
            Source::UserFile {
                file: "user.toml".into(),
                key: "turns".into(),
            },
            Layer::user_file(file("turns = 4", "user.toml")),
        ),
        (
            Source::RepoFile {
                file: "repo.toml".into(),
                key: "turns".into(),
            },
            Layer::repo_file(file("turns = 5", "repo.toml")),
        ),
    ]
}

#[test]
fn precedence_is_the_order_of_the_layers() {
    // Take the layers away from the top one by one: each time the next one wins.
    for skip in 0..=5 {
        let mut stack = Stack::new();
        let mut expected = (Source::Default, 99);
        for (i, (source, layer)) in full_stack().into_iter().enumerate().skip(skip) {
            if i == skip {
                expected = (source, i as u32 + 1);
            }
            stack = stack.with(layer);
        }
        let resolved = stack.resolve(&TURNS, 99).unwrap();
        assert_eq!((resolved.source, resolved.value), expected, "skip {skip}");
        assert_eq!(stack.finish().unwrap(), []);
    }
}

#[test]
fn a_key_is_looked_up_only_under_its_own_names() {
    // MODEL has no git config name; `tool.turns` is not `model`.
    let mut stack = Stack::new()
        .with(git(&[("tool.model", "from-git")]))
        .with(env(&[("TOOL_TURNS", "x")]));
    assert_eq!(stack.get(&MODEL).unwrap(), None);
    let resolved = stack.resolve(&MODEL, "default".to_owned()).unwrap();
    assert_eq!(resolved.source, Source::Default);
    assert_eq!(resolved.value, "default");
}

#[test]
fn blank_text_is_unset_only_where_the_key_says_so() {
    let mut stack = Stack::new()
        .with(flags(&[("--model", " "), ("--url", "")]))
        .with(env(&[("TOOL_MODEL", "from-env")]))
        .with(git(&[("tool.url", "http://git")]));
    let model = stack.get(&MODEL).unwrap().unwrap();
    assert_eq!(model.value, "from-env");
    assert_eq!(model.source, Source::Env("TOOL_MODEL"));
    // `--url ""` is a value: no URL, which hides git config's.
    let url = stack.get(&URL).unwrap().unwrap();
    assert_eq!(url.value, None);
    assert_eq!(url.source, Source::Flag("--url"));
}

#[test]
fn a_repository_file_may_tune_but_not_steer() {
    let repo = "turns = 6\nurl = \"http://attacker\"\nmodel = \"\"\n";
    let mut stack = Stack::new()
        .with(Layer::repo_file(file(repo, "repo.toml")))
        .with(git(&[("tool.url", "http://trusted")]));
    assert_eq!(stack.value(&TURNS, 1).unwrap(), 6);
    let url = stack.get(&URL).unwrap().unwrap();
    assert_eq!(url.value.as_deref(), Some("http://trusted"));
    assert_eq!(url.source, Source::GitConfig("tool.url"));
    assert_eq!(stack.get(&MODEL).unwrap(), None);
    // Asking again does not warn twice.
    stack.get(&URL).unwrap();
    let warnings: Vec<String> = stack
        .finish()
        .unwrap()
        .iter()
        .map(Ignored::warning)
        .collect();
    assert_eq!(
        warnings,
        [
            "ignoring url in repo.toml: a file in the repository may not choose where requests go; set it with `git config tool.url` or `--url`",
            // Blank or not, the file tried: it is named.
            "ignoring model in repo.toml: a file in the repository may not choose which model is used; set it with `--model` or `$TOOL_MODEL`",
        ]
    );
}

#[test]
fn a_steering_key_is_reported_even_when_a_flag_wins() {
    let mut stack = Stack::new()
        .with(flags(&[("--url", "http://flag")]))
        .with(Layer::repo_file(
            file("[tool]\nurl = \"http://attacker\"\n", "repo.toml")
                .table("tool")
                .unwrap()
                .unwrap(),
        ));
    assert_eq!(
        stack.get(&URL).unwrap().unwrap().value.as_deref(),
        Some("http://flag")
    );
    let ignored = stack.finish().unwrap();
    assert_eq!(ignored.len(), 1);
    assert_eq!(ignored[0].key, "tool.url");
    // A user's own file may set it.
    let mut stack = Stack::new().with(Layer::user_file(file("url = \"http://mine\"", "u.toml")));
    let url = stack.get(&URL).unwrap().unwrap();
    assert_eq!(url.value.as_deref(), Some("http://mine"));
    assert!(matches!(url.source, Source::UserFile { .. }));
    assert_eq!(stack.finish().unwrap(), []);
}

#[test]
fn a_bad_value_names_its_source() {
    let cases: Vec<(Layer<'static>, &str)> = vec![
        (
            flags(&[("--turns", "0")]),
            "--turns must be a whole number of at least 1, not \"0\"",
        ),
        (
            env(&[("TOOL_TURNS", "many")]),
            "$TOOL_TURNS must be a whole number of at least 1, not \"many\"",
        ),
        (
            git(&[("tool.turns", "-1")]),
            "git config tool.turns must be a whole number of at least 1, not -1",
        ),
        (
            git(&[("tool.turns", "lots")]),
            "git config tool.turns: invalid integer 'lots'",
        ),
        (
            Layer::user_file(file("turns = \"x\"", "user.toml")),
            "user.toml: turns must be a whole number of at least 1, not \"x\"",
        ),
        (
            Layer::repo_file(
                file("[a.b]\nturns = 0", "repo.toml")
                    .table("a")
                    .unwrap()
                    .unwrap()
                    .table("b")
                    .unwrap()
                    .unwrap(),
            ),
            "repo.toml: a.b.turns must be a whole number of at least 1, not 0",
        ),
    ];
    for (layer, message) in cases {
        let err = Stack::new().with(layer).get(&TURNS).unwrap_err();
        assert_eq!(err.to_string(), message);
    }
}

#[test]
fn only_the_winning_value_is_parsed() {
    let mut stack = Stack::new()
        .with(Layer::repo_file(file("turns = 4", "repo.toml")))
        .with(git(&[("tool.turns", "lots")]));
    assert_eq!(stack.value(&TURNS, 1).unwrap(), 4);
}

#[test]
fn lists_add_up_across_layers() {
    const PATHS: Key<Vec<String>> = Key::new("paths", parse::text_list);
    let mut stack = Stack::new()
        .with(Layer::user_file(file("paths = [\"/p\"]", "project.toml")))
        .with(Layer::user_file(file("", "none.toml")))
        .with(Layer::user_file(file("paths = [\" /u \"]", "user.toml")));
    let all: Vec<Vec<String>> = stack
        .all(&PATHS)
        .unwrap()
        .into_iter()
        .map(|r| r.value)
        .collect();
    assert_eq!(all, [vec!["/p".to_owned()], vec!["/u".to_owned()]]);
}

#[test]
fn unknown_keys_in_files_are_errors_naming_the_file_and_the_known_keys() {
    let mut stack = Stack::new().with(Layer::user_file(file(
        "turns = 2\nmodle = \"x\"\n",
        "c.toml",
    )));
    stack.get(&TURNS).unwrap();
    stack.get(&MODEL).unwrap();
    assert_eq!(
        stack.finish().unwrap_err().to_string(),
        "c.toml: unknown field `modle`, expected one of `turns`, `model`"
    );
    let section = file("[tool.read]\nturn = 2\n", "t.toml");
    let read = section
        .table("tool")
        .unwrap()
        .unwrap()
        .table("read")
        .unwrap()
        .unwrap();
    let mut stack = Stack::new().with(Layer::repo_file(read));
    stack.get(&TURNS).unwrap();
    assert_eq!(
        stack.finish().unwrap_err().to_string(),
        "t.toml: [tool.read]: unknown field `turn`, expected one of `turns`"
    );
}

#[test]
fn files_that_are_not_toml_or_not_tables_name_the_file() {
    let err = Section::parse("[tool\n", "t.toml").unwrap_err().to_string();
    assert!(err.starts_with("t.toml: "), "{err}");
    let err = Section::parse_bytes(b"\xff\xfe", "t.toml")
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("t.toml: not valid UTF-8"), "{err}");
    let section = file("tool = 3\n[other]\nx = 1\n", "t.toml");
    assert_eq!(
        section.table("tool").unwrap_err().to_string(),
        "t.toml: [tool] must be a table, not 3"
    );
    assert_eq!(section.table("missing").unwrap(), None);
    assert_eq!(section.at(&["other", "deeper"]).unwrap(), None);
    assert!(section.at(&["tool", "x"]).is_err());
    assert_eq!(section.keys().collect::<Vec<_>>(), ["other", "tool"]);
}

#[test]
fn deeply_nested_input_is_an_error_not_a_stack_overflow() {
    let text = format!("x = {}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(Section::parse(&text, "t.toml").is_err());
    let text = format!("x = {}", "{ a = ".repeat(50_000));
    assert!(Section::parse(&text, "t.toml").is_err());
}

proptest::proptest! {
    /// Any bytes: a section or an error naming the file, never a panic; and
    /// whatever parses resolves or fails cleanly.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..4096)) {
        match Section::parse_bytes(&bytes, "t.toml") {
            Ok(section) => {
                let mut stack = Stack::new().with(Layer::repo_file(section));
                let _ = stack.get(&TURNS);
                let _ = stack.get(&URL);
                let _ = stack.finish();
            }
            Err(err) => proptest::prop_assert!(err.to_string().starts_with("t.toml: ")),
        }
    }

    /// A steering key of any shape and value in a repository file is ignored
    /// and reported once.
    #[test]
    fn steering_keys_of_any_shape_are_ignored(
        value in "[ -~]{0,40}",
        quoted in proptest::prelude::any::<bool>(),
    ) {
        let value = if quoted { format!("{value:?}") } else { value };
        if let Ok(section) = Section::parse(&format!("url = {value}\n"), "repo.toml") {
            let mut stack = Stack::new().with(Layer::repo_file(section));
            proptest::prop_assert_eq!(stack.get(&URL).unwrap(), None);
            proptest::prop_assert_eq!(stack.finish().unwrap().len(), 1);
        }
    }
}
