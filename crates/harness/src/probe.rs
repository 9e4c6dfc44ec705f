//! The readiness probe: one TCP connect plus one hand-written HTTP/1.1 GET, reading only
//! the status line. A port that speaks only HTTP/2 with prior knowledge (nginx's
//! `listen PORT http2;` in cleartext) answers that GET with its SETTINGS frame instead
//! (then a GOAWAY): that is an answer too, [`Answer::Http2Only`], since no HTTP/1.1
//! status can come from it; verification then asks the path over HTTP/2.
//!
//! It is deliberately independent of the engine (the harness and the engine never import
//! each other) and of any HTTP library: a server is "ready" as soon as it answers any
//! status below 500 on the probe path. Every step is bounded by the given timeout.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// The most bytes read while looking for the end of the status line.
const STATUS_LINE_MAX: usize = 4096;

/// Why a probe got no status.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProbeError {
    /// The TCP connection could not be made.
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        /// The address tried (the last one, if there were several).
        addr: SocketAddr,
        /// The error.
        source: io::Error,
    },
    /// The request could not be sent, or the answer not read, in time.
    #[error("connected, then {0}")]
    Io(io::Error),
    /// The server closed the connection without a status line.
    #[error("connected, but the server closed the connection without answering")]
    Closed,
    /// The answer does not start with an HTTP status line.
    #[error("connected, but the answer is not HTTP: {0:?}")]
    NotHttp(String),
}

/// What a server answered the probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    /// An HTTP/1.x status line with this code.
    Status(u16),
    /// An HTTP/2 SETTINGS frame: the port speaks h2c with prior knowledge only.
    Http2Only,
    /// It accepted a connection, and no request was sent (a port that speaks TLS).
    Listening,
}

/// Sends `GET path` to the first of `addrs` that accepts a connection, naming `host` in
/// the `Host` header, and returns what the server answered; with no path, only connects
/// ([`Answer::Listening`]). Takes at most about `timeout` (per address tried).
pub(crate) fn probe(
    addrs: &[SocketAddr],
    host: &str,
    path: Option<&str>,
    timeout: Duration,
) -> Result<Answer, ProbeError> {
    let timeout = timeout.max(Duration::from_millis(1));
    let mut last = None;
    for &addr in addrs {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(stream) => {
                return match path {
                    Some(path) => ask(stream, host, path, timeout),
                    None => Ok(Answer::Listening),
                }
            }
            Err(source) => last = Some(ProbeError::Connect { addr, source }),
        }
    }
    Err(last.unwrap_or(ProbeError::Closed))
}

fn ask(
    mut stream: TcpStream,
    host: &str,
    path: &str,
    timeout: Duration,
) -> Result<Answer, ProbeError> {
    let deadline = Instant::now() + timeout;
    stream
        .set_write_timeout(Some(timeout))
        .map_err(ProbeError::Io)?;
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: shootout-ready-probe\r\n\
         Accept: */*\r\nConnection: close\r\n\r\n"
    );
    stream
        .write_all(request.as_bytes())
        .map_err(ProbeError::Io)?;
    let mut head = Vec::with_capacity(256);
    let mut buf = [0u8; 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ProbeError::Io(io::ErrorKind::TimedOut.into()));
        }
        stream
            .set_read_timeout(Some(left))
            .map_err(ProbeError::Io)?;
        let n = match stream.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(ProbeError::Io(e)),
        };
        if n == 0 {
            return if head.is_empty() {
                Err(ProbeError::Closed)
            } else {
                answer_of(&head)
            };
        }
        head.extend_from_slice(&buf[..n]);
        if is_settings_frame(&head) {
            return Ok(Answer::Http2Only);
        }
        if head.contains(&b'\n') || head.len() >= STATUS_LINE_MAX {
            return answer_of(&head);
        }
    }
}

/// True when `head` starts with an HTTP/2 frame header of a SETTINGS frame on stream 0
/// (RFC 9113 §4.1, §6.5: 3 bytes of length, type 0x4, flags 0, stream 0), the first
/// thing an HTTP/2 server sends.
fn is_settings_frame(head: &[u8]) -> bool {
    head.len() >= 9 && head[3] == 0x4 && head[4] == 0 && head[5..9] == [0, 0, 0, 0]
}

/// What `head`, the whole answer read, says: an HTTP/2 SETTINGS frame or a status line.
fn answer_of(head: &[u8]) -> Result<Answer, ProbeError> {
    if is_settings_frame(head) {
        return Ok(Answer::Http2Only);
    }
    parse_status_line(head).map(Answer::Status)
}

/// The status code of a response starting with `head` (`HTTP/1.x NNN reason`).
fn parse_status_line(head: &[u8]) -> Result<u16, ProbeError> {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let line = line.trim_end();
    let not_http = || {
        let shown: String = line.chars().take(80).collect();
        ProbeError::NotHttp(shown)
    };
    let mut parts = line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    let code = parts.next().unwrap_or_default();
    if !version.starts_with("HTTP/") || code.len() != 3 {
        return Err(not_http());
    }
    code.parse().map_err(|_| not_http())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::thread;

    #[test]
    fn status_lines() {
        // (what the server sent, the status the probe reports)
        let rows: &[(&[u8], Option<u16>)] = &[
            (b"HTTP/1.1 200 OK\r\n", Some(200)),
            (b"HTTP/1.0 404 Not Found\r\nServer: x\r\n\r\n", Some(404)),
            (b"HTTP/1.1 503\r\n", Some(503)), // no reason phrase
            (b"HTTP/1.1 204 No Content", Some(204)), // closed before CRLF
            (b"SSH-2.0-OpenSSH_9.6\r\n", None),
            (b"HTTP/1.1 2000 OK\r\n", None),
            (b"HTTP/1.1 abc OK\r\n", None),
        ];
        for (sent, want) in rows {
            let got = parse_status_line(sent).ok();
            assert_eq!(got, *want, "{:?}", String::from_utf8_lossy(sent));
        }
    }

    /// A one-shot server answering `answer` to the first connection; returns its address
    /// and the request it received.
    fn one_shot(answer: &'static [u8]) -> (SocketAddr, thread::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let handle = thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut req = Vec::new();
            let mut buf = [0u8; 512];
            while !req.ends_with(b"\r\n\r\n") {
                let n = s.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                req.extend_from_slice(&buf[..n]);
            }
            s.write_all(answer).unwrap();
            String::from_utf8(req).unwrap()
        });
        (addr, handle)
    }

    #[test]
    fn probe_sends_a_closing_get_and_reads_the_status() {
        let (addr, server) = one_shot(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        let host = addr.to_string();
        assert_eq!(
            probe(&[addr], &host, Some("/health"), Duration::from_secs(5)).unwrap(),
            Answer::Status(200)
        );
        let req = server.join().unwrap();
        assert!(req.starts_with("GET /health HTTP/1.1\r\n"), "{req}");
        assert!(req.contains(&format!("\r\nHost: {host}\r\n")), "{req}");
        assert!(req.contains("\r\nConnection: close\r\n"), "{req}");
    }

    /// nginx's `listen PORT http2;` in cleartext answers an HTTP/1.1 GET with its
    /// SETTINGS, a WINDOW_UPDATE and a GOAWAY (bytes as nginx 1.22 sent them), then
    /// closes: the port is up, and speaks HTTP/2 only. Any other binary answer is still
    /// not HTTP.
    #[test]
    fn an_h2c_only_port_answers_with_its_settings_frame() {
        let nginx: &[u8] = b"\x00\x00\x12\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x80\x00\x04\x00\x01\x00\x00\x00\x05\x00\xff\xff\xff\x00\x00\x04\x08\x00\x00\x00\x00\x00\x7f\xff\x00\x00\x00\x00\x08\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01";
        let (addr, server) = one_shot(nginx);
        let got = probe(&[addr], "x", Some("/"), Duration::from_secs(5)).unwrap();
        assert_eq!(got, Answer::Http2Only);
        server.join().unwrap();
        // A GOAWAY first (type 0x7) is not a server's first frame: not taken for one.
        let (addr, server) = one_shot(&nginx[40..]);
        let err = probe(&[addr], "x", Some("/"), Duration::from_secs(5)).unwrap_err();
        assert!(matches!(err, ProbeError::NotHttp(_)), "{err}");
        server.join().unwrap();
    }

    #[test]
    fn probe_of_a_closed_port_is_a_connect_error() {
        let addr = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let err = probe(&[addr], "x", Some("/"), Duration::from_secs(2)).unwrap_err();
        assert!(matches!(err, ProbeError::Connect { .. }), "{err}");
    }

    #[test]
    fn probe_of_a_silent_server_times_out() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let started = Instant::now();
        // The kernel accepts the connection into the backlog; nobody ever answers.
        let err = probe(&[addr], "x", Some("/"), Duration::from_millis(200)).unwrap_err();
        assert!(matches!(err, ProbeError::Io(_)), "{err}");
        assert!(started.elapsed() < Duration::from_secs(2));
        drop(listener);
    }

    /// A port that speaks TLS is probed by connecting only: the same silent listener is
    /// ready at once, and nothing was written to it.
    #[test]
    fn a_probe_without_a_path_only_connects() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let got = probe(&[addr], "x", None, Duration::from_secs(2)).unwrap();
        assert_eq!(got, Answer::Listening);
        let (mut conn, _) = listener.accept().unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(conn.read(&mut buf).unwrap(), 0, "closed without a byte");
    }
}
