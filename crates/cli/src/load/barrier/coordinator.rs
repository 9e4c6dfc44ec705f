//! Shard 0's side of the start barrier: a listener whose thread admits each connection
//! to a thread of its own, which reads the shard's `HELLO` (all of it within
//! [`HELLO_WITHIN`], else `BUSY` and closed) and admits it or refuses it with the reason:
//! another run, another shard count, an index already here (after [`REJOIN_GRACE`], so a
//! shard that restarted replaces its closed connection), or a start that has passed. A
//! shard whose connection closes before the start leaves, and may come back. When all are
//! here, [`Coordinator::meet`] fixes the start [`START_LEAD`] ahead and tells each shard
//! to ask for it; each answer is written the moment it is asked, so the asking shard can
//! time it. The listener keeps refusing shards until the process ends.
//!
//! The port is open to anything on the network, so strangers must not crowd the shards
//! out: at most the shard count and [`SPARE`] more connections are open at once, and a
//! connection that comes when that many are makes room by closing the one that has gone
//! longest without saying who it is (a real shard says `HELLO` as it connects), which is
//! told `BUSY`: a shard told so tries again. A shard admitted is never closed for a
//! stranger.

use super::{list, shown, stopped, BarrierPlan, Met, INTERRUPTED, START_LEAD, STOP_EVERY};
use shootout_model::barrier::{read_msg, BarrierFacts, Msg, MAX_LINE};
use shootout_model::saved::unix_ns;
use std::collections::BTreeMap;
use std::io::{BufReader, ErrorKind, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

/// How long a connection has to say who it is, its whole `HELLO` line (a shard writes it
/// as it connects; this leaves a TCP retransmission or two).
const HELLO_WITHIN: Duration = Duration::from_secs(3);

/// Connections that may be open at once, admitted or not, as a multiple of the most that
/// may wait to be heard ([`SPARE`] and the shards): those closed to make room are let go
/// of without waiting for their threads to end, so a flood of them is bounded too.
const MOST_OPEN: usize = 4;

/// The most `WHEN`s one connection is answered (a shard asks a few times and keeps the
/// answer of the shortest round trip).
const MAX_ASKS: usize = 2 * super::ASKS;

/// How long a write to a shard may block.
const WRITE_WITHIN: Duration = Duration::from_secs(5);

/// How long a shard's `HELLO` for an index already here waits for that index's connection
/// to be seen closed (the connection of the process it replaces).
const REJOIN_GRACE: Duration = Duration::from_secs(2);

/// Connections beyond the shard count that may be open at once (shards coming back,
/// strangers being refused).
const SPARE: usize = 16;

/// Shard 0, listening.
pub struct Coordinator {
    plan: BarrierPlan,
    shared: Arc<Shared>,
}

/// What the connections' threads and [`Coordinator::meet`] share.
struct Shared {
    run_id: String,
    count: u32,
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// The shards here, by index (shard 0 is not in it).
    joined: BTreeMap<u32, Peer>,
    /// The start, once every shard was here.
    start: Option<Instant>,
    /// Why the barrier failed, once it did.
    failed: Option<String>,
    /// Open connections (their threads).
    open: usize,
    /// Connections not yet heard out (no `HELLO` read), by number: the oldest are closed
    /// first to make room.
    unheard: BTreeMap<u64, TcpStream>,
    /// The last connection's number.
    last: u64,
}

/// A shard at the barrier.
struct Peer {
    /// Its connection's number (a shard coming back has a new one).
    conn: u64,
    /// Where it connected from.
    from: SocketAddr,
    /// Its connection, for shard 0's messages.
    writer: TcpStream,
}

impl Coordinator {
    /// Listens on `addr` and admits shards from now on; says where unless `quiet`.
    pub fn listen(plan: BarrierPlan, addr: SocketAddr, quiet: bool) -> Result<Self, String> {
        let listener = TcpListener::bind(addr).map_err(|e| {
            format!("cannot listen on {addr} for the start barrier: {e}: give another --barrier-listen ADDR (or another port in --barrier)")
        })?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        // A port the OS chose is said even when quiet: the other shards need it.
        if !quiet || addr.port() == 0 {
            say!(
                "barrier: shard 0 of {} listening on {local} (run {})",
                plan.shard.count,
                plan.run_id
            );
        }
        let shared = Arc::new(Shared {
            run_id: plan.run_id.clone(),
            count: plan.shard.count,
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let accepting = shared.clone();
        std::thread::Builder::new()
            .name("barrier".into())
            .spawn(move || accept(&listener, &accepting))
            .map_err(|e| format!("cannot start the start barrier's thread: {e}"))?;
        Ok(Coordinator { plan, shared })
    }

    /// Waits until every shard is here, then fixes the start and tells them; fails after
    /// the wait limit, naming the shards that never came, or when `stop` is set (and tells
    /// the shards here why).
    pub fn meet(self, quiet: bool, stop: &AtomicBool) -> Result<Met, String> {
        let began = Instant::now();
        let deadline = began + self.plan.wait;
        let n = self.plan.shard.count as usize;
        let mut st = self.shared.lock();
        let mut said = 0;
        while st.joined.len() + 1 < n {
            let here = st.joined.len() + 1;
            if here != said && !quiet {
                say!("barrier: {here} of {n} shards here");
                said = here;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let why = match (stopped(stop), left.is_zero()) {
                (true, _) => Some(format!("shard 0 was {INTERRUPTED}")),
                (false, true) => Some(self.never_came(&st)),
                (false, false) => None,
            };
            if let Some(why) = why {
                st.failed = Some(why.clone());
                for p in st.joined.values() {
                    send(&p.writer, &Msg::Fail(why.clone()));
                }
                return Err(if stopped(stop) {
                    INTERRUPTED.into()
                } else {
                    why
                });
            }
            st = match self.shared.changed.wait_timeout(st, left.min(STOP_EVERY)) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        let (now, wall) = (Instant::now(), SystemTime::now());
        st.start = Some(now + START_LEAD);
        for p in st.joined.values() {
            send(&p.writer, &Msg::Go);
        }
        if !quiet {
            say!(
                "barrier: all {n} shards here; the load starts in {}",
                shown(START_LEAD)
            );
        }
        Ok(Met {
            start_at: wall + START_LEAD,
            facts: BarrierFacts {
                waited: began.elapsed(),
                ..BarrierFacts::default()
            },
        })
    }

    /// The failure of a barrier whose wait passed: the shards that never came.
    fn never_came(&self, st: &State) -> String {
        let n = self.plan.shard.count;
        let missing: Vec<u32> = (1..n).filter(|i| !st.joined.contains_key(i)).collect();
        format!(
            "the start barrier waited {} for shard {} of {n}, which never came: no shard starts without every other; check the missing shards' logs (a pod not scheduled, an image not pulled, --barrier naming another address), or give a longer --barrier-wait",
            shown(self.plan.wait),
            list(&missing)
        )
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Admits connections until the process ends, each to a thread of its own; when the
/// shard count and [`SPARE`] more are open, the one unheard for longest is closed (`BUSY`)
/// to make room.
fn accept(listener: &TcpListener, sh: &Arc<Shared>) {
    let room = sh.count as usize + SPARE;
    for stream in listener.incoming() {
        let Ok(stream) = stream else {
            // Out of descriptors, or a connection reset before it was accepted: go on,
            // without spinning.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        let _ = stream.set_write_timeout(Some(WRITE_WITHIN));
        let conn = {
            let mut st = sh.lock();
            if st.joined.len() + st.unheard.len() >= room {
                if let Some((_, oldest)) = st.unheard.pop_first() {
                    make_room(&oldest);
                }
            }
            match stream.try_clone() {
                Ok(handle) if st.open < MOST_OPEN * room => {
                    st.open += 1;
                    st.last += 1;
                    let conn = st.last;
                    st.unheard.insert(conn, handle);
                    Some(conn)
                }
                _ => None,
            }
        };
        let Some(conn) = conn else {
            make_room(&stream);
            continue;
        };
        let serving = sh.clone();
        let spawned = std::thread::Builder::new()
            .name("barrier-shard".into())
            .spawn(move || {
                serve(&serving, stream, conn);
                let mut st = serving.lock();
                st.open -= 1;
                st.unheard.remove(&conn);
            });
        if spawned.is_err() {
            let mut st = sh.lock();
            st.open -= 1;
            if let Some(s) = st.unheard.remove(&conn) {
                make_room(&s);
            }
        }
    }
}

/// Closes a connection that was not heard out, telling it `BUSY` (a shard tries again).
/// Its thread, blocked reading, then sees the close and ends.
fn make_room(stream: &TcpStream) {
    let _ = stream.set_write_timeout(Some(Duration::from_millis(100)));
    send(stream, &Msg::Busy);
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// A connection read with a deadline for everything read, not for each read.
struct Until {
    stream: TcpStream,
    until: Option<Instant>,
}

impl std::io::Read for Until {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(until) = self.until {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(std::io::ErrorKind::TimedOut.into());
            }
            self.stream.set_read_timeout(Some(left))?;
        }
        self.stream.read(buf)
    }
}

/// One connection: its `HELLO`, then its `WHEN` or its end.
fn serve(sh: &Shared, stream: TcpStream, conn: u64) {
    let _ = stream.set_nodelay(true);
    let (Ok(from), Ok(read_half)) = (stream.peer_addr(), stream.try_clone()) else {
        return;
    };
    let mut reader = BufReader::with_capacity(
        MAX_LINE,
        Until {
            stream: read_half,
            until: Some(Instant::now() + HELLO_WITHIN),
        },
    );
    let hello = read_msg(&mut reader);
    if sh.lock().unheard.remove(&conn).is_none() {
        // Closed to make room while it was being read.
        return;
    }
    let index = match hello {
        Ok(Msg::Hello { run, index, count }) => {
            match sh.join(&run, index, count, conn, from, &stream) {
                Ok(()) => index,
                Err(why) => return send(&stream, &Msg::Fail(why)),
            }
        }
        Ok(other) => {
            return send(
                &stream,
                &Msg::Fail(format!(
                    "{other} before HELLO: not a shard of shootout load"
                )),
            )
        }
        // Nothing, or not all of a line, in time: a shard this slow may try again.
        Err(e) if matches!(e.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock) => {
            return send(&stream, &Msg::Busy)
        }
        Err(e) => return send(&stream, &Msg::Fail(format!("{e}"))),
    };
    reader.get_mut().until = None;
    let _ = stream.set_read_timeout(None);
    for _ in 0..MAX_ASKS {
        match read_msg(&mut reader) {
            Ok(Msg::When) => {
                if !sh.answer(&stream, index, conn) {
                    return;
                }
            }
            Ok(other) => {
                sh.leave(index, conn);
                return send(
                    &stream,
                    &Msg::Fail(format!("{other} from a shard at the barrier")),
                );
            }
            Err(_) => return sh.leave(index, conn),
        }
    }
}

impl Shared {
    /// Admits shard `index` of `count` of run `run`, or says why not.
    fn join(
        &self,
        run: &str,
        index: u32,
        count: u32,
        conn: u64,
        from: SocketAddr,
        stream: &TcpStream,
    ) -> Result<(), String> {
        let n = self.count;
        if run != self.run_id {
            return Err(format!("shard {index} is of run {run}, this barrier is of run {}: shards of different runs never meet; give every shard of one load the same --run-id (or none)", self.run_id));
        }
        if count != n {
            return Err(format!("shard {index} of {count} came to the barrier of a load in {n} shards: give every shard the same --shards"));
        }
        if index == 0 {
            return Err("shard 0 is the one listening here: is another load's shard 0 using --barrier with this address?".into());
        }
        let mut st = self.lock();
        let until = Instant::now() + REJOIN_GRACE;
        loop {
            if let Some(start) = st.start {
                let ago = Instant::now()
                    .saturating_duration_since(start)
                    .as_secs_f64();
                return Err(format!("the load of run {} started without shard {index} ({ago:.1} s ago, or about to): a shard that restarted after the start cannot join, its load would not be the others'; this shard fails and the merge names it", self.run_id));
            }
            if let Some(why) = &st.failed {
                return Err(why.clone());
            }
            let left = until.saturating_duration_since(Instant::now());
            match st.joined.get(&index) {
                None => break,
                Some(p) if left.is_zero() => {
                    return Err(format!("shard {index} is already at the barrier, from {}: give each shard its own index", p.from))
                }
                Some(_) => {
                    st = match self.changed.wait_timeout(st, left) {
                        Ok((guard, _)) => guard,
                        Err(poisoned) => poisoned.into_inner().0,
                    }
                }
            }
        }
        let writer = stream.try_clone().map_err(|e| e.to_string())?;
        st.joined.insert(index, Peer { conn, from, writer });
        self.changed.notify_all();
        // Under the lock, so that it comes before GO.
        let joined = st.joined.len() as u32 + 1;
        send(stream, &Msg::Wait { joined, count: n });
        Ok(())
    }

    /// Shard `index` left (its connection `conn` closed): before the start it may come
    /// back; after, nothing changes (it was told the start, or it never asked).
    fn leave(&self, index: u32, conn: u64) {
        let mut st = self.lock();
        if st.start.is_none() && st.joined.get(&index).is_some_and(|p| p.conn == conn) {
            st.joined.remove(&index);
            self.changed.notify_all();
        }
    }

    /// Answers a shard's `WHEN`: the time left until the start, written at once; false
    /// when there is no start yet (the shard is told so and leaves).
    fn answer(&self, stream: &TcpStream, index: u32, conn: u64) -> bool {
        let Some(start) = self.lock().start else {
            self.leave(index, conn);
            send(stream, &Msg::Fail("WHEN before GO".into()));
            return false;
        };
        let in_ns = start.saturating_duration_since(Instant::now()).as_nanos() as u64;
        let wall_ns = unix_ns(SystemTime::now());
        send(stream, &Msg::Start { in_ns, wall_ns });
        true
    }
}

/// Writes `m` on `stream`, best effort: a shard that went away is seen by its reader.
fn send(mut stream: &TcpStream, m: &Msg) {
    let _ = stream.write_all(m.to_line().as_bytes());
}
