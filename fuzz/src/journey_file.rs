//! Target `journey_file`: the journey file reader (`shootout_model::journey::parse`), its
//! text read as UTF-8 (lossily); `users.csv` reads as a small data file, `body.bin` as a
//! few bytes, any other file is missing.
//!
//! Invariants: no panic; an error names the file and a line of the text (1 to the number
//! of lines); a file that is read has journeys with steps, weights from 1, every step in
//! exactly one place of its journey's segments, every named placeholder and capture given
//! a slot of its journey's variables; the heap grows by at most a bound set by the text's
//! length.

use crate::alloc;
use shootout_model::journey::{
    parse, Body, Journey, JourneyFile, Piece, Segment, Source, Template,
};

/// As the plan's target: TOML tables and typed journeys per byte of text, plus the TOML
/// reader's own error path and the regexes (each at most 1 MiB compiled; a text of n bytes
/// holds at most n / 10 of them, so the per-byte share covers them).
const GROWTH_PER_BYTE: usize = 64 << 10;
const GROWTH_BASE: usize = 4 << 20;

const USERS: &[u8] = b"user_name,password\nann,secret\nbob,\"a,\"\"b\"\nc\"\n";

/// The target (see the module).
pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (parsed, grew) = alloc::peak_growth(|| {
        parse(
            &text,
            "fuzz.toml",
            &mut |p| match p.file_name().and_then(|n| n.to_str()) {
                Some("users.csv") => Ok(USERS.to_vec()),
                Some("body.bin") => Ok(b"\0\r\nbody".to_vec()),
                _ => Err("No such file or directory".into()),
            },
        )
    });
    let bound = GROWTH_BASE + GROWTH_PER_BYTE * text.len();
    assert!(
        grew <= bound,
        "the journey reader grew the heap by {grew} bytes for {} bytes of text",
        text.len()
    );
    match parsed {
        Ok(f) => well_formed(&f),
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

fn well_formed(f: &JourneyFile) {
    assert!(!f.journeys.is_empty());
    for j in &f.journeys {
        assert!(j.weight >= 1 && !j.steps.is_empty() && !j.name.is_empty());
        let mut seen = vec![0; j.steps.len()];
        for s in &j.segments {
            match s {
                Segment::One(i) => seen[*i] += 1,
                Segment::Choice(alts) => {
                    for a in alts {
                        assert!(!a.is_empty());
                        a.iter().for_each(|i| seen[*i] += 1);
                    }
                }
            }
        }
        assert!(
            seen.iter().all(|&n| n == 1),
            "each step in one place: {seen:?}"
        );
        for s in &j.steps {
            assert!(s.repeat >= 1 && s.weight != Some(0));
            slots(&s.target, j);
            s.headers.iter().for_each(|(_, t)| slots(t, j));
            if let Body::Template(t) = &s.body {
                slots(t, j);
            }
            if let Some(t) = &s.expect.body_contains {
                slots(t, j);
            }
            for c in &s.captures {
                assert_eq!(j.vars[c.slot], c.name);
            }
        }
    }
}

fn slots(t: &Template, j: &Journey) {
    for p in &t.pieces {
        if let Piece::Var(Source::Named(n), _, slot) = p {
            assert_eq!(&j.vars[*slot], n, "a placeholder's slot names it");
        }
    }
}
