//! How every format writes a percentile's 95% interval: `0.431–0.460` in ms, and an upper
//! end that is only the slowest answer recorded (too few answers above the percentile to
//! bound it, [`Interval::open_above`](shootout_analysis::certify::Interval)) marked `≥`:
//! `6.200–≥6.243`, with [`OPEN_NOTE`] once beside it. Words once, laid out per format.

use shootout_analysis::intervals::{Basis, CellInterval};

/// What `≥` before an upper end means, said once where one is printed.
pub const OPEN_NOTE: &str =
    "≥: too few answers above the percentile to bound it; the slowest recorded is shown";

/// The interval `lo–hi` (ms, three decimals), the upper end marked `≥` when `open`.
pub fn range_ms(lo: f64, hi: f64, open: bool) -> String {
    format!("{lo:.3}–{}{hi:.3}", if open { "≥" } else { "" })
}

/// A cell's interval as [`range_ms`], with its coverage when under 95%:
/// `0.431–0.460 (75%)`; `–` for none.
pub fn cell_range(ci: Option<CellInterval>) -> String {
    ci.map_or("–".into(), |c| {
        let r = range_ms(c.lo, c.hi, c.open_above);
        if c.basis.coverage() < 0.95 - 1e-9 {
            format!("{r} ({:.0}%)", (c.basis.coverage() * 100.0).floor())
        } else {
            r
        }
    })
}

/// How the cells' intervals were found, for the note under their table: one sentence per
/// basis present in `bases`.
pub fn basis_note(bases: impl IntoIterator<Item = Basis>) -> String {
    let (mut answers, mut reps) = (false, false);
    for b in bases {
        match b {
            Basis::Answers => answers = true,
            Basis::Repetitions { .. } => reps = true,
        }
    }
    let mut parts = Vec::new();
    if answers {
        parts.push("one repetition: 95% from the order statistics of its answers, widened by the dependence its seconds show (Lancet's ranks, exact from the histogram's buckets)");
    }
    if reps {
        parts.push("several: the order-statistic interval of the median over the repetitions (their k-th smallest and largest figures), at 95% from 6 repetitions and at the coverage shown in brackets under that; it holds the spread between repetitions");
    }
    parts.join("; ")
}
