//! `ultragit` as a process on temporary repositories: `read` on notes written as
//! the writing agent writes them; `annotate`, `context`, `show` and `init` against
//! the fake LLM servers of `testkit`, the `post-commit` hook included; the
//! hooks that warm the read caches after a pull or a checkout.

mod annotate;
mod backfill;
mod blame_cache;
mod cli;
mod correct;
mod deps;
mod doctor;
mod errors;
mod golden;
mod history;
mod init;
mod mcp;
mod read;
mod read_lang;
mod remap;
mod rewrite;
mod summary;
mod support;
mod sync;
mod untrusted;
mod warm_hooks;
