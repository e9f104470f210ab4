//! Anchor resolution (spec 003 §4.2) and free-standing name matching (§4.5).

use outline::{AnchorError, Language, MatchKind, Unit, match_name, outline_for, resolve_anchor};

const RUST: &str = r#"
/// An MQTT client.
pub struct MqttClient {
    connected: bool,
}

impl MqttClient {
    pub async fn connect(&mut self, addr: &str) -> Result<(), Error> {
        Ok(())
    }

    pub fn close(&mut self) {}
}

impl fmt::Display for MqttClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Ok(())
    }
}

impl fmt::Debug for MqttClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Ok(())
    }
}

pub struct HttpClient;

impl HttpClient {
    pub fn close(&mut self) {}
}

impl Stack {
    fn push(&mut self) {}
}

pub fn parse_config(text: &str) -> Config {
    todo!()
}

mod net {
    pub struct Client;

    impl Client {
        pub fn send(&self) {}
    }
}
"#;

const PYTHON: &str = r#"
class Client:
    def connect(self, host: str) -> None:
        pass

    class Options:
        def validate(self):
            pass

def connect_all(clients):
    pass
"#;

fn units(language: Language, source: &str) -> Vec<Unit> {
    outline_for(language, source).expect("the grammar loads")
}

/// Renders a resolution as `{match} [ambiguous]: {kind} {qualified}@L{start}, …`
/// plus a `warning: …` line, or `error: {message}`.
fn resolve(units: &[Unit], query: &str) -> String {
    match resolve_anchor(units, query) {
        Ok(resolution) => {
            let matched: Vec<String> = resolution
                .units
                .iter()
                .map(|unit| {
                    format!(
                        "{} {}@L{}",
                        unit.kind, unit.qualified_name, unit.lines.start
                    )
                })
                .collect();
            let mut rendered = format!(
                "{:?}{}: {}",
                resolution.match_kind,
                if resolution.ambiguous {
                    " ambiguous"
                } else {
                    ""
                },
                matched.join(", ")
            );
            if let Some(warning) = resolution.warning {
                rendered.push_str("\nwarning: ");
                rendered.push_str(&warning);
            }
            rendered
        }
        Err(error) => format!("error: {error}"),
    }
}

#[track_caller]
fn check_in(language: Language, source: &str, query: &str, expected: &str) {
    assert_eq!(
        resolve(&units(language, source), query),
        expected,
        "query {query:?}"
    );
}

#[track_caller]
fn check(query: &str, expected: &str) {
    check_in(Language::Rust, RUST, query, expected);
}

#[track_caller]
fn check_python(query: &str, expected: &str) {
    check_in(Language::Python, PYTHON, query, expected);
}

#[test]
fn exact() {
    check("parse_config", "Exact: function parse_config@L37");
    check(
        "MqttClient::connect",
        "Exact: method MqttClient::connect@L8",
    );
    check("net::Client::send", "Exact: method net::Client::send@L45");
    // The struct wins over its impl blocks.
    check("MqttClient", "Exact: struct MqttClient@L2");
    check("net::Client", "Exact: struct net::Client@L42");
    // An impl block alone is still found.
    check(
        "Display for MqttClient",
        "Exact: impl Display for MqttClient@L15",
    );
    check("Stack", "Exact: impl Stack@L33");
    // `impl X` asks for the impl blocks.
    check("impl MqttClient", "Exact: impl MqttClient@L7");
    check(
        "impl Display for MqttClient",
        "Exact: impl Display for MqttClient@L15",
    );
    check("impl Client", "Unqualified: impl net::Client@L44");
}

#[test]
fn unqualified() {
    check("connect", "Unqualified: method MqttClient::connect@L8");
    check("send", "Unqualified: method net::Client::send@L45");
    check("Client::send", "Unqualified: method net::Client::send@L45");
    check("Client", "Unqualified: struct net::Client@L42");
}

#[test]
fn ambiguous() {
    check(
        "close",
        "Unqualified ambiguous: method MqttClient::close@L12, method HttpClient::close@L30",
    );
    check(
        "MqttClient::fmt",
        "Exact ambiguous: method MqttClient::fmt@L16, method MqttClient::fmt@L22",
    );
}

#[test]
fn fuzzy() {
    check(
        "conect",
        "Fuzzy { distance: 1 }: method MqttClient::connect@L8\n\
         warning: anchor 'conect' not found; using closest match 'MqttClient::connect' (edit distance 1)",
    );
    check(
        "MqttClient::conect",
        "Fuzzy { distance: 1 }: method MqttClient::connect@L8\n\
         warning: anchor 'MqttClient::conect' not found; using closest match 'MqttClient::connect' (edit distance 1)",
    );
    check(
        "parse_confg",
        "Fuzzy { distance: 1 }: function parse_config@L37\n\
         warning: anchor 'parse_confg' not found; using closest match 'parse_config' (edit distance 1)",
    );
    check(
        "clos",
        "Fuzzy { distance: 1 } ambiguous: method MqttClient::close@L12, method HttpClient::close@L30\n\
         warning: anchor 'clos' not found; using closest matches 'MqttClient::close', 'HttpClient::close' (edit distance 1)",
    );
}

#[test]
fn not_found_lists_available_anchors() {
    let available = "Debug for MqttClient, Display for MqttClient, HttpClient, HttpClient::close, \
                     MqttClient, MqttClient::close, MqttClient::connect, MqttClient::fmt, Stack, \
                     Stack::push, net, net::Client, net::Client::send, parse_config";
    check(
        "disconnect_everything",
        &format!("error: anchor 'disconnect_everything' not found; available anchors: {available}"),
    );
    // Short queries accept fewer edits: `xy` is not two edits away from `net`.
    check(
        "xy",
        &format!("error: anchor 'xy' not found; available anchors: {available}"),
    );

    let error = resolve_anchor(&[], "anything").unwrap_err();
    assert_eq!(
        error.to_string(),
        "anchor 'anything' not found; the file has no anchors"
    );
}

#[test]
fn not_found_truncates_long_lists() {
    let source: String = (0..40)
        .map(|index| format!("fn function_{index:02}() {{}}\n"))
        .collect();
    let units = units(Language::Rust, &source);
    let error = resolve_anchor(&units, "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz").unwrap_err();
    let AnchorError::NotFound { available, .. } = &error else {
        panic!("expected NotFound, got {error:?}");
    };
    assert_eq!(available.len(), 40);
    let message = error.to_string();
    assert!(message.contains("function_29 and 10 more"), "{message}");
    assert!(!message.contains("function_30"), "{message}");
}

#[test]
fn python_queries() {
    check_python("Client.connect", "Exact: method Client.connect@L3");
    // Old notes' `Type::method` anchors keep resolving.
    check_python("Client::connect", "Exact: method Client.connect@L3");
    check_python(
        "Client.Options.validate",
        "Exact: method Client.Options.validate@L7",
    );
    check_python(
        "Options::validate",
        "Unqualified: method Client.Options.validate@L7",
    );
    check_python("connect", "Unqualified: method Client.connect@L3");
    check_python(
        "Client.conect",
        "Fuzzy { distance: 1 }: method Client.connect@L3\n\
         warning: anchor 'Client.conect' not found; using closest match 'Client.connect' (edit distance 1)",
    );
    check_python(
        "connect_al",
        "Fuzzy { distance: 1 }: function connect_all@L10\n\
         warning: anchor 'connect_al' not found; using closest match 'connect_all' (edit distance 1)",
    );
}

#[test]
fn empty_query() {
    for query in ["", "   ", "::", "."] {
        assert_eq!(
            resolve_anchor(&units(Language::Rust, RUST), query),
            Err(AnchorError::EmptyQuery)
        );
    }
}

#[test]
fn free_standing_names() {
    use MatchKind::{Exact, Unqualified};
    let fuzzy = |distance| Some(MatchKind::Fuzzy { distance });
    let cases = [
        ("MqttClient::connect", "MqttClient::connect", Some(Exact)),
        ("Client.connect", "Client::connect", Some(Exact)),
        ("connect", "MqttClient::connect", Some(Unqualified)),
        ("net::Client::connect", "Client::connect", Some(Unqualified)),
        ("conect", "MqttClient::connect", fuzzy(1)),
        ("MqttClient::conect", "connect", fuzzy(1)),
        ("Client::connect", "Clint::connect", fuzzy(1)),
        ("connect", "disconnect", fuzzy(3)),
        ("connect", "reconnection", None),
        ("nect", "connect", fuzzy(3)),
        ("ab", "new", None),
        ("", "connect", None),
        ("connect", "", None),
    ];
    for (query, candidate, expected) in cases {
        assert_eq!(
            match_name(query, candidate),
            expected,
            "{query:?} vs {candidate:?}"
        );
    }
    assert!(MatchKind::Exact < MatchKind::Unqualified);
    assert!(MatchKind::Unqualified < MatchKind::Fuzzy { distance: 1 });
    assert!(MatchKind::Fuzzy { distance: 1 } < MatchKind::Fuzzy { distance: 3 });
}
