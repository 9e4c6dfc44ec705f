//! HTTP/1.1: requests rendered once per kind ([`request`]), answers parsed by a state
//! machine that does no I/O ([`parse`]), each connection's protocol state without I/O
//! (its queue of requests, pipelined or not, and what each answer decides: [`conn`]), and
//! the connections' sockets on the event loop ([`worker`]); journeys' users, one per
//! connection, on the same loop ([`users`]); what both do alike with a connection's
//! socket ([`wire`]).

pub mod conn;
pub mod parse;
pub mod request;
pub mod users;
mod wire;
pub mod worker;
