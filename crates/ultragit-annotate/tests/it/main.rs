//! The writing agent against real repositories and, over real HTTP, the fake LLM
//! servers of `testkit` (spec 000 "Test Plan").

mod agent_loop;
mod gather;
mod golden;
mod setup;
mod support;
mod sync;
mod tools;
