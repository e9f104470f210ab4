//! The writing agent against real repositories and, over real HTTP, the fake LLM
//! servers of `testkit` (spec 000 "Test Plan").

mod agent_loop;
mod backfill;
mod budget;
mod gather;
mod golden;
mod replies;
mod support;
mod tools;
