//! The `/metrics` responder: a small HTTP/1.1 server on a std [`TcpListener`] and one
//! thread of its own. Written here rather than taken from a crate: it has one route, one
//! method and one answer, and a dependency for that would weigh more than these lines.
//! It is bounded as anything facing a network must be: one connection at a time, a head
//! of at most [`MAX_HEAD`] bytes read within [`TIMEOUT`], the answer written within
//! [`TIMEOUT`], then the connection closed. It stops when its [`Server`] is dropped,
//! that is when the command ends, however it ends.

use super::Board;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The most bytes of a request read (its head: a scrape sends a few hundred).
pub(crate) const MAX_HEAD: usize = 8 * 1024;

/// How long a client has to send its request, and to take the answer.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(2);

/// How often the listener looks for a connection, and for the end of the command.
const POLL: Duration = Duration::from_millis(20);

/// The metrics endpoint, served until it is dropped.
pub(crate) struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Listens on `addr` and serves `board` from a thread of its own.
    pub(crate) fn start(addr: SocketAddr, board: Arc<Board>) -> std::io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        // Polled, so that the thread sees the stop flag without a connection to wake it.
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || accept(&listener, &board, &flag))?;
        Ok(Server {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// The address it listens on (the port the system chose, for port 0).
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Answers connections one at a time until `stop`.
fn accept(listener: &TcpListener, board: &Board, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((conn, _)) => {
                // A client that misbehaves only loses its own answer.
                let _ = answer(conn, board);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(POLL),
            // A connection that failed before it was accepted: wait for the next.
            Err(_) => std::thread::sleep(POLL),
        }
    }
}

/// Reads one request's head and writes its answer.
fn answer(mut conn: TcpStream, board: &Board) -> std::io::Result<()> {
    conn.set_nonblocking(false)?;
    conn.set_write_timeout(Some(TIMEOUT))?;
    let Some(head) = read_head(&mut conn)? else {
        return respond(
            &mut conn,
            "431 Request Header Fields Too Large",
            "the request's head is too large\n",
            "",
        );
    };
    match route(&head) {
        Route::Metrics => respond(
            &mut conn,
            "200 OK",
            &board.render(),
            "text/plain; version=0.0.4; charset=utf-8",
        ),
        Route::NotFound => respond(&mut conn, "404 Not Found", "metrics are at /metrics\n", ""),
        Route::Method => respond(&mut conn, "405 Method Not Allowed", "only GET\n", ""),
        Route::Bad => respond(&mut conn, "400 Bad Request", "not an HTTP request\n", ""),
    }
}

/// The request's head, read until its blank line within [`TIMEOUT`] in all; `None` when
/// [`MAX_HEAD`] bytes came without one. A head cut short by the client or the timeout is
/// answered as it is (the route decides).
fn read_head(conn: &mut TcpStream) -> std::io::Result<Option<Vec<u8>>> {
    let deadline = Instant::now() + TIMEOUT;
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        conn.set_read_timeout(Some(left))?;
        let n = match conn.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                break
            }
            Err(e) => return Err(e),
        };
        if head.len() + n > MAX_HEAD {
            return Ok(None);
        }
        head.extend_from_slice(&buf[..n]);
    }
    Ok(Some(head))
}

/// What a request asks for.
#[derive(Debug, PartialEq, Eq)]
enum Route {
    Metrics,
    NotFound,
    Method,
    Bad,
}

/// The route of a request head: its first line's method and path (a query is ignored).
fn route(head: &[u8]) -> Route {
    let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_ascii_whitespace();
    let (Some(method), Some(target), Some(version)) = (words.next(), words.next(), words.next())
    else {
        return Route::Bad;
    };
    if !version.starts_with("HTTP/1.") {
        return Route::Bad;
    }
    if method != "GET" {
        return Route::Method;
    }
    match target.split('?').next() {
        Some("/metrics") => Route::Metrics,
        _ => Route::NotFound,
    }
}

/// Writes an answer with `status` and `body`, and closes the connection.
fn respond(conn: &mut TcpStream, status: &str, body: &str, kind: &str) -> std::io::Result<()> {
    let kind = if kind.is_empty() {
        "text/plain; charset=utf-8"
    } else {
        kind
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    conn.write_all(head.as_bytes())?;
    conn.write_all(body.as_bytes())?;
    conn.flush()?;
    let _ = conn.shutdown(std::net::Shutdown::Write);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends `request` to `addr` and returns the whole answer.
    fn ask(addr: SocketAddr, request: &[u8]) -> String {
        let mut c = TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        c.write_all(request).unwrap();
        let mut out = String::new();
        c.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn routes() {
        assert_eq!(route(b"GET /metrics HTTP/1.1\r\n\r\n"), Route::Metrics);
        assert_eq!(route(b"GET /metrics?x=1 HTTP/1.0\r\n\r\n"), Route::Metrics);
        assert_eq!(route(b"GET / HTTP/1.1\r\n\r\n"), Route::NotFound);
        assert_eq!(route(b"POST /metrics HTTP/1.1\r\n\r\n"), Route::Method);
        assert_eq!(route(b"\x16\x03\x01 hello"), Route::Bad);
        assert_eq!(route(b""), Route::Bad);
    }

    #[test]
    fn serves_the_page_answers_the_rest_and_stops_when_dropped() {
        let server = Server::start("127.0.0.1:0".parse().unwrap(), Arc::default()).unwrap();
        let addr = server.addr();
        let page = ask(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(page.starts_with("HTTP/1.1 200 OK\r\n"), "{page}");
        assert!(
            page.contains("Content-Type: text/plain; version=0.0.4"),
            "{page}"
        );
        let body = page.split("\r\n\r\n").nth(1).unwrap();
        let length: usize = page
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(length, body.len());
        assert!(
            body.contains("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total ")
        );
        assert!(ask(addr, b"GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404 "));
        assert!(ask(addr, b"DELETE /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405 "));
        drop(server);
        assert_eq!(
            TcpStream::connect(addr).map_err(|e| e.kind()).err(),
            Some(std::io::ErrorKind::ConnectionRefused),
            "the port is closed once the server is dropped"
        );
    }

    #[test]
    fn a_head_too_large_or_too_slow_is_bounded_and_the_next_scrape_is_served() {
        let server = Server::start("127.0.0.1:0".parse().unwrap(), Arc::default()).unwrap();
        let addr = server.addr();
        // No blank line in 64 KiB: refused after MAX_HEAD bytes, not read to the end.
        let mut c = TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let _ = c.write_all(&vec![b'a'; MAX_HEAD + 1]);
        let mut out = String::new();
        let _ = c.read_to_string(&mut out);
        assert!(out.starts_with("HTTP/1.1 431 "), "{out}");
        // A client that connects and says nothing holds the server for TIMEOUT at most.
        let silent = TcpStream::connect(addr).unwrap();
        let began = Instant::now();
        let page = ask(addr, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert!(page.starts_with("HTTP/1.1 200 OK"), "{page}");
        assert!(began.elapsed() < TIMEOUT * 3, "{:?}", began.elapsed());
        drop(silent);
    }
}
