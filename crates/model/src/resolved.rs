//! The resolved plan: what `shootout run` stores beside the plan's text — the plan after
//! defaults and flags were applied, in the few facts the reports read back (contenders,
//! workloads, load levels, repetitions, CPU pinning). One type writes it
//! ([`ResolvedPlan::of`] then [`ResolvedPlan::to_json`]) and reads it
//! ([`ResolvedPlan::parse`]), so the contract between the run and its reports is checked
//! by the compiler rather than by key names.
//!
//! Seams: built from a validated [`Plan`]; stored as JSON text by the store
//! ([`RunRow::plan_resolved`](crate::stored::RunRow::plan_resolved)); read by the
//! analysis. Reading is tolerant: a field missing (a run stored by an earlier shootout)
//! takes its default, and text that is not such a JSON object reads as `None`, in which
//! case the reports fall back on what the steps show.

use crate::plan::{Launch, Plan, Workload};
use crate::spec::Protocol;
use crate::LoadLevel;
use serde::{Deserialize, Serialize};

/// The plan of a run, as stored after defaults and flags were applied.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ResolvedPlan {
    /// The plan's title.
    pub name: String,
    /// The contenders, in plan order.
    pub contenders: Vec<ResolvedContender>,
    /// The workloads, in plan order.
    pub workloads: Vec<ResolvedWorkload>,
    /// The load levels, in order.
    pub levels: Vec<LoadLevel>,
    /// Repetitions per step; `None` when the stored plan does not say.
    pub repeat: Option<u32>,
    /// CPUs the contenders' process trees were pinned to; `None`: not pinned.
    pub server_cpus: Option<Vec<usize>>,
    /// CPUs shootout's load threads were pinned to; `None`: not pinned.
    pub load_cpus: Option<Vec<usize>>,
    /// How long the load threads polled before sleeping, in µs (`busy_poll`); absent when
    /// they did not (and in runs stored before the key existed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub busy_poll_us: Option<u64>,
}

/// A contender of a resolved plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ResolvedContender {
    /// Its name in the plan.
    pub name: String,
    /// The command that starts it, or the URL of a server shootout does not start.
    pub launch: String,
    /// The others are compared with it.
    pub baseline: bool,
    /// The contender's own `protocol` (`http/1.1` or `h2`), overriding the workloads'
    /// (absent when it has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// The contender's own `streams` (absent when it has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streams: Option<usize>,
    /// The contender's own `pipeline` (absent when it has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<usize>,
    /// How its TLS certificate is checked, when it is spoken to over TLS with the plan's
    /// `tls`: `cacert PATH` (unfilled) or `insecure` (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<String>,
}

/// A workload of a resolved plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ResolvedWorkload {
    /// Its name in the plan.
    pub name: String,
    /// The HTTP method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// The statuses that count as success, as given (`<400` for the default).
    pub expect_status: String,
    /// `http/1.1` or `h2` (empty in runs stored before HTTP/2: HTTP/1.1).
    pub protocol: String,
    /// HTTP/2 streams per connection (0 in runs stored before HTTP/2: 1).
    pub streams: usize,
    /// Requests in flight per connection, when pipelined (absent when 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<usize>,
    /// The request list file, as the plan names it (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<String>,
    /// The capacity search measured in place of the levels (absent when the levels were
    /// swept, and in runs stored before searches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub find_max: Option<ResolvedFindMax>,
    /// A WebSocket workload's message: `text`, `binary`, `list`, or `hold` (connections held and
    /// pinged, no message); absent for HTTP workloads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// A gRPC workload's message encoding, `gzip` (`compress`); absent when its messages
    /// went uncompressed, and for any other workload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compress: Option<String>,
    /// A gRPC workload whose schema each contender's server reflection gave (no `proto`
    /// nor `protoset`): `reflection`; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// A gRPC workload (`protocol = "grpc"`): its counts count calls (a streaming call's
    /// replies or messages, as its steps' shape says) and its rates are calls a second.
    /// Absent, and false, for any other workload and in runs stored before the key existed
    /// (whose reports say req/s).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub grpc: bool,
    /// An open-model journey workload's (rate levels, or a search): the connection each
    /// new user took, `reuse` or `new` (`journey_connection`); absent for any other
    /// workload and in runs stored before the key existed (which reused).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journey_connection: Option<String>,
}

/// A workload's capacity search, as stored with the run: what a report needs to replay
/// the search from the stored steps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ResolvedFindMax {
    /// Each SLO as written, in order (a step's `broke` verdict names one by index).
    pub slo: Vec<String>,
    /// The first rate tried, req/s (journeys/s for journeys, calls/s for gRPC).
    pub from: f64,
    /// The highest rate tried, req/s (journeys/s for journeys, calls/s for gRPC).
    pub to: f64,
    /// The workload runs journeys: its rates are journeys started a second (absent, and
    /// false in runs stored before journeys were searched: requests a second).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub journeys: bool,
    /// The workload makes gRPC calls: its rates are calls started a second, whatever a
    /// streaming call's counts count (absent, and false, for any other workload and in
    /// runs stored before the key existed: requests a second).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub calls: bool,
    /// When its steps ended (`find_max.step_end`): absent for `decided`, the default, and
    /// in runs stored before the key (whose steps ended so, or ran the fixed rule's
    /// length before the store kept how they ended).
    #[serde(skip_serializing_if = "crate::find_max::EndRule::is_decided")]
    pub step_end: crate::find_max::EndRule,
}

impl ResolvedFindMax {
    /// What the search's rates count a second: `req/s`, `journeys/s` or `calls/s`.
    pub fn unit(&self) -> &'static str {
        if self.journeys {
            "journeys/s"
        } else if self.calls {
            "calls/s"
        } else {
            "req/s"
        }
    }
}

impl ResolvedPlan {
    /// The workloads that sweep the levels (the others are searched for capacity).
    pub fn swept_workloads(&self) -> usize {
        self.workloads
            .iter()
            .filter(|w| w.find_max.is_none())
            .count()
    }

    /// The workloads searched for capacity (`find_max`).
    pub fn searched_workloads(&self) -> usize {
        self.workloads.len() - self.swept_workloads()
    }

    /// The resolved form of a validated plan.
    pub fn of(plan: &Plan) -> ResolvedPlan {
        ResolvedPlan {
            name: plan.name.clone(),
            contenders: plan
                .contenders
                .iter()
                .map(|c| ResolvedContender {
                    name: c.name.clone(),
                    launch: match &c.launch {
                        Launch::Url(url) => url.clone(),
                        Launch::Command { command, .. } => command.clone(),
                    },
                    baseline: c.baseline,
                    protocol: c.wire.protocol.map(|p| p.as_str().to_string()),
                    streams: c.wire.streams,
                    pipeline: c.wire.pipeline,
                    tls: c.tls.as_ref().map(|t| match &t.cacert {
                        Some(path) => format!("cacert {path}"),
                        None => "insecure".to_string(),
                    }),
                })
                .collect(),
            workloads: plan
                .workloads
                .iter()
                .map(|w| ResolvedWorkload {
                    name: w.name.clone(),
                    method: w.method.clone(),
                    path: w.path.clone(),
                    expect_status: w.expect.status.describe().to_string(),
                    protocol: w.protocol.as_str().to_string(),
                    streams: w.streams,
                    pipeline: (w.pipeline > 1).then_some(w.pipeline),
                    requests: w.requests.as_ref().map(|p| p.display().to_string()),
                    find_max: w.find_max.as_ref().map(|f| ResolvedFindMax {
                        slo: f.slo.clone(),
                        from: f.from,
                        to: f.to,
                        journeys: w.journey.is_some(),
                        calls: w.grpc.is_some(),
                        step_end: f.end_rule,
                    }),
                    message: message_kind(w).map(str::to_string),
                    compress: w
                        .grpc
                        .as_ref()
                        .filter(|g| g.compress)
                        .map(|_| "gzip".to_string()),
                    schema: w
                        .grpc
                        .as_ref()
                        .filter(|g| g.by_reflection())
                        .map(|_| "reflection".to_string()),
                    grpc: w.grpc.is_some(),
                    journey_connection: open_journeys(plan, w)
                        .then(|| w.journey_connection.as_str().to_string()),
                })
                .collect(),
            levels: plan.levels.iter().map(|l| l.level).collect(),
            repeat: Some(plan.defaults.repeat),
            server_cpus: plan.defaults.server_cpus.clone(),
            load_cpus: plan.defaults.load_cpus.clone(),
            busy_poll_us: plan
                .defaults
                .busy_poll
                .filter(|d| !d.is_zero())
                .map(|d| d.as_micros() as u64),
        }
    }

    /// The JSON text stored with a run: one line, every object's keys in alphabetical
    /// order (it goes through a `serde_json::Value`, whose maps are sorted), as shootout
    /// has always written it.
    pub fn to_json(&self) -> String {
        serde_json::to_value(self)
            .expect("a ResolvedPlan serializes")
            .to_string()
    }

    /// Reads the stored JSON text; `None` when it is not a resolved plan (not JSON, not an
    /// object, or a field of the wrong type). Missing fields take their defaults.
    pub fn parse(text: &str) -> Option<ResolvedPlan> {
        serde_json::from_str(text).ok()
    }

    /// True when both the contenders and the load were pinned to CPUs.
    pub fn pinned(&self) -> bool {
        self.server_cpus.is_some() && self.load_cpus.is_some()
    }

    /// Contenders × workloads × levels × repetitions planned; `None` when the stored plan
    /// does not say (no repetition count, or a list missing: a valid plan never has an
    /// empty one).
    pub fn shape(&self) -> Option<(usize, usize, usize, usize)> {
        let repeat = usize::try_from(self.repeat?).ok()?;
        let lists = [
            self.contenders.len(),
            self.swept_workloads(),
            self.levels.len(),
        ];
        if lists.contains(&0) {
            return None;
        }
        Some((lists[0], lists[1], lists[2], repeat))
    }
}

/// Whether workload `w` runs journeys in the open model, where `journey_connection`
/// chooses each new user's connection: at the plan's rate levels, or in a search.
fn open_journeys(plan: &Plan, w: &Workload) -> bool {
    w.journey.is_some()
        && (w.find_max.is_some()
            || plan
                .levels
                .iter()
                .any(|l| matches!(l.level, LoadLevel::Rate { .. })))
}

/// What a WebSocket workload sends, as stored: `text`, `binary`, `list` (text messages
/// from a list) or `hold`; `None` for HTTP.
pub fn message_kind(w: &Workload) -> Option<&'static str> {
    if w.protocol != Protocol::WebSocket {
        return None;
    }
    Some(match (&w.message, w.hold, &w.messages) {
        (_, Some(_), _) => "hold",
        (_, None, Some(_)) => "list",
        (Some(_), None, None) => "text",
        (None, None, None) => "binary",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `shootout run` stored before the type existed (built with `serde_json::json!`
    /// by key name), for a plan with a command, a URL, a rate level and pinning.
    const STORED: &str = r#"{"contenders":[{"baseline":true,"launch":"nginx -c x.conf","name":"nginx"},{"baseline":false,"launch":"http://127.0.0.1:8080","name":"other"}],"levels":[{"connections":8,"kind":"concurrency"},{"connections":4,"kind":"rate","rps":500.0}],"load_cpus":[0],"name":"demo","repeat":3,"server_cpus":[1],"workloads":[{"expect_status":"<400","method":"GET","name":"hello","path":"/","protocol":"h2","streams":10}]}"#;

    fn plan() -> ResolvedPlan {
        ResolvedPlan {
            name: "demo".into(),
            contenders: vec![
                ResolvedContender {
                    name: "nginx".into(),
                    launch: "nginx -c x.conf".into(),
                    baseline: true,
                    ..Default::default()
                },
                ResolvedContender {
                    name: "other".into(),
                    launch: "http://127.0.0.1:8080".into(),
                    baseline: false,
                    ..Default::default()
                },
            ],
            workloads: vec![ResolvedWorkload {
                name: "hello".into(),
                method: "GET".into(),
                path: "/".into(),
                expect_status: "<400".into(),
                protocol: "h2".into(),
                streams: 10,
                ..Default::default()
            }],
            levels: vec![
                LoadLevel::Concurrency { connections: 8 },
                LoadLevel::Rate {
                    rps: 500.0,
                    connections: 4,
                },
            ],
            repeat: Some(3),
            server_cpus: Some(vec![1]),
            load_cpus: Some(vec![0]),
            busy_poll_us: None,
        }
    }

    #[test]
    fn round_trips_and_writes_the_stored_shape_byte_for_byte() {
        let p = plan();
        assert_eq!(p.to_json(), STORED);
        assert_eq!(ResolvedPlan::parse(STORED), Some(p.clone()));
        assert_eq!(ResolvedPlan::parse(&p.to_json()), Some(p.clone()));
        assert!(p.pinned());
        assert_eq!(p.shape(), Some((2, 1, 2, 3)));
        // A run stored before HTTP/2 has neither key: it reads as HTTP/1.1's defaults.
        let old = STORED.replace(r#","protocol":"h2","streams":10"#, "");
        let w = &ResolvedPlan::parse(&old).unwrap().workloads[0];
        assert_eq!((w.protocol.as_str(), w.streams), ("", 0));
    }

    /// A gRPC workload is stored as one (`grpc`), its search's rates as calls a second
    /// (`calls`): the reports said req/s of both; an HTTP workload's keys stay absent,
    /// and a run stored before reads as requests.
    #[test]
    fn a_grpc_workload_is_stored_as_one_and_its_search_counts_calls() {
        let plan = |w: &str| {
            format!("name = \"g\"\n[[contender]]\nname = \"a\"\nurl = \"http://127.0.0.1:1\"\n[[workload]]\nname = \"w\"\n{w}\n[load]\nfind_max = {{ slo = [\"p99<5ms\"] }}\n")
        };
        let grpc = "protocol = \"grpc\"\nmethod = \"helloworld.Greeter/SayHello\"\nproto = \"hello.proto\"";
        let p = crate::plan::parse(&plan(grpc), "p.toml", &[0, 1]).unwrap();
        let text = ResolvedPlan::of(&p).to_json();
        let back = ResolvedPlan::parse(&text).unwrap();
        let w = &back.workloads[0];
        assert!(w.grpc, "{text}");
        let f = w.find_max.as_ref().unwrap();
        assert!(f.calls && !f.journeys, "{text}");
        assert_eq!(f.unit(), "calls/s");
        let http = crate::plan::parse(&plan("path = \"/\""), "p.toml", &[0, 1]).unwrap();
        let text = ResolvedPlan::of(&http).to_json();
        assert!(!text.contains("grpc") && !text.contains("calls"), "{text}");
        let w = &ResolvedPlan::parse(&text).unwrap().workloads[0];
        assert!(!w.grpc);
        assert_eq!(w.find_max.as_ref().unwrap().unit(), "req/s");
        let old = ResolvedPlan::parse(
            r#"{"workloads":[{"name":"w","find_max":{"slo":["p99<5ms"],"from":1.0,"to":2.0}}]}"#,
        )
        .unwrap();
        assert!(!old.workloads[0].grpc);
        assert_eq!(old.workloads[0].find_max.as_ref().unwrap().unit(), "req/s");
    }

    /// An open-model journey workload stores the connection its users took
    /// (`journey_connection`, `reuse` by default); a closed-model one and any other
    /// workload leave the key out, and a run stored before reads without it.
    #[test]
    fn an_open_model_journey_workload_stores_its_users_connection() {
        let plan = |w: &str, load: &str| {
            format!("name = \"j\"\n[[contender]]\nname = \"a\"\nurl = \"http://127.0.0.1:1\"\n[[workload]]\nname = \"w\"\n{w}\n[load]\n{load}\n")
        };
        let stored = |w: &str, load: &str| {
            let p = crate::plan::parse(&plan(w, load), "p.toml", &[0, 1]).unwrap();
            let text = ResolvedPlan::of(&p).to_json();
            ResolvedPlan::parse(&text).unwrap().workloads[0]
                .journey_connection
                .clone()
        };
        let new = "journey = \"j.toml\"\njourney_connection = \"new\"";
        assert_eq!(stored(new, "rate = [10]").as_deref(), Some("new"));
        let reuse = "journey = \"j.toml\"";
        assert_eq!(stored(reuse, "rate = [10]").as_deref(), Some("reuse"));
        let search = "find_max = { slo = [\"p99<5ms\"] }";
        assert_eq!(stored(new, search).as_deref(), Some("new"));
        assert_eq!(stored(reuse, "concurrency = [2]"), None);
        assert_eq!(stored("path = \"/\"", "rate = [10]"), None);
    }

    #[test]
    fn unpinned_plans_write_null_cpus() {
        let p = ResolvedPlan {
            server_cpus: None,
            load_cpus: None,
            busy_poll_us: None,
            ..plan()
        };
        let text = p.to_json();
        assert!(text.contains(r#""load_cpus":null"#), "{text}");
        assert!(text.contains(r#""server_cpus":null"#), "{text}");
        assert!(!ResolvedPlan::parse(&text).unwrap().pinned());
    }

    #[test]
    fn older_or_damaged_texts_read_tolerantly() {
        // An older run: no pinning fields, nothing else.
        let old = ResolvedPlan::parse(r#"{"contenders":[{"name":"a"}],"workloads":[{"name":"w"}],"levels":[{"kind":"concurrency","connections":1}],"repeat":2}"#).unwrap();
        assert!(!old.pinned());
        assert_eq!(old.shape(), Some((1, 1, 1, 2)));
        // Only one side pinned is not pinned apart.
        let half = ResolvedPlan::parse(r#"{"server_cpus":[1],"load_cpus":null}"#).unwrap();
        assert!(!half.pinned());
        // An empty object says nothing of the shape.
        let empty = ResolvedPlan::parse("{}").unwrap();
        assert_eq!(empty.shape(), None);
        assert!(!empty.pinned());
        // Not JSON, or not an object.
        assert_eq!(ResolvedPlan::parse("not json"), None);
        assert_eq!(ResolvedPlan::parse("[1]"), None);
        assert_eq!(ResolvedPlan::parse(""), None);
    }
}
