//! Target `plan`: the plan reader (`shootout_model::plan::parse`), its text read as UTF-8
//! (lossily), with CPUs 0 and 1 available.
//!
//! Invariants: no panic; an error names the file and a line of the text (1 to the number
//! of lines); a plan that is read has at least one contender and one workload, unique
//! names, and levels or a capacity search for every workload; the heap grows by at most
//! a bound set by the text's length.

use crate::alloc;
use shootout_model::plan::{parse, Plan};

/// The heap a plan may take beyond its text, per byte of text (TOML tables and the typed
/// plan), plus a constant for the reader itself: the TOML reader's error path alone takes
/// about 1.6 MiB whatever the text (measured: 1.67 MB for 6 KB of text, 3.7 MB for 51 KB).
const GROWTH_PER_BYTE: usize = 64;
const GROWTH_BASE: usize = 4 << 20;

/// The target (see the module).
pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (parsed, grew) = alloc::peak_growth(|| parse(&text, "fuzz.toml", &[0, 1]));
    let bound = GROWTH_BASE + GROWTH_PER_BYTE * text.len();
    assert!(
        grew <= bound,
        "the plan reader grew the heap by {grew} bytes for {} bytes of text",
        text.len()
    );
    match parsed {
        Ok(plan) => well_formed(&plan),
        Err(e) => {
            let lines = text.matches('\n').count() + 1;
            assert_eq!(e.file, "fuzz.toml");
            assert!(
                (1..=lines).contains(&e.line),
                "line {} of {lines}: {e}",
                e.line
            );
            assert!(!e.message.is_empty());
        }
    }
}

/// What every plan that is read holds.
fn well_formed(plan: &Plan) {
    assert!(!plan.contenders.is_empty() && !plan.workloads.is_empty());
    let mut names: Vec<&str> = plan.contenders.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(
        names.len(),
        plan.contenders.len(),
        "contender names are unique"
    );
    for w in &plan.workloads {
        assert!(
            !plan.levels.is_empty() || w.find_max.is_some(),
            "workload {} has neither levels nor a search",
            w.name
        );
        if let Some(f) = &w.find_max {
            assert!(!f.slos.is_empty() && f.slos.len() == f.slo.len());
            assert!(f.from > 0.0 && f.from <= f.to && f.to.is_finite());
        }
    }
}
