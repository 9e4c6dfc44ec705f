//! `shootout-testserver`: runs one test server on `127.0.0.1` until killed, for trying
//! the load generator (or another tool) by hand against a chosen misbehaviour.
//!
//! Seams: arguments are parsed by hand into a [`Behavior`], a port, a transport and a
//! [`Delivery`], then handed to [`TestServer::start_on_with`]; the library does the
//! rest.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use shootout_testserver::{
    Behavior, Delivery, GrpcBehavior, H2Behavior, H2Server, H3Behavior, H3Server, Reflect,
    TestServer, Transport,
};

const USAGE: &str = "\
usage: shootout-testserver [BEHAVIOR] [OPTIONS]

Serves HTTP/1.1 on 127.0.0.1 with one behaviour until killed.

behaviours (default: hello):
  hello                   200 \"Hello World\\n\", keep-alive
  fixed                   --status (200) and --body (\"Hello World\\n\") on every answer
  chunked                 chunked body; --trailers adds a trailer
  http10                  HTTP/1.0 answer delimited by close
  close-after             closes after --every (1) answers per connection;
                          --header announces it with Connection: close
  no-body                 /204 and /304 without body, else hello
  interim                 100 and 103 interim answers before hello
  never-answer            reads requests, never answers
  serve-first             hello after --stall-ms (1000) on the first --every (1) connections,
                          no answer on later ones
  reset-mid-body          head, 100 of 1000 body bytes, then RST
  garbage                 \"this is not http\" then close
  short-body              50 of 100 body bytes, then close
  long-body               12 body bytes for Content-Length: 5
  fail-every              every --every (10)th request gets --status (502)
  big                     a body of --len (10000000) bytes
  stall-every             every --every (10)th request waits --stall-ms (1000)
  capacity                one request at a time server-wide, 1 ms each (1,000 req/s at most)
  cold-cache              answers slowed by a cold cache: 20 ms at first, falling to none over 3,000 requests
  sync-worker             one connection at a time (a sync worker): waits for its request, answers, closes
  held-worker             one connection at a time, kept alive until the client closes it; the rest wait unaccepted
  slow-accept             accepts one connection per 100 ms from a backlog of one; answers after 20 ms
  slow-head               head written 3 bytes at a time
  echo                    body describes the request
  app                     a small web application for journeys (a session cookie, a CSRF
                          token): POST /login?user=NAME, GET /form, POST /paste?csrf=TOKEN&text=TEXT,
                          GET /paste/TEXT, GET /desk?us=N (served in turn, N µs each)
  extra-response          hello, then an unasked second hello after --stall-ms (0)
  body-after-bodiless     /204 and HEAD answers followed by a body they may not have
  answer-first            an unasked hello on accept, then hello to each request
  upgrade                 101 Switching Protocols to websocket, then close
  many-headers            hello with --count (100) extra header lines
  drop-after-read         every --every (10)th request is read, then after
                          --stall-ms (0) the connection closes without an answer
  close-idle              hello; closes a connection idle for --stall-ms (5000)
  close-on-accept         closes every connection at once
  endless-chunked         a chunked body that never ends
  keeps-open              answers, never closes, even when the request asks to
  h2-hello                HTTP/2 over TLS (ALPN h2): 200 \"Hello World!\" (any free port)
  grpc-greeter            gRPC over h2c: helloworld.Greeter/SayHello answers \"hello NAME\" (any free port)
  grpc-stream             gRPC over h2c: helloworld.Greeter/SayHellos answers 10 \"hello NAME\" replies a call
  grpc-chat               gRPC over h2c: helloworld.Greeter/Chat answers each message \"hello NAME\" as it comes
  grpc-reflection         the greeter with server reflection (v1 and v1alpha): its schema asked of it
  h3-hello                HTTP/3 over QUIC (the h3 crate): 200 \"Hello World!\" (any free
                          UDP port)

options:
  --port N       port to listen on (default 0: any free port)
  --tls          serve HTTPS with a self-signed certificate
  --bytewise     send every byte in a write of its own
  -h, --help     print this help";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(code) = other_protocol(&args) {
        return code;
    }
    let (behavior, port, transport, delivery) = match parse(&args) {
        Ok(Some(parsed)) => parsed,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("error: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let server = match TestServer::start_on_with(port, behavior, transport, delivery) {
        Ok(server) => server,
        Err(e) => {
            eprintln!("error: cannot listen on 127.0.0.1:{port}: {e}\nhint: pick another --port, or 0 for any free port");
            return ExitCode::FAILURE;
        }
    };
    let mut stdout = std::io::stdout();
    let _ = writeln!(
        stdout,
        "listening on {}",
        server.url("").trim_end_matches('/')
    );
    let _ = stdout.flush();
    loop {
        std::thread::park();
    }
}

/// The HTTP/2, gRPC and HTTP/3 servers (`h2-hello`, `grpc-greeter`, `grpc-stream`,
/// `grpc-chat`, `grpc-reflection`, `h3-hello`), on any free port: served
/// until killed. `None` for any other behaviour.
fn other_protocol(args: &[String]) -> Option<ExitCode> {
    let started = match args.first().map(String::as_str) {
        Some("h2-hello") => H2Server::start_with(H2Behavior::Hello, Delivery::Whole, true)
            .map(|s| (s.url("/"), Box::new(s) as Box<dyn std::any::Any>)),
        // h2c: its URL is grpc://127.0.0.1:PORT (its method /helloworld.Greeter/SayHello).
        Some("grpc-greeter") => H2Server::start_with(
            H2Behavior::Grpc(GrpcBehavior::Greeter),
            Delivery::Whole,
            false,
        )
        .map(|s| {
            let url = s.url("/").replacen("http://", "grpc://", 1);
            (url, Box::new(s) as Box<dyn std::any::Any>)
        }),
        // The same greeter, each call of /helloworld.Greeter/SayHellos answered with 10
        // replies.
        Some("grpc-stream") => H2Server::start_with(
            H2Behavior::Grpc(GrpcBehavior::Stream(10)),
            Delivery::Whole,
            false,
        )
        .map(|s| {
            let url = s.url("/").replacen("http://", "grpc://", 1);
            (url, Box::new(s) as Box<dyn std::any::Any>)
        }),
        // The same greeter, each message of a /helloworld.Greeter/Chat stream answered
        // as it comes.
        Some("grpc-chat") => {
            H2Server::start_with(H2Behavior::Grpc(GrpcBehavior::Chat), Delivery::Whole, false).map(
                |s| {
                    let url = s.url("/").replacen("http://", "grpc://", 1);
                    (url, Box::new(s) as Box<dyn std::any::Any>)
                },
            )
        }
        // The greeter with server reflection (v1 and v1alpha): its schema asked of it.
        Some("grpc-reflection") => H2Server::start_with(
            H2Behavior::Grpc(GrpcBehavior::Reflection(Reflect::Serves)),
            Delivery::Whole,
            false,
        )
        .map(|s| {
            let url = s.url("/").replacen("http://", "grpc://", 1);
            (url, Box::new(s) as Box<dyn std::any::Any>)
        }),
        Some("h3-hello") => H3Server::start(H3Behavior::Hello)
            .map(|s| (s.url("/"), Box::new(s) as Box<dyn std::any::Any>)),
        _ => return None,
    };
    let (url, _server) = match started {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot start the server: {e}");
            return Some(ExitCode::FAILURE);
        }
    };
    println!("listening on {}", url.trim_end_matches('/'));
    let _ = std::io::stdout().flush();
    loop {
        std::thread::park();
    }
}

/// Parses the arguments; `Ok(None)` asks for help.
fn parse(args: &[String]) -> Result<Option<(Behavior, u16, Transport, Delivery)>, String> {
    let Some(o) = options(args)? else {
        return Ok(None);
    };
    let (port, transport, delivery) = (o.port, o.transport, o.delivery);
    Ok(Some((behavior(o)?, port, transport, delivery)))
}

/// What the arguments say, before it makes a behaviour.
struct Options<'a> {
    name: Option<&'a str>,
    port: u16,
    transport: Transport,
    delivery: Delivery,
    count: usize,
    every: Option<u32>,
    status: Option<u16>,
    body: Option<Vec<u8>>,
    len: usize,
    stall_ms: Option<u64>,
    header: bool,
    trailers: bool,
}

/// Reads the options and the behaviour's name; `Ok(None)` asks for help.
fn options(args: &[String]) -> Result<Option<Options<'_>>, String> {
    let mut o = Options {
        name: None,
        port: 0,
        transport: Transport::Plain,
        delivery: Delivery::Whole,
        count: 100,
        every: None,
        status: None,
        body: None,
        len: 10_000_000,
        stall_ms: None,
        header: false,
        trailers: false,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .ok_or_else(|| format!("{flag} needs a value"))
                .cloned()
        };
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--port" => o.port = number(&value("--port")?, "--port")?,
            "--tls" => o.transport = Transport::Tls,
            "--every" => o.every = Some(number(&value("--every")?, "--every")?),
            "--status" => o.status = Some(number(&value("--status")?, "--status")?),
            "--body" => o.body = Some(value("--body")?.into_bytes()),
            "--len" => o.len = number(&value("--len")?, "--len")?,
            "--stall-ms" => o.stall_ms = Some(number(&value("--stall-ms")?, "--stall-ms")?),
            "--count" => o.count = number(&value("--count")?, "--count")?,
            "--bytewise" => o.delivery = Delivery::Bytewise,
            "--header" => o.header = true,
            "--trailers" => o.trailers = true,
            flag if flag.starts_with('-') => return Err(format!("unknown option `{flag}`")),
            other if o.name.is_none() => o.name = Some(other),
            other => return Err(format!("unexpected argument `{other}`: one behaviour only")),
        }
    }
    Ok(Some(o))
}

/// The behaviour the options name (`hello` when none), its numbers from the options.
fn behavior(o: Options) -> Result<Behavior, String> {
    let ms = |default: u64| Duration::from_millis(o.stall_ms.unwrap_or(default));
    Ok(match o.name.unwrap_or("hello") {
        "hello" => Behavior::Hello,
        "fixed" => Behavior::Fixed {
            status: o.status.unwrap_or(200),
            body: o.body.unwrap_or_else(|| b"Hello World\n".to_vec()),
        },
        "chunked" => Behavior::Chunked {
            trailers: o.trailers,
        },
        "http10" | "http10-close-delimited" => Behavior::Http10CloseDelimited,
        "close-after" => Behavior::CloseAfter {
            requests: o.every.unwrap_or(1),
            header: o.header,
        },
        "no-body" => Behavior::NoBody,
        "interim" => Behavior::Interim,
        "never-answer" => Behavior::NeverAnswer,
        "serve-first" => Behavior::ServeFirst {
            connections: u64::from(o.every.unwrap_or(1)),
            delay: ms(1000),
        },
        "reset-mid-body" => Behavior::ResetMidBody,
        "garbage" => Behavior::Garbage,
        "short-body" => Behavior::ShortBody,
        "long-body" => Behavior::LongBody,
        "fail-every" => Behavior::FailEvery {
            n: o.every.unwrap_or(10),
            status: o.status.unwrap_or(502),
        },
        "big" => Behavior::Big { len: o.len },
        "stall-every" => Behavior::StallEvery {
            n: o.every.unwrap_or(10),
            stall: ms(1000),
        },
        "capacity" => Behavior::Capacity { service: ms(1) },
        "cold-cache" => Behavior::ColdCache {
            cold: ms(20),
            requests: 3_000,
        },
        "sync-worker" => Behavior::SyncWorker,
        "held-worker" => Behavior::HeldWorker,
        "slow-accept" => Behavior::SlowAccept {
            every: ms(100),
            delay: ms(20),
        },
        "slow-head" => Behavior::SlowHead,
        "echo" => Behavior::Echo,
        "app" => Behavior::App,
        "extra-response" => Behavior::ExtraResponse { delay: ms(0) },
        "body-after-bodiless" => Behavior::BodyAfterBodiless,
        "answer-first" => Behavior::AnswerFirst,
        "upgrade" => Behavior::Upgrade,
        "many-headers" => Behavior::ManyHeaders { count: o.count },
        "drop-after-read" => Behavior::DropAfterRead {
            every: o.every.unwrap_or(10),
            work: ms(0),
        },
        "close-idle" => Behavior::CloseIdle { after: ms(5000) },
        "close-on-accept" => Behavior::CloseOnAccept,
        "endless-chunked" => Behavior::EndlessChunked,
        "keeps-open" => Behavior::KeepsOpen,
        unknown => return Err(format!("unknown behaviour `{unknown}`; see the list below")),
    })
}

fn number<T: std::str::FromStr>(text: &str, flag: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("{flag} wants a non-negative integer, got `{text}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every HTTP/1.1 behaviour the usage lists is one `parse` accepts, and the ones the
    /// README's tour runs by hand (`app`, `echo`) are listed.
    #[test]
    fn the_usage_lists_behaviours_that_parse() {
        let listed: Vec<&str> = USAGE
            .lines()
            .skip_while(|l| !l.starts_with("behaviours"))
            .skip(1)
            .take_while(|l| !l.is_empty())
            .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        assert!(listed.len() > 30, "{listed:?}");
        for name in ["app", "echo", "hello", "sync-worker"] {
            assert!(listed.contains(&name), "{name} is not in the usage");
        }
        for name in listed {
            if ["h2-", "grpc-", "h3-"].iter().any(|p| name.starts_with(p)) {
                continue;
            }
            let parsed = parse(&[name.to_string()]);
            assert!(matches!(parsed, Ok(Some(_))), "{name}: {:?}", parsed.err());
        }
    }
}
