use super::*;

const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
const OK5: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";

/// A request of list entry `kind`, a GET unless `idempotent` is false (a POST).
fn slot(kind: usize, idempotent: bool) -> Slot {
    let now = Instant::now();
    Slot::new(now, now, kind, false, idempotent)
}

/// A connection with these requests queued, rendered and written in full.
fn written(slots: &[Slot], keepalive: bool) -> Connection {
    let mut c = Connection::new(8, keepalive, None);
    for s in slots {
        c.push(*s);
    }
    c.render(Instant::now(), |_, out| out.extend_from_slice(GET));
    let n = c.unwritten().len();
    c.wrote(n);
    c
}

/// `n` GETs of kinds 0, 1, …, written on a keep-alive connection.
fn gets(n: usize) -> Connection {
    let slots: Vec<Slot> = (0..n).map(|k| slot(k, true)).collect();
    written(&slots, true)
}

/// What a connection made of its input, as the worker would act on it: the answers
/// (status, body bytes, the kind of the request answered), the last answer's decision,
/// and the other outcomes counted.
#[derive(Debug, Default, PartialEq)]
struct Tally {
    answers: Vec<(u16, u64, usize)>,
    then: Option<Then>,
    unsolicited: usize,
    malformed: usize,
    lost: usize,
}

impl Tally {
    /// Counts one outcome of `c`; false when the worker would stop feeding it.
    fn add(&mut self, c: &mut Connection, r: Received) -> bool {
        match r {
            Received::NeedMore => true,
            Received::Answered(a) => {
                // The request answered is taken off the queue, as the worker does.
                let kind = c.pop_front().map_or(usize::MAX, |s| s.kind);
                self.answers
                    .push((a.answer.status, a.answer.body_len, kind));
                match a.then {
                    // Bytes after the last answer: the same as had they come in a later read.
                    Then::Extra => {
                        self.then = Some(Then::Idle);
                        self.unsolicited += 1;
                        false
                    }
                    then => {
                        self.then = Some(then);
                        matches!(then, Then::Next | Then::Idle)
                    }
                }
            }
            Received::Unsolicited => {
                self.unsolicited += 1;
                false
            }
            Received::Malformed => {
                self.malformed += 1;
                false
            }
            Received::Lost => {
                self.lost += 1;
                false
            }
        }
    }
}

/// Feeds `parts` as successive reads, each answer by answer as the worker does, then the
/// peer's close when `eof`.
fn feed(c: &mut Connection, parts: &[&[u8]], eof: bool) -> Tally {
    let now = Instant::now();
    let mut t = Tally::default();
    for p in parts {
        let mut at = 0;
        while at < p.len() {
            let r = c.received(&p[at..], now);
            match r {
                Received::NeedMore => at = p.len(),
                Received::Answered(a) => at += a.consumed,
                _ => {}
            }
            if !t.add(c, r) {
                return t;
            }
        }
    }
    if eof {
        let r = c.eof();
        t.add(c, r);
    }
    t
}

/// Feeds `input` whole, split in two at every byte boundary, and one byte per read: the
/// outcome must be the same each way. Returns it.
fn every_split(make: impl Fn() -> Connection, input: &[u8], eof: bool) -> Tally {
    let whole = feed(&mut make(), &[input], eof);
    for at in 0..=input.len() {
        let (a, b) = input.split_at(at);
        assert_eq!(feed(&mut make(), &[a, b], eof), whole, "split at {at}");
    }
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(feed(&mut make(), &bytes, eof), whole, "byte by byte");
    whole
}

#[test]
fn keep_alive_answers_are_counted_one_each_and_the_connection_goes_on() {
    let t = every_split(|| gets(1), OK5, false);
    assert_eq!(t.answers, [(200, 5, 0)]);
    assert_eq!(t.then, Some(Then::Idle));
    assert_eq!((t.unsolicited, t.malformed, t.lost), (0, 0, 0));
    // The same connection carries the next request and its answer.
    let mut c = gets(1);
    assert_eq!(feed(&mut c, &[OK5], false).answers.len(), 1);
    assert!(c.reused && !c.busy());
    c.push(slot(3, true));
    c.render(Instant::now(), |_, out| out.extend_from_slice(GET));
    assert_eq!(c.unwritten(), GET, "only the new request is written");
    c.wrote(GET.len());
    let t = feed(
        &mut c,
        &[b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"],
        false,
    );
    assert_eq!(t.answers, [(404, 0, 3)]);
}

#[test]
fn connection_close_ends_the_connection_and_puts_back_the_requests_behind_it() {
    let mut input =
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello".to_vec();
    input.extend_from_slice(OK5);
    let t = every_split(|| gets(3), &input, false);
    assert_eq!(t.answers, [(200, 5, 0)], "bytes after it are never read");
    assert_eq!(t.then, Some(Then::Close { announced: true }));
    // The two written behind it go again, counted as retried: GETs.
    let mut c = gets(3);
    feed(&mut c, &[&input], false);
    let mut failed = Vec::new();
    assert_eq!(c.unprocessed(|s| failed.push(s.kind)), 2);
    assert!(failed.is_empty());
    assert_eq!(c.len(), 2);
    assert!(c.front().is_some_and(|s| s.retried && s.kind == 1));
    // A written POST is never sent twice: it fails; the GET behind it goes again.
    let mut c = written(&[slot(0, true), slot(1, false), slot(2, true)], true);
    feed(&mut c, &[&input], false);
    let mut failed = Vec::new();
    assert_eq!(c.unprocessed(|s| failed.push(s.kind)), 1);
    assert_eq!(failed, [1]);
    assert_eq!(c.len(), 1);
    // Without keep-alive every answer closes, unannounced.
    let t = every_split(|| written(&[slot(0, true)], false), OK5, false);
    assert_eq!(t.then, Some(Then::Close { announced: false }));
}

#[test]
fn a_chunked_body_is_counted_decoded() {
    let input = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\n";
    let t = every_split(|| gets(1), input, false);
    assert_eq!(t.answers, [(200, 11, 0)]);
    assert_eq!(t.then, Some(Then::Idle));
}

#[test]
fn pipelined_answers_in_one_read_go_to_their_requests_in_order() {
    let mut input = OK5.to_vec();
    input.extend_from_slice(
        b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    );
    input.extend_from_slice(b"HTTP/1.1 204 No Content\r\n\r\n");
    let t = every_split(|| gets(3), &input, false);
    assert_eq!(t.answers, [(200, 5, 0), (201, 3, 1), (204, 0, 2)]);
    assert_eq!(t.then, Some(Then::Idle));
    assert_eq!((t.unsolicited, t.malformed, t.lost), (0, 0, 0));
}

#[test]
fn an_answer_cut_mid_body_by_a_close_is_lost_and_a_close_delimited_one_completes() {
    let cut = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello";
    let t = every_split(|| gets(1), cut, true);
    assert_eq!((t.answers.len(), t.lost), (0, 1));
    let delimited = b"HTTP/1.1 200 OK\r\n\r\nhello";
    let t = every_split(|| gets(1), delimited, true);
    assert_eq!(t.answers, [(200, 5, 0)]);
    assert_eq!(t.then, Some(Then::Close { announced: true }));
    assert_eq!(t.lost, 0);
}

#[test]
fn a_keep_alive_answer_then_the_peers_close_replaces_the_connection() {
    let mut c = gets(1);
    c.peer_closed = true;
    let t = feed(&mut c, &[OK5], false);
    assert_eq!(t.then, Some(Then::PeerClosed));
}

#[test]
fn an_unexpected_extra_answer_counts_once_as_unsolicited() {
    let mut input = OK5.to_vec();
    input.extend_from_slice(OK5);
    let t = every_split(|| gets(1), &input, false);
    assert_eq!(t.answers, [(200, 5, 0)]);
    assert_eq!(t.unsolicited, 1);
    // Bytes before the request is written are nobody's answer.
    let mut c = Connection::new(1, true, None);
    c.push(slot(0, true));
    c.render(Instant::now(), |_, out| out.extend_from_slice(GET));
    assert!(matches!(
        c.received(OK5, Instant::now()),
        Received::Unsolicited
    ));
    // An answer to a request written in part: the server reads nothing more.
    c.wrote(3);
    let t = feed(&mut c, &[OK5], false);
    assert_eq!(t.answers.len(), 1);
    assert_eq!(t.then, Some(Then::Close { announced: false }));
}

#[test]
fn interim_answers_before_the_final_one_are_not_counted() {
    let input = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    let t = every_split(|| gets(1), input, false);
    assert_eq!(t.answers, [(200, 2, 0)]);
}

#[test]
fn a_malformed_head_is_counted_once_and_fails_the_written_requests() {
    let input = b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nhello";
    let t = every_split(|| gets(2), input, false);
    assert_eq!((t.answers.len(), t.malformed), (0, 1));
    let mut c = gets(2);
    feed(&mut c, &[input], false);
    let mut failed = Vec::new();
    c.fail_written(|s| failed.push(s.kind));
    assert_eq!(
        failed,
        [0, 1],
        "both were written: the server may have read them"
    );
    assert!(!c.busy());
}

#[test]
fn a_failure_keeps_the_requests_not_written_for_a_new_connection() {
    let mut c = Connection::new(4, true, None);
    for k in 0..3 {
        c.push(slot(k, true));
    }
    c.render(Instant::now(), |_, out| out.extend_from_slice(GET));
    // The first request and part of the second reached the socket.
    c.wrote(GET.len() + 1);
    let mut failed = Vec::new();
    c.fail_written(|s| failed.push(s.kind));
    assert_eq!(failed, [0, 1]);
    assert_eq!(c.len(), 1);
    c.reopen();
    c.render(Instant::now(), |_, out| out.extend_from_slice(GET));
    assert_eq!(c.unwritten(), GET, "rendered again on the new connection");
}

#[test]
fn a_head_answer_has_no_body_whatever_its_length_says() {
    let make = || {
        let now = Instant::now();
        written(&[Slot::new(now, now, 0, true, true), slot(1, true)], true)
    };
    let mut input = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n".to_vec();
    input.extend_from_slice(OK5);
    let t = every_split(make, &input, false);
    assert_eq!(t.answers, [(200, 0, 0), (200, 5, 1)]);
}

#[test]
fn only_a_lone_request_on_a_rested_connection_races_the_idle_close_once() {
    let mut c = gets(1);
    let now = Instant::now();
    assert!(!c.raced(now), "a new connection: no race");
    c.reused = true;
    assert!(!c.raced(now), "it had not rested");
    let mut c = Connection::new(1, true, None);
    let mut s = slot(0, true);
    s.rested = IDLE_BEFORE_RETRY;
    c.push(s);
    c.render(now, |_, out| out.extend_from_slice(GET));
    c.wrote(GET.len());
    c.reused = true;
    assert!(c.raced(now));
    assert!(!c.raced(now), "a second time is a failure");
}
