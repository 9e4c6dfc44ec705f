//! The contenders of each workload × load level in order of good-answer req/s, with how
//! sure each step of the order is — `c=120: nginx ≫ httpd ≈ handler > uwsgi` — and whether
//! that order held in another run of the same plan ([`Stability`]).
//!
//! Each neighbour pair of the order is tested with [`crate::evidence::difference`]: `≫`
//! when the faster one is significantly faster by at least [`MUCH`] times (the lower end of
//! the 95% interval), `>` when significantly faster, `≈` when the difference is within the
//! noise, `?` when there is too little evidence to test. Only neighbours are tested: `a ≈ b
//! ≈ c` does not say that `a` and `c` are a tie.
//!
//! Seams: reads an [`Analysis`] only; the renderers print [`Ranking::line`] or lay out its
//! parts.

use crate::analysis::Analysis;
use crate::cells::{level_key, LevelBlock, LevelKey};
use crate::evidence::{difference, Difference};
pub use crate::evidence::{Relation, MUCH};
use shootout_model::LoadLevel;
use std::collections::HashMap;

/// One step down the order.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// How the contender above stands to the one below.
    pub relation: Relation,
    /// The test of the one below against the one above (`ratio` < 1: the lower one is
    /// slower); `None` when untested.
    pub difference: Option<Difference>,
}

/// The order of one workload × level.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    /// The workload's name.
    pub workload: String,
    /// The level.
    pub level: LoadLevel,
    /// Contender indexes (into the run's contenders), fastest first by median good-answer
    /// req/s; ties of the median keep plan order.
    pub order: Vec<usize>,
    /// `steps[i]` is between `order[i]` and `order[i + 1]`.
    pub steps: Vec<Step>,
}

impl Ranking {
    /// The order of one level block; `None` with fewer than two contenders.
    pub fn of(workload: &str, l: &LevelBlock) -> Option<Ranking> {
        if l.cells.len() < 2 {
            return None;
        }
        let mut cells: Vec<_> = l.cells.iter().collect();
        cells.sort_by(|x, y| y.rps.total_cmp(&x.rps));
        let steps = cells
            .windows(2)
            .map(|w| {
                let d = difference(w[0], w[1]);
                Step {
                    relation: Relation::of(d.as_ref()),
                    difference: d,
                }
            })
            .collect();
        Some(Ranking {
            workload: workload.to_string(),
            level: l.level,
            order: cells.iter().map(|c| c.contender).collect(),
            steps,
        })
    }

    /// `c=120: nginx ≫ httpd ≈ handler > uwsgi`, names from `name`.
    pub fn line<'n>(&self, name: impl Fn(usize) -> &'n str) -> String {
        let mut s = format!("{}: {}", self.level, name(self.order[0]));
        for (step, &c) in self.steps.iter().zip(&self.order[1..]) {
            s.push_str(&format!(" {} {}", step.relation.sign(), name(c)));
        }
        s
    }

    /// The tie group of contender `c`: the position in the order just below the last
    /// significant step above it (contenders joined by `≈` or `?` share a group).
    fn group_of(&self, c: usize) -> Option<usize> {
        let pos = self.order.iter().position(|&x| x == c)?;
        let mut group = 0;
        for (i, s) in self.steps.iter().enumerate().take(pos) {
            if matches!(s.relation, Relation::Faster | Relation::MuchFaster) {
                group = i + 1;
            }
        }
        Some(group)
    }
}

/// Every ranking of a run, workload by workload, level by level.
pub fn rankings(a: &Analysis) -> Vec<Ranking> {
    a.workloads
        .iter()
        .flat_map(|w| w.levels.iter().filter_map(|l| Ranking::of(w.name, l)))
        .collect()
}

/// Two contenders whose order changed from one run to the other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Swap {
    /// The contender ahead in run A (behind in run B).
    pub ahead_in_a: String,
    /// The contender ahead in run B.
    pub ahead_in_b: String,
    /// The order in A was significant (the two are not in one tie group of A).
    pub significant_in_a: bool,
    /// The order in B was significant.
    pub significant_in_b: bool,
}

impl Swap {
    /// True when the order was significant in both runs, each the other way: a conclusion
    /// that did not survive the re-run. A swap within a tie is noise.
    pub fn contradicts(&self) -> bool {
        self.significant_in_a && self.significant_in_b
    }
}

/// One workload × level ranked in two runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Stability {
    /// The workload's name.
    pub workload: String,
    /// The level.
    pub level: LoadLevel,
    /// The ranking line of run A.
    pub a: String,
    /// The ranking line of run B.
    pub b: String,
    /// Pairs whose order changed (contenders ranked in both runs only).
    pub swaps: Vec<Swap>,
    /// The median step lengths in seconds (A, B) where a pair of this workload × level had
    /// unlike steps in the two runs (a `--quick` run against a full one): each run's order
    /// is its own, but one of short steps weighs how the steps began as much as the
    /// servers, so a changed order may be the step lengths'. Set by `compare`.
    pub unlike_steps: Option<(f64, f64)>,
}

impl Stability {
    /// True when no pair changed order.
    pub fn same(&self) -> bool {
        self.swaps.is_empty()
    }
}

/// The rankings of two runs side by side, for the workloads × levels both ranked.
pub fn stability(a: &Analysis, b: &Analysis) -> Vec<Stability> {
    let rb = rankings(b);
    // B's rankings by workload and level, the first of each (no search of them all for
    // each of A's: runs of 20,000 levels); a level equal to no other is never found.
    let mut in_b: HashMap<(&str, LevelKey), &Ranking> = HashMap::new();
    for r in &rb {
        if let Some(key) = level_key(r.level) {
            in_b.entry((&r.workload, key)).or_insert(r);
        }
    }
    rankings(a)
        .into_iter()
        .filter_map(|ra| {
            let other = *in_b.get(&(ra.workload.as_str(), level_key(ra.level)?))?;
            Some(Stability {
                workload: ra.workload.clone(),
                level: ra.level,
                a: ra.line(|i| a.name(i)),
                b: other.line(|i| b.name(i)),
                swaps: swaps(a, &ra, b, other),
                unlike_steps: None,
            })
        })
        .collect()
}

/// The pairs ranked in both runs whose order differs.
fn swaps(a: &Analysis, ra: &Ranking, b: &Analysis, rb: &Ranking) -> Vec<Swap> {
    let in_b = |name: &str| rb.order.iter().copied().find(|&i| b.name(i) == name);
    let both: Vec<(usize, usize)> = ra
        .order
        .iter()
        .filter_map(|&i| Some((i, in_b(a.name(i))?)))
        .collect();
    let mut out = Vec::new();
    for (x, &(xa, xb)) in both.iter().enumerate() {
        for &(ya, yb) in &both[x + 1..] {
            // xa is above ya in A; is it below in B?
            let pos = |r: &Ranking, c: usize| r.order.iter().position(|&o| o == c);
            if pos(rb, xb) > pos(rb, yb) {
                out.push(Swap {
                    ahead_in_a: a.name(xa).to_string(),
                    ahead_in_b: a.name(ya).to_string(),
                    significant_in_a: ra.group_of(xa) != ra.group_of(ya),
                    significant_in_b: rb.group_of(xb) != rb.group_of(yb),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::tests::run;
    use shootout_model::stored::StoredRun;

    fn line_of(r: &StoredRun) -> String {
        let a = Analysis::of(r);
        let rs = rankings(&a);
        assert_eq!(rs.len(), 1);
        rs[0].line(|i| a.name(i))
    }

    #[test]
    fn a_clear_order_with_a_much_faster_leader() {
        let r = run(
            &[("httpd", 1000, 10), ("nginx", 2800, 20), ("uwsgi", 830, 8)],
            6,
        );
        assert_eq!(line_of(&r), "c=10: nginx ≫ httpd > uwsgi");
    }

    #[test]
    fn a_tie_in_the_middle() {
        let r = run(
            &[
                ("httpd", 1000, 40),
                ("handler", 990, 40),
                ("nginx", 2800, 20),
                ("wsgi", 700, 10),
            ],
            6,
        );
        assert_eq!(line_of(&r), "c=10: nginx ≫ httpd ≈ handler > wsgi");
    }

    #[test]
    fn a_noisy_baseline_ties_with_its_neighbour() {
        // The baseline wobbles by 25% from second to second: 8% apart is not a verdict.
        let r = run(&[("httpd", 1000, 250), ("handler", 1080, 10)], 6);
        assert_eq!(line_of(&r), "c=10: handler ≈ httpd");
    }

    #[test]
    fn steps_too_short_to_test_are_marked() {
        let r = run(&[("a", 1000, 10), ("b", 3000, 10)], 2);
        assert_eq!(line_of(&r), "c=10: b ? a");
    }

    #[test]
    fn two_runs_that_swap_a_pair_say_so_and_whether_it_matters() {
        let a = run(
            &[
                ("httpd", 1000, 10),
                ("handler", 1200, 10),
                ("nginx", 2800, 20),
            ],
            6,
        );
        let b = run(
            &[
                ("httpd", 1000, 10),
                ("handler", 900, 10),
                ("nginx", 2800, 20),
            ],
            6,
        );
        let (aa, ab) = (Analysis::of(&a), Analysis::of(&b));
        let s = stability(&aa, &ab);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].a, "c=10: nginx ≫ handler > httpd");
        assert_eq!(s[0].b, "c=10: nginx ≫ httpd > handler");
        assert_eq!(
            s[0].swaps,
            vec![Swap {
                ahead_in_a: "handler".into(),
                ahead_in_b: "httpd".into(),
                significant_in_a: true,
                significant_in_b: true,
            }]
        );
        assert!(s[0].swaps[0].contradicts());
        // The same run twice: the same order.
        assert!(stability(&aa, &aa)[0].same());
    }

    #[test]
    fn a_swap_inside_a_tie_is_not_a_contradiction() {
        let a = run(&[("x", 1000, 60), ("y", 1010, 60)], 6);
        let b = run(&[("x", 1010, 60), ("y", 1000, 60)], 6);
        let s = stability(&Analysis::of(&a), &Analysis::of(&b));
        assert_eq!(s[0].swaps.len(), 1);
        assert!(!s[0].swaps[0].significant_in_a && !s[0].swaps[0].contradicts());
    }
}
