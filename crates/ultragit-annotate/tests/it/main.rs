//! The writing agent against real repositories and, over real HTTP, the fake LLM
//! servers of `testkit` (spec 000 "Test Plan").

mod agent_loop;
mod backfill;
mod budget;
mod correct;
mod doctor;
mod gather;
mod golden;
mod remap;
mod replies;
mod rewrite;
mod setup;
mod support;
mod sync;
mod sync_union;
mod tools;
