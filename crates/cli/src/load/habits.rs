//! The flags other load tools' users type (ab, wrk, oha, hey), in one place: those whose
//! meaning is clear become what they mean here (`-A` an Authorization header, `-B` local
//! addresses, `-v 2` a sample of heads), and those that cannot are refused with one line
//! naming the flag and shootout's equivalent (exit 2), before clap reads them when clap
//! would misread them (hey's `-disable-keepalive` as `-d isable-keepalive`, wrk2's `-R`
//! with the advice to write `-- -R`). Flags accepted with nothing to do
//! (`-r`, `--latency`, `--latency-correction`) need no code: clap reads them, the help
//! says why they change nothing.
//!
//! Seams: [`super::resolve`] calls [`refusal`], [`basic_auth`], [`accept_header`] and
//! [`bind_list`] while it resolves the flags; `crate::main` calls [`refused_before_parse`]
//! for what clap cannot parse or would misread (oha's `-q 100`, hey's `-d BODY`); [`super::run`] prints the heads
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

/// What clap cannot read, or would read as something else: other tools' flags (oha's
/// `-q 100`, hey's `-disable-keepalive`, hey's and oha's `-d BODY`, wrk2's `-R 2000`, hey's
/// `-o csv`…), each refused with shootout's way. `args` are the whole command line.
pub(crate) fn refused_before_parse(args: &[OsString]) -> Option<Failure> {
    if args.get(1).and_then(|a| a.to_str()) != Some("load") {
        return None;
    }
    let args: Vec<&str> = args[2..].iter().filter_map(|a| a.to_str()).collect();
    for i in 0..args.len() {
        if args[i] == "--" {
            break;
        }
        if let Some(line) = rate_after_q(&args, i).or_else(|| foreign_flag(&args, i)) {
            return Some(Failure::usage(anyhow!(line)));
        }
    }
    None
}

/// Whether `s` is a finite number.
fn number(s: &str) -> bool {
    s.parse::<f64>().is_ok_and(f64::is_finite)
}

/// The value of the short flag `flag` at `args[i]`: `-R 2000`, `-R2000` or `-R=2000`.
fn short_value<'a>(args: &[&'a str], i: usize, flag: &str) -> Option<&'a str> {
    let rest = args[i].strip_prefix(flag)?;
    if rest.is_empty() {
        args.get(i + 1).copied()
    } else {
        Some(rest.strip_prefix('=').unwrap_or(rest))
    }
}

/// oha's `-q 100` (a rate; shootout's `-q` is quiet and takes no value, so the number
/// would be taken for the URL), as its refusal.
fn rate_after_q(args: &[&str], i: usize) -> Option<String> {
    let n = match args[i] {
        "-q" | "--quiet" => args.get(i + 1).copied().filter(|n| number(n)),
        a => a
            .strip_prefix("-q")
            .map(|r| r.strip_prefix('=').unwrap_or(r))
            .filter(|n| number(n)),
    }?;
    Some(format!(
        "-q {n}: shootout's -q is quiet and takes no number; for oha's rate of {n} requests per second write --rate {n} (hey's -q is per worker: multiply it by -c)"
    ))
}

/// hey's, oha's and wrk2's flags that clap would refuse with the advice to write `-- FLAG`
/// (which is wrong) or read as another flag of shootout's, as their refusals.
fn foreign_flag(args: &[&str], i: usize) -> Option<String> {
    let a = args[i];
    let line = match a {
        "-disable-keepalive" | "--disable-keepalive" => format!(
            "{a}: a new connection for every request is --no-keepalive here"
        ),
        "-disable-compression" => "-disable-compression: shootout asks for no compressed answers (it sends no Accept-Encoding): drop the flag".into(),
        "-disable-redirects" | "--redirect" => format!(
            "{a}: shootout never follows redirects (a 3xx is the answer measured): drop the flag"
        ),
        _ if a.starts_with("-R") => {
            let n = short_value(args, i, "-R").unwrap_or("N");
            format!("-R {n}: wrk2's rate is --rate {n} here (requests per second on a fixed schedule, latency corrected as wrk2 corrects it)")
        }
        _ if a.starts_with("-o") => {
            let v = short_value(args, i, "-o").unwrap_or("");
            format!("-o {v}: hey's per-request CSV is -g FILE here (ab's per-request TSV: one line per request); --format picks the report (text, ab, wrk, json)")
        }
        _ if a.starts_with("-D") => {
            let f = short_value(args, i, "-D").unwrap_or("FILE");
            format!("-D {f}: hey's and oha's body file is -p {f} here (POST; -u {f} to PUT, -T for its type)")
        }
        _ if a.starts_with("-d") => {
            let v = short_value(args, i, "-d")?;
            if a.starts_with("-disable") {
                return Some(format!("{a}: not a flag of shootout's (-d is the duration here): see shootout load --help"));
            }
            // A body has what no duration has (`a=1`, `{"a":1}`, `<x/>`, words); any
            // other value is left to the duration's own error.
            let body = v.contains(['=', '&', '{', '[', '<', '"', ' ']);
            if !body || shootout_model::parse_duration(v).is_ok() {
                return None;
            }
            if args.iter().any(|a| super::grpc::http_url(a).is_some()) {
                return Some(format!("-d {v:?}: -d is the duration here (e.g. -d 30s); ghz's -d DATA is --message JSON here (or -p FILE holding it)"));
            }
            format!("-d {v:?}: -d is the duration here (e.g. -d 30s); for hey's and oha's request body write it to a file and give -p FILE (POST, with -T for its type) or -u FILE (PUT)")
        }
        _ => return None,
    };
    Some(line)
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
    if !heads.journey.is_empty() {
        say!("INFO: one user's first journey, step by step:");
    }
    for x in &heads.journey {
        let text = lines(&x.request);
        let method = text.split(' ').next().unwrap_or_default();
        say!(
            "INFO: step {}: {method} header == \n---\n{text}\n---",
            shootout_report::terminal_line(&x.step)
        );
        match &x.answer {
            Some(h) => say!("LOG: header received:\n{}", lines(h)),
            None => say!("LOG: no answer"),
        }
        for (name, value) in &x.captured {
            say!(
                "LOG: captured {{{}}} = {}",
                shootout_report::terminal_line(name),
                shootout_report::terminal_line(&String::from_utf8_lossy(value))
            );
        }
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

    #[test]
    fn other_tools_flags_name_the_way_here() {
        let check = |args: &[&str]| {
            let mut line = vec!["shootout", "load"];
            line.extend(args);
            line.push("http://127.0.0.1/");
            let args: Vec<OsString> = line.into_iter().map(OsString::from).collect();
            refused_before_parse(&args).map(|f| format!("{:#}", f.error))
        };
        for (args, says) in [
            // hey's flag, which clap reads as `-d 'isable-keepalive'`.
            (&["-disable-keepalive"][..], "-disable-keepalive: a new connection for every request is --no-keepalive here"),
            (&["--disable-keepalive"], "--disable-keepalive: a new connection for every request is --no-keepalive here"),
            (&["-disable-compression"], "drop the flag"),
            (&["-disable-redirects"], "never follows redirects"),
            (&["-disable-foo"], "-disable-foo: not a flag of shootout's (-d is the duration here)"),
            // hey's and oha's body, which is not a duration.
            (&["-m", "POST", "-d", "a=1"], "-d \"a=1\": -d is the duration here (e.g. -d 30s); for hey's and oha's request body write it to a file and give -p FILE"),
            (&["-d={\"a\":1}"], "-p FILE"),
            (&["-D", "body.json"], "-D body.json: hey's and oha's body file is -p body.json here"),
            // wrk2's rate, in each way it is written.
            (&["-R", "2000"], "-R 2000: wrk2's rate is --rate 2000 here"),
            (&["-R2000"], "--rate 2000"),
            (&["-R=2000"], "--rate 2000"),
            // hey's output.
            (&["-o", "csv"], "-o csv: hey's per-request CSV is -g FILE here"),
            (&["-ocsv"], "-g FILE"),
        ] {
            let e = check(args).unwrap_or_else(|| panic!("{args:?} was not refused"));
            assert!(e.contains(says), "{args:?}: {e}");
        }
        // Durations, shootout's own flags and what follows `--` are left to clap.
        for args in [
            &["-d", "30s"][..],
            &["-d30s"],
            &["-d", "1m30s", "-c", "10"],
            &["-d=2.5"],
            &["--no-keepalive", "--rate", "100"],
            &["-H", "X: 1", "--", "-R"],
            // Not a duration, but no body either: the duration's own error says so.
            &["-d", "soon"],
            &["-d", "1e20"],
        ] {
            assert_eq!(check(args), None, "{args:?}");
        }
    }
}
