//! The sample of what went over the wire that `-v 2` prints ([`Heads`]): written by the
//! first worker's recorder, handed to the caller through [`crate::Control`]. Below both.

/// A sample of what went over the wire, for `-v 2` (ab's verbosity): the first request's
/// head as sent and the first answers' heads as they arrived, copied from the first
/// worker's first connection only (over HTTP/2 as text: `HTTP/2 200`, then the fields),
/// so the run pays a copy per sampled answer and one test per answer, nothing else. Asked
/// for with [`crate::Control::sample_heads`]; read with
/// [`crate::Control::heads`] once the run ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Heads {
    /// The first request's line and header lines, up to and including the blank line.
    pub request: Option<Vec<u8>>,
    /// The first answers' heads, in the order they came (interim 1xx heads left out).
    pub responses: Vec<Vec<u8>>,
    /// A journey run: the first worker's first user's first journey, step by step.
    pub journey: Vec<Exchange>,
}

/// One step of the journey `-v 2` follows: the request's head as sent, the answer's head
/// as it came (`None` when none came: the step failed first), and the values the step
/// captured, in the file's order (a capture that found nothing is left out).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exchange {
    /// The step's label, `journey › step`.
    pub step: String,
    /// The request's line and header lines, up to and including the blank line.
    pub request: Vec<u8>,
    /// The answer's head.
    pub answer: Option<Vec<u8>>,
    /// `(name, value)` of each value captured.
    pub captured: Vec<(String, Vec<u8>)>,
}
