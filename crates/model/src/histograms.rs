//! The latency histograms of one load run, kept together: [`Histograms`] holds them by name
//! and [`Measure`] lists them once, with the key each has in the result file and in the
//! store (`result.histograms.<key>`, column `hist_<key>`), the words that name it in
//! messages, and what it counts. Everything that handles all of them (the engine's
//! recorder and its merge of the workers, the result file, the store, `shootout merge`)
//! iterates over [`Measure::ALL`], so a new histogram is added here and nowhere else.
//!
//! Every histogram holds **microseconds**, in the bounds of [`latency_histogram`].

use hdrhistogram::errors::AdditionError;
use hdrhistogram::Histogram;

/// A new empty latency histogram: 1 µs to 1 hour, 3 significant figures.
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("static histogram bounds are valid")
}

/// What one of a run's histograms measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Measure {
    /// Latency of answered requests: from the due time in rate mode, else from the send.
    Latency,
    /// From the actual send to the last byte.
    LatencyRaw,
    /// Connect time charged to a request (0 on a connection already open).
    Connect,
    /// Send done → first byte of the answer.
    Waiting,
    /// Total minus connect, as ab's "Processing".
    Processing,
    /// Setup of every connection opened (TCP connect, and the TLS handshake over https).
    Setup,
}

impl Measure {
    /// Every histogram, in the order the result file and the store have always listed them.
    pub const ALL: [Measure; 6] = [
        Measure::Latency,
        Measure::LatencyRaw,
        Measure::Connect,
        Measure::Waiting,
        Measure::Processing,
        Measure::Setup,
    ];

    /// Its key: `result.histograms.<key>` in the result file, column `hist_<key>` in the
    /// store.
    pub fn key(self) -> &'static str {
        match self {
            Measure::Latency => "latency",
            Measure::LatencyRaw => "latency_raw",
            Measure::Connect => "connect",
            Measure::Waiting => "waiting",
            Measure::Processing => "processing",
            Measure::Setup => "setup",
        }
    }

    /// The words that name it in messages (`the raw latency histogram of step 3`).
    pub fn words(self) -> &'static str {
        match self {
            Measure::LatencyRaw => "raw latency",
            Measure::Setup => "connection setup",
            other => other.key(),
        }
    }

    /// Whether every answer is recorded in it once; else it counts connections opened.
    pub fn per_answer(self) -> bool {
        !matches!(self, Measure::Setup)
    }

    /// Whether every result file and store holds it; a histogram added later is missing
    /// from those written before (and reads as empty).
    pub fn always_kept(self) -> bool {
        !matches!(self, Measure::Setup)
    }
}

/// The smallest empty histogram there is (no significant figure: three counters, 24
/// bytes, growing as recorded into): a stand-in for one kept elsewhere (see
/// [`Histograms::stubs`]).
pub fn stub() -> Histogram<u64> {
    Histogram::new(0).expect("no significant figure is valid")
}

/// The histograms of a run (µs), one per [`Measure`].
#[derive(Debug, Clone)]
pub struct Histograms {
    /// Latency of completed requests: from the due time in rate mode, else from send.
    pub latency: Histogram<u64>,
    /// Latency from the actual send to the last byte.
    pub latency_raw: Histogram<u64>,
    /// Connect time per request (0 for requests on a reused connection, and for requests
    /// that found their connection already open, as in rate mode).
    pub connect: Histogram<u64>,
    /// Send done → first byte of the answer.
    pub waiting: Histogram<u64>,
    /// Total minus connect, as ab's "Processing".
    pub processing: Histogram<u64>,
    /// Setup time of every connection opened (TCP connect, and the TLS handshake over
    /// https), whether or not a request waited for it; empty for results stored before
    /// shootout recorded it.
    pub setup: Histogram<u64>,
}

impl Default for Histograms {
    fn default() -> Self {
        Histograms::new()
    }
}

impl Histograms {
    /// Empty histograms.
    pub fn new() -> Self {
        Histograms {
            latency: latency_histogram(),
            latency_raw: latency_histogram(),
            connect: latency_histogram(),
            waiting: latency_histogram(),
            processing: latency_histogram(),
            setup: latency_histogram(),
        }
    }

    /// Six of the smallest empty histograms (about a hundred bytes each, where an empty
    /// [`latency_histogram`] takes 184 KiB), standing where the real ones are kept
    /// elsewhere: in a step read from the store, packed ([`crate::stored::Packed`]).
    pub fn stubs() -> Self {
        Histograms {
            latency: stub(),
            latency_raw: stub(),
            connect: stub(),
            waiting: stub(),
            processing: stub(),
            setup: stub(),
        }
    }

    /// The histogram of `measure`.
    pub fn get(&self, measure: Measure) -> &Histogram<u64> {
        match measure {
            Measure::Latency => &self.latency,
            Measure::LatencyRaw => &self.latency_raw,
            Measure::Connect => &self.connect,
            Measure::Waiting => &self.waiting,
            Measure::Processing => &self.processing,
            Measure::Setup => &self.setup,
        }
    }

    /// The histogram of `measure`, to record into or replace.
    pub fn get_mut(&mut self, measure: Measure) -> &mut Histogram<u64> {
        match measure {
            Measure::Latency => &mut self.latency,
            Measure::LatencyRaw => &mut self.latency_raw,
            Measure::Connect => &mut self.connect,
            Measure::Waiting => &mut self.waiting,
            Measure::Processing => &mut self.processing,
            Measure::Setup => &mut self.setup,
        }
    }

    /// Each histogram with what it measures, in [`Measure::ALL`]'s order.
    pub fn iter(&self) -> impl Iterator<Item = (Measure, &Histogram<u64>)> {
        Measure::ALL.into_iter().map(|m| (m, self.get(m)))
    }

    /// Histograms built one by one, in [`Measure::ALL`]'s order; the first error stops it.
    pub fn try_build<E>(
        mut each: impl FnMut(Measure) -> Result<Histogram<u64>, E>,
    ) -> Result<Histograms, E> {
        let mut out = Histograms::new();
        for m in Measure::ALL {
            *out.get_mut(m) = each(m)?;
        }
        Ok(out)
    }

    /// Adds `other`'s values to these, histogram by histogram: the histograms a single
    /// recorder fed every value of both would hold. Fails only for a histogram outside
    /// [`latency_histogram`]'s bounds (none that shootout builds or reads).
    pub fn add(&mut self, other: &Histograms) -> Result<(), AdditionError> {
        for m in Measure::ALL {
            self.get_mut(m).add(other.get(m))?;
        }
        Ok(())
    }

    /// Empties every histogram, keeping its memory.
    pub fn reset(&mut self) {
        for m in Measure::ALL {
            self.get_mut(m).reset();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each measure reaches its own histogram, and the keys are the file's and the store's.
    #[test]
    fn each_measure_has_its_own_histogram_and_key() {
        let mut h = Histograms::new();
        for (i, m) in Measure::ALL.into_iter().enumerate() {
            h.get_mut(m).record(i as u64 + 1).unwrap();
        }
        for (i, (m, hist)) in h.iter().enumerate() {
            assert_eq!((hist.len(), hist.max()), (1, i as u64 + 1), "{m:?}");
        }
        let keys: Vec<_> = Measure::ALL.iter().map(|m| m.key()).collect();
        assert_eq!(
            keys,
            [
                "latency",
                "latency_raw",
                "connect",
                "waiting",
                "processing",
                "setup"
            ]
        );
        let mut sum = h.clone();
        sum.add(&h).unwrap();
        assert!(sum.iter().all(|(_, x)| x.len() == 2));
        sum.reset();
        assert!(sum.iter().all(|(_, x)| x.is_empty()));
    }
}
