//! Retries, Retry-After, timeouts, dropped connections and proxies.

use std::time::Duration;

use llm::{LlmError, ProviderKind, ProxyConfig, RetryPolicy};
use testkit::{FakeLlm, Flavor, Reply, runtime};

use crate::{complete, config, each_backend, request};

/// Every backend, served `script()` and configured by `edit`, keeps retrying
/// up to its last reply, the text `answer`.
fn assert_retried_to_the_end(
    script: impl Fn() -> Vec<Reply>,
    edit: impl Fn(&mut llm::ProviderConfig),
    answer: &str,
) {
    let sent = script().len();
    each_backend(script, |kind, server| {
        let response = complete(server, kind, &edit).unwrap();
        assert_eq!(response.text(), answer, "{kind:?}");
        assert_eq!(server.requests().len(), sent);
    });
}

/// The text of the one answer `kind`'s backend at `server` gives.
fn answer(
    server: &FakeLlm,
    kind: ProviderKind,
    edit: impl FnOnce(&mut llm::ProviderConfig),
) -> String {
    complete(server, kind, edit).unwrap().text()
}

#[test]
fn retryable_statuses_are_retried_until_success() {
    assert_retried_to_the_end(
        || {
            vec![
                Reply::error(429, "slow down").retry_after("0"),
                Reply::error(500, "oops"),
                Reply::error(503, "busy"),
                Reply::text("finally"),
            ]
        },
        |_| {},
        "finally",
    );
}

#[test]
fn attempts_are_bounded_and_the_last_error_is_kept() {
    let script = || {
        vec![
            Reply::error(502, "bad gateway"),
            Reply::error(504, "gateway timeout"),
            Reply::error(529, "overloaded"),
            Reply::error(429, "rate limited"),
            Reply::text("never reached"),
        ]
    };
    each_backend(script, |kind, server| {
        let err = complete(server, kind, |_| {}).unwrap_err();
        match &err {
            LlmError::RetriesExhausted { attempts, last, .. } => {
                assert_eq!(*attempts, 4);
                assert_eq!(last.status(), Some(429));
                assert!(last.to_string().contains("rate limited"));
            }
            other => panic!("{kind:?}: {other}"),
        }
        assert_eq!(server.requests().len(), 4);
        assert_eq!(server.remaining(), 1);
    });
}

#[test]
fn retry_after_is_honoured_within_its_cap() {
    // A Retry-After far beyond the cap (3600 s) is cut to the cap, not obeyed
    // literally.
    for (status, message, after) in [(429, "wait", "0.02"), (503, "later", "3600")] {
        let script = || {
            vec![
                Reply::error(status, message).retry_after(after),
                Reply::text("ok"),
            ]
        };
        assert_retried_to_the_end(script, |_| {}, "ok");
    }
}

#[test]
fn an_immediate_policy_retries_at_once_and_only_as_often_as_told() {
    // A Retry-After of an hour is not waited for (waiting would pass the
    // overall timeout, and the request would fail instead).
    let script = || {
        vec![
            Reply::error(503, "later").retry_after("3600"),
            Reply::text("ok"),
        ]
    };
    assert_retried_to_the_end(
        script,
        |cfg| cfg.http.retry = RetryPolicy::immediate(2),
        "ok",
    );
    each_backend(script, |kind, server| {
        let once = complete(server, kind, |cfg| {
            cfg.http.retry = RetryPolicy::immediate(1);
        });
        assert!(once.is_err(), "{kind:?}: {once:?}");
        assert_eq!(server.requests().len(), 1);
    });
}

#[test]
fn dropped_connections_and_cut_bodies_are_retried() {
    assert_retried_to_the_end(
        || {
            vec![
                Reply::hangup(),
                Reply::truncated(200, b"{\"id\":", 400),
                Reply::text("recovered"),
            ]
        },
        |_| {},
        "recovered",
    );
}

#[test]
fn slow_attempts_time_out_and_are_retried() {
    assert_retried_to_the_end(
        || {
            vec![
                Reply::text("too late").delayed(Duration::from_secs(30)),
                Reply::text("in time"),
            ]
        },
        |cfg| cfg.http.request_timeout = Duration::from_millis(300),
        "in time",
    );
}

#[test]
fn the_overall_timeout_stops_retrying() {
    let late = Reply::text("late").delayed(Duration::from_secs(30));
    let server = FakeLlm::start(Flavor::OpenAiResponses, vec![late; 3]);
    let err = complete(&server, ProviderKind::OpenAiResponses, |cfg| {
        cfg.http.request_timeout = Duration::from_secs(20);
        cfg.http.overall_timeout = Duration::from_millis(400);
    })
    .unwrap_err();
    assert!(
        matches!(err, LlmError::Timeout { overall: true, .. }),
        "{err}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_refused_connection_is_a_transport_error_after_retries() {
    let server = FakeLlm::start(Flavor::OpenAiChat, vec![]);
    let cfg = config(ProviderKind::OpenAiChat, &server);
    drop(server);
    let provider = llm::build_provider(cfg).unwrap();
    let err = runtime()
        .block_on(provider.complete(&request()))
        .unwrap_err();
    match err {
        LlmError::RetriesExhausted {
            attempts: 4, last, ..
        } => {
            assert!(matches!(*last, LlmError::Transport { .. }), "{last}")
        }
        other => panic!("{other}"),
    }
}

#[test]
fn requests_go_through_the_configured_proxy_unless_no_proxy_matches() {
    // The fake server plays the proxy for a host that does not exist: the request
    // reaches it in absolute form.
    let proxy = FakeLlm::start(Flavor::OpenAiChat, vec![Reply::text("via proxy")]);
    let text = answer(&proxy, ProviderKind::OpenAiChat, |cfg| {
        cfg.base_url = Some("http://llm.invalid/v1".into());
        cfg.http.proxy = ProxyConfig {
            http: Some(format!("http://{}", proxy.addr())),
            https: None,
            no_proxy: None,
        };
    });
    assert_eq!(text, "via proxy");
    let seen = &proxy.requests()[0];
    assert_eq!(seen.target, "http://llm.invalid/v1/chat/completions");
    assert_eq!(seen.path, "/v1/chat/completions");

    // NO_PROXY sends loopback traffic direct, past a proxy that does not exist.
    let server = FakeLlm::start(Flavor::OpenAiChat, vec![Reply::text("direct")]);
    let dead = FakeLlm::start(Flavor::OpenAiChat, vec![]);
    let dead_addr = dead.addr();
    drop(dead);
    let text = answer(&server, ProviderKind::OpenAiChat, |cfg| {
        cfg.http.proxy = ProxyConfig {
            http: Some(format!("http://{dead_addr}")),
            https: None,
            no_proxy: Some("127.0.0.1,localhost".into()),
        };
    });
    assert_eq!(text, "direct");
    assert_eq!(server.requests()[0].target, "/v1/chat/completions");
}
