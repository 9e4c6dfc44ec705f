//! The flags other load tools' users type (ab, wrk, oha, hey), in one place: those whose
//! meaning is clear become what they mean here (`-A` an Authorization header, `-B` local
//! addresses, `-v 2` a sample of heads), and those that cannot are refused with one line
//! naming the flag and shootout's equivalent (exit 2). Flags accepted with nothing to do
//! (`-r`, `--latency`, `--latency-correction`) need no code: clap reads them, the help
//! says why they change nothing.
//!
//! Seams: [`super::resolve`] calls [`refusal`], [`basic_auth`], [`accept_header`] and
//! [`bind_list`] while it resolves the flags; `crate::main` calls [`refused_before_parse`]
//! for what clap cannot parse at all (oha's `-q 100`); [`super::run`] prints the heads
//! ([`print_heads`]).

use super::flags::LoadArgs;
use crate::output::Failure;
use anyhow::anyhow;
use base64::Engine as _;
use std::ffi::OsString;
use std::net::IpAddr;

/// Answers whose heads `-v 2` prints (with the first request's).
pub(super) const SAMPLE_HEADS: usize = 3;

/// The `-v` level from which heads are printed (ab's).
const HEADS_VERBOSITY: u8 = 2;

/// How many answer heads to sample for `-v N` (0 below ab's level 2).
pub(super) fn sample_heads(a: &LoadArgs) -> usize {
    if a.verbosity.unwrap_or(0) >= HEADS_VERBOSITY {
        SAMPLE_HEADS
    } else {
        0
    }
}

/// The first habit flag given that shootout refuses, as its one-line error.
pub(super) fn refusal(a: &LoadArgs) -> Option<Failure> {
    let line = if a.html_tables {
        "-w: ab's HTML tables are not printed here: add --html FILE for one HTML page with charts (shootout report --html FILE for a stored run)".to_string()
    } else if let Some(p) = &a.proxy {
        format!("-X {p}: shootout does not send through a proxy: it would time the proxy with the server; load the server directly, or a reverse proxy at its own URL")
    } else if a.proxy_auth.is_some() {
        "-P: shootout does not send through a proxy, so it has no proxy credentials; for the server's own use -A user:password".to_string()
    } else if let Some(s) = &a.script {
        lua("--script", s)
    } else if is_lua(&a.timeout) {
        lua("-s", &a.timeout)
    } else {
        return None;
    };
    Some(Failure::usage(anyhow!(line)))
}

/// wrk's `-s script.lua` (`-s` is ab's timeout here).
fn is_lua(value: &str) -> bool {
    value.to_ascii_lowercase().ends_with(".lua")
}

/// The line refusing a Lua script given to `flag`.
fn lua(flag: &str, file: &str) -> String {
    format!("{flag} {file}: shootout runs no Lua (wrk's scripts); many requests, methods and bodies go in a list: --urls FILE, with {{seq}} and {{rand:LO-HI}} templates (-s is the request timeout here)")
}

/// `-A user:password` as an `Authorization: Basic …` header (RFC 7617), or `None` when the
/// value has no colon (hey's `-A` is an Accept header: see [`accept_header`]).
pub(super) fn basic_auth(value: &str) -> Option<(String, String)> {
    value.contains(':').then(|| {
        let token = base64::engine::general_purpose::STANDARD.encode(value.as_bytes());
        ("Authorization".into(), format!("Basic {token}"))
    })
}

/// hey's `-A text/html` (a media range, no colon): its Accept header; `None` otherwise.
pub(super) fn accept_header(value: &str) -> Option<(String, String)> {
    (!value.contains(':') && value.contains('/')).then(|| ("Accept".into(), value.trim().into()))
}

/// The `-A` value that is neither ab's `user:password` nor hey's media type.
pub(super) fn bad_auth(value: &str) -> Failure {
    Failure::usage(anyhow!(
        "-A {value:?}: write ab's -A user:password for basic authentication (or -H 'Accept: {value}' for hey's Accept header)"
    ))
}

/// `-B`: addresses separated by commas, each one address or a range `FIRST-LAST` (LAST a
/// whole address, or for IPv4 the last number only: `127.0.0.1-8`), in order, repeats
/// dropped.
pub(super) fn bind_list(value: &str) -> Result<Vec<IpAddr>, Failure> {
    let bad = |part: &str, why: &str| {
        Failure::usage(anyhow!(
            "-B {part}: {why}: write an address of this machine, a list or a range (127.0.0.2, 127.0.0.1-127.0.0.8, 127.0.0.1-8)"
        ))
    };
    let mut out: Vec<IpAddr> = Vec::new();
    for part in value.split(',').map(str::trim) {
        let (first, last) = match part.split_once('-') {
            None => {
                let ip: IpAddr = part.parse().map_err(|_| bad(part, "not an address"))?;
                (ip, ip)
            }
            Some((a, b)) => {
                let first: IpAddr = a.trim().parse().map_err(|_| bad(part, "not an address"))?;
                let last = match (first, b.trim().parse::<u8>()) {
                    (IpAddr::V4(f), Ok(n)) => {
                        let [x, y, z, _] = f.octets();
                        IpAddr::from([x, y, z, n])
                    }
                    _ => b.trim().parse().map_err(|_| bad(part, "not a range"))?,
                };
                (first, last)
            }
        };
        let span = match (first, last) {
            (IpAddr::V4(f), IpAddr::V4(l)) => {
                u128::from(u32::from(l)).checked_sub(u32::from(f).into())
            }
            (IpAddr::V6(f), IpAddr::V6(l)) => u128::from(l).checked_sub(u128::from(f)),
            _ => None,
        }
        .ok_or_else(|| bad(part, "the range runs backwards or mixes IPv4 and IPv6"))?;
        if out.len() as u128 + span >= shootout_model::spec::MAX_BIND as u128 {
            return Err(bad(part, "too many addresses (at most 65536)"));
        }
        for k in 0..=span {
            let ip = match first {
                IpAddr::V4(f) => std::net::Ipv4Addr::from((u32::from(f) as u128 + k) as u32).into(),
                IpAddr::V6(f) => std::net::Ipv6Addr::from(u128::from(f) + k).into(),
            };
            if !out.contains(&ip) {
                out.push(ip);
            }
        }
    }
    Ok(out)
}

/// What clap cannot read: oha's `-q 100` (a rate; shootout's `-q` is quiet and takes no
/// value, so the number would be taken for the URL). `args` are the whole command line.
pub(crate) fn refused_before_parse(args: &[OsString]) -> Option<Failure> {
    if args.get(1).and_then(|a| a.to_str()) != Some("load") {
        return None;
    }
    let args: Vec<&str> = args[2..].iter().filter_map(|a| a.to_str()).collect();
    let number = |s: &str| s.parse::<f64>().is_ok_and(f64::is_finite);
    for (i, a) in args.iter().enumerate() {
        if *a == "--" {
            break;
        }
        let rate = match *a {
            "-q" | "--quiet" => args.get(i + 1).copied().filter(|n| number(n)),
            _ => a
                .strip_prefix("-q")
                .map(|r| r.strip_prefix('=').unwrap_or(r))
                .filter(|n| number(n)),
        };
        if let Some(n) = rate {
            return Some(Failure::usage(anyhow!(
                "-q {n}: shootout's -q is quiet and takes no number; for oha's rate of {n} requests per second write --rate {n} (hey's -q is per worker: multiply it by -c)"
            )));
        }
    }
    None
}

/// Prints the sampled heads on stderr, ab's `-v 2` way: the request (`INFO: … header ==`
/// between `---` lines), then each answer (`LOG: header received:`). The server's words
/// are shown with control characters escaped.
pub(super) fn print_heads(heads: &shootout_engine::Heads) {
    let lines = |bytes: &[u8]| -> String {
        String::from_utf8_lossy(bytes)
            .lines()
            .map(|l| shootout_report::terminal_line(l).into_owned())
            .collect::<Vec<_>>()
            .join("\n")
    };
    if let Some(r) = &heads.request {
        // The method of the request sampled (a list's first entry may not be GET).
        let text = lines(r);
        let method = text.split(' ').next().unwrap_or_default();
        say!("INFO: {method} header == \n---\n{text}\n---");
    }
    for h in &heads.responses {
        say!("LOG: header received:\n{}", lines(h));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_lists_and_ranges() {
        let ips = |s: &str| {
            bind_list(s)
                .unwrap()
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(ips("127.0.0.2"), ["127.0.0.2"]);
        assert_eq!(
            ips("127.0.0.1-3, 127.0.0.2,::1"),
            ["127.0.0.1", "127.0.0.2", "127.0.0.3", "::1"]
        );
        assert_eq!(
            ips("127.0.0.254-127.0.1.1"),
            ["127.0.0.254", "127.0.0.255", "127.0.1.0", "127.0.1.1"]
        );
        assert_eq!(ips("::1-::2"), ["::1", "::2"]);
        for bad in [
            "",
            "localhost",
            "127.0.0.9-3",
            "127.0.0.1-::1",
            "10.0.0.0-10.255.255.255",
        ] {
            let e = format!("{:#}", bind_list(bad).expect_err(bad).error);
            assert!(e.starts_with("-B "), "{e}");
        }
    }

    #[test]
    fn basic_auth_is_rfc_7617() {
        // RFC 7617 §2's example.
        assert_eq!(
            basic_auth("Aladdin:open sesame"),
            Some((
                "Authorization".into(),
                "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==".into()
            ))
        );
        assert_eq!(basic_auth("text/html"), None);
        assert_eq!(
            accept_header("text/html"),
            Some(("Accept".into(), "text/html".into()))
        );
        assert_eq!(accept_header("user"), None);
    }

    #[test]
    fn a_number_after_q_is_oha_s_rate() {
        let check = |line: &str| {
            let args: Vec<OsString> = line.split(' ').map(OsString::from).collect();
            refused_before_parse(&args).map(|f| format!("{:#}", f.error))
        };
        for line in [
            "shootout load -q 100 http://127.0.0.1/",
            "shootout load -q100 http://127.0.0.1/",
            "shootout load -c 2 -q=100 http://127.0.0.1/",
        ] {
            let e = check(line).expect(line);
            assert!(e.contains("--rate 100"), "{e}");
        }
        assert_eq!(check("shootout load -q http://127.0.0.1/"), None);
        assert_eq!(check("shootout load -q -n 100 http://127.0.0.1/"), None);
        assert_eq!(check("shootout merge -q 1"), None);
    }
}
