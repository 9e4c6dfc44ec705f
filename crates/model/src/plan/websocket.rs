//! A plan's WebSocket workloads (`protocol = "websocket"`): the keys only they take
//! (`message`, `expect.echo`, `hold`), the HTTP keys they refuse (a method other than
//! GET, `body`, `requests`, `streams`, `expect.status`), and how contenders and load
//! levels must agree with them. Each refusal names the workload (or contender), the key
//! and the fix, at the key's line.

use super::{duration_of, FileContender, FileLoad, FileWorkload, Reader, Workload};
use super::{Contender, PlanError};
use crate::spec::{Hold, Protocol, MAX_MESSAGE, MAX_RATE, MIN_RATE};
use serde::Deserialize;
use toml::Spanned;

/// `hold = { ping = "5s", rate = 200 }`: hold the connections, ping each every `ping`,
/// open `rate` of them per second (all at once without it).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileHold {
    ping: Spanned<String>,
    rate: Option<Spanned<f64>>,
}

impl Reader<'_> {
    /// A workload's WebSocket keys against its `protocol`: refused on an HTTP workload;
    /// on a WebSocket one, the HTTP keys are refused and a message (or `hold`) is needed.
    /// Returns the hold mode asked for.
    pub(super) fn websocket(
        &self,
        name: &str,
        at: usize,
        w: &FileWorkload,
        load: &FileLoad,
        protocol: Protocol,
    ) -> Result<Option<Hold>, PlanError> {
        if protocol != Protocol::WebSocket {
            self.no_websocket_keys(name, w)?;
            return Ok(None);
        }
        self.no_http_keys(name, w, load)?;
        self.message(name, at, w)?;
        self.hold(name, w)
    }

    /// An HTTP workload has no `message`, `expect.echo` nor `hold`.
    fn no_websocket_keys(&self, name: &str, w: &FileWorkload) -> Result<(), PlanError> {
        let fix = "add protocol = \"websocket\"";
        if let Some(m) = &w.message {
            return Err(self.err(m.span().start, format!("workload '{name}': message is a WebSocket message: {fix}, or send an HTTP body with body = \"…\"")));
        }
        if let Some(e) = w.expect.as_ref().filter(|e| e.get_ref().echo == Some(true)) {
            return Err(self.err(e.span().start, format!("workload '{name}': expect.echo checks a WebSocket reply: {fix}, or remove echo")));
        }
        if let Some(h) = &w.hold {
            return Err(self.err(h.span().start, format!("workload '{name}': hold holds WebSocket connections open: {fix}, or remove hold")));
        }
        Ok(())
    }

    /// A WebSocket workload opens with a GET handshake and sends one message: no other
    /// method, no `body`, no request list, no HTTP/2 streams, no `expect.status`.
    fn no_http_keys(&self, name: &str, w: &FileWorkload, load: &FileLoad) -> Result<(), PlanError> {
        if let Some(m) = w
            .method
            .as_ref()
            .filter(|m| !m.get_ref().eq_ignore_ascii_case("GET"))
        {
            return Err(self.err(m.span().start, format!("workload '{name}': method = \"{}\": a WebSocket connection opens with a GET handshake: remove method", m.get_ref())));
        }
        if let Some(b) = &w.body {
            return Err(self.err(b.span().start, format!("workload '{name}': body is an HTTP request's: a WebSocket workload sends message = \"…\" (a text message) or body_file = \"FILE\" (a binary message)")));
        }
        if let Some(r) = &w.requests {
            return Err(self.err(r.span().start, format!("workload '{name}': a request list (requests) is sent over HTTP only: a WebSocket workload sends one message (message = \"…\" or body_file = \"FILE\"): remove requests")));
        }
        if let Some(s) = w
            .streams
            .as_ref()
            .or(load.streams.as_ref())
            .filter(|s| *s.get_ref() > 1)
        {
            return Err(self.err(s.span().start, format!("workload '{name}': streams = {n} is HTTP/2's: a WebSocket connection carries one message after another; for {n} messages in flight per connection write pipeline = {n}", n = s.get_ref())));
        }
        if let Some(e) = w.expect.as_ref().filter(|e| e.get_ref().status.is_some()) {
            return Err(self.err(e.span().start, format!("workload '{name}': expect.status: shootout checks the WebSocket handshake's 101 itself, and a reply has no status: remove status (check replies with echo, length or body_contains)")));
        }
        Ok(())
    }

    /// What a WebSocket workload sends: `message` (text) or `body_file` (binary), one of
    /// the two unless it holds connections.
    fn message(&self, name: &str, at: usize, w: &FileWorkload) -> Result<(), PlanError> {
        match (&w.message, &w.body_file, &w.hold) {
            (Some(m), Some(_), _) => Err(self.err(m.span().start, format!("workload '{name}': give message (a text message) or body_file (a binary message), not both"))),
            (Some(m), None, _) if m.get_ref().len() > MAX_MESSAGE => Err(self.err(m.span().start, format!("workload '{name}': message is {} bytes: a WebSocket message may be at most {MAX_MESSAGE} bytes (16 MiB): send a smaller one", m.get_ref().len()))),
            (None, None, None) => Err(self.err(at, format!("workload '{name}': a WebSocket workload sends a message: add message = \"…\" (a text message) or body_file = \"FILE\" (a binary message), or hold = {{ ping = \"5s\" }} to hold connections open"))),
            _ => Ok(()),
        }
    }

    /// `hold`: a ping interval and an opening rate in range; no message to send and no
    /// reply to check.
    fn hold(&self, name: &str, w: &FileWorkload) -> Result<Option<Hold>, PlanError> {
        let Some(h) = &w.hold else { return Ok(None) };
        let at = h.span().start;
        if w.message.is_some() || w.body_file.is_some() {
            return Err(self.err(at, format!("workload '{name}': hold pings the held connections and sends no message: remove message and body_file, or hold")));
        }
        let e = w.expect.as_ref().map(Spanned::get_ref);
        if e.is_some_and(|e| {
            e.echo == Some(true) || e.length.is_some() || e.body_contains.is_some()
        }) {
            return Err(self.err(at, format!("workload '{name}': hold's pongs carry no reply to check: remove expect's echo, length and body_contains, or hold")));
        }
        let h = h.get_ref();
        let every = duration_of(h.ping.get_ref(), "hold.ping", false)
            .map_err(|m| self.err(h.ping.span().start, format!("workload '{name}': {m}")))?;
        let open_rate = match &h.rate {
            Some(r) if !(MIN_RATE..=MAX_RATE).contains(r.get_ref()) => {
                return Err(self.err(r.span().start, format!("workload '{name}': hold.rate must be from 0.001 to 10⁹ connections opened per second, not {}", r.get_ref())));
            }
            r => r.as_ref().map(|r| *r.get_ref()),
        };
        Ok(Some(Hold { every, open_rate }))
    }

    /// A contender's own wire keys against a workload: the protocol must be WebSocket for
    /// a WebSocket workload and HTTP otherwise; no HTTP/2 streams over WebSocket; one ping
    /// in flight per held connection.
    pub(super) fn contender_websocket(
        &self,
        file: &Spanned<FileContender>,
        c: &Contender,
        w: &Workload,
    ) -> Result<(), PlanError> {
        let f = file.get_ref();
        let ws = w.protocol == Protocol::WebSocket;
        let who = format!("contender '{}' on workload '{}'", c.name, w.name);
        if let (Some(p), Some(key)) = (c.wire.protocol, &f.protocol) {
            if (p == Protocol::WebSocket) != ws {
                let fix = if ws {
                    "the workload speaks WebSocket: remove the contender's protocol (the workload's applies)"
                } else {
                    "the workload is an HTTP request: give protocol = \"websocket\" (and a message) to a workload instead"
                };
                return Err(self.err(
                    key.span().start,
                    format!("{who}: protocol = \"{}\", but {fix}", p.as_str()),
                ));
            }
        }
        if let (true, Some(s)) = (ws, f.streams.as_ref().filter(|s| *s.get_ref() > 1)) {
            return Err(self.err(s.span().start, format!("{who}: streams = {} is HTTP/2's: over WebSocket write pipeline for messages in flight, or remove the contender's streams", s.get_ref())));
        }
        if let (Some(_), Some(p)) = (w.hold, f.pipeline.as_ref().filter(|p| *p.get_ref() > 1)) {
            return Err(self.err(p.span().start, format!("{who}: pipeline = {}, but the workload holds connections (hold) with one ping in flight each: remove the contender's pipeline", p.get_ref())));
        }
        Ok(())
    }

    /// Held connections (`hold`) are pinged one at a time and opened at once or at
    /// `hold.rate`: no pipeline, no rate levels, no capacity search.
    pub(super) fn held_levels(
        &self,
        raw: &[Spanned<FileWorkload>],
        workloads: &[Workload],
        load: &FileLoad,
    ) -> Result<(), PlanError> {
        for (w, file) in workloads.iter().zip(raw) {
            if w.hold.is_none() {
                continue;
            }
            let f = file.get_ref();
            let name = &w.name;
            if w.pipeline > 1 {
                let at = f
                    .pipeline
                    .as_ref()
                    .or(load.pipeline.as_ref())
                    .map_or(file.span().start, |p| p.span().start);
                return Err(self.err(at, format!("workload '{name}': pipeline = {}, but hold keeps one ping in flight per connection: remove pipeline", w.pipeline)));
            }
            if w.find_max.is_some() {
                let at = f
                    .find_max
                    .as_ref()
                    .or(load.find_max.as_ref())
                    .map_or(file.span().start, |s| s.span().start);
                return Err(self.err(at, format!("workload '{name}': find_max searches a rate of messages, but hold holds connections and pings them: remove find_max from the workload (or [load]), or hold")));
            }
            if let Some(r) = &load.rate {
                return Err(self.err(r.span().start, format!("load.rate: workload '{name}' holds connections (hold), which open at once or at hold.rate, not at a rate of messages: give [load] concurrency = [..] (the connections held), or put the workload in a plan of its own")));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::{parse, Plan};
    use crate::resolved::ResolvedPlan;
    use crate::spec::{Hold, Protocol};
    use std::time::Duration;

    /// A plan of one URL contender (`contender` keys added), one workload of `workload`'s
    /// keys, and `[load]` of `load`'s.
    fn plan(contender: &str, workload: &str, load: &str) -> String {
        format!(
            "name = \"ws\"\n[[contender]]\nname = \"c\"\nurl = \"http://127.0.0.1:9\"\n{contender}\n\
             [[workload]]\nname = \"echo\"\npath = \"/echo\"\n{workload}\n[load]\n{load}\n"
        )
    }

    fn ok(contender: &str, workload: &str, load: &str) -> Plan {
        let text = plan(contender, workload, load);
        parse(&text, "plan.toml", &[0]).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// The error's line and message.
    fn err(contender: &str, workload: &str, load: &str) -> (usize, String) {
        let text = plan(contender, workload, load);
        let e = parse(&text, "plan.toml", &[0]).expect_err(&text);
        assert_eq!(e.file, "plan.toml");
        (e.line, e.message)
    }

    const WS: &str = "protocol = \"websocket\"\n";
    const TEXT: &str = "message = \"0123456789abcdef\"\n";

    #[test]
    fn a_text_message_workload_with_echo_parses_with_its_levels() {
        let p = ok(
            "",
            &format!("{WS}{TEXT}expect = {{ echo = true, length = 16 }}\npipeline = 4"),
            "concurrency = [1, 8]",
        );
        let w = &p.workloads[0];
        assert_eq!(w.protocol, Protocol::WebSocket);
        assert_eq!(w.message.as_deref(), Some("0123456789abcdef"));
        assert!(w.expect.echo);
        assert_eq!(w.expect.length, Some(16));
        assert_eq!((w.pipeline, w.hold), (4, None));
        assert_eq!(w.method, "GET");
        let r = ResolvedPlan::of(&p);
        assert_eq!(r.workloads[0].protocol, "websocket");
        assert_eq!(r.workloads[0].message.as_deref(), Some("text"));
    }

    #[test]
    fn ws_in_load_a_binary_file_rate_levels_find_max_and_a_ws_url_are_accepted() {
        let p = ok(
            "",
            "body_file = \"msg.bin\"\nexpect = { echo = true }",
            "protocol = \"ws\"\nrate = [100.0]",
        );
        assert_eq!(p.workloads[0].protocol, Protocol::WebSocket);
        assert_eq!(p.workloads[0].message, None);
        assert_eq!(
            ResolvedPlan::of(&p).workloads[0].message.as_deref(),
            Some("binary")
        );
        let search = ok(
            "",
            &format!("{WS}{TEXT}find_max = {{ slo = [\"p99<50ms\"] }}"),
            "",
        );
        assert!(search.workloads[0].find_max.is_some());
        let url = "name = \"ws\"\n[[contender]]\nname = \"c\"\nurl = \"ws://127.0.0.1:9/\"\n[[workload]]\nname = \"w\"\nprotocol = \"websocket\"\nmessage = \"x\"\n[load]\nconcurrency = [1]\n";
        let p = parse(url, "plan.toml", &[0]).unwrap();
        assert_eq!(
            p.contenders[0].launch,
            crate::plan::Launch::Url("ws://127.0.0.1:9".into())
        );
        // An HTTP workload's keys are untouched: no message kind is stored for it.
        let http = ok("", "", "concurrency = [1]");
        assert_eq!(ResolvedPlan::of(&http).workloads[0].message, None);
        assert!(!ResolvedPlan::of(&http).to_json().contains("message"));
    }

    #[test]
    fn hold_reads_its_interval_and_opening_rate() {
        let p = ok(
            "",
            &format!("{WS}hold = {{ ping = \"5s\", rate = 200 }}"),
            "concurrency = [1000]",
        );
        assert_eq!(
            p.workloads[0].hold,
            Some(Hold {
                every: Duration::from_secs(5),
                open_rate: Some(200.0)
            })
        );
        assert_eq!(
            ResolvedPlan::of(&p).workloads[0].message.as_deref(),
            Some("hold")
        );
        let p = ok(
            "",
            &format!("{WS}hold = {{ ping = \"1s\" }}"),
            "concurrency = [1]",
        );
        assert_eq!(p.workloads[0].hold.unwrap().open_rate, None);
    }

    /// Each wrong combination: the line of the key, and the message naming the key and
    /// the fix.
    #[test]
    fn every_wrong_combination_names_its_key_line_and_fix() {
        let c1 = "concurrency = [1]";
        // The workload's keys start on line 9 (name, path, then the keys given).
        let cases: [(&str, &str, &str, usize, &str); 14] = [
            ("", &format!("{WS}{TEXT}body_file = \"m.bin\""), c1, 10, "give message (a text message) or body_file (a binary message), not both"),
            ("", &format!("{WS}{TEXT}body = \"x\""), c1, 11, "body is an HTTP request's: a WebSocket workload sends message = \"…\" (a text message) or body_file = \"FILE\" (a binary message)"),
            ("", TEXT, c1, 9, "message is a WebSocket message: add protocol = \"websocket\", or send an HTTP body with body = \"…\""),
            ("", "expect = { echo = true }", c1, 9, "expect.echo checks a WebSocket reply: add protocol = \"websocket\", or remove echo"),
            ("", "hold = { ping = \"5s\" }", c1, 9, "hold holds WebSocket connections open: add protocol = \"websocket\", or remove hold"),
            ("", &format!("{WS}{TEXT}method = \"POST\""), c1, 11, "method = \"POST\": a WebSocket connection opens with a GET handshake: remove method"),
            ("", &format!("{WS}requests = \"urls.txt\""), c1, 10, "a request list (requests) is sent over HTTP only: a WebSocket workload sends one message (message = \"…\" or body_file = \"FILE\"): remove requests"),
            ("", &format!("{WS}{TEXT}streams = 4"), c1, 11, "streams = 4 is HTTP/2's: a WebSocket connection carries one message after another; for 4 messages in flight per connection write pipeline = 4"),
            ("", &format!("{WS}{TEXT}expect = {{ status = 101 }}"), c1, 11, "expect.status: shootout checks the WebSocket handshake's 101 itself, and a reply has no status: remove status (check replies with echo, length or body_contains)"),
            ("", WS, c1, 6, "a WebSocket workload sends a message: add message = \"…\" (a text message) or body_file = \"FILE\" (a binary message), or hold = { ping = \"5s\" } to hold connections open"),
            ("", &format!("{WS}{TEXT}hold = {{ ping = \"5s\" }}"), c1, 11, "hold pings the held connections and sends no message: remove message and body_file, or hold"),
            ("", &format!("{WS}hold = {{ ping = \"5s\" }}\nexpect = {{ echo = true }}"), c1, 10, "hold's pongs carry no reply to check: remove expect's echo, length and body_contains, or hold"),
            ("", &format!("{WS}hold = {{ ping = \"0s\" }}"), c1, 10, "hold.ping = \"0s\" must be more than 0"),
            ("", &format!("{WS}hold = {{ ping = \"5s\", rate = 0.0 }}"), c1, 10, "hold.rate must be from 0.001 to 10⁹ connections opened per second, not 0"),
        ];
        let mut wrong = Vec::new();
        for (contender, workload, load, line, message) in cases {
            let (at, m) = err(contender, workload, load);
            if !m.starts_with("workload 'echo': ") || !m.contains(message) || at != line {
                wrong.push(format!("{workload:?}: line {at}, not {line}: {m}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn contenders_and_levels_that_cannot_speak_to_a_websocket_workload_are_refused() {
        let ws = format!("{WS}{TEXT}");
        let (line, m) = err("protocol = \"h2\"", &ws, "concurrency = [1]");
        assert_eq!(line, 5);
        assert_eq!(m, "contender 'c' on workload 'echo': protocol = \"h2\", but the workload speaks WebSocket: remove the contender's protocol (the workload's applies)");
        let (line, m) = err("protocol = \"websocket\"", "", "concurrency = [1]");
        assert_eq!(line, 5);
        assert!(m.contains("protocol = \"websocket\", but the workload is an HTTP request: give protocol = \"websocket\" (and a message) to a workload instead"), "{m}");
        let (_, m) = err("streams = 2", &ws, "concurrency = [1]");
        assert!(m.contains("streams = 2 is HTTP/2's: over WebSocket write pipeline for messages in flight, or remove the contender's streams"), "{m}");
        let hold = format!("{WS}hold = {{ ping = \"5s\" }}");
        let (_, m) = err("pipeline = 2", &hold, "concurrency = [1]");
        assert!(m.contains("pipeline = 2, but the workload holds connections (hold) with one ping in flight each: remove the contender's pipeline"), "{m}");
        let (line, m) = err("", &hold, "rate = [10.0]");
        assert_eq!(line, 12);
        assert!(
            m.starts_with("load.rate: workload 'echo' holds connections (hold)"),
            "{m}"
        );
        assert!(m.contains("give [load] concurrency = [..]"), "{m}");
        let (_, m) = err("", &format!("{hold}\npipeline = 2"), "concurrency = [1]");
        assert!(
            m.contains(
                "pipeline = 2, but hold keeps one ping in flight per connection: remove pipeline"
            ),
            "{m}"
        );
        let (_, m) = err(
            "",
            &format!("{hold}\nfind_max = {{ slo = [\"p99<5ms\"] }}"),
            "",
        );
        assert!(
            m.contains("find_max searches a rate of messages, but hold holds connections"),
            "{m}"
        );
        // A pipeline of messages in flight is the WebSocket's, from the contender too.
        let p = ok("pipeline = 3", &ws, "concurrency = [1]");
        assert_eq!(p.wire(0, 0).pipeline, 3);
        assert_eq!(p.wire(0, 0).protocol, Protocol::WebSocket);
    }
}
