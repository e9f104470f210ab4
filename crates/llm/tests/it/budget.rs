//! Retries within a time budget ([`RetryPolicy::within`]), and the pool's
//! gate held half-open after a pause: one request probes, the rest wait.

use std::sync::Arc;
use std::time::Duration;

use llm::{LlmError, LlmProvider, PauseGate, ProviderKind, RetryPolicy, build_provider};
use testkit::{FakeLlm, Flavor, Reply, Storm, runtime};

use crate::{complete, config, each_backend, request};

/// A budget of `budget` with quick back-off: 1 to 5 ms, `Retry-After` cut
/// to `max_retry_after`.
fn within(budget: Duration, max_retry_after: Duration) -> RetryPolicy {
    RetryPolicy {
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(5),
        max_retry_after,
        ..RetryPolicy::within(budget)
    }
}

/// Twelve failures in a row are more than the attempts of the default policy
/// (five) or of the tests' (four): within a budget they are ridden out.
#[test]
fn a_budget_rides_out_more_failures_than_any_attempt_cap() {
    let script = || {
        let mut script: Vec<Reply> = (0..6)
            .flat_map(|_| {
                [
                    Reply::error(503, "busy").retry_after("0.01"),
                    Reply::error(500, "oops"),
                ]
            })
            .collect();
        script.push(Reply::text("through"));
        script
    };
    each_backend(script, |kind, server| {
        let response = complete(server, kind, |cfg| {
            cfg.http.retry = within(Duration::from_secs(60), Duration::from_secs(1));
        })
        .unwrap();
        assert_eq!(response.text(), "through", "{kind:?}");
        assert_eq!(server.requests().len(), 13, "{kind:?}");
    });
}

/// A storm longer than the budget fails with an error that names the budget.
#[test]
fn a_storm_past_the_budget_fails_naming_the_budget() {
    let server = FakeLlm::start(Flavor::OpenAiChat, Vec::new());
    let storm = Storm::rate_limited(Duration::from_secs(3600), "0.1");
    server.respond_with(storm.then(|_| Reply::text("never")));
    let err = complete(&server, ProviderKind::OpenAiChat, |cfg| {
        cfg.http.retry = within(Duration::from_secs(1), Duration::from_secs(1));
    })
    .unwrap_err();
    match &err {
        LlmError::RetryBudgetSpent {
            budget,
            attempts,
            last,
            ..
        } => {
            assert_eq!(*budget, Duration::from_secs(1));
            assert!(*attempts >= 2, "{err}");
            assert_eq!(last.status(), Some(429));
        }
        other => panic!("{other}"),
    }
    assert!(
        err.to_string()
            .contains("still failing when the retry budget of 1 s ran out"),
        "{err}"
    );
    assert_eq!(err.status(), Some(429));
}

/// A `Retry-After` that would end past the budget is not waited for: the call
/// fails at once, after its one attempt.
#[test]
fn a_wait_past_the_budget_is_not_begun() {
    let server = FakeLlm::start(
        Flavor::OpenAiChat,
        vec![Reply::error(429, "come back in a minute").retry_after("60")],
    );
    let err = complete(&server, ProviderKind::OpenAiChat, |cfg| {
        cfg.http.retry = within(Duration::from_secs(5), Duration::from_secs(120));
    })
    .unwrap_err();
    assert!(
        matches!(err, LlmError::RetryBudgetSpent { attempts: 1, .. }),
        "{err}"
    );
    assert_eq!(server.requests().len(), 1);
}

/// 400, 401 and 403 are the client's fault: no budget retries them.
#[test]
fn errors_that_are_not_retryable_fail_at_once_whatever_the_budget() {
    for status in [400, 401, 403] {
        let server = FakeLlm::start(
            Flavor::OpenAiChat,
            vec![Reply::error(status, "no"), Reply::text("never reached")],
        );
        let err = complete(&server, ProviderKind::OpenAiChat, |cfg| {
            cfg.http.retry = within(Duration::from_secs(300), Duration::from_secs(1));
        })
        .unwrap_err();
        assert!(
            matches!(err, LlmError::Api { status: s, .. } if s == status),
            "{status}: {err}"
        );
        assert_eq!(server.requests().len(), 1, "{status}");
    }
}

/// A gate closed (by another caller) for longer than the attempts would last
/// costs no attempt: with two attempts allowed, the call waits out the pause,
/// meets one 429, waits again, and gets its answer.
#[test]
fn waiting_on_the_gate_is_not_an_attempt() {
    let server = FakeLlm::start(
        Flavor::OpenAiChat,
        vec![
            Reply::error(429, "slow down").retry_after("0.3"),
            Reply::text("after the wait"),
        ],
    );
    let gate = PauseGate::new();
    gate.pause_for(Duration::from_millis(800));
    let mut cfg = config(ProviderKind::OpenAiChat, &server);
    cfg.http.retry = RetryPolicy {
        max_attempts: 2,
        ..within(Duration::from_secs(30), Duration::from_secs(1))
    };
    cfg.http.pause = Some(gate.clone());
    let provider = build_provider(cfg).unwrap();
    let response = runtime().block_on(provider.complete(&request())).unwrap();
    assert_eq!(response.text(), "after the wait");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(gate.pauses(), 2, "ours and the 429's");
}

/// Sixteen callers share a gate through a storm of 429s (`Retry-After: 0.2`,
/// for two seconds): after the first volley, one request probes each time
/// the pause ends while the others wait for its answer, so the storm sees
/// about one request per pause — not sixteen. All sixteen get through.
#[test]
fn after_a_pause_one_request_probes_and_the_rest_wait_for_its_answer() {
    const CALLERS: usize = 16;
    let server = FakeLlm::start(Flavor::OpenAiChat, Vec::new());
    let storm = Storm::rate_limited(Duration::from_secs(2), "0.2");
    server.respond_with(storm.then(|_| Reply::text("calm")));
    let gate = PauseGate::new();
    let providers: Vec<Arc<dyn LlmProvider>> = (0..CALLERS)
        .map(|_| {
            let mut cfg = config(ProviderKind::OpenAiChat, &server);
            cfg.http.retry = within(Duration::from_secs(60), Duration::from_secs(1));
            cfg.http.overall_timeout = Duration::from_secs(90);
            cfg.http.pause = Some(gate.clone());
            build_provider(cfg).unwrap()
        })
        .collect();
    let runtime = runtime();
    let calls: Vec<_> = providers
        .into_iter()
        .map(|provider| runtime.spawn(async move { provider.complete(&request()).await }))
        .collect();
    for call in calls {
        let response = runtime.block_on(call).unwrap().unwrap();
        assert_eq!(response.text(), "calm");
    }
    assert!(storm.is_over());
    // Two seconds of 0.2-second pauses: about ten probes after the first
    // volley of sixteen. Without the probe every caller would retry after
    // each pause: sixteen times as many.
    let during = storm.during();
    assert!(
        during <= CALLERS + 2 * 10 + 5,
        "{during} requests reached the server during the storm"
    );
    assert_eq!(server.requests().len(), during + CALLERS);
}
