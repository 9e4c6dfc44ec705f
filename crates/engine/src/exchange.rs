//! One request's exchange on a multiplexed connection, the part HTTP/2 streams
//! ([`crate::h2::conn`]) and HTTP/3 request streams ([`crate::h3::conn`]) keep alike: when
//! it started, was sent and first answered, the connect time charged to it, how often it
//! was sent before, and what has come back (status, body length, body search). The
//! connections fill it as the answer arrives; the workers record it when it ends, through
//! [`crate::event_loop::Core::credit`] and [`crate::event_loop::Core::fail`], which read its
//! [`Exchange::timing`] and [`Exchange::answer`]. A slot's exchange is reused from request
//! to request ([`Exchange::begin`]), its body search's buffer with it.

use crate::body_search::BodySearch;
use crate::recorder::{Answer, Timing};
use std::time::{Duration, Instant};

/// The most times a request the server never processed (a stream above a GOAWAY's last
/// stream id, RFC 9113 §6.8, or refused with REFUSED_STREAM, §8.7: either may go again) is sent again, within its deadline: a
/// server that leaves it unprocessed once more fails it as refused.
pub const MAX_RESENDS: u8 = 4;

/// How a request begins on a stream: when it started (its due time in rate mode), when
/// it is written, the connect time charged to it, and how many times it was sent before.
#[derive(Debug, Clone, Copy)]
pub struct Begin {
    pub start: Instant,
    pub sent: Instant,
    pub connect: Duration,
    /// Sends before this one, each left unprocessed by the server (0 for a first send).
    pub resent: u8,
}

impl Begin {
    /// A first send written at `sent`, started at `start`, charged no connect time.
    pub fn at(start: Instant, sent: Instant) -> Begin {
        Begin {
            start,
            sent,
            connect: Duration::ZERO,
            resent: 0,
        }
    }
}

/// One request and what has come back of its answer.
#[derive(Debug)]
pub struct Exchange {
    /// The request's start (its due time in rate mode).
    pub start: Instant,
    /// When it was written.
    pub sent: Instant,
    /// When the first byte of its answer arrived.
    pub first_byte: Option<Instant>,
    /// Connect time charged to it.
    pub connect: Duration,
    /// Sends before this one, each left unprocessed by the server.
    pub resent: u8,
    /// Status of the final answer (0 until its head).
    pub status: u16,
    /// Body bytes received (HTTP/2 padding excluded).
    pub body_len: u64,
    /// The body search of `--expect-body-contains`.
    pub search: BodySearch,
}

impl Exchange {
    /// A slot's exchange before its first request, searching bodies for `needle`.
    pub fn new(needle: Option<&[u8]>, now: Instant) -> Exchange {
        Exchange {
            start: now,
            sent: now,
            first_byte: None,
            connect: Duration::ZERO,
            resent: 0,
            status: 0,
            body_len: 0,
            search: BodySearch::new(needle),
        }
    }

    /// A new request in the slot, begun as `b` says; nothing of an answer yet.
    #[inline]
    pub fn begin(&mut self, b: Begin) {
        self.start = b.start;
        self.sent = b.sent;
        self.first_byte = None;
        self.connect = b.connect;
        self.resent = b.resent;
        self.status = 0;
        self.body_len = 0;
        self.search.reset();
    }

    /// Bytes of the answer arrived at `now` (only the first arrival is kept).
    #[inline]
    pub fn arrived(&mut self, now: Instant) {
        self.first_byte.get_or_insert(now);
    }

    /// A piece of the body: counted and searched.
    #[inline]
    pub fn body(&mut self, piece: &[u8]) {
        self.body_len += piece.len() as u64;
        self.search.feed(piece);
    }

    /// Its deadline has passed at `now`: `timeout` or more since it was sent.
    #[inline]
    pub fn overdue(&self, now: Instant, timeout: Duration) -> bool {
        now.saturating_duration_since(self.sent) >= timeout
    }

    /// Its timings, had it ended at `end` (the first byte is `end` when none arrived).
    #[inline]
    pub fn timing(&self, end: Instant) -> Timing {
        Timing::ended(self.start, self.sent, self.first_byte, end, self.connect, 0)
    }

    /// What came back, for the expectations to judge.
    #[inline]
    pub fn answer(&self) -> Answer {
        Answer {
            status: self.status,
            body_len: self.body_len,
            matched: self.search.matched,
            echoed: true,
        }
    }

    /// The server left it unprocessed at `now` (a GOAWAY, a REFUSED_STREAM): true when it may go again, that is when it
    /// was sent fewer than [`MAX_RESENDS`] times again and its deadline (`timeout` from
    /// its first send) has not passed.
    #[inline]
    pub fn may_resend(&self, now: Instant, timeout: Duration) -> bool {
        self.resent < MAX_RESENDS && !self.overdue(now, timeout)
    }

    /// The request to send again on another connection, its timings kept.
    #[inline]
    pub fn resend(&self) -> Resend {
        Resend {
            start: self.start,
            sent: self.sent,
            connect: self.connect,
            resent: self.resent.saturating_add(1),
        }
    }
}

/// A request a GOAWAY left unprocessed, waiting for a stream on another connection: its
/// latency and deadline still count from its first send.
#[derive(Debug, Clone, Copy)]
pub struct Resend {
    pub start: Instant,
    pub sent: Instant,
    pub connect: Duration,
    /// Sends before the one to come.
    pub resent: u8,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_ends_at_end_and_first_byte_defaults_to_it() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut ex = Exchange::new(None, t0);
        ex.begin(Begin {
            start: t0,
            sent: t0 + ms(1),
            connect: ms(3),
            resent: 0,
        });
        let t = ex.timing(t0 + ms(9));
        assert_eq!(
            (t.start, t.sent, t.first_byte, t.end),
            (t0, t0 + ms(1), t0 + ms(9), t0 + ms(9))
        );
        assert_eq!((t.connect, t.kind), (ms(3), 0));
        ex.arrived(t0 + ms(4));
        ex.arrived(t0 + ms(5));
        assert_eq!(
            ex.timing(t0 + ms(9)).first_byte,
            t0 + ms(4),
            "the first arrival"
        );
    }

    #[test]
    fn answer_counts_and_searches_the_body_and_begin_clears_it() {
        let t0 = Instant::now();
        let mut ex = Exchange::new(Some(b"needle"), t0);
        ex.begin(Begin {
            start: t0,
            sent: t0,
            connect: Duration::ZERO,
            resent: 0,
        });
        ex.status = 200;
        ex.body(b"hay nee");
        ex.body(b"dle hay");
        let a = ex.answer();
        assert_eq!(
            (a.status, a.body_len, a.matched, a.echoed),
            (200, 14, true, true)
        );
        ex.arrived(t0);
        ex.begin(Begin {
            start: t0,
            sent: t0,
            connect: Duration::ZERO,
            resent: 1,
        });
        let a = ex.answer();
        assert_eq!((a.status, a.body_len, a.matched), (0, 0, false));
        assert_eq!((ex.first_byte, ex.resent), (None, 1));
    }

    #[test]
    fn overdue_from_its_send() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut ex = Exchange::new(None, t0);
        ex.begin(Begin {
            start: t0,
            sent: t0 + ms(10),
            connect: Duration::ZERO,
            resent: 0,
        });
        assert!(!ex.overdue(t0 + ms(14), ms(5)), "4 ms after its send");
        assert!(ex.overdue(t0 + ms(15), ms(5)), "5 ms after its send");
        assert!(!ex.overdue(t0, ms(5)), "a clock before its send");
    }

    #[test]
    fn resend_keeps_the_first_send() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut ex = Exchange::new(None, t0);
        ex.begin(Begin {
            start: t0 + ms(1),
            sent: t0 + ms(2),
            connect: ms(7),
            resent: 0,
        });
        let r = ex.resend();
        assert_eq!(
            (r.start, r.sent, r.connect, r.resent),
            (t0 + ms(1), t0 + ms(2), ms(7), 1)
        );
    }

    /// A request a GOAWAY left unprocessed goes again up to [`MAX_RESENDS`] times, and
    /// only while its deadline, counted from its first send, has not passed.
    #[test]
    fn may_resend_within_its_deadline_and_the_bound() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut ex = Exchange::new(None, t0);
        let mut b = Begin::at(t0, t0);
        for resent in 0..MAX_RESENDS {
            b.resent = resent;
            ex.begin(b);
            assert!(
                ex.may_resend(t0 + ms(99), ms(100)),
                "sent again {resent} times"
            );
            b = Begin {
                resent: ex.resend().resent,
                ..b
            };
        }
        assert_eq!(b.resent, MAX_RESENDS);
        ex.begin(b);
        assert!(!ex.may_resend(t0 + ms(1), ms(100)), "the bound");
        ex.begin(Begin::at(t0, t0));
        assert!(!ex.may_resend(t0 + ms(100), ms(100)), "its deadline passed");
    }
}
