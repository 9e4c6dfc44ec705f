//! What a swept workload's counts count, and so what its rates are a second: requests
//! (HTTP, WebSocket, a journey's steps), gRPC calls (unary and client streaming), a server
//! stream's replies, or a bidirectional stream's messages ([`Unit`]). Decided once per
//! workload ([`Unit::of`]) from its steps' stream shape (stored since schema 25) and the
//! resolved plan's `grpc` mark; every rendering of a stored run and of a comparison words
//! its rates, counts and CPU per answer with it, as `shootout load` words its own.
//!
//! Seams: reads the resolved plan and the stored steps; a run stored before the plan
//! marked gRPC workloads reads as requests, as it always did.

use shootout_model::resolved::ResolvedPlan;
use shootout_model::stored::StoredStep;

/// What one count of a workload's results is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Unit {
    /// An HTTP request and its answer (a WebSocket message and its reply, a journey's
    /// step): `req/s`.
    #[default]
    Request,
    /// A gRPC call, unary or client streaming (its messages and its one reply): `calls/s`.
    Call,
    /// One reply of a gRPC server stream: `replies/s`.
    Reply,
    /// One message of a gRPC bidirectional stream and its reply: `messages/s`.
    Message,
}

impl Unit {
    /// The unit of a streaming gRPC step's counts, from its stored shape (`server`,
    /// `bidi`, `client`); `None` for any other shape.
    pub fn of_shape(shape: &str) -> Option<Unit> {
        match shape {
            "server" => Some(Unit::Reply),
            "bidi" => Some(Unit::Message),
            "client" => Some(Unit::Call),
            _ => None,
        }
    }

    /// The unit of workload `name`, whose swept steps are `steps`: a streaming step's
    /// shape when one has it, else a call when the stored plan marks the workload gRPC's,
    /// else a request (any other workload, and runs stored before the mark).
    pub fn of<'s>(
        plan: Option<&ResolvedPlan>,
        name: &str,
        mut steps: impl Iterator<Item = &'s StoredStep>,
    ) -> Unit {
        if let Some(unit) = steps.find_map(|s| Unit::of_shape(s.result.stream.as_deref()?.shape)) {
            return unit;
        }
        let grpc = plan.is_some_and(|p| p.workloads.iter().any(|w| w.name == name && w.grpc));
        if grpc {
            Unit::Call
        } else {
            Unit::Request
        }
    }

    /// What a second of it is called: `req/s`, `calls/s`, `replies/s`, `messages/s`.
    pub fn per_second(self) -> &'static str {
        match self {
            Unit::Request => "req/s",
            Unit::Call => "calls/s",
            Unit::Reply => "replies/s",
            Unit::Message => "messages/s",
        }
    }

    /// One, as the tables' `server µs/req` column abbreviates it: `req`, `call`, `reply`,
    /// `msg`.
    pub fn short(self) -> &'static str {
        match self {
            Unit::Request => "req",
            Unit::Call => "call",
            Unit::Reply => "reply",
            Unit::Message => "msg",
        }
    }

    /// One, in words: `request`, `call`, `reply`, `message` (as `shootout load`'s
    /// `load.unit`).
    pub fn word(self) -> &'static str {
        match self {
            Unit::Request => "request",
            Unit::Call => "call",
            Unit::Reply => "reply",
            Unit::Message => "message",
        }
    }

    /// Several, as a line that lists them is headed: `Requests`, `Calls`, `Replies`,
    /// `Messages`.
    pub fn label(self) -> &'static str {
        match self {
            Unit::Request => "Requests",
            Unit::Call => "Calls",
            Unit::Reply => "Replies",
            Unit::Message => "Messages",
        }
    }

    /// Several, in words: `requests`, `calls`, `replies`, `messages`.
    pub fn plural(self) -> &'static str {
        match self {
            Unit::Request => "requests",
            Unit::Call => "calls",
            Unit::Reply => "replies",
            Unit::Message => "messages",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_model::resolved::ResolvedWorkload;

    /// A plan with one workload `name`, marked gRPC's or not.
    fn plan(name: &str, grpc: bool) -> ResolvedPlan {
        ResolvedPlan {
            workloads: vec![ResolvedWorkload {
                name: name.into(),
                grpc,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    /// A workload the stored plan marks gRPC's counts calls; a stream's shape names its
    /// own unit; anything else, an unreadable plan and a plan stored before the mark
    /// count requests.
    #[test]
    fn a_workloads_unit_comes_from_its_streams_then_the_plans_grpc_mark() {
        let run = crate::evidence::tests::run(&[("a", 100, 0)], 1);
        let plain = || run.steps.iter();
        assert_eq!(Unit::of(Some(&plan("w", true)), "w", plain()), Unit::Call);
        assert_eq!(
            Unit::of(Some(&plan("w", true)), "v", plain()),
            Unit::Request
        );
        assert_eq!(
            Unit::of(Some(&plan("w", false)), "w", plain()),
            Unit::Request
        );
        assert_eq!(Unit::of(None, "w", plain()), Unit::Request);
        let old = ResolvedPlan::parse(r#"{"workloads":[{"name":"w","protocol":"h2"}]}"#);
        assert_eq!(Unit::of(old.as_ref(), "w", plain()), Unit::Request);
        let mut streamed = run.steps[0].clone();
        streamed.result.stream = Some(Box::new(shootout_model::result::StreamStats::new("server")));
        assert_eq!(
            Unit::of(Some(&plan("w", true)), "w", std::iter::once(&streamed)),
            Unit::Reply
        );
        let words: Vec<_> = [Unit::Request, Unit::Call, Unit::Reply, Unit::Message]
            .iter()
            .map(|u| (u.per_second(), u.short(), u.word(), u.plural(), u.label()))
            .collect();
        assert_eq!(
            words,
            [
                ("req/s", "req", "request", "requests", "Requests"),
                ("calls/s", "call", "call", "calls", "Calls"),
                ("replies/s", "reply", "reply", "replies", "Replies"),
                ("messages/s", "msg", "message", "messages", "Messages"),
            ]
        );
    }
}
