//! Anchor stability (spec 003 §4.7) and the edit distance behind fuzzy
//! matching.

use outline::{Language, Stability, Unit, anchor_stability, levenshtein, outline_for};

const SOURCE: &str = r#"
impl MqttClient {
    pub async fn connect(&mut self, addr: &str) -> Result<(), Error> {
        Ok(())
    }
}
"#;

fn units() -> Vec<Unit> {
    outline_for(Language::Rust, SOURCE).expect("the Rust grammar loads")
}

#[track_caller]
fn check(name: &str, signature: Option<&str>, expected: Stability) {
    assert_eq!(
        anchor_stability(&units(), name, signature),
        expected,
        "{name:?} {signature:?}"
    );
}

#[test]
fn exact_when_name_and_signature_match() {
    let signature = "pub async fn connect(&mut self, addr: &str) -> Result<(), Error>";
    check("MqttClient::connect", Some(signature), Stability::Exact);
    check(
        "MqttClient::connect",
        Some("pub async fn connect(\n    &mut self, addr: &str\n) -> Result<(), Error> {"),
        Stability::Exact,
    );
    check("MqttClient::connect", None, Stability::Exact);
    check("MqttClient.connect", Some("  "), Stability::Exact);
    check("connect", Some(signature), Stability::Exact);
}

#[test]
fn signature_changed_when_only_the_name_matches() {
    check(
        "MqttClient::connect",
        Some("pub fn connect(&mut self)"),
        Stability::SignatureChanged,
    );
}

#[test]
fn not_found_when_renamed_or_removed() {
    check("MqttClient::open", None, Stability::NotFound);
    // Fuzzy matches do not count: a typo-distance rename is still a rename.
    check(
        "MqttClient::connected",
        Some("fn connected()"),
        Stability::NotFound,
    );
    check("", None, Stability::NotFound);
}

#[test]
fn scores() {
    assert_eq!(Stability::Exact.score(), 1.0);
    assert_eq!(Stability::SignatureChanged.score(), 0.7);
    assert_eq!(Stability::NotFound.score(), 0.3);
}

#[test]
fn levenshtein_basics() {
    let cases = [
        ("", "", 0),
        ("", "abc", 3),
        ("abc", "", 3),
        ("connect", "connect", 0),
        ("conect", "connect", 1),
        ("kitten", "sitting", 3),
        ("flaw", "lawn", 2),
        ("grüßen", "grussen", 3),
        ("grüßen", "grüßn", 1),
        ("世界", "世", 1),
    ];
    for (a, b, expected) in cases {
        assert_eq!(levenshtein(a, b), expected, "{a:?} {b:?}");
        assert_eq!(levenshtein(b, a), expected, "{b:?} {a:?}");
    }
}
