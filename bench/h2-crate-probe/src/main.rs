//! `h2-crate-probe URL CONNECTIONS STREAMS SECONDS`: GET URL over h2c with the `h2` crate
//! on one current-thread tokio runtime, CONNECTIONS × STREAMS requests in flight (closed
//! loop), for SECONDS; prints requests, req/s and the thread's CPU µs per request
//! (user + sys from getrusage(RUSAGE_THREAD)). The body of every answer is read to its end.

use std::time::{Duration, Instant};

fn cpu() -> Duration {
    // SAFETY: getrusage fills the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: h2-crate-probe URL CONNECTIONS STREAMS SECONDS");
        std::process::exit(2);
    }
    let uri: http::Uri = args[1].parse().expect("a URL");
    let conns: usize = args[2].parse().expect("connections");
    let streams: usize = args[3].parse().expect("streams");
    let secs: u64 = args[4].parse().expect("seconds");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let cpu0 = cpu();
    let start = Instant::now();
    let end = start + Duration::from_secs(secs);
    let done: usize = tokio::task::LocalSet::new().block_on(&rt, async {
        let mut tasks = Vec::new();
        for _ in 0..conns {
            let uri = uri.clone();
            let authority = uri.authority().expect("host:port").to_string();
            let tcp = tokio::net::TcpStream::connect(&authority).await.expect("connect");
            tcp.set_nodelay(true).ok();
            let (client, conn) = h2::client::Builder::new()
                .initial_window_size((1 << 30) - 1)
                .initial_connection_window_size((1 << 30) - 1)
                .handshake::<_, bytes::Bytes>(tcp)
                .await
                .expect("handshake");
            tokio::task::spawn_local(async move {
                let _ = conn.await;
            });
            for _ in 0..streams {
                let mut client = client.clone();
                let uri = uri.clone();
                tasks.push(tokio::task::spawn_local(async move {
                    let mut n = 0usize;
                    while Instant::now() < end {
                        client = match client.ready().await {
                            Ok(c) => c,
                            Err(_) => break,
                        };
                        let req = http::Request::get(uri.clone()).body(()).expect("request");
                        let Ok((resp, _)) = client.send_request(req, true) else { break };
                        let Ok(resp) = resp.await else { break };
                        let mut body = resp.into_body();
                        while let Some(chunk) = body.data().await {
                            let Ok(chunk) = chunk else { break };
                            let _ = body.flow_control().release_capacity(chunk.len());
                        }
                        n += 1;
                    }
                    n
                }));
            }
        }
        let mut total = 0;
        for t in tasks {
            total += t.await.unwrap_or(0);
        }
        total
    });
    let wall = start.elapsed().as_secs_f64();
    let used = (cpu() - cpu0).as_secs_f64();
    println!(
        "{done} requests, {:.0} req/s, {:.2} CPU µs/req",
        done as f64 / wall,
        used * 1e6 / done.max(1) as f64
    );
}
