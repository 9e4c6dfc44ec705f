//! HTTP/1.1: requests rendered once per kind ([`request`]), answers parsed by a state
//! machine that does no I/O ([`parse`]), and the connections on the event loop, pipelined
//! or not ([`worker`]).

pub mod parse;
pub mod request;
pub mod worker;
