//! Raw-socket checks of the exact bytes each behaviour sends (in both delivery modes),
//! of the truth counters, and of the stop sequence. Clients carry a 10 s read timeout
//! only as a safety net: every test waits on bytes, on the server's close or on
//! [`TestServer::wait_idle`], never on the clock. (Two `CloseIdle` tests sleep, but to
//! make a connection idle, not to synchronise.)

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use shootout_testserver::{Behavior, Delivery, TestServer, Transport};

const SAFETY: Duration = Duration::from_secs(10);
const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n";
const HELLO_HEAD: &str = "HTTP/1.1 200 OK\r\nServer: shootout-testserver\r\nContent-Length: 12\r\n";

/// Both delivery modes: every new behaviour is checked in each against the same bytes.
const MODES: [Delivery; 2] = [Delivery::Whole, Delivery::Bytewise];

fn hello() -> String {
    format!("{HELLO_HEAD}\r\nHello World\n")
}

/// The server's truth counters: (requests, answers, unsolicited, dropped).
fn counts(server: &TestServer) -> (u64, u64, u64, u64) {
    (
        server.requests(),
        server.answers(),
        server.unsolicited(),
        server.dropped(),
    )
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
    let hour = Duration::from_secs(3600);
    let behaviors = [
        Behavior::NeverAnswer,
        Behavior::StallEvery { n: 1, stall: hour },
        Behavior::Big { len: 1 << 30 },
        Behavior::DropAfterRead {
            every: 1,
            work: hour,
        },
        Behavior::ExtraResponse { delay: hour },
        Behavior::EndlessChunked,
    ];
    for (behavior, delivery) in behaviors.iter().flat_map(|b| MODES.map(|d| (b.clone(), d))) {
        let server = TestServer::start_with(behavior.clone(), delivery).unwrap();
        let mut tcp = connect(&server);
        tcp.write_all(GET).unwrap();
        // Wait for the request to be counted, so the server is busy with it.
        while server.requests() == 0 {
            std::thread::yield_now();
        }
        let started = Instant::now();
        drop(server);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{behavior:?} {delivery:?}"
        );
        // The client sees the connection end (after whatever was written).
        let (_, err) = read_all(&mut tcp);
        assert!(
            matches!(err, None | Some(io::ErrorKind::ConnectionReset)),
            "{err:?}"
        );
    }
}

/// A client config trusting `server`'s self-signed certificate.
fn trusting(server: &TestServer) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls::pki_types::CertificateDer::from(
            server.certificate_der().unwrap().to_vec(),
        ))
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Arc::new(
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

#[test]
fn tls_serves_the_same_bytes_and_closes_with_close_notify() {
    let server = TestServer::start_tls(Behavior::Http10CloseDelimited).unwrap();
    assert!(server.url("x").starts_with("https://127.0.0.1:"));
    let config = trusting(&server);
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
    assert_eq!(server.answers(), 2);
}

#[test]
fn tls_without_close_notify_ends_with_a_bare_fin_and_credits_no_close_delimited_answer() {
    for delivery in MODES {
        let server = TestServer::start_on_with(
            0,
            Behavior::Http10CloseDelimited,
            Transport::TlsWithoutCloseNotify,
            delivery,
        )
        .unwrap();
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let session = rustls::ClientConnection::new(trusting(&server), name).unwrap();
        let mut tls = rustls::StreamOwned::new(session, connect(&server));
        tls.write_all(GET).unwrap();
        let expected = "HTTP/1.0 200 OK\r\nServer: shootout-testserver\r\n\r\nHello World\n";
        // The same bytes, then a TCP close with no close_notify before it.
        assert_eq!(
            read_all(&mut tls),
            (expected.to_string(), Some(io::ErrorKind::UnexpectedEof)),
            "{delivery:?}"
        );
        drop(tls);
        assert!(server.wait_idle(Duration::from_secs(5)));
        // Without close_notify the body's end is unknown: no answer, no drop.
        assert_eq!(
            (server.requests(), server.answers(), server.dropped()),
            (1, 0, 0),
            "{delivery:?}"
        );
    }
}

#[test]
fn keeps_open_answers_by_length_and_never_closes() {
    for delivery in MODES {
        let server = TestServer::start_with(Behavior::KeepsOpen, delivery).unwrap();
        let mut tcp = connect(&server);
        // HTTP/1.0 and Connection: close both ask to close; the server answers and stays.
        for request in [
            &b"GET / HTTP/1.0\r\n\r\n"[..],
            b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        ] {
            exchange(&mut tcp, request, CANONICAL);
        }
        assert_eq!(counts(&server), (2, 2, 0, 0), "{delivery:?}");
        assert_eq!(server.max_concurrent(), 1);
    }
}

/// The canonical `Hello` answer, sent where no request asked for one.
const CANONICAL: &str = "HTTP/1.1 200 OK\r\nServer: shootout-testserver\r\n\
                         Content-Length: 12\r\n\r\nHello World\n";

#[test]
fn extra_response_follows_each_answer_with_one_nobody_asked_for() {
    assert_eq!(CANONICAL, hello());
    for delivery in MODES {
        // No delay: both answers arrive together; the next request is served as usual.
        let server = TestServer::start_with(
            Behavior::ExtraResponse {
                delay: Duration::ZERO,
            },
            delivery,
        )
        .unwrap();
        let mut tcp = connect(&server);
        exchange(&mut tcp, GET, &format!("{}{CANONICAL}", hello()));
        exchange(
            &mut tcp,
            b"HEAD / HTTP/1.1\r\n\r\n",
            &format!("{HELLO_HEAD}\r\n{CANONICAL}"),
        );
        assert_eq!(counts(&server), (2, 2, 2, 0), "{delivery:?}");

        // With a delay, and a request that asks to close: answer, extra answer, close.
        let delay = Duration::from_millis(50);
        let server = TestServer::start_with(Behavior::ExtraResponse { delay }, delivery).unwrap();
        let mut tcp = connect(&server);
        let started = Instant::now();
        tcp.write_all(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
            .unwrap();
        let answer = format!("{HELLO_HEAD}Connection: close\r\n\r\nHello World\n");
        assert_eq!(read_n(&mut tcp, answer.len()), answer);
        assert_eq!(server.answers(), 1);
        assert_eq!(read_all(&mut tcp), (CANONICAL.to_string(), None));
        assert!(started.elapsed() >= delay);
        assert_eq!(counts(&server), (1, 1, 1, 0), "{delivery:?}");
    }
}

#[test]
fn body_after_bodiless_sends_bodies_that_204_and_head_may_not_have() {
    let server_line = "Server: shootout-testserver\r\n";
    for delivery in MODES {
        let server = TestServer::start_with(Behavior::BodyAfterBodiless, delivery).unwrap();
        let mut tcp = connect(&server);
        exchange(
            &mut tcp,
            b"GET /204?q=1 HTTP/1.1\r\n\r\n",
            &format!("HTTP/1.1 204 No Content\r\n{server_line}\r\nHello World\n"),
        );
        exchange(
            &mut tcp,
            b"HEAD /204 HTTP/1.1\r\n\r\n",
            &format!("{HELLO_HEAD}\r\nHello World\n"),
        );
        exchange(&mut tcp, GET, &hello());
        tcp.write_all(b"GET /204 HTTP/1.1\r\nConnection: close\r\n\r\n")
            .unwrap();
        let last = format!(
            "HTTP/1.1 204 No Content\r\n{server_line}Connection: close\r\n\r\nHello World\n"
        );
        assert_eq!(read_all(&mut tcp), (last, None));
        assert_eq!(counts(&server), (4, 4, 3, 0), "{delivery:?}");
    }
}

#[test]
fn answer_first_answers_before_any_request() {
    for delivery in MODES {
        let server = TestServer::start_with(Behavior::AnswerFirst, delivery).unwrap();
        for connection in 1..=2 {
            let mut tcp = connect(&server);
            assert_eq!(read_n(&mut tcp, CANONICAL.len()), CANONICAL);
            assert_eq!(server.unsolicited(), connection);
            exchange(&mut tcp, GET, &hello());
            exchange(&mut tcp, GET, &hello());
        }
        assert_eq!(counts(&server), (4, 4, 2, 0), "{delivery:?}");
    }
}

#[test]
fn upgrade_switches_protocols_then_closes() {
    let expected = "HTTP/1.1 101 Switching Protocols\r\nServer: shootout-testserver\r\n\
                    Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
    for delivery in MODES {
        let server = TestServer::start_with(Behavior::Upgrade, delivery).unwrap();
        for request in [GET, b"HEAD / HTTP/1.0\r\n\r\n"] {
            let mut tcp = connect(&server);
            tcp.write_all(request).unwrap();
            assert_eq!(read_all(&mut tcp), (expected.to_string(), None));
        }
        assert_eq!(counts(&server), (2, 2, 0, 0), "{delivery:?}");
    }
}

#[test]
fn many_headers_puts_the_extra_lines_before_content_length() {
    let expected = "HTTP/1.1 200 OK\r\nServer: shootout-testserver\r\nX-Extra-1: 1\r\n\
                    X-Extra-2: 2\r\nX-Extra-3: 3\r\nContent-Length: 12\r\n\r\nHello World\n";
    for delivery in MODES {
        let server = TestServer::start_with(Behavior::ManyHeaders { count: 3 }, delivery).unwrap();
        let mut tcp = connect(&server);
        exchange(&mut tcp, GET, expected);
        exchange(&mut tcp, GET, expected);
        let server = TestServer::start_with(Behavior::ManyHeaders { count: 0 }, delivery).unwrap();
        exchange(&mut connect(&server), GET, &hello());
        let server =
            TestServer::start_with(Behavior::ManyHeaders { count: 1000 }, delivery).unwrap();
        let mut tcp = connect(&server);
        tcp.write_all(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
            .unwrap();
        let (got, err) = read_all(&mut tcp);
        assert_eq!(err, None);
        assert!(got.contains("\r\nX-Extra-1000: 1000\r\nContent-Length: 12\r\n"));
        assert_eq!(got.matches("X-Extra-").count(), 1000);
    }
}

#[test]
fn drop_after_read_reads_every_nth_request_then_closes_without_answering() {
    for delivery in MODES {
        let work = Duration::from_millis(30);
        let server =
            TestServer::start_with(Behavior::DropAfterRead { every: 2, work }, delivery).unwrap();
        let mut tcp = connect(&server);
        exchange(&mut tcp, GET, &hello());
        // The dropped request has a body: it is read in full (and counted) first.
        let started = Instant::now();
        tcp.write_all(b"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc")
            .unwrap();
        assert_eq!(read_all(&mut tcp), (String::new(), None));
        assert!(started.elapsed() >= work);
        // Counted before the close started: no waiting needed.
        assert_eq!(counts(&server), (2, 1, 0, 1), "{delivery:?}");
        assert_eq!(server.last_request_body_len(), 3);

        // Server-wide: request 3 on a new connection is answered, 4 dropped, and the
        // pipelined request 5 behind it is never read.
        let mut tcp = connect(&server);
        exchange(&mut tcp, GET, &hello());
        tcp.write_all(&GET.repeat(2)).unwrap();
        assert_eq!(read_all(&mut tcp), (String::new(), None));
        assert_eq!(counts(&server), (4, 2, 0, 2), "{delivery:?}");

        let server = TestServer::start_with(
            Behavior::DropAfterRead {
                every: 0,
                work: Duration::ZERO,
            },
            delivery,
        )
        .unwrap();
        let mut tcp = connect(&server);
        for _ in 0..3 {
            exchange(&mut tcp, GET, &hello());
        }
        assert_eq!(server.dropped(), 0);
    }
}

#[test]
fn close_idle_closes_a_connection_with_no_new_request_within_the_timeout() {
    let after = Duration::from_millis(200);
    for delivery in MODES {
        let server = TestServer::start_with(Behavior::CloseIdle { after }, delivery).unwrap();
        // Requests that follow at once are all answered; then the idle one is closed.
        let mut tcp = connect(&server);
        let mut started = Instant::now();
        for _ in 0..3 {
            started = Instant::now();
            exchange(&mut tcp, GET, &hello());
        }
        assert_eq!(read_all(&mut tcp), (String::new(), None));
        // The timeout started after the last answer was written, so after the request.
        let waited = started.elapsed();
        assert!(waited >= after && waited < SAFETY / 2, "{waited:?}");
        assert_eq!(counts(&server), (3, 3, 0, 0), "{delivery:?}");

        // A connection that never sends a request is closed too.
        let started = Instant::now();
        assert_eq!(read_all(&mut connect(&server)), (String::new(), None));
        assert!(started.elapsed() >= after);
        assert_eq!(server.connections(), 2);
    }
}

#[test]
fn close_idle_restarts_the_timeout_after_each_answer_and_not_within_a_request() {
    let after = Duration::from_millis(400);
    let server = TestServer::start(Behavior::CloseIdle { after }).unwrap();
    let mut tcp = connect(&server);
    // Three gaps of half the timeout: longer than the timeout in all, shorter each.
    for _ in 0..3 {
        exchange(&mut tcp, GET, &hello());
        std::thread::sleep(after / 2);
    }
    // A request whose first bytes came in time may take longer than the timeout.
    tcp.write_all(b"GET / HT").unwrap();
    std::thread::sleep(after * 2);
    exchange(&mut tcp, b"TP/1.1\r\n\r\n", &hello());
    // Empty lines before a request line do not start a request.
    tcp.write_all(b"\r\n").unwrap();
    assert_eq!(read_all(&mut tcp), (String::new(), None));
    assert_eq!(counts(&server), (4, 4, 0, 0));
}

#[test]
fn close_on_accept_closes_before_reading_anything() {
    for delivery in MODES {
        let server = TestServer::start_with(Behavior::CloseOnAccept, delivery).unwrap();
        assert_eq!(read_all(&mut connect(&server)), (String::new(), None));
        let mut tcp = connect(&server);
        tcp.write_all(GET).unwrap();
        let (got, err) = read_all(&mut tcp);
        assert!(got.is_empty());
        assert!(
            matches!(err, None | Some(io::ErrorKind::ConnectionReset)),
            "{err:?}"
        );
        assert_eq!(server.connections(), 2);
        assert!(server.wait_idle(SAFETY));
        assert_eq!(counts(&server), (0, 0, 0, 0));
    }
}

#[test]
fn endless_chunked_never_ends_and_stops_when_the_client_closes() {
    let head =
        "HTTP/1.1 200 OK\r\nServer: shootout-testserver\r\nTransfer-Encoding: chunked\r\n\r\n";
    let chunk = format!("2000\r\n{}\r\n", "x".repeat(8192));
    for delivery in MODES {
        let server = TestServer::start_with(Behavior::EndlessChunked, delivery).unwrap();
        let mut tcp = connect(&server);
        // HEAD: the head alone, and the connection stays usable.
        exchange(&mut tcp, b"HEAD / HTTP/1.1\r\n\r\n", head);
        exchange(&mut tcp, GET, &format!("{head}{}", chunk.repeat(3)));
        for _ in 0..5 {
            assert_eq!(read_n(&mut tcp, chunk.len()), chunk);
        }
        drop(tcp);
        // The server's next writes fail and the connection ends.
        assert!(server.wait_idle(SAFETY), "{delivery:?}");
        assert_eq!(counts(&server), (2, 1, 0, 0), "{delivery:?}");
    }
}

#[test]
fn counters_follow_known_exchanges() {
    // NeverAnswer: requests count as dropped only once their connection has ended.
    let server = TestServer::start(Behavior::NeverAnswer).unwrap();
    let mut tcp = connect(&server);
    tcp.write_all(&GET.repeat(3)).unwrap();
    while server.requests() < 3 {
        std::thread::yield_now();
    }
    assert_eq!(server.dropped(), 0);
    drop(tcp);
    assert!(server.wait_idle(SAFETY));
    assert_eq!(counts(&server), (3, 0, 0, 3));

    // ServeFirst: the unserved connection's requests are dropped when it ends.
    let server = TestServer::start(Behavior::ServeFirst {
        connections: 1,
        delay: Duration::ZERO,
    })
    .unwrap();
    let mut served = connect(&server);
    exchange(&mut served, GET, &hello());
    let mut unserved = connect(&server);
    unserved.write_all(GET).unwrap();
    while server.requests() < 2 {
        std::thread::yield_now();
    }
    drop((served, unserved));
    assert!(server.wait_idle(SAFETY));
    assert_eq!(counts(&server), (2, 1, 0, 1));

    // Interim answers, 100 Continue and refusals are no answers; errors statuses are.
    let server = TestServer::start(Behavior::Interim).unwrap();
    let mut tcp = connect(&server);
    tcp.write_all(b"PUT / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n")
        .unwrap();
    let cont = "HTTP/1.1 100 Continue\r\n\r\n";
    assert_eq!(read_n(&mut tcp, cont.len()), cont);
    tcp.write_all(b"x").unwrap();
    let interim = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\n\
                   Link: </a.css>; rel=preload\r\n\r\n";
    assert_eq!(
        read_n(&mut tcp, interim.len() + hello().len()),
        format!("{interim}{}", hello())
    );
    tcp.write_all(b"nonsense\r\n\r\n").unwrap();
    assert!(read_all(&mut tcp).0.starts_with("HTTP/1.1 400 "));
    assert_eq!(counts(&server), (1, 1, 0, 0));

    let server = TestServer::start(Behavior::FailEvery { n: 2, status: 503 }).unwrap();
    let mut tcp = connect(&server);
    exchange(&mut tcp, GET, &hello());
    let fail = "HTTP/1.1 503 Service Unavailable\r\nServer: shootout-testserver\r\n\
                Content-Length: 24\r\n\r\n503 Service Unavailable\n";
    exchange(&mut tcp, GET, fail);
    assert_eq!(counts(&server), (2, 2, 0, 0));

    // LongBody: the 7 bytes past the announced length are unsolicited (not for HEAD).
    let server = TestServer::start(Behavior::LongBody).unwrap();
    let mut tcp = connect(&server);
    let head = "HTTP/1.1 200 OK\r\nServer: shootout-testserver\r\nContent-Length: 5\r\n\r\n";
    exchange(&mut tcp, GET, &format!("{head}Hello World\n"));
    exchange(&mut tcp, b"HEAD / HTTP/1.1\r\n\r\n", head);
    assert_eq!(counts(&server), (2, 2, 1, 0));

    // Fixed with a status that forbids a body: the body is unsolicited; a 1xx other
    // than 101 is no final answer, so its request is dropped when the connection ends.
    for (status, expected) in [(204, (1, 1, 1, 0)), (103, (1, 0, 1, 1))] {
        let b = Behavior::Fixed {
            status,
            body: b"body".to_vec(),
        };
        let server = TestServer::start(b).unwrap();
        let mut tcp = connect(&server);
        let answer = format!(
            "HTTP/1.1 {status} {}\r\nServer: shootout-testserver\r\n\
             Content-Length: 4\r\n\r\nbody",
            shootout_testserver::reason(status)
        );
        exchange(&mut tcp, GET, &answer);
        drop(tcp);
        assert!(server.wait_idle(SAFETY));
        assert_eq!(counts(&server), expected, "{status}");
    }

    // Broken answers are neither answered nor dropped; a HEAD's complete head is.
    for b in [
        Behavior::Garbage,
        Behavior::ShortBody,
        Behavior::ResetMidBody,
    ] {
        let server = TestServer::start(b.clone()).unwrap();
        let mut tcp = connect(&server);
        tcp.write_all(GET).unwrap();
        read_all(&mut tcp);
        assert_eq!(counts(&server), (1, 0, 0, 0), "{b:?}");
        let mut tcp = connect(&server);
        tcp.write_all(b"HEAD / HTTP/1.1\r\n\r\n").unwrap();
        read_all(&mut tcp);
        let answered = u64::from(b != Behavior::Garbage);
        assert_eq!(counts(&server), (2, answered, 0, 0), "{b:?}");
    }

    // A client that leaves before its delayed answer: the request is dropped.
    let server = TestServer::start(Behavior::StallEvery {
        n: 1,
        stall: Duration::from_millis(100),
    })
    .unwrap();
    let mut tcp = connect(&server);
    tcp.write_all(GET).unwrap();
    while server.requests() < 1 {
        std::thread::yield_now();
    }
    reset(&tcp);
    drop(tcp);
    assert!(server.wait_idle(SAFETY));
    assert_eq!(counts(&server), (1, 0, 0, 1));
}

/// Makes dropping `tcp` send RST (`SO_LINGER` 0), so the server's next write fails.
fn reset(tcp: &TcpStream) {
    use std::os::fd::AsRawFd;
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: `linger` is a valid struct linger and the length passed is its size.
    let rc = unsafe {
        libc::setsockopt(
            tcp.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0);
}

/// Every behaviour sends the same bytes, and counts the same, whether its writes are
/// whole or one byte each.
#[test]
fn bytewise_delivery_sends_the_same_bytes_as_whole() {
    let close = b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
    let behaviors = [
        Behavior::Hello,
        Behavior::Fixed {
            status: 404,
            body: b"nope".to_vec(),
        },
        Behavior::Chunked { trailers: true },
        Behavior::Http10CloseDelimited,
        Behavior::CloseAfter {
            requests: 1,
            header: false,
        },
        Behavior::NoBody,
        Behavior::Interim,
        Behavior::ServeFirst {
            connections: 1,
            delay: Duration::ZERO,
        },
        Behavior::ResetMidBody,
        Behavior::Garbage,
        Behavior::ShortBody,
        Behavior::LongBody,
        Behavior::FailEvery { n: 1, status: 502 },
        Behavior::Big { len: 100_000 },
        Behavior::StallEvery {
            n: 1,
            stall: Duration::from_millis(1),
        },
        Behavior::SlowHead,
        Behavior::Echo,
        Behavior::ExtraResponse {
            delay: Duration::ZERO,
        },
        Behavior::BodyAfterBodiless,
        Behavior::AnswerFirst,
        Behavior::Upgrade,
        Behavior::ManyHeaders { count: 20 },
        Behavior::DropAfterRead {
            every: 2,
            work: Duration::ZERO,
        },
        Behavior::CloseIdle {
            after: Duration::from_secs(60),
        },
        Behavior::CloseOnAccept,
    ];
    // Each request on a connection of its own; the server closes after each answer.
    let requests: [&[u8]; 5] = [
        close,
        b"HEAD /204 HTTP/1.1\r\nConnection: close\r\n\r\n",
        b"GET /204 HTTP/1.1\r\nConnection: close\r\n\r\n",
        b"PUT / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
    ];
    for behavior in behaviors {
        let mut seen = Vec::new();
        for delivery in MODES {
            let server = TestServer::start_with(behavior.clone(), delivery).unwrap();
            let streams: Vec<_> = requests
                .iter()
                .map(|request| {
                    let mut tcp = connect(&server);
                    // The server may have closed first (CloseOnAccept, DropAfterRead).
                    let _ = tcp.write_all(request);
                    read_all(&mut tcp)
                })
                .collect();
            assert!(server.wait_idle(SAFETY));
            seen.push((streams, counts(&server)));
        }
        assert!(!seen[0].0[0].0.is_empty() || behavior == Behavior::CloseOnAccept);
        assert_eq!(seen[0], seen[1], "{behavior:?}");
    }
}

#[test]
fn bytewise_delivers_continue_and_refusals_too() {
    let server = TestServer::start_with(Behavior::Hello, Delivery::Bytewise).unwrap();
    let mut tcp = connect(&server);
    exchange(
        &mut tcp,
        b"PUT / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n",
        "HTTP/1.1 100 Continue\r\n\r\n",
    );
    exchange(&mut tcp, b"abc", &hello());
    tcp.write_all(b"nonsense\r\n\r\n").unwrap();
    let expected = "HTTP/1.1 400 Bad Request\r\nServer: shootout-testserver\r\n\
                    Content-Length: 16\r\nConnection: close\r\n\r\n400 Bad Request\n";
    assert_eq!(read_all(&mut tcp), (expected.to_string(), None));
}

/// TCP segments received so far on `tcp` (`tcpi_segs_in` of `TCP_INFO`).
fn segments_in(tcp: &TcpStream) -> u32 {
    use std::os::fd::AsRawFd;
    // SAFETY: an all-zero tcp_info is a valid value of this plain C struct.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into `info`.
    let rc = unsafe {
        libc::getsockopt(
            tcp.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    assert_eq!(rc, 0);
    info.tcpi_segs_in
}

#[test]
fn bytewise_puts_bytes_in_segments_of_their_own() {
    // The kernel merges one-byte writes only when they queue up (behind a full
    // congestion window, at least 10 segments at the start): so an 80-byte answer comes
    // in at least 10 segments, where Whole sends one (plus, perhaps, a bare ACK).
    for (delivery, fewest, most) in [(Delivery::Whole, 1, 2), (Delivery::Bytewise, 10, 81)] {
        let server = TestServer::start_with(Behavior::Hello, delivery).unwrap();
        let mut tcp = connect(&server);
        let before = segments_in(&tcp);
        exchange(&mut tcp, GET, &hello());
        let segments = segments_in(&tcp) - before;
        assert!(
            (fewest..=most).contains(&segments),
            "{delivery:?}: {segments} segments"
        );
    }
}

/// A held worker serves the connection it accepted, kept alive, and accepts the next only
/// when the client closes it: the second connection's request waits unread meanwhile.
#[test]
fn a_held_worker_serves_one_kept_connection_while_the_next_waits() {
    for delivery in MODES {
        let server = TestServer::start_with(Behavior::HeldWorker, delivery).unwrap();
        let mut first = connect(&server);
        for _ in 0..3 {
            exchange(&mut first, GET, &hello());
        }
        let mut second = connect(&server);
        second.write_all(GET).unwrap();
        // The first is still served: its fourth request is answered, the second's is not.
        exchange(&mut first, GET, &hello());
        assert_eq!(server.connections(), 1, "{delivery:?}");
        assert_eq!(counts(&server), (4, 4, 0, 0), "{delivery:?}");
        drop(first);
        assert_eq!(read_n(&mut second, hello().len()), hello(), "{delivery:?}");
        assert_eq!(server.connections(), 2, "{delivery:?}");
        assert_eq!(counts(&server), (5, 5, 0, 0), "{delivery:?}");
    }
}
