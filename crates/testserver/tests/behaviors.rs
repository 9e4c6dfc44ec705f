//! Raw-socket checks of the exact bytes each behaviour sends, of the counters, and of
//! the stop sequence. Clients carry a 10 s read timeout only as a safety net: every
//! test waits on bytes or on the server's close, never on the clock.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use shootout_testserver::{Behavior, TestServer};

const SAFETY: Duration = Duration::from_secs(10);
const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n";
const HELLO_HEAD: &str = "HTTP/1.1 200 OK\r\nServer: shootout-testserver\r\nContent-Length: 12\r\n";

fn hello() -> String {
    format!("{HELLO_HEAD}\r\nHello World\n")
}

fn connect(server: &TestServer) -> TcpStream {
    let tcp = TcpStream::connect(server.addr()).unwrap();
    tcp.set_read_timeout(Some(SAFETY)).unwrap();
    tcp.set_nodelay(true).unwrap();
    tcp
}

/// Reads exactly `n` bytes.
fn read_n(tcp: &mut impl Read, n: usize) -> String {
    let mut buf = vec![0; n];
    tcp.read_exact(&mut buf).unwrap();
    String::from_utf8(buf).unwrap()
}

/// Reads until the server closes; the error, if the close was not clean.
fn read_all(tcp: &mut impl Read) -> (String, Option<io::ErrorKind>) {
    let mut got = Vec::new();
    let mut buf = [0; 4096];
    loop {
        match tcp.read(&mut buf) {
            Ok(0) => return (String::from_utf8(got).unwrap(), None),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => return (String::from_utf8(got).unwrap(), Some(e.kind())),
        }
    }
}

/// Sends `request` and reads an answer as long as `expected`, which it must equal.
fn exchange(tcp: &mut TcpStream, request: &[u8], expected: &str) {
    tcp.write_all(request).unwrap();
    assert_eq!(read_n(tcp, expected.len()), expected);
}

#[test]
fn hello_keeps_alive_and_answers_pipelined_requests_in_order() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let mut tcp = connect(&server);
    // Two requests in one write, the second with leading empty lines.
    let two = [GET, b"\r\nGET /b HTTP/1.1\r\nHost: t\r\n\r\n"].concat();
    exchange(&mut tcp, &two, &hello().repeat(2));
    // A head arriving one byte per write.
    for byte in GET {
        tcp.write_all(&[*byte]).unwrap();
    }
    assert_eq!(read_n(&mut tcp, hello().len()), hello());
    assert_eq!(server.requests(), 3);
    assert_eq!(server.connections(), 1);
    assert_eq!(server.last_request_head(), String::from_utf8_lossy(GET));
}

#[test]
fn connection_close_from_the_client_is_honoured() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let mut tcp = connect(&server);
    tcp.write_all(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    let expected = format!("{HELLO_HEAD}Connection: close\r\n\r\nHello World\n");
    assert_eq!(read_all(&mut tcp), (expected, None));

    let mut tcp = connect(&server);
    tcp.write_all(b"HEAD / HTTP/1.0\r\n\r\n").unwrap();
    let expected = format!("{HELLO_HEAD}Connection: close\r\n\r\n");
    assert_eq!(read_all(&mut tcp), (expected, None));
}

#[test]
fn fixed_sends_status_and_body() {
    let b = Behavior::Fixed {
        status: 404,
        body: b"nope".to_vec(),
    };
    let server = TestServer::start(b).unwrap();
    let expected = "HTTP/1.1 404 Not Found\r\nServer: shootout-testserver\r\n\
                    Content-Length: 4\r\n\r\nnope";
    exchange(&mut connect(&server), GET, expected);
}

#[test]
fn chunked_with_and_without_trailers() {
    let head = "HTTP/1.1 200 OK\r\nServer: shootout-testserver\r\nTransfer-Encoding: chunked\r\n";
    let chunks = "6\r\nHello \r\n5;ext=1\r\nWorld\r\n1\r\n\n\r\n0\r\n";

    let server = TestServer::start(Behavior::Chunked { trailers: true }).unwrap();
    let expected = format!("{head}Trailer: X-Trailer\r\n\r\n{chunks}X-Trailer: yes\r\n\r\n");
    exchange(&mut connect(&server), GET, &expected);

    let server = TestServer::start(Behavior::Chunked { trailers: false }).unwrap();
    exchange(
        &mut connect(&server),
        GET,
        &format!("{head}\r\n{chunks}\r\n"),
    );
}

#[test]
fn http10_close_delimited_body_ends_with_a_clean_close() {
    let server = TestServer::start(Behavior::Http10CloseDelimited).unwrap();
    let mut tcp = connect(&server);
    tcp.write_all(GET).unwrap();
    let expected = "HTTP/1.0 200 OK\r\nServer: shootout-testserver\r\n\r\nHello World\n";
    assert_eq!(read_all(&mut tcp), (expected.to_string(), None));
}

#[test]
fn close_after_announced_closes_after_the_kth_answer() {
    let server = TestServer::start(Behavior::CloseAfter {
        requests: 3,
        header: true,
    })
    .unwrap();
    let mut tcp = connect(&server);
    exchange(&mut tcp, GET, &hello());
    exchange(&mut tcp, GET, &hello());
    tcp.write_all(GET).unwrap();
    let last = format!("{HELLO_HEAD}Connection: close\r\n\r\nHello World\n");
    assert_eq!(read_all(&mut tcp), (last, None));
    assert_eq!(server.requests(), 3);
}

#[test]
fn close_after_silent_drops_pipelined_requests_past_k() {
    let server = TestServer::start(Behavior::CloseAfter {
        requests: 2,
        header: false,
    })
    .unwrap();
    let mut tcp = connect(&server);
    tcp.write_all(&GET.repeat(4)).unwrap();
    assert_eq!(read_all(&mut tcp), (hello().repeat(2), None));
    assert_eq!(server.requests(), 2);
    // A new connection starts counting again.
    let mut tcp = connect(&server);
    tcp.write_all(&GET.repeat(2)).unwrap();
    assert_eq!(read_all(&mut tcp), (hello().repeat(2), None));
    assert_eq!(server.connections(), 2);
}

#[test]
fn fail_every_counts_requests_server_wide() {
    let server = TestServer::start(Behavior::FailEvery { n: 3, status: 502 }).unwrap();
    let fail = "HTTP/1.1 502 Bad Gateway\r\nServer: shootout-testserver\r\n\
                Content-Length: 16\r\n\r\n502 Bad Gateway\n";
    let mut first = connect(&server);
    let mut second = connect(&server);
    // Requests alternate between two connections; the pattern follows the server-wide
    // count: 200 200 502 200 200 502 200.
    for i in 1..=7 {
        let tcp = if i % 2 == 1 { &mut first } else { &mut second };
        let expected = if i % 3 == 0 {
            fail.to_string()
        } else {
            hello()
        };
        exchange(tcp, GET, &expected);
    }
    assert_eq!(server.requests(), 7);
}

#[test]
fn no_body_answers_by_path_and_method() {
    let server = TestServer::start(Behavior::NoBody).unwrap();
    let mut tcp = connect(&server);
    let server_line = "Server: shootout-testserver\r\n";
    exchange(
        &mut tcp,
        b"GET /204 HTTP/1.1\r\n\r\n",
        &format!("HTTP/1.1 204 No Content\r\n{server_line}\r\n"),
    );
    exchange(
        &mut tcp,
        b"GET /304?x=1 HTTP/1.1\r\n\r\n",
        &format!("HTTP/1.1 304 Not Modified\r\n{server_line}Content-Length: 100\r\n\r\n"),
    );
    exchange(
        &mut tcp,
        b"HEAD /x HTTP/1.1\r\n\r\n",
        &format!("{HELLO_HEAD}\r\n"),
    );
    // Nothing was left behind by the bodiless answers: the next one follows directly.
    exchange(&mut tcp, GET, &hello());
}

#[test]
fn interim_answers_precede_the_final_one() {
    let server = TestServer::start(Behavior::Interim).unwrap();
    let expected = format!(
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\n\
         Link: </a.css>; rel=preload\r\n\r\n{}",
        hello()
    );
    let mut tcp = connect(&server);
    exchange(&mut tcp, GET, &expected);
    exchange(&mut tcp, GET, &expected);
}

#[test]
fn reset_mid_body_delivers_part_of_the_body_then_rst() {
    let server = TestServer::start(Behavior::ResetMidBody).unwrap();
    let mut tcp = connect(&server);
    tcp.write_all(GET).unwrap();
    let head = "HTTP/1.1 200 OK\r\nServer: shootout-testserver\r\nContent-Length: 1000\r\n\r\n";
    let (got, err) = read_all(&mut tcp);
    assert_eq!(got, format!("{head}{}", "x".repeat(100)));
    assert_eq!(err, Some(io::ErrorKind::ConnectionReset));
}

#[test]
fn garbage_short_body_and_long_body() {
    let server = TestServer::start(Behavior::Garbage).unwrap();
    let mut tcp = connect(&server);
    tcp.write_all(GET).unwrap();
    assert_eq!(
        read_all(&mut tcp),
        ("this is not http\r\n\r\n".to_string(), None)
    );

    let server = TestServer::start(Behavior::ShortBody).unwrap();
    let mut tcp = connect(&server);
    tcp.write_all(GET).unwrap();
    let head = "HTTP/1.1 200 OK\r\nServer: shootout-testserver\r\nContent-Length: 100\r\n\r\n";
    assert_eq!(
        read_all(&mut tcp),
        (format!("{head}{}", "x".repeat(50)), None)
    );

    let server = TestServer::start(Behavior::LongBody).unwrap();
    let mut tcp = connect(&server);
    let head = "HTTP/1.1 200 OK\r\nServer: shootout-testserver\r\nContent-Length: 5\r\n\r\n";
    exchange(&mut tcp, GET, &format!("{head}Hello World\n"));
    exchange(&mut tcp, GET, &format!("{head}Hello World\n"));
}

#[test]
fn big_sends_the_announced_length() {
    let len = 10_000_000;
    let server = TestServer::start(Behavior::Big { len }).unwrap();
    let mut tcp = connect(&server);
    for _ in 0..2 {
        tcp.write_all(GET).unwrap();
        let head = format!(
            "HTTP/1.1 200 OK\r\nServer: shootout-testserver\r\nContent-Length: {len}\r\n\r\n"
        );
        assert_eq!(read_n(&mut tcp, head.len()), head);
        let mut body = vec![0; len];
        tcp.read_exact(&mut body).unwrap();
        assert!(body.iter().all(|b| *b == b'x'));
    }
}

#[test]
fn stall_every_delays_only_every_nth_request() {
    let stall = Duration::from_millis(150);
    let server = TestServer::start(Behavior::StallEvery { n: 2, stall }).unwrap();
    let mut tcp = connect(&server);
    exchange(&mut tcp, GET, &hello());
    let started = Instant::now();
    exchange(&mut tcp, GET, &hello());
    assert!(started.elapsed() >= stall);
}

#[test]
fn slow_head_arrives_whole() {
    let server = TestServer::start(Behavior::SlowHead).unwrap();
    let mut tcp = connect(&server);
    exchange(&mut tcp, GET, &hello());
    exchange(
        &mut tcp,
        b"HEAD / HTTP/1.1\r\n\r\n",
        &format!("{HELLO_HEAD}\r\n"),
    );
}

#[test]
fn echo_reports_method_body_and_headers_and_the_server_records_them() {
    let server = TestServer::start(Behavior::Echo).unwrap();
    let mut tcp = connect(&server);
    let request = b"POST /form?a=b HTTP/1.1\r\nContent-Type: text/plain\r\nX-Test: 42\r\n\
                    Cookie: k=v\r\nContent-Length: 5\r\n\r\nhello";
    let body = "method: POST\ntarget: /form?a=b\nbody-length: 5\n\
                content-type: text/plain\ncookie: k=v\nx-test: 42\n";
    let expected = format!(
        "HTTP/1.1 200 OK\r\nServer: shootout-testserver\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    exchange(&mut tcp, request, &expected);
    assert_eq!(server.last_request_body_len(), 5);
    let head = server.last_request_head();
    assert!(head.starts_with("POST /form?a=b HTTP/1.1\r\n") && head.ends_with("\r\n\r\n"));
    assert!(!head.contains("hello"));
}

#[test]
fn expect_continue_gets_100_before_the_body_is_sent() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let mut tcp = connect(&server);
    exchange(
        &mut tcp,
        b"PUT / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n",
        "HTTP/1.1 100 Continue\r\n\r\n",
    );
    exchange(&mut tcp, b"abc", &hello());
    assert_eq!(server.last_request_body_len(), 3);
}

#[test]
fn unframeable_requests_get_an_error_and_a_close() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let mut tcp = connect(&server);
    tcp.write_all(b"nonsense\r\n\r\n").unwrap();
    let expected = "HTTP/1.1 400 Bad Request\r\nServer: shootout-testserver\r\n\
                    Content-Length: 16\r\nConnection: close\r\n\r\n400 Bad Request\n";
    assert_eq!(read_all(&mut tcp), (expected.to_string(), None));
    assert_eq!(server.requests(), 0);
}

#[test]
fn counts_connections_and_concurrency() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let mut conns: Vec<TcpStream> = (0..1000).map(|_| connect(&server)).collect();
    for tcp in &mut conns {
        tcp.write_all(GET).unwrap();
    }
    for tcp in &mut conns {
        assert_eq!(read_n(tcp, hello().len()), hello());
    }
    assert_eq!(server.connections(), 1000);
    assert_eq!(server.max_concurrent(), 1000);
    assert_eq!(server.requests(), 1000);
}

#[test]
fn dropping_the_server_ends_stalled_silent_and_blocked_connections() {
    for behavior in [
        Behavior::NeverAnswer,
        Behavior::StallEvery {
            n: 1,
            stall: Duration::from_secs(3600),
        },
        Behavior::Big { len: 1 << 30 },
    ] {
        let server = TestServer::start(behavior.clone()).unwrap();
        let mut tcp = connect(&server);
        tcp.write_all(GET).unwrap();
        // Wait for the request to be counted, so the server is busy with it.
        while server.requests() == 0 {
            std::thread::yield_now();
        }
        let started = Instant::now();
        drop(server);
        assert!(started.elapsed() < Duration::from_secs(2), "{behavior:?}");
        // The client sees the connection end (after whatever was written).
        let (_, err) = read_all(&mut tcp);
        assert!(
            matches!(err, None | Some(io::ErrorKind::ConnectionReset)),
            "{err:?}"
        );
    }
}

#[test]
fn tls_serves_the_same_bytes_and_closes_with_close_notify() {
    let server = TestServer::start_tls(Behavior::Http10CloseDelimited).unwrap();
    assert!(server.url("x").starts_with("https://127.0.0.1:"));
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls::pki_types::CertificateDer::from(
            server.certificate_der().unwrap().to_vec(),
        ))
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = Arc::new(
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    );
    for name in ["localhost", "127.0.0.1"] {
        let name = rustls::pki_types::ServerName::try_from(name).unwrap();
        let session = rustls::ClientConnection::new(Arc::clone(&config), name).unwrap();
        let mut tls = rustls::StreamOwned::new(session, connect(&server));
        tls.write_all(GET).unwrap();
        let expected = "HTTP/1.0 200 OK\r\nServer: shootout-testserver\r\n\r\nHello World\n";
        // No UnexpectedEof: the server sent close_notify before its FIN.
        assert_eq!(read_all(&mut tls), (expected.to_string(), None));
    }
    assert_eq!(server.requests(), 2);
}
