//! Templated values drawn per request or message (`{seq}`, `{rand:LO-HI}`) and the pick
//! of a list's next entry, for every protocol that sends lists: [`Gen`] draws them, one
//! per worker, so nothing is shared; [`fill`] renders a template with fresh values;
//! [`matches`] checks a reply against a template rendered earlier from a copy of the
//! generator, without holding the rendered bytes.

use crate::codec::decimal;
use shootout_model::requests::{Piece, Template};

/// How the next entry is picked and its templated values drawn: one per worker, so
/// nothing is shared. `{seq}` runs `first, first + step, …` (worker `w` of `T` takes
/// `w, w + T, …`, so values are unique within the run). A copy taken before a render
/// draws the same values again ([`matches`]).
#[derive(Debug, Clone, Copy)]
pub struct Gen {
    seq: u64,
    step: u64,
    rng: u64,
    next: usize,
    random: bool,
    count: usize,
}

impl Gen {
    /// The generator of worker `index` of `workers`, for a list of `count` entries picked
    /// in turn or at `random`, seeded by `seed`.
    pub fn new(seed: u64, random: bool, count: usize, index: usize, workers: usize) -> Gen {
        Gen {
            seq: index as u64,
            step: workers.max(1) as u64,
            // splitmix64 of seed and worker: distinct, well-mixed streams per worker.
            rng: splitmix(seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1,
            next: 0,
            random,
            count: count.max(1),
        }
    }

    /// The entry of the next request or message.
    pub fn pick(&mut self) -> usize {
        if self.random {
            (self.draw() % self.count as u64) as usize
        } else {
            let k = self.next;
            self.next = (k + 1) % self.count;
            k
        }
    }

    /// xorshift64*.
    fn draw(&mut self) -> u64 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Hands `t`'s bytes to `f` piece by piece, its values drawn.
    fn each(&mut self, t: &Template, mut f: impl FnMut(&[u8])) {
        let mut digits = [0u8; 20];
        for p in &t.0 {
            match *p {
                Piece::Text(ref b) => f(b),
                Piece::Seq => {
                    f(decimal::digits(self.seq, &mut digits));
                    self.seq = self.seq.wrapping_add(self.step);
                }
                Piece::Rand { lo, hi } => {
                    let span = hi - lo;
                    let v = if span == u64::MAX {
                        self.draw()
                    } else {
                        // Multiply-shift maps the draw onto 0..=span without a division.
                        lo + ((u128::from(self.draw()) * (u128::from(span) + 1)) >> 64) as u64
                    };
                    f(decimal::digits(v, &mut digits));
                }
            }
        }
    }
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Appends `t` with its values drawn.
pub fn fill(t: &Template, gen: &mut Gen, out: &mut Vec<u8>) {
    gen.each(t, |b| out.extend_from_slice(b));
}

/// Appends `t` with every value at an end of its range: `{seq}` as 0, `{rand:LO-HI}` as
/// LO, or as HI with `high` (to check once what any draw could make of a template).
pub fn fill_bound(t: &Template, high: bool, out: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    for p in &t.0 {
        match *p {
            Piece::Text(ref b) => out.extend_from_slice(b),
            Piece::Seq => out.push(b'0'),
            Piece::Rand { lo, hi } => {
                out.extend_from_slice(decimal::digits(if high { hi } else { lo }, &mut digits));
            }
        }
    }
}

/// How long `t` is with the values `gen` (a copy taken before it was rendered) draws.
pub fn len(t: &Template, mut gen: Gen) -> usize {
    let mut n = 0;
    gen.each(t, |b| n += b.len());
    n
}

/// Whether `chunk`, found at offset `at` of a reply, is what `t` rendered with the values
/// `gen` (a copy taken before it was rendered) draws holds there.
pub fn matches(t: &Template, mut gen: Gen, at: usize, chunk: &[u8]) -> bool {
    let end = at + chunk.len();
    let (mut pos, mut same) = (0, true);
    gen.each(t, |b| {
        let (from, to) = (pos.max(at), (pos + b.len()).min(end));
        if from < to {
            same &= b[from - pos..to - pos] == chunk[from - at..to - at];
        }
        pos += b.len();
    });
    same && end <= pos
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Template {
        Template::parse(s.as_bytes()).unwrap()
    }

    #[test]
    fn a_copy_of_the_generator_draws_the_same_values_again() {
        let tpl = t("id={seq} n={rand:1-1000000} end");
        let mut gen = Gen::new(42, false, 1, 3, 4);
        let mut out = Vec::new();
        for _ in 0..100 {
            let copy = gen;
            out.clear();
            fill(&tpl, &mut gen, &mut out);
            assert_eq!(len(&tpl, copy), out.len());
            // Whole, byte by byte, and in any split, the rendered bytes match…
            assert!(matches(&tpl, copy, 0, &out));
            assert!((0..out.len()).all(|i| matches(&tpl, copy, i, &out[i..=i])));
            let (a, b) = out.split_at(out.len() / 3);
            assert!(matches(&tpl, copy, 0, a) && matches(&tpl, copy, a.len(), b));
            // …and any other byte, or one byte too many, does not.
            let mut bad = out.clone();
            let last = bad.len() - 1;
            bad[last] ^= 1;
            assert!(!matches(&tpl, copy, 0, &bad));
            assert!(!matches(&tpl, copy, out.len(), b"x"));
        }
        // Worker 3 of 4 counts 3, 7, 11, …
        let mut out = Vec::new();
        fill(&t("{seq}"), &mut Gen::new(1, false, 1, 3, 4), &mut out);
        assert_eq!(out, b"3");
    }
}
