//! [`Storm`]: a stretch of trouble in front of a responder — rate limits,
//! server errors, hangs or cut bodies for a while, then normal answers.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use super::{RecordedRequest, Reply};

/// Trouble for a while: every request that arrives within `duration` of the
/// first request the storm sees is answered with the storm's fault; the rest
/// go to the responder given to [`Storm::then`]. The storm starts with its
/// first request, not when it is made, so a slow start of the client under
/// test does not eat into it. Clones share the storm.
///
/// ```
/// use std::time::Duration;
/// use testkit::{FakeLlm, Flavor, Reply, Storm};
///
/// let server = FakeLlm::start(Flavor::OpenAiChat, Vec::new());
/// let storm = Storm::rate_limited(Duration::from_secs(20), "1");
/// server.respond_with(storm.then(|_| Reply::text("calm again")));
/// // … run the client, then: assert!(storm.during() < 30);
/// assert_eq!(storm.during(), 0);
/// ```
#[derive(Clone)]
pub struct Storm {
    inner: Arc<Inner>,
}

struct Inner {
    duration: Duration,
    began: OnceLock<Instant>,
    during: AtomicUsize,
    fault: Box<dyn Fn() -> Reply + Send + Sync>,
}

impl fmt::Debug for Storm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Storm")
            .field("duration", &self.inner.duration)
            .field("began", &self.inner.began.get())
            .field("during", &self.during())
            .finish_non_exhaustive()
    }
}

impl Storm {
    /// Answers `fault()` to every request for `duration` from the first.
    pub fn new(duration: Duration, fault: impl Fn() -> Reply + Send + Sync + 'static) -> Storm {
        Storm {
            inner: Arc::new(Inner {
                duration,
                began: OnceLock::new(),
                during: AtomicUsize::new(0),
                fault: Box::new(fault),
            }),
        }
    }

    /// `429` with `Retry-After: retry_after` (seconds, as the header spells
    /// them).
    pub fn rate_limited(duration: Duration, retry_after: &str) -> Storm {
        let retry_after = retry_after.to_owned();
        Storm::new(duration, move || {
            Reply::error(429, "fake server: rate limited (storm)").retry_after(&retry_after)
        })
    }

    /// `500` without `Retry-After`: the client backs off on its own.
    pub fn server_errors(duration: Duration) -> Storm {
        Storm::new(duration, || {
            Reply::error(500, "fake server: internal error (storm)")
        })
    }

    /// No answer for `hang` (longer than the client's request timeout, to
    /// test it), then the connection closes without one.
    pub fn hanging(duration: Duration, hang: Duration) -> Storm {
        Storm::new(duration, move || Reply::hangup().delayed(hang))
    }

    /// A `200` whose body stops short of its declared `Content-Length`.
    pub fn truncated(duration: Duration) -> Storm {
        Storm::new(duration, || {
            Reply::truncated(200, br#"{"id":"chatcmpl-cut","object":"chat.co"#, 400)
        })
    }

    /// A responder ([`super::FakeLlm::respond_with`]) that answers with the
    /// storm while it lasts, and with `calm` after.
    pub fn then(
        &self,
        calm: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static,
    ) -> impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static {
        let storm = self.clone();
        move |request| storm.answer().unwrap_or_else(|| calm(request))
    }

    /// The storm's fault for a request arriving now, or `None` once it is over.
    fn answer(&self) -> Option<Reply> {
        let began = *self.inner.began.get_or_init(Instant::now);
        if began.elapsed() >= self.inner.duration {
            return None;
        }
        self.inner.during.fetch_add(1, Ordering::SeqCst);
        Some((self.inner.fault)())
    }

    /// Requests answered with the storm's fault so far.
    pub fn during(&self) -> usize {
        self.inner.during.load(Ordering::SeqCst)
    }

    /// Whether the storm has begun and passed.
    pub fn is_over(&self) -> bool {
        self.inner
            .began
            .get()
            .is_some_and(|began| began.elapsed() >= self.inner.duration)
    }
}
