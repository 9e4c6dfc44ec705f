//! Journeys at run time, without I/O: what a user of a web application does step by step,
//! as a state machine a connection feeds answers to and asks requests of ([`User`]), with
//! the pieces it is made of — templates rendered from a user's variables and checked as
//! they are drawn ([`render`]), captures that read at most a stated prefix of an answer
//! ([`capture`]), a cookie jar for one host as RFC 6265 says ([`cookies`]), and a seeded
//! generator per user ([`rng`]).
//!
//! This folder imports nothing from the protocols or the workers: the journey file is read
//! and checked by the model (`shootout_model::journey`); the event loop plugs a [`User`]
//! onto a connection by writing [`User::request`] and handing back each [`Answer`].

pub mod capture;
pub mod cookies;
pub mod render;
pub mod rng;
mod user;

pub use capture::{Answer, Fields};
pub use cookies::Jar;
pub use user::{Event, Next, Request, Setup, StepFailure, User};

#[cfg(test)]
mod tests;
