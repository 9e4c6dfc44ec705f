//! The answer a report opens with, per workload: who won, by how much, how sure — `nginx
//! is first at every level, 28–39× the next (http.server), a significant difference at 3
//! of 3 levels` — or that it was a tie, that the order depends on the level, or that the
//! run had too little evidence to say. Built from the rankings ([`crate::ranking`]); the
//! renderers word it.

use crate::analysis::Analysis;
use crate::ranking::{rankings, Ranking, Relation};

/// One workload's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Headline {
    /// The workload's name.
    pub workload: String,
    /// What the levels say together.
    pub answer: Answer,
}

/// What a workload's levels say together.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The same contender was first, significantly ahead of the second, at every level
    /// where the first was significantly ahead (`sure` of the `levels`; at the others the
    /// first two were not told apart).
    Winner {
        /// The contender (index into the run's contenders).
        winner: usize,
        /// The second at those levels, when it was the same one at all of them.
        second: Option<usize>,
        /// The winner's median req/s over the second's there, lowest and highest.
        ratio: (f64, f64),
        /// Levels where the winner was significantly ahead.
        sure: usize,
        /// Levels ranked.
        levels: usize,
    },
    /// No significant difference between the first two at any level that was tested.
    Tie {
        /// Levels ranked.
        levels: usize,
    },
    /// The first, where significantly ahead, differs between levels: each such level's
    /// lead, in level order.
    Depends(Vec<Lead>),
    /// No level could be tested (too few repetitions and seconds).
    Untested,
}

/// Who was first at one level, over whom, by how much.
#[derive(Debug, Clone, PartialEq)]
pub struct Lead {
    /// The level's label (`c=4`).
    pub level: String,
    /// The first (index into the run's contenders).
    pub first: usize,
    /// The second.
    pub second: usize,
    /// The first's req/s over the second's, as the test estimates it (`None` untested).
    pub ratio: Option<f64>,
}

/// The answer of each workload with two contenders or more, in the analysis' order.
pub fn headlines(a: &Analysis) -> Vec<Headline> {
    let all = rankings(a);
    a.workloads
        .iter()
        .filter_map(|w| {
            let levels: Vec<&Ranking> = all.iter().filter(|r| r.workload == w.name).collect();
            answer(&levels).map(|answer| Headline {
                workload: w.name.to_string(),
                answer,
            })
        })
        .collect()
}

/// What the rankings of one workload's levels say together; `None` with none. A level
/// where the first two are not significantly apart names no winner: the winner is the
/// contender first at every level where the first is significantly ahead, and the levels
/// where it is not are counted as such.
fn answer(levels: &[&Ranking]) -> Option<Answer> {
    if levels.is_empty() {
        return None;
    }
    let tested = levels
        .iter()
        .filter(|r| r.steps[0].relation != Relation::Untested)
        .count();
    if tested == 0 {
        return Some(Answer::Untested);
    }
    let sure: Vec<&&Ranking> = levels
        .iter()
        .filter(|r| matches!(r.steps[0].relation, Relation::Faster | Relation::MuchFaster))
        .collect();
    let Some(first) = sure.first() else {
        return Some(Answer::Tie { levels: tested });
    };
    if sure.iter().any(|r| r.order[0] != first.order[0]) {
        return Some(Answer::Depends(
            sure.iter()
                .map(|r| Lead {
                    level: r.level.to_string(),
                    first: r.order[0],
                    second: r.order[1],
                    ratio: r.steps[0]
                        .difference
                        .as_ref()
                        .map(|d| 1.0 / d.ratio)
                        .filter(|x| x.is_finite()),
                })
                .collect(),
        ));
    }
    let ratios: Vec<f64> = sure
        .iter()
        .filter_map(|r| r.steps[0].difference.as_ref().map(|d| 1.0 / d.ratio))
        .filter(|x| x.is_finite())
        .collect();
    let low = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let high = ratios.iter().copied().fold(0.0, f64::max);
    Some(Answer::Winner {
        winner: first.order[0],
        second: sure
            .iter()
            .all(|r| r.order[1] == first.order[1])
            .then_some(first.order[1]),
        ratio: if ratios.is_empty() {
            (1.0, 1.0)
        } else {
            (low, high)
        },
        sure: sure.len(),
        levels: levels.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{Difference, Method};
    use crate::ranking::Step;
    use shootout_model::LoadLevel;

    fn level(c: usize, order: [usize; 2], ratio: Option<f64>, relation: Relation) -> Ranking {
        Ranking {
            workload: "w".into(),
            level: LoadLevel::Concurrency { connections: c },
            order: order.to_vec(),
            steps: vec![Step {
                relation,
                difference: ratio.map(|ratio| Difference {
                    ratio,
                    low: ratio * 0.9,
                    high: ratio * 1.1,
                    p: 0.001,
                    method: Method::Seconds,
                }),
            }],
        }
    }

    #[test]
    fn one_winner_everywhere_is_said_with_its_range_and_how_sure() {
        let a = level(1, [0, 1], Some(1.0 / 28.0), Relation::MuchFaster);
        let b = level(16, [0, 1], Some(1.0 / 39.0), Relation::MuchFaster);
        let c = level(64, [0, 1], Some(1.0 / 1.02), Relation::Tie);
        match answer(&[&a, &b, &c]).unwrap() {
            Answer::Winner {
                winner,
                second,
                ratio,
                sure,
                levels,
            } => {
                assert_eq!((winner, second, sure, levels), (0, Some(1), 2, 3));
                assert!((ratio.0 - 28.0).abs() < 1e-9 && (ratio.1 - 39.0).abs() < 1e-9);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ties_untested_runs_and_changing_winners_are_said_as_such() {
        let tie = level(1, [0, 1], Some(0.99), Relation::Tie);
        assert_eq!(answer(&[&tie]), Some(Answer::Tie { levels: 1 }));
        let untested = level(1, [0, 1], None, Relation::Untested);
        assert_eq!(answer(&[&untested]), Some(Answer::Untested));
        let a = level(1, [0, 1], Some(0.5), Relation::Faster);
        let b = level(16, [1, 0], Some(0.5), Relation::Faster);
        assert_eq!(
            answer(&[&a, &b]),
            Some(Answer::Depends(vec![
                Lead {
                    level: "c=1".into(),
                    first: 0,
                    second: 1,
                    ratio: Some(2.0)
                },
                Lead {
                    level: "c=16".into(),
                    first: 1,
                    second: 0,
                    ratio: Some(2.0)
                }
            ]))
        );
        // A level where another is first but not significantly names no winner.
        let tied = level(4, [1, 0], Some(0.99), Relation::Tie);
        assert!(matches!(
            answer(&[&tied, &a]),
            Some(Answer::Winner {
                winner: 0,
                sure: 1,
                levels: 2,
                ..
            })
        ));
        assert_eq!(answer(&[]), None);
    }
}
