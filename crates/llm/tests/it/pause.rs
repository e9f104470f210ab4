//! The shared pause gate: one `Retry-After` holds back every request that shares
//! the gate, and a closed gate never outlasts a request's overall timeout.

use std::time::{Duration, Instant};

use llm::{LlmError, PauseGate, ProviderKind, build_provider};
use testkit::{FakeLlm, Flavor, Reply};

use crate::{config, request};

/// Waits (at most 30 s, then fails) until `done` holds.
fn until(what: &str, done: impl Fn() -> bool) {
    let give_up = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < give_up, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_retry_after_pauses_every_request_sharing_the_gate() {
    let server = FakeLlm::start(
        Flavor::OpenAiChat,
        vec![
            Reply::error(429, "slow down").retry_after("2"),
            Reply::text("one"),
            Reply::text("two"),
        ],
    );
    let gate = PauseGate::new();
    let provider = || {
        let mut config = config(ProviderKind::OpenAiChat, &server);
        config.http.retry.max_retry_after = Duration::from_secs(10);
        config.http.pause = Some(gate.clone());
        build_provider(config).unwrap()
    };
    let (first, second) = (provider(), provider());
    let runtime = testkit::runtime();
    let first = runtime.spawn(async move { first.complete(&request()).await });
    until("the 429 to close the gate", || gate.pauses() == 1);

    // A second caller starts while the gate is closed: nothing reaches the
    // server until it opens. The count is read before the gate, so a gate still
    // closed afterwards was closed when the count was taken.
    let second = runtime.spawn(async move { second.complete(&request()).await });
    let mut observed_closed = 0;
    loop {
        let arrived = server.requests().len();
        if gate.remaining().is_zero() {
            break;
        }
        assert_eq!(
            arrived, 1,
            "a request reached the server while the shared gate was closed"
        );
        observed_closed += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(observed_closed > 0, "the gate was never seen closed");

    let texts: Vec<String> = [first, second]
        .into_iter()
        .map(|task| {
            let response = runtime.block_on(task).unwrap().unwrap();
            response.text()
        })
        .collect();
    let mut texts = texts;
    texts.sort();
    assert_eq!(texts, ["one", "two"]);
    assert_eq!(server.requests().len(), 3);
    assert_eq!(gate.pauses(), 1);
}

#[test]
fn a_closed_gate_never_outlasts_the_overall_timeout() {
    let server = FakeLlm::start(Flavor::OpenAiChat, vec![Reply::text("never sent")]);
    let gate = PauseGate::new();
    gate.pause_for(Duration::from_secs(3600));
    let mut config = config(ProviderKind::OpenAiChat, &server);
    config.http.overall_timeout = Duration::from_millis(200);
    config.http.pause = Some(gate.clone());
    let provider = build_provider(config).unwrap();
    let err = testkit::runtime()
        .block_on(provider.complete(&request()))
        .unwrap_err();
    assert!(
        matches!(err, LlmError::Timeout { overall: true, .. }),
        "{err}"
    );
    assert!(server.requests().is_empty());
}

#[test]
fn gates_are_equal_only_to_their_clones() {
    let gate = PauseGate::new();
    assert_eq!(gate, gate.clone());
    assert_ne!(gate, PauseGate::new());
    assert!(gate.remaining().is_zero());
    gate.pause_for(Duration::from_secs(60));
    gate.pause_for(Duration::from_millis(1));
    assert!(
        gate.remaining() > Duration::from_secs(30),
        "a shorter pause does not cut a longer one"
    );
    assert_eq!(gate.pauses(), 2);
}
