//! Number and date formatting shared by the renderings — the one home of every duration,
//! byte-size and number format: milliseconds from microseconds, 1024-based byte sizes,
//! human durations, JSON's rounded numbers, wrk's unit scaling (`units.c`), ab's integer
//! millisecond rounding and APR's `ctime` dates.
//!
//! Where two outputs print the same quantity differently, that is on purpose and each
//! function says which output it serves:
//!
//! | quantity | function | output |
//! | --- | --- | --- |
//! | duration | [`secs`] `1.234 s` | text load report (measured length) |
//! | duration | [`human_duration`] `250 ms`, `1.5 s` | text load report (settings as typed) |
//! | duration | [`plain_secs`] `0.25 s`, `10 s` | CLI notes (`-t` read as a time limit) |
//! | duration | [`tenths_secs`] `12.3 s` | `run --dry-run` lengths, `run`'s "ready after" note |
//! | duration | [`human_span`] `850 ms`, `5 min 12 s` | shootout text/Markdown header |
//! | duration | [`html_span`] `4 min 05 s` | HTML pages |
//! | duration | [`wrk_time_us`], [`wrk_time_s`] | wrk-style report |
//! | duration | [`ab_round_ms`] | ab-compatible report (ab's own integer rounding) |
//! | duration | [`json_ms`], [`json_secs`] (numbers) | JSON documents |
//! | bytes | [`bytes_iec`] `1.50 KiB` | text load report |
//! | bytes | [`mib`], [`gib`] | shootout text (peak RSS, machine memory) |
//! | bytes | [`mib_or_gib`] | HTML pages |
//! | bytes | [`wrk_binary`] | wrk-style report |
//! | rates | [`trim_float`] `500`, [`wrk_metric`] | text settings, wrk-style report |
//!
//! (`shootout-model` keeps a private copy of [`plain_secs`] for its error messages: the
//! model sits below this crate and cannot call it.)
//!
//! Everything here is a pure function of its arguments; inputs name their unit (`_us`
//! for microseconds, `_s` for seconds). Non-finite inputs never reach the output: callers
//! divide through [`ratio`], which turns a zero denominator into 0.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use shootout_analysis::stats::ratio;

/// Microseconds as milliseconds with three decimals (µs resolution): `1234.5` → `1.235`.
pub fn ms3(us: f64) -> String {
    format!("{:.3}", us / 1e3)
}

/// Seconds with three decimals and the unit: `1.234 s`.
pub fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

/// A bound or setting as the user would type it: `10 s`, `1.5 s`, `250 ms`.
pub fn human_duration(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{} s", d.as_secs())
    } else if d < Duration::from_secs(1) && d.subsec_nanos().is_multiple_of(1_000_000) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{} s", trim_float(d.as_secs_f64()))
    }
}

/// Seconds as `f64`'s shortest text and the unit: `0.25 s`, `10 s` — for notes that echo
/// what the user typed.
pub fn plain_secs(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// Seconds with one decimal and the unit: `12.3 s`.
pub fn tenths_secs(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

/// A span as a person says it: `850 ms`, `12.3 s`, `5 min 12 s`, `2 h 3 min` (shootout
/// text and Markdown headers).
pub fn human_span(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1.0 {
        format!("{} ms", d.as_millis())
    } else if s < 60.0 {
        tenths_secs(d)
    } else if s < 3600.0 {
        let whole = d.as_secs();
        format!("{} min {} s", whole / 60, whole % 60)
    } else {
        let whole = d.as_secs();
        format!("{} h {} min", whole / 3600, whole % 3600 / 60)
    }
}

/// A span in the HTML pages: `12.3 s`, `0.4 s` or `4 min 05 s` (seconds zero-padded, no
/// hours).
pub fn html_span(d: Duration) -> String {
    if d.as_secs_f64() < 60.0 {
        tenths_secs(d)
    } else {
        let whole = d.as_secs();
        format!("{} min {:02} s", whole / 60, whole % 60)
    }
}

/// `x` with up to three decimals and no trailing zeros: `1.500` → `1.5`, `2.000` → `2`.
pub fn trim_float(x: f64) -> String {
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// A byte count in 1024-based units with two decimals: `512 B`, `1.50 KiB`, `12.34 MiB`.
pub fn bytes_iec(n: f64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024.0 {
        return format!("{n:.0} B");
    }
    let mut amount = n / 1024.0;
    let mut unit = UNITS[0];
    for next in &UNITS[1..] {
        if amount < 1024.0 {
            break;
        }
        amount /= 1024.0;
        unit = next;
    }
    format!("{amount:.2} {unit}")
}

/// Bytes in MiB with one decimal: `22.4 MiB`.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// Bytes in GiB with one decimal: `7.8 GiB`.
pub fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1024.0 * 1024.0 * 1024.0))
}

/// Bytes as [`mib`], or [`gib`] from a gibibyte on (HTML pages).
pub fn mib_or_gib(bytes: u64) -> String {
    if bytes >= 1024 * 1024 * 1024 {
        gib(bytes)
    } else {
        mib(bytes)
    }
}

/// `x` rounded to `decimals` places, so JSON shows `1.86`, not `1.8599999999999999`;
/// non-finite values become 0.
pub fn round(x: f64, decimals: i32) -> f64 {
    if !x.is_finite() {
        return 0.0;
    }
    let scale = 10f64.powi(decimals);
    (x * scale).round() / scale
}

/// Milliseconds as a JSON number to µs resolution (3 decimals).
pub fn json_ms(ms: f64) -> f64 {
    round(ms, 3)
}

/// Seconds as a JSON number to µs resolution (6 decimals).
pub fn json_secs(d: Duration) -> f64 {
    round(d.as_secs_f64(), 6)
}

/// ab's `ap_round_ms`: microseconds to whole milliseconds, halves rounded up.
pub fn ab_round_ms(us: u64) -> u64 {
    us.saturating_add(500) / 1000
}

/// A scale of wrk's `units.c`: `base` below `0.85 × scale`, then each of `larger` in turn
/// (wrk never goes past the second-to-last entry of its NULL-terminated list; neither do we).
struct WrkUnits {
    scale: f64,
    base: &'static str,
    larger: &'static [&'static str],
}

const WRK_TIME_US: WrkUnits = WrkUnits {
    scale: 1000.0,
    base: "us",
    larger: &["ms", "s"],
};
const WRK_TIME_S: WrkUnits = WrkUnits {
    scale: 60.0,
    base: "s",
    larger: &["m", "h"],
};
const WRK_BINARY: WrkUnits = WrkUnits {
    scale: 1024.0,
    base: "",
    larger: &["K", "M", "G", "T", "P"],
};
const WRK_METRIC: WrkUnits = WrkUnits {
    scale: 1000.0,
    base: "",
    larger: &["k", "M", "G", "T", "P"],
};

/// wrk's `format_units`: divide while the amount is at least 85% of the scale.
fn wrk_units(n: f64, units: &WrkUnits, precision: usize) -> String {
    let mut amount = n;
    let mut unit = units.base;
    let mut i = 0;
    while i + 1 < units.larger.len() && amount >= units.scale * 0.85 {
        amount /= units.scale;
        unit = units.larger[i];
        i += 1;
    }
    format!("{amount:.precision$}{unit}")
}

/// wrk's `format_time_us`: `635.91us`, `0.89ms`, `12.92ms`, `1.50s`, `2.00m`.
pub fn wrk_time_us(us: f64) -> String {
    if us >= 1e6 {
        wrk_units(us / 1e6, &WRK_TIME_S, 2)
    } else {
        wrk_units(us, &WRK_TIME_US, 2)
    }
}

/// wrk's `format_time_s` for the test length: `10s`, `1m`.
pub fn wrk_time_s(s: f64) -> String {
    wrk_units(s, &WRK_TIME_S, 0)
}

/// wrk's `format_binary` (1024-based, no `B`): `1.09G`, `110.35M`, `512.00`.
pub fn wrk_binary(n: f64) -> String {
    wrk_units(n, &WRK_BINARY, 2)
}

/// wrk's `format_metric` (1000-based): `56.20k`, `8.07k`, `12.00`.
pub fn wrk_metric(n: f64) -> String {
    wrk_units(n, &WRK_METRIC, 2)
}

/// wrk's `print_units`: `msg` right-aligned in `width` columns (cut to fit, as `%*.*s`
/// does), followed by as many of two blanks as the unit has letters fewer than two, so
/// numbers line up whatever their unit.
pub fn wrk_cell(msg: &str, width: usize) -> String {
    let b = msg.as_bytes();
    let mut pad = 2;
    if b.last().is_some_and(u8::is_ascii_alphabetic) {
        pad -= 1;
    }
    if b.len() >= 2 && b[b.len() - 2].is_ascii_alphabetic() {
        pad -= 1;
    }
    let w = width - pad;
    let cut = &msg[..msg.len().min(w)];
    format!("{cut:>w$}{}", &"  "[..pad])
}

/// Days since 1970-01-01 to (year, month 1..=12, day 1..=31), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A wall-clock time broken down in UTC.
struct Utc {
    year: i64,
    month: u32,
    day: u32,
    weekday: usize,
    hour: u64,
    minute: u64,
    second: u64,
    micros: u32,
}

fn utc(t: SystemTime) -> Utc {
    // Times before 1970 do not occur in runs; clamp them to the epoch rather than panic.
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let days = (secs / 86_400) as i64;
    let (year, month, day) = civil_from_days(days);
    let of_day = secs % 86_400;
    Utc {
        year,
        month,
        day,
        // 1970-01-01 was a Thursday (index 4 with Sunday = 0).
        weekday: ((days + 4) % 7) as usize,
        hour: of_day / 3600,
        minute: of_day / 60 % 60,
        second: of_day % 60,
        micros: since.subsec_micros(),
    }
}

/// APR's `apr_ctime` as ab's `-g` prints it: `Tue Nov 14 22:13:20 2023`, the day of the
/// month zero-padded (APR, unlike C's `ctime`, pads with a zero).
///
/// ab formats in the machine's local time zone; we print UTC so that the same stored run
/// renders the same file anywhere (the `seconds` column next to it is zone-free anyway).
pub fn apr_ctime(t: SystemTime) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let u = utc(t);
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} {}",
        DAYS[u.weekday],
        MONTHS[(u.month - 1) as usize],
        u.day,
        u.hour,
        u.minute,
        u.second,
        u.year
    )
}

/// RFC 3339 in UTC with milliseconds: `2023-11-14T22:13:20.000Z`.
pub fn rfc3339(t: SystemTime) -> String {
    let u = utc(t);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        u.year,
        u.month,
        u.day,
        u.hour,
        u.minute,
        u.second,
        u.micros / 1000
    )
}

/// Seconds since the Unix epoch (0 for earlier times).
pub fn unix_s(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_seconds_and_bytes() {
        assert_eq!(ms3(0.0), "0.000");
        assert_eq!(ms3(412.0), "0.412");
        assert_eq!(ms3(12_345_678.0), "12345.678");
        assert_eq!(secs(Duration::from_millis(1234)), "1.234 s");
        assert_eq!(human_duration(Duration::from_secs(10)), "10 s");
        assert_eq!(human_duration(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(human_duration(Duration::from_millis(250)), "250 ms");
        assert_eq!(trim_float(2000.0), "2000");
        assert_eq!(trim_float(2.5), "2.5");
        assert_eq!(bytes_iec(0.0), "0 B");
        assert_eq!(bytes_iec(1023.0), "1023 B");
        assert_eq!(bytes_iec(1536.0), "1.50 KiB");
        assert_eq!(bytes_iec(5.0 * 1024.0 * 1024.0), "5.00 MiB");
        assert_eq!(bytes_iec(3.0 * 1024.0 * 1024.0 * 1024.0), "3.00 GiB");
        assert_eq!(mib(23_488_102), "22.4 MiB");
        assert_eq!(mib_or_gib(1024 * 1024 * 1024 - 1), "1024.0 MiB");
        assert_eq!(mib_or_gib(1024 * 1024 * 1024), "1.0 GiB");
        assert_eq!(plain_secs(Duration::from_millis(250)), "0.25 s");
        assert_eq!(plain_secs(Duration::from_secs(10)), "10 s");
        assert_eq!(human_span(Duration::from_millis(850)), "850 ms");
        assert_eq!(human_span(Duration::from_secs(312)), "5 min 12 s");
        assert_eq!(human_span(Duration::from_secs(7380)), "2 h 3 min");
        assert_eq!(html_span(Duration::from_millis(59_940)), "59.9 s");
        assert_eq!(html_span(Duration::from_secs(245)), "4 min 05 s");
        assert_eq!(json_ms(1.2345678), 1.235);
        assert_eq!(round(f64::NAN, 3), 0.0);
    }

    #[test]
    fn ab_rounds_half_milliseconds_up() {
        assert_eq!(ab_round_ms(0), 0);
        assert_eq!(ab_round_ms(499), 0);
        assert_eq!(ab_round_ms(500), 1);
        assert_eq!(ab_round_ms(1499), 1);
        assert_eq!(ab_round_ms(u64::MAX), u64::MAX / 1000);
    }

    #[test]
    fn wrk_units_match_wrk_output() {
        // Values taken from wrk's README sample and its units.c thresholds (85% of scale).
        assert_eq!(wrk_time_us(635.91), "635.91us");
        assert_eq!(wrk_time_us(890.0), "0.89ms");
        assert_eq!(wrk_time_us(849.0), "849.00us");
        assert_eq!(wrk_time_us(12_920.0), "12.92ms");
        assert_eq!(wrk_time_us(10_100_000.0), "10.10s");
        assert_eq!(wrk_time_us(120_000_000.0), "2.00m");
        assert_eq!(wrk_time_s(10.0), "10s");
        assert_eq!(wrk_time_s(60.0), "1m");
        assert_eq!(wrk_metric(56_200.0), "56.20k");
        assert_eq!(wrk_metric(12.0), "12.00");
        assert_eq!(wrk_binary(1.09 * 1024.0 * 1024.0 * 1024.0), "1.09G");
        assert_eq!(wrk_binary(512.0), "512.00");
    }

    /// wrk's latency units around each threshold of `units.c` (a unit's scale times 0.85,
    /// then seconds from 1,000,000 µs on): 849 µs stays `849.00us` but 850 µs and 950 µs
    /// become `0.85ms` and `0.95ms`, as wrk prints them; `s` never comes from the µs scale.
    #[test]
    fn wrk_time_units_at_every_threshold() {
        let rows: Vec<String> = [
            0.0,
            1.0,
            99.5,
            849.0,
            849.994,
            850.0,
            950.0,
            1_000.0,
            1_230.0,
            849_999.0,
            850_000.0,
            999_999.0,
            1_000_000.0,
            2_010_000.0,
            50_999_000.0,
            51_000_000.0,
            3_060_000_000.0,
        ]
        .iter()
        .map(|&us| format!("{us:>15} µs  {}", wrk_time_us(us)))
        .collect();
        insta::assert_snapshot!(rows.join("\n"));
    }

    #[test]
    fn wrk_cells_pad_by_unit_length() {
        assert_eq!(wrk_cell("635.91us", 8), "635.91us");
        assert_eq!(wrk_cell("0.89ms", 10), "    0.89ms");
        assert_eq!(wrk_cell("56.20k", 8), " 56.20k ");
        assert_eq!(wrk_cell("12.00", 8), " 12.00  ");
        // `%*.*s` cuts what does not fit, as wrk does.
        assert_eq!(wrk_cell("123456.78us", 8), "123456.7");
    }

    #[test]
    fn dates_in_utc() {
        let t = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(apr_ctime(t), "Tue Nov 14 22:13:20 2023");
        assert_eq!(rfc3339(t), "2023-11-14T22:13:20.000Z");
        assert_eq!(apr_ctime(UNIX_EPOCH), "Thu Jan 01 00:00:00 1970");
        // A leap day, and the day after it.
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(apr_ctime(leap), "Tue Feb 29 00:00:00 2000");
        assert_eq!(
            apr_ctime(leap + Duration::from_secs(86_400 + 3_723)),
            "Wed Mar 01 01:02:03 2000"
        );
        assert_eq!(unix_s(t + Duration::from_millis(500)), 1_700_000_000.5);
    }
}
