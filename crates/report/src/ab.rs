//! ab 2.3's report, label for label and column for column, so scripts that parse ab's
//! output keep working; and ab's two side files, `-e` (percentile CSV) and `-g` (gnuplot
//! TSV of every request).
//!
//! The layout follows `output_results()` in ab.c (httpd 2.4's support/ab.c): labels padded
//! to column 24, integer milliseconds rounded with `ap_round_ms`, sample standard deviation,
//! lines printed under the same conditions. Inputs: a `LoadSpec` and a `RunResult` (µs
//! histograms); our failure classes are mapped onto ab's four in [`AbFailures`].
//! What ab cannot express (warnings, aborted requests) is not printed here: the caller
//! shows [`crate::warnings`] on stderr.

use crate::stats::{non_2xx, sample_stdev};
use crate::units::{ab_round_ms, apr_ctime, ratio};
use crate::Exporter;
use hdrhistogram::Histogram;
use shootout_model::{Counts, FailureKind, LoadSpec, RunResult};
use std::fmt::Write;
use std::time::{Duration, UNIX_EPOCH};

/// Appends one formatted line to a `String` (writing to a `String` cannot fail).
macro_rules! emit {
    ($out:expr) => {
        $out.push('\n')
    };
    ($out:expr, $($arg:tt)*) => {
        writeln!($out, $($arg)*).expect("writing to a String cannot fail")
    };
}

/// The ab rendering, with the options of ab's own flags.
pub struct Ab(pub AbOptions);

impl Exporter for Ab {
    fn render(&self, spec: &LoadSpec, result: &RunResult) -> String {
        ab_report(spec, result, self.0)
    }
}

/// ab's own flags that change its report (`shootout load` accepts them from ab users).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AbOptions {
    /// ab's `-l`: bodies of varying length are no "Length" failures.
    pub lengths_vary: bool,
    /// ab's `-S`: the connection times table without the standard deviation and median
    /// columns (`min avg max`), and without ab's warnings about them.
    pub no_spread: bool,
}

/// Our failure classes in ab's four columns of "Failed requests".
///
/// ab's own classes: Connect (connect failed), Receive (read error or reset), Length
/// (a body length unlike the first response's), Exceptions (anything else). Unexpected
/// status codes are not failures to ab: they show as "Non-2xx responses" instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbFailures {
    /// Connections that could not be established.
    pub connect: u64,
    /// Resets, timeouts and malformed responses (ab: errors while receiving).
    pub receive: u64,
    /// Responses whose body length differed from the first response's.
    pub length: u64,
    /// Body-expectation failures (`--expect-body`/`--expect-length`): ab has no such check,
    /// so they go under the catch-all "Exceptions" rather than vanish; so do requests
    /// failed by a fault of shootout's own (`generator_fault`).
    pub exceptions: u64,
}

impl AbFailures {
    /// Maps `counts` onto ab's classes.
    pub fn of(counts: &Counts) -> AbFailures {
        let f = &counts.failures;
        AbFailures {
            connect: f[FailureKind::Connect],
            // A stream the HTTP/2 server reset, refused or abandoned is a failed receive too,
            // and so is a WebSocket message its server refused, closed or broke.
            receive: f[FailureKind::Reset]
                + f[FailureKind::Timeout]
                + f[FailureKind::Malformed]
                + f[FailureKind::StreamReset]
                + f[FailureKind::Refused]
                + f[FailureKind::ConnectionError]
                + f[FailureKind::Handshake]
                + f[FailureKind::Closed]
                + f[FailureKind::Protocol],
            length: counts.length_mismatch,
            // A gRPC call that failed (its status, its framing, its message, its
            // trailers) is an exception too: its HTTP answer was received whole.
            exceptions: f[FailureKind::Body]
                + f[FailureKind::GeneratorFault]
                + f.grpc().map(|(_, n)| n).sum::<u64>(),
        }
    }

    /// ab's "Failed requests": the sum of the four classes.
    pub fn total(&self) -> u64 {
        self.connect + self.receive + self.length + self.exceptions
    }
}

/// One row of ab's "Connection Times (ms)" table: whole milliseconds (rounded like ab),
/// the standard deviation with one decimal.
struct AbRow {
    min: u64,
    mean: u64,
    sd: f64,
    median: u64,
    max: u64,
}

impl AbRow {
    fn of(h: &Histogram<u64>) -> AbRow {
        if h.is_empty() {
            return AbRow {
                min: 0,
                mean: 0,
                sd: 0.0,
                median: 0,
                max: 0,
            };
        }
        AbRow {
            min: ab_round_ms(h.min()),
            // ab divides the µs total by the count (integer division), then rounds to ms.
            mean: ab_round_ms(h.mean() as u64),
            sd: sample_stdev(h) / 1e3,
            median: ab_round_ms(h.value_at_quantile(0.5)),
            max: ab_round_ms(h.max()),
        }
    }

    /// ab's `CONF_FMT_STRING`: `%5d %4d %5.1f %6d %7d`.
    fn line(&self) -> String {
        format!(
            "{:5} {:4} {:5.1} {:6} {:7}",
            self.min, self.mean, self.sd, self.median, self.max
        )
    }

    /// ab's `SANE` check: mean and median more than one (or two) standard deviations apart.
    fn sanity(&self, what: &str) -> Option<String> {
        let d = (self.mean as f64 - self.median as f64).abs();
        if d > 2.0 * self.sd {
            Some(format!(
                "ERROR: The median and mean for {what} are more than twice the standard\n       deviation apart. These results are NOT reliable."
            ))
        } else if d > self.sd {
            Some(format!(
                "WARNING: The median and mean for {what} are not within a normal deviation\n        These results are probably not that reliable."
            ))
        } else {
            None
        }
    }
}

/// ab's percentile table rows.
const AB_PERCENTS: [u32; 9] = [50, 66, 75, 80, 90, 95, 98, 99, 100];

/// The report as ab prints it with the flags of `opts` (what [`Ab`] renders): server and
/// document, counts, rates, then the connection times and percentile tables.
pub(crate) fn ab_report(spec: &LoadSpec, r: &RunResult, opts: AbOptions) -> String {
    let mut o = String::new();
    server_and_document(&mut o, spec, r);
    counts(&mut o, spec, r, opts);
    rates(&mut o, spec, r);
    connection_times(&mut o, r, opts);
    percentiles(&mut o, r);
    o
}

/// ab's first block: the server's name, host and port, and the document's path and length.
fn server_and_document(o: &mut String, spec: &LoadSpec, r: &RunResult) {
    let target = &spec.target;
    let server = r
        .first_response
        .as_ref()
        .and_then(|f| f.server.as_deref())
        .unwrap_or("");
    // The server's own words: shown with its control characters escaped.
    emit!(
        o,
        "Server Software:        {}",
        crate::safe::terminal_line(server)
    );
    emit!(o, "Server Hostname:        {}", target.host);
    emit!(o, "Server Port:            {}", target.port);
    // ab prints "SSL/TLS Protocol: TLSv1.3,<cipher>,<bits>,<bits>" here; the result does not
    // record the negotiated protocol or cipher, so we print only what we know: the SNI name,
    // which we (like ab) send for host names and not for address literals.
    if target.scheme.tls() && target.host.parse::<std::net::IpAddr>().is_err() {
        emit!(o, "TLS Server Name:        {}", target.host);
    }
    emit!(o);
    emit!(o, "Document Path:          {}", target.path);
    let doclen = r.first_response.as_ref().map_or(0, |f| f.body_len);
    emit!(o, "Document Length:        {doclen} bytes");
    emit!(o);
}

/// ab's counts: concurrency, time taken, complete and failed requests, bytes transferred.
fn counts(o: &mut String, spec: &LoadSpec, r: &RunResult, opts: AbOptions) {
    let c = &r.counts;
    emit!(o, "Concurrency Level:      {}", spec.connections);
    let taken = r.duration.as_secs_f64();
    emit!(o, "Time taken for tests:   {taken:.3} seconds");
    emit!(o, "Complete requests:      {}", c.completed);
    let mut failed = AbFailures::of(c);
    if opts.lengths_vary {
        failed.length = 0;
    }
    emit!(o, "Failed requests:        {}", failed.total());
    if failed.total() > 0 {
        emit!(
            o,
            "   (Connect: {}, Receive: {}, Length: {}, Exceptions: {})",
            failed.connect,
            failed.receive,
            failed.length,
            failed.exceptions
        );
    }
    // ab's "Write errors:" line (EPIPE while sending) is printed only when non-zero; a
    // failed send shows up here as a reset, so we never print it.
    let non2xx = non_2xx(c);
    if non2xx > 0 {
        emit!(o, "Non-2xx responses:      {non2xx}");
    }
    if spec.request.keepalive {
        // ab counts responses that allowed the connection to be reused; we count requests
        // that reused a connection: every completed request but each connection's first.
        let reused = c.completed.saturating_sub(c.connections_opened);
        emit!(o, "Keep-Alive requests:    {reused}");
    }
    emit!(o, "Total transferred:      {} bytes", c.bytes_received);
    let sends_body = !spec.request.body.is_empty();
    if sends_body {
        // ab's "Total body sent" is every byte of every request, head included (no unit).
        emit!(o, "Total body sent:        {}", c.bytes_sent);
    }
    emit!(o, "HTML transferred:       {} bytes", c.body_bytes);
}

/// ab's rates: requests per second, time per request and transfer rate (none when nothing
/// completed or no time passed).
fn rates(o: &mut String, spec: &LoadSpec, r: &RunResult) {
    let c = &r.counts;
    let taken = r.duration.as_secs_f64();
    let sends_body = !spec.request.body.is_empty();
    if taken > 0.0 && c.completed > 0 {
        let done = c.completed as f64;
        emit!(
            o,
            "Requests per second:    {:.2} [#/sec] (mean)",
            done / taken
        );
        // Not ab's: ab counts every completed request, failed ones included; when some
        // failed, the rate of good answers follows on a line of its own.
        if c.ok != c.completed {
            emit!(
                o,
                "Good answers per sec:   {:.2} [#/sec] (mean, failed requests left out)",
                r.ok_rps()
            );
        }
        emit!(
            o,
            "Time per request:       {:.3} [ms] (mean)",
            spec.connections as f64 * taken * 1000.0 / done
        );
        emit!(
            o,
            "Time per request:       {:.3} [ms] (mean, across all concurrent requests)",
            taken * 1000.0 / done
        );
        emit!(
            o,
            "Transfer rate:          {:.2} [Kbytes/sec] received",
            c.bytes_received as f64 / 1024.0 / taken
        );
        if sends_body {
            let sent = c.bytes_sent as f64;
            emit!(
                o,
                "                        {:.2} kb/s sent",
                sent / taken / 1024.0
            );
            emit!(
                o,
                "                        {:.2} kb/s total",
                (c.bytes_received as f64 + sent) / taken / 1024.0
            );
        }
    }
}

/// ab's "Connection Times (ms)" table and its sanity warnings.
fn connection_times(o: &mut String, r: &RunResult, opts: AbOptions) {
    // ab prints the tables when at least one request got an answer. "Total" is the latency
    // (from the due time in rate mode) and "Processing" is total minus connect, as the
    // engine records it, so Connect + Processing = Total as in ab.
    if !r.histograms.latency.is_empty() {
        let rows = [
            (
                "Connect:    ",
                "the initial connection time",
                AbRow::of(&r.histograms.connect),
            ),
            (
                "Processing: ",
                "the processing time",
                AbRow::of(&r.histograms.processing),
            ),
            (
                "Waiting:    ",
                "the waiting time",
                AbRow::of(&r.histograms.waiting),
            ),
            (
                "Total:      ",
                "the total time",
                AbRow::of(&r.histograms.latency),
            ),
        ];
        emit!(o);
        emit!(o, "Connection Times (ms)");
        if opts.no_spread {
            // ab's `-S` layout: `%5d %5d%5d` (no blank before the max column, as ab).
            emit!(o, "              min   avg   max");
            for (label, _, row) in &rows {
                emit!(o, "{label}{:5} {:5}{:5}", row.min, row.mean, row.max);
            }
            return;
        }
        emit!(o, "              min  mean[+/-sd] median   max");
        for (label, _, row) in &rows {
            emit!(o, "{label}{}", row.line());
        }
        for (_, what, row) in &rows {
            if let Some(msg) = row.sanity(what) {
                emit!(o, "{msg}");
            }
        }
        // Not ab's: ab opens a connection per request (or charges it to the first); the
        // setup of connections opened ahead of their requests would otherwise not show.
        if let Some(line) = crate::common::setup_line(r) {
            emit!(o, "{line}");
        }
    }
}

/// ab's "Percentage of the requests served within a certain time (ms)" table.
fn percentiles(o: &mut String, r: &RunResult) {
    if r.histograms.latency.len() > 1 {
        emit!(o);
        emit!(
            o,
            "Percentage of the requests served within a certain time (ms)"
        );
        for p in AB_PERCENTS {
            if p == 100 {
                let longest = ab_round_ms(r.histograms.latency.max());
                emit!(o, " 100%  {longest:5} (longest request)");
            } else {
                let us = r.histograms.latency.value_at_quantile(f64::from(p) / 100.0);
                emit!(o, "  {p}%  {:5}", ab_round_ms(us));
            }
        }
    }
}

/// ab's `-e FILE`: a CSV of the latency (ms, three decimals) at every whole percentile,
/// `Percentage served,Time in ms` then rows `0` (fastest) to `100` (slowest), as ab 2.3
/// writes it since it was fixed to include the 100th row.
///
/// From `result.histograms.latency` (µs; corrected in rate mode). When no request got an
/// answer ab writes no file; we return the header alone.
pub fn ab_percentiles_csv(result: &RunResult) -> String {
    let h = &result.histograms.latency;
    let mut o = String::from("Percentage served,Time in ms\n");
    if h.is_empty() {
        return o;
    }
    for i in 0..=100u32 {
        let us = match i {
            0 => h.min(),
            100 => h.max(),
            _ => h.value_at_quantile(f64::from(i) / 100.0),
        };
        emit!(o, "{i},{:.3}", ratio(us as f64, 1e3));
    }
    o
}

/// ab's `-g FILE`: a tab-separated line per request, `starttime seconds ctime dtime ttime
/// wait` — the start as an APR ctime date (UTC here, see [`apr_ctime`]), the start in
/// seconds since the epoch, then connect, processing (total − connect), total and waiting
/// times in whole milliseconds, rounded like ab.
///
/// From `result.samples` (every request with `Record::all`, else a uniform reservoir),
/// keeping, as ab does, only requests that got an answer. Rows are in start-time order;
/// ab writes them sorted by total time, and plotting ab's file against the line number
/// drew a sorted curve that people read as latency over time — sorting by start makes
/// both `using 2:9` and the line number mean time.
pub fn ab_gnuplot_tsv(result: &RunResult) -> String {
    let mut o = String::from("starttime\tseconds\tctime\tdtime\tttime\twait\n");
    let mut samples: Vec<_> = result.samples.iter().filter(|s| s.status != 0).collect();
    samples.sort_by_key(|s| s.start_us);
    for s in samples {
        let start = result.started + Duration::from_micros(s.start_us);
        let epoch_s = start
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let (connect, total) = (u64::from(s.connect_us), u64::from(s.total_us));
        emit!(
            o,
            "{}\t{epoch_s}\t{}\t{}\t{}\t{}",
            apr_ctime(start),
            ab_round_ms(connect),
            ab_round_ms(total.saturating_sub(connect)),
            ab_round_ms(total),
            ab_round_ms(u64::from(s.waiting_us))
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;
    use shootout_model::Sample;

    #[test]
    fn failed_requests_is_the_sum_of_its_parts() {
        let (spec, r) = fixtures::closed_with_failures();
        let f = AbFailures::of(&r.counts);
        // connect 2; receive = reset 4 + timeout 3 + malformed 1; length 3; body 2.
        assert_eq!(
            f,
            AbFailures {
                connect: 2,
                receive: 8,
                length: 3,
                exceptions: 2
            }
        );
        assert_eq!(f.total(), 15);
        let out = ab_report(&spec, &r, AbOptions::default());
        assert!(out.contains("Failed requests:        15\n"), "{out}");
        assert!(out.contains("   (Connect: 2, Receive: 8, Length: 3, Exceptions: 2)\n"));
        // Status failures are not ab failures; they are the non-2xx responses.
        assert!(out.contains("Non-2xx responses:      10\n"), "{out}");
    }

    /// ab's `-l` drops the "Length" failures; its `-S` gives the `min avg max` table
    /// (with Waiting, as ab 2.4 prints it) and no median/mean warnings.
    #[test]
    fn ab_flags_l_and_s_change_the_report_as_in_ab() {
        let (spec, r) = fixtures::closed_with_failures();
        let l = ab_report(
            &spec,
            &r,
            AbOptions {
                lengths_vary: true,
                ..AbOptions::default()
            },
        );
        assert!(l.contains("Failed requests:        12\n"), "{l}");
        assert!(l.contains("(Connect: 2, Receive: 8, Length: 0, Exceptions: 2)"));
        let s = ab_report(
            &spec,
            &r,
            AbOptions {
                no_spread: true,
                ..AbOptions::default()
            },
        );
        let table: Vec<&str> = s
            .lines()
            .skip_while(|l| *l != "Connection Times (ms)")
            .skip(1)
            .take(5)
            .collect();
        assert_eq!(table[0], "              min   avg   max");
        let total = AbRow::of(&r.histograms.latency);
        assert_eq!(
            table[4],
            format!(
                "Total:      {:5} {:5}{:5}",
                total.min, total.mean, total.max
            )
        );
        assert!(table[1].starts_with("Connect:    ") && table[3].starts_with("Waiting:    "));
        assert!(
            !s.contains("+/-sd") && !s.contains("median and mean"),
            "{s}"
        );
        assert!(
            s.contains("Length: 3"),
            "-S alone keeps the Length failures"
        );
    }

    #[test]
    fn values_start_at_column_24_as_in_ab() {
        const LABELS: [&str; 19] = [
            "Server Software:",
            "Server Hostname:",
            "Server Port:",
            "TLS Server Name:",
            "Document Path:",
            "Document Length:",
            "Concurrency Level:",
            "Time taken for tests:",
            "Complete requests:",
            "Failed requests:",
            "Non-2xx responses:",
            "Keep-Alive requests:",
            "Total transferred:",
            "Total body sent:",
            "HTML transferred:",
            "Requests per second:",
            "Good answers per sec:",
            "Time per request:",
            "Transfer rate:",
        ];
        let mut seen = 0;
        for (name, spec, r) in fixtures::all() {
            for l in ab_report(&spec, &r, AbOptions::default()).lines() {
                if let Some(label) = LABELS.iter().find(|label| l.starts_with(*label)) {
                    seen += 1;
                    assert_eq!(&l[..24], format!("{label:<24}"), "{name}: {l:?}");
                    assert!(l.len() == 24 || l.as_bytes()[24] != b' ', "{name}: {l:?}");
                }
            }
        }
        assert!(seen > 50, "{seen}");
    }

    #[test]
    fn csv_has_a_row_per_percent_from_fastest_to_slowest() {
        let (_, r) = fixtures::closed_with_failures();
        let csv = ab_percentiles_csv(&r);
        let rows: Vec<&str> = csv.lines().collect();
        assert_eq!(rows[0], "Percentage served,Time in ms");
        assert_eq!(rows.len(), 102);
        assert_eq!(
            rows[1],
            format!("0,{:.3}", r.histograms.latency.min() as f64 / 1e3)
        );
        assert_eq!(
            rows[101],
            format!("100,{:.3}", r.histograms.latency.max() as f64 / 1e3)
        );
        let times: Vec<f64> = rows[1..]
            .iter()
            .map(|l| l.split_once(',').unwrap().1.parse().unwrap())
            .collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{csv}");
        let (_, empty) = fixtures::nothing_completed();
        assert_eq!(ab_percentiles_csv(&empty), "Percentage served,Time in ms\n");
    }

    #[test]
    fn gnuplot_rows_are_answered_requests_in_start_order() {
        let (_, mut r) = fixtures::closed_with_failures();
        r.samples = vec![
            Sample {
                start_us: 2_500_000,
                connect_us: 0,
                waiting_us: 1_400,
                total_us: 1_600,
                status: 200,
                failure: None,
            },
            Sample {
                start_us: 0,
                connect_us: 1_499,
                waiting_us: 3_000,
                total_us: 4_501,
                status: 503,
                failure: Some(FailureKind::Status),
            },
            Sample {
                start_us: 100,
                connect_us: 0,
                waiting_us: 0,
                total_us: 90,
                status: 0,
                failure: Some(FailureKind::Reset),
            },
        ];
        let tsv = ab_gnuplot_tsv(&r);
        assert_eq!(
            tsv,
            "starttime\tseconds\tctime\tdtime\tttime\twait\n\
             Tue Nov 14 22:13:20 2023\t1700000000\t1\t3\t5\t3\n\
             Tue Nov 14 22:13:22 2023\t1700000002\t0\t2\t2\t1\n"
        );
    }
}
