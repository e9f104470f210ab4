//! Words and sentences: the vocabulary of file and function names, the
//! templates of items, intents, reasons and commit subjects, and filling a
//! template's slots.

pub(super) const FILE_WORDS: &[&str] = &[
    "session",
    "codec",
    "router",
    "ledger",
    "storage",
    "planner",
    "scheduler",
    "journal",
    "cache",
    "transport",
    "catalog",
    "metrics",
    "auth",
    "config",
    "parser",
    "lexer",
    "archive",
    "mailbox",
    "registry",
    "policy",
    "billing",
    "search",
    "layout",
    "gateway",
    "pipeline",
    "worker",
    "replica",
    "consensus",
    "quota",
    "tenant",
    "audit",
    "export",
    "sync",
    "watcher",
    "format",
    "stream",
    "socket",
    "resolver",
    "crypto",
    "vault",
    "manifest",
    "indexer",
    "compactor",
    "throttle",
    "dispatch",
    "ingest",
    "history",
    "profile",
];

pub(super) const VERBS: &[&str] = &[
    "parse",
    "encode",
    "decode",
    "flush",
    "merge",
    "resolve",
    "validate",
    "compact",
    "hash",
    "split",
    "load",
    "store",
    "scan",
    "rotate",
    "align",
    "clamp",
    "fold",
    "render",
    "route",
    "reserve",
    "release",
    "refresh",
    "measure",
    "normalise",
];

pub(super) const NOUNS: &[&str] = &[
    "session", "frame", "header", "checksum", "buffer", "cursor", "ledger", "token", "manifest",
    "segment", "index", "packet", "record", "snapshot", "offset", "payload", "schema", "batch",
    "queue", "lease", "window", "chunk", "digest", "entry",
];

pub(super) const TAGS: &[&str] = &[
    "correctness",
    "performance",
    "compat",
    "security",
    "cache",
    "parsing",
    "concurrency",
    "api",
];

/// Constraint sentences (the token is appended). `{f}` the function, `{g}`
/// another one, `{n1}` `{n2}` nouns, `{k}` a small number.
pub(super) const CONSTRAINTS: &[&str] = &[
    "Callers must hold the {n1} lock before calling {f}; releasing it early lets a concurrent writer corrupt the {n2} cache",
    "{f} must stay free of allocation on the hot path because the {n1} loop calls it once per {n2}",
    "The result of {f} is persisted in the {n1} table, so its output for existing inputs must never change",
    "{f} must return zero for an empty {n1}; the {n2} reader treats any other value as a corrupt record",
    "Keep {f} deterministic across runs: the {n1} snapshot tests compare its output byte for byte with stored fixtures",
    "{f} must not panic on truncated {n1} input; the server feeds it untrusted bytes straight from the socket",
    "The low {k} bits produced by {f} form part of the {n1} key and must stay stable between releases",
    "{f} must be called only after the {n1} has been validated, since it skips bounds checks for speed",
    "Do not reorder the steps in {f}: the {n1} checksum depends on the mixing order used since version {k}",
    "{f} must finish within one {n1} tick; anything slower stalls the {n2} scheduler and triggers the watchdog",
    "Inputs to {f} above the {n1} limit must be clamped rather than rejected, because older clients still send them",
    "{f} must remain safe to call from several threads at once without taking the global {n1} mutex",
    "Any change to the output of {f} requires bumping the {n1} format version and migrating stored {n2} files",
    "{f} must treat a zero {n1} as absent rather than as a valid value, matching what the {n2} parser expects",
    "The {n1} retry budget checked in {f} must stay below {k} attempts or the upstream rate limiter bans us",
    "{f} must keep its public signature because third party {n1} plugins link against it by name",
];

/// Risk sentences (the token is appended).
pub(super) const RISKS: &[&str] = &[
    "Changing the constants in {f} silently invalidates every cached {n1} entry and forces a full rebuild on the next start",
    "If {f} ever returns the sentinel value, the {n1} reader loops forever waiting for a {n2} that never arrives",
    "A regression in {f} shows up only under load, when the {n1} queue is full and {n2} batches are merged",
    "{f} is on the latency critical path; an extra branch here costs measurable time in the {n1} benchmarks",
    "Overflow in {f} is masked by wrapping arithmetic, so a wrong {n1} value would pass tests and fail in production",
    "Older {n1} files written before version {k} rely on the quirk in {f}, and removing it breaks their import",
    "The fuzz corpus for {n1} parsing exercises {f} heavily, so any change here needs a full fuzzing run first",
    "{f} shares state with the {n1} metrics exporter, and a change in call order can double count {n2} events",
];

/// Dependency natures (the token is appended); `{g}` is the function
/// depended on.
pub(super) const DEPENDENCIES: &[&str] = &[
    "{f} calls {g} to normalise the {n1} value and relies on it never returning zero for valid input",
    "{f} assumes {g} has already validated the {n1} header, so it reads fields without checking their bounds",
    "The {n1} key computed by {g} must match the one {f} derives, or lookups in the shared cache miss",
    "{f} feeds its result to {g}, which expects the low {k} bits to encode the {n1} kind",
    "{f} relies on {g} being idempotent, because it may call it twice when the {n1} retry path fires",
    "{f} and {g} must agree on the {n1} rounding mode, since their outputs are compared in the consistency check",
];

/// What a change does: the subject of its message (after `name: `) and the
/// intent of its region (15–25 words naming the function).
pub(super) const CHANGES: &[(&str, &str)] = &[
    (
        "reject empty {n1} input",
        "Make {f} reject empty {n1} input early so that callers get a clear error instead of a wrong {n2} value.",
    ),
    (
        "cache the decoded {n1}",
        "Teach {f} to cache the decoded {n1} so repeated lookups from the {n2} path skip the expensive mixing step.",
    ),
    (
        "cover trailing bytes in the {n1} checksum",
        "Change {f} so the {n1} checksum covers the trailing bytes as well, closing the gap found in the last audit.",
    ),
    (
        "clamp oversized {n1} values",
        "Let {f} clamp oversized {n1} values instead of failing, which keeps older clients working during the migration.",
    ),
    (
        "simplify the {n1} mixing loop",
        "Simplify the {n1} mixing loop in {f} so that this code path is easier to read and cheaper to run.",
    ),
    (
        "guard against a degenerate {n1} state",
        "Guard {f} against the degenerate {n1} state reported by the fuzzer, where the accumulator collapsed to zero.",
    ),
    (
        "honour the configured {n1} limit",
        "Make {f} honour the configured {n1} limit so the {n2} worker no longer overruns its batch budget.",
    ),
    (
        "split out {n1} normalisation",
        "Split the {n1} normalisation out of the main loop of {f} so that it can be tested on its own.",
    ),
    (
        "fix an off by one at the end of a {n1} batch",
        "Fix the off by one in {f} that dropped the last {n1} of every batch when the {n2} buffer was full.",
    ),
    (
        "use wrapping arithmetic for the {n1} state",
        "Rework {f} to use wrapping arithmetic for the {n1} state, matching the reference implementation bit for bit.",
    ),
];

pub(super) const REWRITE: (&str, &str) = (
    "rewrite around a single {n1} pass",
    "Rewrite {f} from scratch around a single {n1} pass, replacing the special cases that had piled up over time.",
);

pub(super) const REASONS: &[&str] = &[
    "A lookup table was considered and rejected because it costs a cache miss on every call.",
    "The simpler version was measured to be as fast and is much easier to review.",
    "Failing loudly here is better than letting a corrupt {n1} travel further down the pipeline.",
    "This keeps the behaviour identical for valid inputs, which the snapshot tests confirm.",
    "The {n1} team asked for this so their migration can proceed without a flag day.",
    "Doing the check once at the boundary avoids repeating it in every caller.",
];

/// Subjects of `main`'s own commits (after `name: `) and their body.
pub(super) const CHORES: &[&str] = &[
    "tidy up the {n1} loop",
    "rename a local {n1} variable",
    "drop a stale comment about the {n1}",
    "inline a small {n1} helper step",
    "reorder two independent {n1} statements",
];

pub(super) const CHORE_BODY: &str =
    "No change in behaviour intended; this only makes the {n1} code easier to follow.";

pub(super) const REMOVE_REASONS: &[&str] = &[
    "This constraint no longer holds since the {n1} lock was removed upstream.",
    "Wrong: the {n1} path never calls this concurrently, the rule was a misreading.",
];

pub(super) const FLAG_REASONS: &[&str] = &[
    "The reasoning here was written from a misreading of the {n1} protocol; treat this region with suspicion.",
    "Reviewers disagree with this description of the {n1} handling; it needs a second look.",
];

/// What fills a template's `{n1}`, `{n2}` and `{k}`.
pub(super) type Slots = (&'static str, &'static str, usize);

/// `template` with `{f}` and `{g}` replaced by the given names and `{n1}`,
/// `{n2}`, `{k}` by `slots`.
pub(super) fn fill(template: &str, f: &str, g: &str, (n1, n2, k): Slots) -> String {
    template
        .replace("{f}", f)
        .replace("{g}", g)
        .replace("{n1}", n1)
        .replace("{n2}", n2)
        .replace("{k}", &k.to_string())
}
