//! One request's exchange on a multiplexed connection, the part HTTP/2 streams
//! ([`crate::h2::conn`]) and HTTP/3 request streams ([`crate::h3::conn`]) keep alike: when
//! it started, was sent and first answered, the connect time charged to it, whether it was
//! sent once already, and what has come back (status, body length, body search). The
//! connections fill it as the answer arrives; the workers record it when it ends, through
//! [`crate::event_loop::Core::credit`] and [`crate::event_loop::Core::fail`], which read its
//! [`Exchange::timing`] and [`Exchange::answer`]. A slot's exchange is reused from request
//! to request ([`Exchange::begin`]), its body search's buffer with it.

use crate::body_search::BodySearch;
use crate::recorder::{Answer, Timing};
use std::time::{Duration, Instant};

/// How a request begins on a stream: when it started (its due time in rate mode), when
/// it is written, the connect time charged to it, and whether it was sent once already.
#[derive(Debug, Clone, Copy)]
pub struct Begin {
    pub start: Instant,
    pub sent: Instant,
    pub connect: Duration,
    pub retried: bool,
}

impl Begin {
    /// A first send written at `sent`, started at `start`, charged no connect time.
    pub fn at(start: Instant, sent: Instant) -> Begin {
        Begin {
            start,
            sent,
            connect: Duration::ZERO,
            retried: false,
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
    /// Already sent once, on a connection whose GOAWAY left it unprocessed.
    pub retried: bool,
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
            retried: false,
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
        self.retried = b.retried;
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

    /// The request to send again on another connection, its timings kept.
    #[inline]
    pub fn resend(&self) -> Resend {
        Resend {
            start: self.start,
            sent: self.sent,
            connect: self.connect,
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
            retried: false,
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
            retried: false,
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
            retried: true,
        });
        let a = ex.answer();
        assert_eq!((a.status, a.body_len, a.matched), (0, 0, false));
        assert_eq!((ex.first_byte, ex.retried), (None, true));
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
            retried: false,
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
            retried: false,
        });
        let r = ex.resend();
        assert_eq!(
            (r.start, r.sent, r.connect),
            (t0 + ms(1), t0 + ms(2), ms(7))
        );
    }
}
