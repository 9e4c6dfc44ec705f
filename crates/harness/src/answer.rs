//! [`sample_answer`]: one answer of a contender, fetched with a dozen lines of HTTP/1.1,
//! to show the user what it said when its verification failed.
//!
//! Seams: the CLI's verification calls it with the workload's [`LoadSpec`] after the
//! engine counted failures; the engine is not used here (the harness never imports it),
//! so the answer is fetched on a fresh connection of its own, with `Connection: close`.

use shootout_model::LoadSpec;
use std::io::{Read, Write};
use std::time::Duration;

/// One answer to the workload's request, shown when verification fails: its status line
/// and the start of its body, so the user sees what the contender said instead.
pub fn sample_answer(spec: &LoadSpec, body: &[u8]) -> String {
    if spec.target.scheme.tls() {
        return "(not shown for https)".into();
    }
    let attempt = || -> std::io::Result<String> {
        let addr = std::net::ToSocketAddrs::to_socket_addrs(&(
            spec.target.host.as_str(),
            spec.target.port,
        ))?
        .next()
        .ok_or_else(|| std::io::Error::other("no address"))?;
        let mut s = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
        s.set_read_timeout(Some(Duration::from_secs(2)))?;
        let mut req = format!(
            "{} {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            spec.request.method, spec.target.path, spec.target.host_header
        );
        for (k, v) in &spec.request.headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        s.write_all(req.as_bytes())?;
        s.write_all(body)?;
        let mut buf = Vec::new();
        let _ = s.take(4096).read_to_end(&mut buf);
        let text = String::from_utf8_lossy(&buf);
        let status = text.lines().next().unwrap_or("(nothing)").to_string();
        let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        let body: String = body
            .chars()
            .take(200)
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        Ok(format!("{status} | {}", body.trim()))
    };
    attempt().unwrap_or_else(|e| format!("(could not fetch one: {e})"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_model::Target;
    use std::io::BufRead;
    use std::net::TcpListener;

    /// Serves one connection on 127.0.0.1 with `answer`; returns the URL and a handle
    /// that gives the request it read (head lines, then the body).
    fn one_answer(answer: &'static [u8]) -> (String, std::thread::JoinHandle<Vec<String>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/p?q=1", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let (s, _) = listener.accept().unwrap();
            let mut r = std::io::BufReader::new(s);
            let mut lines = Vec::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                r.read_line(&mut line).unwrap();
                let line = line.trim_end().to_string();
                if let Some(n) = line.strip_prefix("Content-Length: ") {
                    length = n.parse().unwrap();
                }
                if line.is_empty() {
                    break;
                }
                lines.push(line);
            }
            let mut body = vec![0; length];
            r.read_exact(&mut body).unwrap();
            lines.push(String::from_utf8(body).unwrap());
            r.get_mut().write_all(answer).unwrap();
            lines
        });
        (url, server)
    }

    #[test]
    fn the_status_line_and_the_start_of_the_body() {
        let (url, server) =
            one_answer(b"HTTP/1.1 418 I'm a teapot\r\nContent-Length: 12\r\n\r\nshort\tand\nstout");
        let mut spec = LoadSpec::new(Target::parse(&url).unwrap());
        spec.request.method = "POST".into();
        spec.request.headers = vec![("X-Test".into(), "yes".into())];
        let answer = sample_answer(&spec, b"hello");
        assert_eq!(answer, "HTTP/1.1 418 I'm a teapot | short and stout");
        let request = server.join().unwrap();
        let host = url.trim_start_matches("http://").split('/').next().unwrap();
        assert_eq!(
            request,
            [
                "POST /p?q=1 HTTP/1.1".to_string(),
                format!("Host: {host}"),
                "Connection: close".into(),
                "X-Test: yes".into(),
                "Content-Length: 5".into(),
                "hello".into(),
            ]
        );
    }

    #[test]
    fn what_could_not_be_fetched_says_why() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let spec = LoadSpec::new(Target::parse(&format!("http://127.0.0.1:{port}/")).unwrap());
        let answer = sample_answer(&spec, b"");
        assert!(answer.starts_with("(could not fetch one: "), "{answer}");
        let https = LoadSpec::new(Target::parse("https://127.0.0.1:1/").unwrap());
        assert_eq!(sample_answer(&https, b""), "(not shown for https)");
    }
}
