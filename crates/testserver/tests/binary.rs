//! The `shootout-testserver` binary: announces its URL, serves the chosen behaviour, and
//! refuses unknown behaviours with exit code 2.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_shootout-testserver");

#[test]
fn announces_its_url_and_serves_the_behaviour() {
    let mut child = Command::new(BIN)
        .args([
            "fail-every",
            "--every",
            "1",
            "--status",
            "503",
            "--port",
            "0",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim_end()
        .strip_prefix("listening on http://127.0.0.1:")
        .map(|port| format!("127.0.0.1:{port}"));

    let answer = addr.as_ref().map(|addr| {
        let mut tcp = TcpStream::connect(addr).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        tcp.write_all(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut answer = String::new();
        tcp.read_to_string(&mut answer).unwrap();
        answer
    });
    child.kill().unwrap();
    child.wait().unwrap();

    assert!(addr.is_some(), "{line:?}");
    assert_eq!(
        answer.unwrap(),
        "HTTP/1.1 503 Service Unavailable\r\nServer: shootout-testserver\r\n\
         Content-Length: 24\r\nConnection: close\r\n\r\n503 Service Unavailable\n"
    );
}

#[test]
fn serves_a_new_behaviour_bytewise() {
    let mut child = Command::new(BIN)
        .args(["body-after-bodiless", "--bytewise"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let answer = line
        .trim_end()
        .strip_prefix("listening on http://")
        .map(|addr| {
            let mut tcp = TcpStream::connect(addr).unwrap();
            tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            tcp.write_all(b"GET /204 HTTP/1.1\r\nConnection: close\r\n\r\n")
                .unwrap();
            let mut answer = String::new();
            tcp.read_to_string(&mut answer).unwrap();
            answer
        });
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        answer.as_deref(),
        Some(
            "HTTP/1.1 204 No Content\r\nServer: shootout-testserver\r\n\
             Connection: close\r\n\r\nHello World\n"
        ),
        "{line:?}"
    );
}

#[test]
fn unknown_behaviour_exits_with_2() {
    let out = Command::new(BIN).arg("teapot").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown behaviour `teapot`"), "{stderr}");
    assert!(stderr.contains("never-answer"), "{stderr}");
    assert!(stderr.contains("endless-chunked"), "{stderr}");
}
