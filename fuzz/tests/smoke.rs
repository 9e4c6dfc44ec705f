//! The bounded smoke pass of the fuzz targets, as a plain test: every input of the corpus,
//! then a fixed number of inputs mutated from it with a seeded generator, through the same
//! functions the fuzzer calls. Deterministic; `SHOOTOUT_FUZZ_SMOKE_INPUTS` changes the
//! count per target (default 20 000).

use std::path::Path;
use std::time::{Duration, Instant};

/// Stops a target's generated inputs early past this, whatever the count.
const TIME_CAP: Duration = Duration::from_secs(20);

/// Pieces of HTTP the mutator splices in, so generated inputs reach past the status line.
const DICT: &[&[u8]] = &[
    b"HTTP/1.1 ",
    b"HTTP/1.0 ",
    b"200 OK\r\n",
    b"100 Continue\r\n\r\n",
    b"101 Switching Protocols\r\n",
    b"204 No Content\r\n",
    b"304 Not Modified\r\n",
    b"\r\n",
    b"\r\n\r\n",
    b"\n",
    b"Content-Length: ",
    b"Content-Length: 5\r\n",
    b"Transfer-Encoding: chunked\r\n",
    b"Transfer-Encoding: gzip\r\n",
    b"Connection: close\r\n",
    b"Connection: keep-alive\r\n",
    b"Server: x\r\n",
    b"0\r\n\r\n",
    b"5;a=b\r\nhello\r\n",
    b";q=\"x\\\"y\"",
    b" ",
    b"\t",
    b";",
    b"=",
    b",",
    b"ffffffffffffffff",
    // WebSocket: the upgrade's answer and frame heads.
    b"Sec-WebSocket-Accept: {ACCEPT}\r\n",
    b"\x81\x05hello",
    b"\x01\x02he\x80\x03llo",
    b"\x89\x00",
    b"\x88\x02\x03\xe8",
    b"\x82\x7e\x00\x80",
    b"\x82\x7f\x00\x00\x00\x00\x01\x00\x00\x01",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(6) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] = rng.next() as u8;
            }
            2 if at < v.len() => {
                let n = 1 + rng.below(8).min(v.len() - at - 1);
                v.drain(at..at + n);
            }
            3 => {
                let piece = DICT[rng.below(DICT.len())];
                v.splice(at..at, piece.iter().copied());
            }
            4 if !v.is_empty() => {
                // Duplicate a slice (pipelines, repeated fields).
                let from = rng.below(v.len());
                let to = (from + 1 + rng.below(64)).min(v.len());
                let copy = v[from..to].to_vec();
                v.splice(at..at, copy);
            }
            _ => v.insert(at, rng.next() as u8),
        }
    }
    v
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.iter().map(|f| std::fs::read(f).unwrap()).collect()
}

fn smoke(target: &str, check: fn(&[u8])) {
    let seeds = corpus(target);
    assert!(!seeds.is_empty(), "no corpus for {target}");
    for s in &seeds {
        check(s);
    }
    let count: usize = std::env::var("SHOOTOUT_FUZZ_SMOKE_INPUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let mut rng = Rng(0x5eed_0000 ^ target.len() as u64);
    let started = Instant::now();
    let mut ran = 0;
    while ran < count && started.elapsed() < TIME_CAP {
        let seed = &seeds[rng.below(seeds.len())];
        let input = mutate(&mut rng, seed);
        let result = std::panic::catch_unwind(|| check(&input));
        if result.is_err() {
            panic!("{target}: generated input {input:?} broke an invariant (see above)");
        }
        ran += 1;
    }
    println!("{target}: {} corpus inputs, {ran} generated", seeds.len());
}

#[test]
fn response() {
    smoke("response", shootout_fuzz::response::check);
}

#[test]
fn head_differential() {
    smoke("head_differential", shootout_fuzz::head_differential::check);
}

#[test]
fn chunked() {
    smoke("chunked", shootout_fuzz::chunked::check);
}

#[test]
fn hpack() {
    smoke("hpack", shootout_fuzz::hpack::check);
}

#[test]
fn hpack_differential() {
    smoke("hpack_differential", shootout_fuzz::hpack::differential);
}

#[test]
fn h2_connection() {
    smoke("h2_connection", shootout_fuzz::h2_connection::check);
}

#[test]
fn h1_connection() {
    smoke("h1_connection", shootout_fuzz::h1_connection::check);
}

#[test]
fn h3() {
    smoke("h3", shootout_fuzz::h3::check);
}

#[test]
fn result_file() {
    smoke("result_file", shootout_fuzz::result_file::check);
}

#[test]
fn grpc_reply() {
    smoke("grpc_reply", shootout_fuzz::grpc_reply::check);
}

#[test]
fn grpc_reflection() {
    smoke("grpc_reflection", shootout_fuzz::grpc_reflection::check);
}

#[test]
fn websocket() {
    smoke("websocket", shootout_fuzz::websocket::check);
}

#[test]
fn message_list() {
    smoke("message_list", shootout_fuzz::message_list::check);
}

#[test]
fn request_list() {
    smoke("request_list", shootout_fuzz::request_list::check);
}

#[test]
fn plan() {
    smoke("plan", shootout_fuzz::plan::check);
}

#[test]
fn journey_file() {
    smoke("journey_file", shootout_fuzz::journey_file::check);
}

#[test]
fn journey_answer() {
    smoke("journey_answer", shootout_fuzz::journey_answer::check);
}

#[test]
fn store_samples() {
    smoke("store_samples", shootout_fuzz::store_samples::check);
}

#[test]
fn barrier() {
    smoke("barrier", shootout_fuzz::barrier::check);
}
