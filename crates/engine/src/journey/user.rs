//! One user's journey as a state machine without I/O. A connection drives it with two
//! verbs in and two out: [`User::start`] begins a journey and [`User::answer`] (or
//! [`User::fail`] for a transport failure) hands it the answer to its request; each
//! returns [`Next`]: send [`User::request`] when due, begin the next journey when due,
//! or this user is done. Outcomes go to the caller's sink as [`Event`]s: per step (ok,
//! or its failure class) and per journey.
//!
//! Times are `Duration`s since the run's start, given by the caller; think times are drawn
//! from the user's seeded generator, so a run is repeatable.

use super::capture::{self, Answer, Fields};
use super::cookies::Jar;
use super::render::{decimal, Draws, Refused, Vars};
use super::rng::Rng;
use shootout_model::journey::{
    Body, DataEnd, Journey, JourneyFile, JsonWant, Segment, Step, Think,
};
use shootout_model::{Ended, FailureKind};
use std::ops::Range;
use std::time::Duration;

/// Why a step failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepFailure {
    /// The request got no answer (connect, timeout, reset, malformed, …).
    Transport(FailureKind),
    /// A status outside the step's `expect.status`.
    Status(u16),
    /// A body whose length is not `expect.length`.
    Length {
        /// The length expected, in bytes.
        expected: u64,
        /// The length received, in bytes.
        got: u64,
    },
    /// The body does not hold `expect.body_contains`.
    Body,
    /// The `expect.json` entry of this index does not hold its value (or the body is no
    /// JSON within its prefix).
    Json(usize),
    /// The capture of this index in the step found nothing.
    Capture(usize),
    /// Not sent: the variable of this slot holds CR, LF or NUL and would land in a header.
    Unsafe(usize),
    /// Not sent: the variable of this slot is not set.
    Unset(usize),
}

impl StepFailure {
    /// How the step ended, as its counts keep it: failed under its class, or unsent.
    pub fn ended(&self) -> Ended {
        self.kind().map_or(Ended::Unsent, Ended::Failed)
    }

    /// The engine's failure class for those it counts today; `None` for a step never
    /// sent (a journey's own classes).
    pub fn kind(&self) -> Option<FailureKind> {
        match self {
            StepFailure::Transport(k) => Some(*k),
            StepFailure::Status(_) => Some(FailureKind::Status),
            StepFailure::Length { .. }
            | StepFailure::Body
            | StepFailure::Json(_)
            | StepFailure::Capture(_) => Some(FailureKind::Body),
            StepFailure::Unsafe(_) | StepFailure::Unset(_) => None,
        }
    }
}

/// What a user reports as it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A step ended (each repeat is one).
    Step {
        /// Index of the journey in the file.
        journey: usize,
        /// Index of the step in its journey.
        step: usize,
        /// Ok, or why not.
        outcome: Result<(), StepFailure>,
    },
    /// A journey ended.
    Journey {
        /// Index of the journey in the file.
        journey: usize,
        /// Every step it ran was ok.
        ok: bool,
        /// Its first failed step's failure, if one failed.
        failure: Option<StepFailure>,
        /// When its first step was due.
        started: Duration,
        /// When its last answer came (or its failure).
        ended: Duration,
        /// The think times it waited between its steps (each from an answer to when the
        /// next step was due): `ended - started - thought` is the time it was busy.
        thought: Duration,
    },
}

/// What the user does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Send [`User::request`] at `due` (its latency counts from then).
    Send {
        /// When the request is due.
        due: Duration,
    },
    /// Call [`User::start`] at `due` for the next journey.
    Start {
        /// When the next journey is due.
        due: Duration,
    },
    /// This user has no journey left to run.
    Done,
}

/// How a user is set up.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The run's seed.
    pub seed: u64,
    /// The user's number (`{user}`, its data row).
    pub user: u64,
    /// `{seq}` runs `user, user + seq_step, …`: give the most users there may be, so
    /// values are unique in the run.
    pub seq_step: u64,
    /// The host, for the cookie jar's `Domain` rule.
    pub host: String,
    /// Whether requests go over TLS (`Secure` cookies are sent).
    pub tls: bool,
    /// Unix seconds at the run's start (`Expires` dates are wall-clock dates).
    pub unix_start: i64,
    /// Run one journey, then be done (the open model's user).
    pub single: bool,
}

/// The next request's bytes, rendered into the user's buffers.
#[derive(Debug, Clone, Default)]
struct Buffers {
    target: Vec<u8>,
    fields: Vec<u8>,
    headers: Vec<(Range<usize>, Range<usize>)>,
    body: Vec<u8>,
    needle: Vec<u8>,
    /// The drawn strings of the step's `expect.json` entries that hold placeholders, one
    /// after the other, and where each ends.
    wants: Vec<u8>,
    want_ends: Vec<usize>,
    value: Vec<u8>,
}

/// A request to send, borrowed from the user.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// Method (upper case token).
    pub method: &'a str,
    /// Request target: path and query, checked (no CR, LF, NUL, space).
    pub target: &'a [u8],
    fields: &'a [u8],
    spans: &'a [(Range<usize>, Range<usize>)],
    /// Body (may be empty).
    pub body: &'a [u8],
}

impl<'a> Request<'a> {
    /// The extra header fields (the step's, then `Cookie`), names and values checked.
    pub fn headers(&self) -> impl Iterator<Item = (&'a [u8], &'a [u8])> + 'a {
        let fields = self.fields;
        self.spans
            .iter()
            .map(move |(n, v)| (&fields[n.clone()], &fields[v.clone()]))
    }

    /// Writes the request as HTTP/1.1 for `host` (the `Host` field's value) into `out`:
    /// `Content-Length` when there is a body or the method usually has one.
    pub fn write_h1(&self, host: &[u8], out: &mut Vec<u8>) {
        let mut prelude = b"Host: ".to_vec();
        prelude.extend_from_slice(host);
        prelude.extend_from_slice(b"\r\n");
        self.write_h1_with(&prelude, out);
    }

    /// Writes the request as HTTP/1.1 into `out`, with `prelude` (whole header lines,
    /// each ending in CRLF: `Host` and the run's own fields) before the step's fields.
    pub fn write_h1_with(&self, prelude: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(self.method.as_bytes());
        out.push(b' ');
        out.extend_from_slice(self.target);
        out.extend_from_slice(b" HTTP/1.1\r\n");
        out.extend_from_slice(prelude);
        for (n, v) in self.headers() {
            out.extend_from_slice(n);
            out.extend_from_slice(b": ");
            out.extend_from_slice(v);
            out.extend_from_slice(b"\r\n");
        }
        if !self.body.is_empty() || matches!(self.method, "POST" | "PUT" | "PATCH") {
            let mut digits = [0u8; 20];
            out.extend_from_slice(b"Content-Length: ");
            out.extend_from_slice(decimal(self.body.len() as u64, &mut digits));
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(self.body);
    }
}

/// Where a user is in its journey.
#[derive(Debug, Clone, Copy)]
struct Position {
    journey: usize,
    /// The next segment to choose a step from.
    segment: usize,
    /// The step whose request is out (or due).
    step: usize,
    /// Sends of the step left, this one included.
    left: u32,
    /// Within a choice: its segment, the alternative chosen and its next step's place.
    alt: Option<(usize, usize, usize)>,
    ok: bool,
    /// The first failure of a step in this journey.
    failure: Option<StepFailure>,
    started: Duration,
    /// The think times waited so far between its steps.
    thought: Duration,
}

/// One user: its journeys' state, variables, cookies and random numbers.
pub struct User<'j> {
    file: &'j JourneyFile,
    setup: Setup,
    rng: Rng,
    jar: Jar,
    vars: Vec<Vars>,
    /// Per journey, the slots a `once` step captures: kept from journey to journey.
    kept: Vec<Vec<bool>>,
    seq: u64,
    journeys: u64,
    at: Option<Position>,
    last_due: Duration,
    buf: Buffers,
}

impl<'j> User<'j> {
    /// A user of `file` set up as said, before its first journey.
    pub fn new(file: &'j JourneyFile, setup: Setup) -> User<'j> {
        User {
            rng: Rng::new(setup.seed, setup.user),
            jar: Jar::new(&setup.host),
            vars: file
                .journeys
                .iter()
                .map(|j| Vars::new(j.vars.len()))
                .collect(),
            kept: file
                .journeys
                .iter()
                .map(|j| {
                    let mut kept = vec![false; j.vars.len()];
                    for c in j.steps.iter().filter(|s| s.once).flat_map(|s| &s.captures) {
                        kept[c.slot] = true;
                    }
                    kept
                })
                .collect(),
            seq: setup.user,
            journeys: 0,
            at: None,
            last_due: Duration::ZERO,
            buf: Buffers::default(),
            file,
            setup,
        }
    }

    /// The user's cookie jar.
    pub fn jar(&self) -> &Jar {
        &self.jar
    }

    /// The value of variable `slot` of journey `journey`, if set.
    pub fn var(&self, journey: usize, slot: usize) -> Option<&[u8]> {
        self.vars.get(journey)?.get(slot)
    }

    /// The journey and step whose request is out or due.
    pub fn pending(&self) -> Option<(usize, usize)> {
        self.at.map(|p| (p.journey, p.step))
    }

    /// The request to send (meaningful after [`Next::Send`]).
    pub fn request(&self) -> Request<'_> {
        let (method, body) = match self.at {
            Some(p) => {
                let step = &self.file.journeys[p.journey].steps[p.step];
                let body = match &step.body {
                    Body::Bytes(b) => b.as_slice(),
                    _ => self.buf.body.as_slice(),
                };
                (step.method.as_str(), body)
            }
            None => ("GET", &[][..]),
        };
        Request {
            method,
            target: &self.buf.target,
            fields: &self.buf.fields,
            spans: &self.buf.headers,
            body,
        }
    }

    /// The text the pending step's body must hold, for a connection that searches the
    /// whole body as it streams ([`Answer::contains`]).
    pub fn needle(&self) -> Option<&[u8]> {
        let p = self.at?;
        self.file.journeys[p.journey].steps[p.step]
            .expect
            .body_contains
            .as_ref()
            .map(|_| self.buf.needle.as_slice())
    }

    /// The body bytes the connection keeps of the pending step's answer.
    pub fn prefix(&self) -> usize {
        self.at
            .map_or(0, |p| self.file.journeys[p.journey].prefix(p.step))
    }

    /// Begins the next journey at `now` (its first step due then).
    pub fn start(&mut self, now: Duration, sink: &mut dyn FnMut(Event)) -> Next {
        let Some(journey) = self.choose_journey() else {
            self.at = None;
            return Next::Done;
        };
        self.journeys += 1;
        let j = &self.file.journeys[journey];
        let vars = &mut self.vars[journey];
        vars.clear(&self.kept[journey]);
        if let Some(d) = &j.data {
            let row = (self.setup.user % d.table.rows.len() as u64) as usize;
            for (slot, value) in d.slots.iter().zip(&d.table.rows[row]) {
                vars.put(*slot, value.as_bytes());
            }
        }
        self.at = Some(Position {
            journey,
            segment: 0,
            step: 0,
            left: 0,
            alt: None,
            ok: true,
            failure: None,
            started: now,
            thought: Duration::ZERO,
        });
        self.advance(now, now, sink)
    }

    /// Hands the answer to the pending request, received at `now`.
    pub fn answer<F: Fields + ?Sized>(
        &mut self,
        a: &Answer<F>,
        now: Duration,
        sink: &mut dyn FnMut(Event),
    ) -> Next {
        let Some(p) = self.at else { return Next::Done };
        let outcome = self.check(p, a, now);
        self.after(outcome, now, sink)
    }

    /// The pending request got no answer: a transport failure at `now`.
    pub fn fail(&mut self, kind: FailureKind, now: Duration, sink: &mut dyn FnMut(Event)) -> Next {
        if self.at.is_none() {
            return Next::Done;
        }
        self.after(Err(StepFailure::Transport(kind)), now, sink)
    }

    fn unix(&self, now: Duration) -> i64 {
        self.setup.unix_start.saturating_add(now.as_secs() as i64)
    }

    fn check<F: Fields + ?Sized>(
        &mut self,
        p: Position,
        a: &Answer<F>,
        now: Duration,
    ) -> Result<(), StepFailure> {
        let j = &self.file.journeys[p.journey];
        let step = &j.steps[p.step];
        let unix = self.unix(now);
        let (jar, target) = (&mut self.jar, &self.buf.target);
        a.head.each(&mut |n, v| {
            if n.eq_ignore_ascii_case(b"set-cookie") {
                jar.set(v, target, unix);
            }
        });
        let e = &step.expect;
        if !e.status.contains(a.status) {
            return Err(StepFailure::Status(a.status));
        }
        if let Some(expected) = e.length {
            if a.body_len != expected {
                return Err(StepFailure::Length {
                    expected,
                    got: a.body_len,
                });
            }
        }
        if e.body_contains.is_some() {
            let found = a
                .contains
                .unwrap_or_else(|| memchr::memmem::find(a.body, &self.buf.needle).is_some());
            if !found {
                return Err(StepFailure::Body);
            }
        }
        if !e.json.is_empty() {
            let prefix = &a.body[..a.body.len().min(e.within)];
            let doc = if a.body_len > prefix.len() as u64 {
                None
            } else {
                serde_json::from_slice::<serde_json::Value>(prefix).ok()
            };
            let mut drawn = self.buf.want_ends.iter();
            let mut from = 0;
            for (i, (pointer, want)) in e.json.iter().enumerate() {
                let got = doc.as_ref().and_then(|d| d.pointer(pointer));
                let held = match want {
                    JsonWant::Value(v) => got == Some(v),
                    JsonWant::Text(_) => {
                        let end = drawn.next().copied().unwrap_or(from);
                        let text = &self.buf.wants[from..end];
                        from = end;
                        got.and_then(serde_json::Value::as_str)
                            .is_some_and(|s| s.as_bytes() == text)
                    }
                };
                if !held {
                    return Err(StepFailure::Json(i));
                }
            }
        }
        for (i, c) in step.captures.iter().enumerate() {
            if !capture::take(c, a, &self.jar, unix, &mut self.buf.value) {
                return Err(StepFailure::Capture(i));
            }
            self.vars[p.journey].put(c.slot, &self.buf.value);
        }
        Ok(())
    }

    /// Records a sent step's outcome and moves on.
    fn after(
        &mut self,
        outcome: Result<(), StepFailure>,
        now: Duration,
        sink: &mut dyn FnMut(Event),
    ) -> Next {
        let Some(mut p) = self.at else {
            return Next::Done;
        };
        let j = &self.file.journeys[p.journey];
        let go_on = j.steps[p.step].go_on;
        sink(Event::Step {
            journey: p.journey,
            step: p.step,
            outcome,
        });
        let due = self.think(j.think, now);
        if let Err(f) = outcome {
            p.ok = false;
            p.failure.get_or_insert(f);
            self.at = Some(p);
            if !go_on {
                return self.end(now, due, sink);
            }
        }
        if p.left > 1 {
            p.left -= 1;
            self.at = Some(p);
            return match self.render(now) {
                Ok(()) => self.send(due, now),
                Err(failure) => self.unsent(failure, now, due, sink),
            };
        }
        self.at = Some(p);
        self.advance(due, now, sink)
    }

    /// The pending step goes out at `due`, decided at `now` (its last answer's time, or
    /// the journey's start): the wait between them is think time.
    fn send(&mut self, due: Duration, now: Duration) -> Next {
        self.last_due = due;
        if let Some(p) = self.at.as_mut() {
            p.thought += due.saturating_sub(now);
        }
        Next::Send { due }
    }

    /// A step that could not be rendered: it fails unsent.
    fn unsent(
        &mut self,
        failure: StepFailure,
        now: Duration,
        due: Duration,
        sink: &mut dyn FnMut(Event),
    ) -> Next {
        let Some(mut p) = self.at else {
            return Next::Done;
        };
        sink(Event::Step {
            journey: p.journey,
            step: p.step,
            outcome: Err(failure),
        });
        p.ok = false;
        p.failure.get_or_insert(failure);
        p.left = 0;
        self.at = Some(p);
        if self.file.journeys[p.journey].steps[p.step].go_on {
            self.advance(due, now, sink)
        } else {
            self.end(now, due, sink)
        }
    }

    /// Chooses and renders the next step, due at `due`; ends the journey after its last.
    fn advance(&mut self, due: Duration, now: Duration, sink: &mut dyn FnMut(Event)) -> Next {
        loop {
            let Some(mut p) = self.at else {
                return Next::Done;
            };
            let j = &self.file.journeys[p.journey];
            let step = if let Some((seg, alt, k)) = p.alt {
                let Segment::Choice(alts) = &j.segments[seg] else {
                    unreachable!("an alternative is in a choice")
                };
                match alts[alt].get(k) {
                    Some(&s) => {
                        p.alt = Some((seg, alt, k + 1));
                        s
                    }
                    None => {
                        p.alt = None;
                        self.at = Some(p);
                        continue;
                    }
                }
            } else {
                let Some(segment) = j.segments.get(p.segment) else {
                    return self.end(now, due, sink);
                };
                p.segment += 1;
                match segment {
                    Segment::One(s) => *s,
                    Segment::Choice(alts) => {
                        let alt = choose(&mut self.rng, alts.len(), |a| {
                            j.steps[alts[a][0]].weight.unwrap_or(1) as u64
                        });
                        p.alt = Some((p.segment - 1, alt, 1));
                        alts[alt][0]
                    }
                }
            };
            if j.steps[step].once && self.journeys > 1 {
                self.at = Some(p);
                continue;
            }
            p.step = step;
            p.left = j.steps[step].repeat;
            self.at = Some(p);
            return match self.render(now) {
                Ok(()) => self.send(due, now),
                Err(failure) => self.unsent(failure, now, due, sink),
            };
        }
    }

    /// Ends the journey: the next one is due at `due`.
    fn end(&mut self, now: Duration, due: Duration, sink: &mut dyn FnMut(Event)) -> Next {
        let Some(p) = self.at.take() else {
            return Next::Done;
        };
        sink(Event::Journey {
            journey: p.journey,
            ok: p.ok,
            failure: p.failure,
            started: p.started,
            ended: now,
            thought: p.thought,
        });
        if self.setup.single {
            Next::Done
        } else {
            Next::Start { due }
        }
    }

    /// When the next step is due after an answer at `now`.
    fn think(&mut self, think: Think, now: Duration) -> Duration {
        now + match think {
            Think::None => Duration::ZERO,
            Think::Constant(d) => d,
            Think::Uniform(a, b) => self.rng.between(a, b),
            Think::Exp(mean) => self.rng.exp(mean),
            Think::Pacing(every) => (self.last_due + every).saturating_sub(now),
        }
    }

    /// A journey this user may run, by weight; `None` when the data files of all of them
    /// are used up for this user.
    fn choose_journey(&mut self) -> Option<usize> {
        let user = self.setup.user;
        let open = |j: &Journey| match &j.data {
            Some(d) if d.end == DataEnd::Stop => user < d.table.rows.len() as u64,
            _ => true,
        };
        let total: u64 = self
            .file
            .journeys
            .iter()
            .filter(|j| open(j))
            .map(|j| j.weight as u64)
            .sum();
        if total == 0 {
            return None;
        }
        let mut draw = self.rng.below(total);
        for (i, j) in self.file.journeys.iter().enumerate() {
            if !open(j) {
                continue;
            }
            if draw < j.weight as u64 {
                return Some(i);
            }
            draw -= j.weight as u64;
        }
        None
    }

    /// Renders the pending step's request into the buffers.
    fn render(&mut self, now: Duration) -> Result<(), StepFailure> {
        let Some(p) = self.at else { return Ok(()) };
        let step: &Step = &self.file.journeys[p.journey].steps[p.step];
        let vars = &mut self.vars[p.journey];
        let b = &mut self.buf;
        let mut draws = Draws {
            rng: &mut self.rng,
            seq: self.seq,
            user: self.setup.user,
        };
        self.seq = self.seq.wrapping_add(self.setup.seq_step.max(1));
        let refused = |r: Refused| match r {
            Refused::Unsafe(s) => StepFailure::Unsafe(s),
            Refused::Unset(s) => StepFailure::Unset(s),
        };
        b.target.clear();
        vars.render(&step.target, &mut draws, &mut b.target)
            .map_err(refused)?;
        origin_form(&mut b.target);
        b.fields.clear();
        b.headers.clear();
        for (name, value) in &step.headers {
            let n0 = b.fields.len();
            b.fields.extend_from_slice(name.as_bytes());
            let v0 = b.fields.len();
            vars.render(value, &mut draws, &mut b.fields)
                .map_err(refused)?;
            b.headers.push((n0..v0, v0..b.fields.len()));
        }
        let n0 = b.fields.len();
        b.fields.extend_from_slice(b"Cookie");
        let v0 = b.fields.len();
        let unix = self.setup.unix_start.saturating_add(now.as_secs() as i64);
        if self
            .jar
            .header(&b.target, self.setup.tls, unix, &mut b.fields)
        {
            b.headers.push((n0..v0, v0..b.fields.len()));
        } else {
            b.fields.truncate(n0);
        }
        b.body.clear();
        if let Body::Template(t) = &step.body {
            vars.render(t, &mut draws, &mut b.body).map_err(refused)?;
        }
        b.needle.clear();
        if let Some(t) = &step.expect.body_contains {
            vars.render(t, &mut draws, &mut b.needle).map_err(refused)?;
        }
        b.wants.clear();
        b.want_ends.clear();
        for (_, want) in &step.expect.json {
            if let JsonWant::Text(t) = want {
                vars.render(t, &mut draws, &mut b.wants).map_err(refused)?;
                b.want_ends.push(b.wants.len());
            }
        }
        Ok(())
    }
}

/// Makes a target drawn from a captured absolute URL (`http://host/path`) the path it
/// names (the journey's host is the run's), and one that does not start with `/` (a
/// relative or empty capture) start with it.
fn origin_form(target: &mut Vec<u8>) {
    let scheme = if target.starts_with(b"http://") {
        7
    } else if target.starts_with(b"https://") {
        8
    } else {
        0
    };
    if scheme > 0 {
        let path = target[scheme..]
            .iter()
            .position(|&b| b == b'/' || b == b'?')
            .map_or(target.len(), |i| scheme + i);
        target.drain(..path);
    }
    if target.first() != Some(&b'/') {
        target.insert(0, b'/');
    }
}

/// An index below `n` chosen by weight.
fn choose(rng: &mut Rng, n: usize, weight: impl Fn(usize) -> u64) -> usize {
    let total: u64 = (0..n).map(&weight).sum();
    let mut draw = rng.below(total.max(1));
    for i in 0..n {
        let w = weight(i);
        if draw < w {
            return i;
        }
        draw -= w;
    }
    n - 1
}
