//! Whether the machine was quiet while a step ran: the thresholds above which what else ran
//! on the step's CPUs (an [`OtherLoad`], measured by the harness) may have changed its
//! numbers. One place decides; the step's line, the `load` note and the reports' warning
//! all ask [`not_quiet`].

use shootout_model::OtherLoad;

/// Other processes' CPU time on the watched CPUs, in CPUs, above which a step is not quiet:
/// a tenth of one CPU over the whole step. A quiet machine's daemons use far less (a few
/// thousandths); another benchmark, a build or a browser uses more.
pub const OTHERS_CPUS: f64 = 0.10;

/// The share of the watched CPUs' time stolen by the hypervisor above which a step is not
/// quiet: 2 %. A virtual machine whose host is busy loses its CPUs at moments the
/// generator and the server cannot see.
pub const STEAL_SHARE: f64 = 0.02;

/// True when `o` says the machine was not quiet (see [`OTHERS_CPUS`], [`STEAL_SHARE`]);
/// the load average is reported, never judged: it counts the step's own threads.
pub fn not_quiet(o: &OtherLoad) -> bool {
    o.others.is_some_and(|c| c > OTHERS_CPUS) || o.steal > STEAL_SHARE
}

/// Of `all`, the one that speaks for a cell: the most other CPU time, then the most steal.
pub fn busiest<'a>(all: impl IntoIterator<Item = &'a OtherLoad>) -> Option<OtherLoad> {
    all.into_iter()
        .copied()
        .fold(None, |best: Option<OtherLoad>, o| match best {
            Some(b) if (b.others.unwrap_or(0.0), b.steal) >= (o.others.unwrap_or(0.0), o.steal) => {
                Some(b)
            }
            _ => Some(o),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(others: Option<f64>, steal: f64) -> OtherLoad {
        OtherLoad {
            cpus: 2,
            others,
            contenders: 0.0,
            interrupts: 0.0,
            steal,
            load_avg: 1.0,
        }
    }

    #[test]
    fn thresholds() {
        // (others in CPUs, steal share) → not quiet?
        for (others, steal, busy) in [
            (Some(0.0), 0.0, false),
            (Some(0.10), 0.0, false), // at the threshold: quiet
            (Some(0.11), 0.0, true),  // a tenth of a CPU and more
            (Some(0.0), 0.02, false), // 2 % steal: quiet
            (Some(0.0), 0.021, true), // more: not
            (None, 0.0, false),       // others not told: steal only
            (None, 0.5, true),
        ] {
            assert_eq!(not_quiet(&o(others, steal)), busy, "{others:?} {steal}");
        }
    }

    #[test]
    fn the_busiest_step_speaks_for_the_cell() {
        let all = [o(Some(0.2), 0.0), o(Some(0.9), 0.01), o(Some(0.9), 0.0)];
        assert_eq!(busiest(&all), Some(o(Some(0.9), 0.01)));
        assert_eq!(busiest(&[]), None);
    }
}
