//! Journeys: what a user of a web application does, step by step — log in, read a page,
//! post a form with the token the last answer held — with think times between steps,
//! captures from answers, expectations per step and a data file of users. Read from TOML
//! (the same format for `load --journey FILE` and for a plan's journeys) in two stages:
//! serde reads the file (unknown keys are errors), then [`parse`] validates it into typed
//! [`Journey`]s. Every mistake is an error naming the file, the line, the key and the fix,
//! before anything runs: a variable no column or earlier capture defines, a weight of 0, a
//! regex that does not compile, a data file that is missing or lacks a column.
//!
//! No I/O: the data files and body files a journey names are read through the caller's
//! function. Running a journey (drawing values, the cookie jar, captures, the choice of the
//! next step) is the engine's `journey` module.

use crate::status::StatusSet;
use crate::target::{check_body, check_header, check_method};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

pub mod data;
pub mod template;
pub mod think;

pub use data::Table;
/// The regex type of captures, for the engine that runs them.
pub use regex::bytes::Regex;
pub use template::{Encoding, Piece, Source, Template};
pub use think::Think;

/// The default prefix of an answer's body a capture or a JSON expectation reads: 64 KiB.
pub const DEFAULT_WITHIN: usize = 64 << 10;
/// The largest prefix a capture may read (`within`): 16 MiB.
pub const MAX_WITHIN: usize = 16 << 20;
/// The most times a step may repeat.
pub const MAX_REPEAT: u32 = 1_000_000;
/// The most journeys in a file, steps in a journey and captures in a step.
pub const MAX_ITEMS: usize = 10_000;
/// The names the templates own: a capture or a column may not take them.
pub const BUILTINS: [&str; 4] = ["seq", "user", "rand", "rand_text"];

/// A journey file that cannot be run, with where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct JourneyError {
    /// The journey file as given.
    pub file: String,
    /// 1-based line of the offending key or table.
    pub line: usize,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// A journey file's journeys, chosen per user by weight.
#[derive(Debug, Clone)]
pub struct JourneyFile {
    /// At least one.
    pub journeys: Vec<Journey>,
}

/// One journey: its steps in order, run by one user at a time.
#[derive(Debug, Clone)]
pub struct Journey {
    /// Unique in the file.
    pub name: String,
    /// Share of the users that run it (at least 1).
    pub weight: u32,
    /// Wait between two steps.
    pub think: Think,
    /// The data file, one row per user.
    pub data: Option<Data>,
    /// At least one, names unique in the journey.
    pub steps: Vec<Step>,
    /// The steps in the order they run: single steps and groups of weighted steps of which
    /// one is chosen.
    pub segments: Vec<Segment>,
    /// The journey's named variables (data columns, then captures): a template's
    /// [`Piece::Var`] holds its index here.
    pub vars: Vec<String>,
    /// Line of the `[[journey]]` table.
    pub line: usize,
}

/// Where a journey goes next: one step, or one alternative of a group chosen by weight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// This step.
    One(usize),
    /// One of these alternatives, chosen by the weight of its first step. A group is a run
    /// of consecutive steps with a `weight` or a `task`; an alternative is one step with a
    /// `weight`, or the consecutive steps of one `task` (its weight on its first step,
    /// 1 if none): Locust's `@task(n)` methods.
    Choice(Vec<Vec<usize>>),
}

/// A journey's data file.
#[derive(Debug, Clone)]
pub struct Data {
    /// The file as written in the journey file.
    pub file: String,
    /// Its rows.
    pub table: Table,
    /// What happens when users outnumber the rows.
    pub end: DataEnd,
    /// The variable slot of each column.
    pub slots: Vec<usize>,
}

/// What a user past the data file's last row does (`data_end`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataEnd {
    /// User `n` takes row `n mod rows` (`"wrap"`, the default).
    Wrap,
    /// Users past the last row do not run this journey (`"stop"`).
    Stop,
}

/// One request of a journey.
#[derive(Debug, Clone)]
pub struct Step {
    /// Unique in its journey; reports count by it.
    pub name: String,
    /// Upper case token.
    pub method: String,
    /// The request target (path and query), drawn values percent-encoded.
    pub target: Template,
    /// Extra headers, values checked as drawn.
    pub headers: Vec<(String, Template)>,
    /// The body.
    pub body: Body,
    /// What a good answer is.
    pub expect: StepExpect,
    /// Values taken from the answer.
    pub captures: Vec<Capture>,
    /// Times the step is sent in a row (each counted), at least 1.
    pub repeat: u32,
    /// Weight in its group of alternatives; `None`: not in a group, or not the first
    /// step of its task.
    pub weight: Option<u32>,
    /// The alternative (`task`) this step belongs to, if named.
    pub task: Option<String>,
    /// On a failure the journey goes on with its next step (`on_failure = "go on"`)
    /// instead of ending.
    pub go_on: bool,
    /// Sent in a user's first journey only (`once = true`: a login, Locust's `on_start`);
    /// what it captures lasts for the user's life.
    pub once: bool,
    /// Line of the `[[journey.step]]` table.
    pub line: usize,
}

/// A step's body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// None.
    None,
    /// Drawn per request (`body`, `form`, `json`).
    Template(Template),
    /// A file's bytes (`body_file`).
    Bytes(Vec<u8>),
}

/// What a step's answer must be.
#[derive(Debug, Clone)]
pub struct StepExpect {
    /// Accepted status codes (every code below 400 unless `status` is given).
    pub status: StatusSet,
    /// The body's exact length in bytes.
    pub length: Option<u64>,
    /// Text the body must hold.
    pub body_contains: Option<Template>,
    /// JSON pointers and the values they must hold, read from the body's first
    /// [`StepExpect::within`] bytes.
    pub json: Vec<(String, JsonWant)>,
    /// Prefix of the body the JSON expectations parse.
    pub within: usize,
}

/// What an `expect.json` pointer must hold.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonWant {
    /// This value, as written (a string without placeholders among them).
    Value(serde_json::Value),
    /// A string that holds placeholders, drawn as the request is made (as
    /// `body_contains` is): the pointer must hold exactly that string.
    Text(Template),
}

/// A value taken from an answer into a variable.
#[derive(Debug, Clone)]
pub struct Capture {
    /// The variable's name.
    pub name: String,
    /// Its slot in [`Journey::vars`].
    pub slot: usize,
    /// Where the value is read.
    pub from: CaptureFrom,
    /// Applied to what `from` gives: the first group's match (the whole match without
    /// groups).
    pub regex: Option<Regex>,
    /// The most body bytes read (`within`, bytes): a larger answer costs no more.
    pub within: usize,
}

/// Where a capture reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaptureFrom {
    /// The body's first `within` bytes (with a regex).
    Body,
    /// A JSON pointer (RFC 6901) into the body's first `within` bytes.
    Json(String),
    /// The first header of this name (ASCII case-insensitive).
    Header(String),
    /// The cookie of this name in the user's jar after the answer.
    Cookie(String),
}

impl JourneyFile {
    /// Each step's name as reports and the run's per-step counts give it, `journey ›
    /// step`, in the file's order (journeys, then their steps).
    pub fn step_labels(&self) -> Vec<String> {
        self.journeys
            .iter()
            .flat_map(|j| {
                j.steps
                    .iter()
                    .map(move |s| format!("{} › {}", j.name, s.name))
            })
            .collect()
    }

    /// How many times each step is sent in one journey on average, in the file's order
    /// (journeys, then their steps: the order of the run's per-step counts): a journey's
    /// share of the weights, times the step's `repeat`, times its alternative's share of
    /// its group where it is one. A journey that ends early on a failure sends fewer; a
    /// `once` step counts as sent (each open-model journey is a new user). A capacity
    /// search sizes its steps by it: its rates count journeys, its SLOs requests.
    pub fn sends_per_journey(&self) -> Vec<f64> {
        let total: f64 = self.journeys.iter().map(|j| f64::from(j.weight)).sum();
        self.journeys
            .iter()
            .flat_map(|j| {
                let share = f64::from(j.weight) / total.max(1.0);
                let mut sends = vec![0.0; j.steps.len()];
                for segment in &j.segments {
                    match segment {
                        Segment::One(i) => sends[*i] += share,
                        Segment::Choice(alts) => {
                            let weight = |alt: &Vec<usize>| {
                                f64::from(alt.first().and_then(|&i| j.steps[i].weight).unwrap_or(1))
                            };
                            let all: f64 = alts.iter().map(weight).sum();
                            for alt in alts {
                                for &i in alt {
                                    sends[i] += share * weight(alt) / all.max(1.0);
                                }
                            }
                        }
                    }
                }
                sends
                    .into_iter()
                    .zip(&j.steps)
                    .map(|(n, s)| n * f64::from(s.repeat))
            })
            .collect()
    }

    /// How many times each step is sent in a row when it is sent (its `repeat`), in the
    /// order of [`JourneyFile::step_labels`]: the most one journey sends of it.
    pub fn step_repeats(&self) -> Vec<u64> {
        self.journeys
            .iter()
            .flat_map(|j| j.steps.iter().map(|s| u64::from(s.repeat)))
            .collect()
    }

    /// The most requests one journey of the file sends: over its journeys, each step's
    /// `repeat` summed, an alternative group counting its largest alternative. A capacity
    /// search bounds the answers a step can count by it ([`crate::find_max`]'s searches
    /// count journeys).
    pub fn most_sends_per_journey(&self) -> u64 {
        let repeat = |j: &Journey, i: &usize| j.steps.get(*i).map_or(0, |s| u64::from(s.repeat));
        self.journeys
            .iter()
            .map(|j| {
                j.segments
                    .iter()
                    .map(|segment| match segment {
                        Segment::One(i) => repeat(j, i),
                        Segment::Choice(alts) => alts
                            .iter()
                            .map(|alt| alt.iter().map(|i| repeat(j, i)).sum::<u64>())
                            .max()
                            .unwrap_or(0),
                    })
                    .sum::<u64>()
            })
            .max()
            .unwrap_or(0)
    }
}

impl Journey {
    /// The most body bytes a step's captures and expectations read: what a connection
    /// keeps of the answer to that step.
    pub fn prefix(&self, step: usize) -> usize {
        let s = &self.steps[step];
        let captures = s
            .captures
            .iter()
            .filter(|c| matches!(c.from, CaptureFrom::Body | CaptureFrom::Json(_)))
            .map(|c| c.within);
        let json = (!s.expect.json.is_empty()).then_some(s.expect.within);
        captures.chain(json).max().unwrap_or(0)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileJourneys {
    #[serde(default)]
    journey: Vec<Spanned<FileJourney>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileJourney {
    name: Spanned<String>,
    weight: Option<Spanned<i64>>,
    think: Option<Spanned<String>>,
    data: Option<Spanned<String>>,
    data_end: Option<Spanned<String>>,
    #[serde(default)]
    step: Vec<Spanned<FileStep>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileStep {
    name: Option<Spanned<String>>,
    get: Option<Spanned<String>>,
    post: Option<Spanned<String>>,
    put: Option<Spanned<String>>,
    delete: Option<Spanned<String>>,
    patch: Option<Spanned<String>>,
    head: Option<Spanned<String>>,
    options: Option<Spanned<String>>,
    method: Option<Spanned<String>>,
    path: Option<Spanned<String>>,
    headers: Option<Spanned<BTreeMap<String, String>>>,
    body: Option<Spanned<String>>,
    form: Option<Spanned<BTreeMap<String, String>>>,
    json: Option<Spanned<toml::Value>>,
    body_file: Option<Spanned<String>>,
    expect: Option<Spanned<FileExpect>>,
    capture: Option<Spanned<BTreeMap<String, Spanned<FileCapture>>>>,
    repeat: Option<Spanned<i64>>,
    weight: Option<Spanned<i64>>,
    task: Option<Spanned<String>>,
    on_failure: Option<Spanned<String>>,
    once: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileExpect {
    status: Option<Spanned<toml::Value>>,
    length: Option<Spanned<i64>>,
    body_contains: Option<Spanned<String>>,
    json: Option<Spanned<BTreeMap<String, toml::Value>>>,
    within: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileCapture {
    json: Option<String>,
    regex: Option<String>,
    header: Option<String>,
    cookie: Option<String>,
    within: Option<i64>,
}

/// Reads the files a journey names: given the path (relative ones are joined to the
/// journey file's folder), the bytes or why not.
pub type ReadFile<'a> = &'a mut dyn FnMut(&Path) -> Result<Vec<u8>, String>;

/// Parses and validates a journey file's `text`; `file` names it in errors and places
/// the files it names; `read` reads them. Every check is made here, before anything runs.
pub fn parse(text: &str, file: &str, read: ReadFile) -> Result<JourneyFile, JourneyError> {
    let r = Reader { text, file };
    let raw: FileJourneys = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        r.err(
            offset,
            format!(
                "{} (see docs/journeys.md for every key)",
                e.message().trim_end()
            ),
        )
    })?;
    if raw.journey.is_empty() {
        return Err(r.err(
            0,
            "no journey: add a [[journey]] table with a name and its [[journey.step]]s".into(),
        ));
    }
    if raw.journey.len() > MAX_ITEMS {
        return Err(r.err(0, format!("more than {MAX_ITEMS} journeys")));
    }
    let base = Path::new(file).parent().unwrap_or(Path::new(""));
    let mut journeys: Vec<Journey> = Vec::new();
    for j in &raw.journey {
        let journey = r.journey(j, base, read)?;
        if journeys.iter().any(|k| k.name == journey.name) {
            return Err(r.err(
                j.get_ref().name.span().start,
                format!(
                    "journey.name = \"{}\" is taken by an earlier journey: give each journey its own name",
                    journey.name
                ),
            ));
        }
        journeys.push(journey);
    }
    Ok(JourneyFile { journeys })
}

/// The text being read, for errors that name the file and line of a key.
struct Reader<'a> {
    text: &'a str,
    file: &'a str,
}

/// The variables defined so far while a journey's steps are read in order.
#[derive(Clone, Default)]
struct Scope {
    /// Slots defined.
    defined: Vec<bool>,
    /// A `{rand:LO-HI}` was drawn.
    rand: bool,
    /// A `{rand_text:N}` was drawn.
    text: bool,
    /// Every name a step of the journey captures, for the error of one used too early.
    captured: Vec<String>,
}

/// What a step's templates are resolved against while it is read: the journey's
/// variables so far (captures add theirs), those defined before the step, its data file.
struct Names<'a> {
    vars: &'a mut Vec<String>,
    scope: &'a mut Scope,
    data: Option<&'a Data>,
}

/// How a journey's steps follow each other, built as they are read in order, with the scope
/// each step is read in. The alternatives of a group see the scope before the group (and
/// their own earlier steps); after it each alternative's captures count as defined (a value
/// a step not chosen would have captured is a failure of the step that needs it, when it
/// runs).
struct Layout {
    segments: Vec<Segment>,
    /// The group being read: its alternatives, each the indexes of its steps.
    group: Vec<Vec<usize>>,
    /// The task of the last step read in a group.
    task: Option<String>,
    /// The scope outside groups, or before the group being read.
    scope: Scope,
    /// The scope after the group being read: the union of its alternatives'.
    after_group: Scope,
    /// The scope of the alternative being read.
    alternative: Scope,
    /// Whether the step being read is in a group, and continues the last step's task.
    in_group: bool,
    continues: bool,
}

impl Layout {
    fn new(scope: Scope) -> Layout {
        Layout {
            segments: Vec::new(),
            group: Vec::new(),
            task: None,
            after_group: scope.clone(),
            alternative: scope.clone(),
            scope,
            in_group: false,
            continues: false,
        }
    }

    /// The scope the next step is read in; a weight on a task's later step is an error
    /// (where it is, and the task's name).
    fn enter(&mut self, raw: &FileStep) -> Result<Scope, (usize, String)> {
        let in_group = raw.weight.is_some() || raw.task.is_some();
        let this_task = raw.task.as_ref().map(|t| t.get_ref().clone());
        let continues = in_group && this_task.is_some() && this_task == self.task;
        if !in_group && !self.group.is_empty() {
            self.segments
                .push(Segment::Choice(std::mem::take(&mut self.group)));
            self.scope = self.after_group.clone();
        }
        if in_group && self.group.is_empty() {
            self.after_group = self.scope.clone();
        }
        if in_group && !continues {
            self.alternative = self.scope.clone();
        }
        if let (true, Some(w)) = (continues, &raw.weight) {
            return Err((w.span().start, self.task.clone().unwrap_or_default()));
        }
        self.task = if in_group { this_task } else { None };
        self.in_group = in_group;
        self.continues = continues;
        Ok(if in_group {
            self.alternative.clone()
        } else {
            self.scope.clone()
        })
    }

    /// The step just read, at `index`, with the scope it left (`vars` variables in all).
    fn leave(&mut self, mut own: Scope, index: usize, vars: usize) {
        if self.in_group {
            match (self.continues, self.group.last_mut()) {
                (true, Some(alt)) => alt.push(index),
                _ => self.group.push(vec![index]),
            }
            own.defined.resize(vars, false);
            self.after_group.defined.resize(vars, false);
            self.after_group.union(&own);
            self.alternative = own;
        } else {
            self.segments.push(Segment::One(index));
            self.scope = own;
        }
    }

    fn end(mut self) -> Vec<Segment> {
        if !self.group.is_empty() {
            self.segments.push(Segment::Choice(self.group));
        }
        self.segments
    }
}

impl Scope {
    fn union(&mut self, other: &Scope) {
        for (a, b) in self.defined.iter_mut().zip(&other.defined) {
            *a |= *b;
        }
        self.rand |= other.rand;
        self.text |= other.text;
    }
}

impl Reader<'_> {
    fn err(&self, offset: usize, message: String) -> JourneyError {
        let line = self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1;
        JourneyError {
            file: self.file.to_string(),
            line,
            message,
        }
    }

    fn line(&self, offset: usize) -> usize {
        self.err(offset, String::new()).line
    }

    fn journey(
        &self,
        j: &Spanned<FileJourney>,
        base: &Path,
        read: ReadFile,
    ) -> Result<Journey, JourneyError> {
        let at = j.span().start;
        let j = j.get_ref();
        let name = j.name.get_ref().trim().to_string();
        if name.is_empty() {
            return Err(self.err(
                j.name.span().start,
                "journey.name is empty: name the journey (reports count by it)".into(),
            ));
        }
        let who = format!("journey \"{name}\"");
        let weight = match &j.weight {
            None => 1,
            Some(w) => positive(*w.get_ref())
                .ok_or_else(|| {
                    self.err(
                        w.span().start,
                        format!(
                            "{who}: weight = {} must be a whole number from 1 (a journey of weight 0 never runs: remove it instead)",
                            w.get_ref()
                        ),
                    )
                })?,
        };
        let think = match &j.think {
            None => Think::None,
            Some(t) => Think::parse(t.get_ref())
                .map_err(|m| self.err(t.span().start, format!("{who}: {m}")))?,
        };
        let mut vars: Vec<String> = Vec::new();
        let data = match &j.data {
            None => {
                if let Some(e) = &j.data_end {
                    return Err(self.err(
                        e.span().start,
                        format!("{who}: data_end without data: name the data file (data = \"users.csv\") or remove data_end"),
                    ));
                }
                None
            }
            Some(d) => Some(self.data(j, d, base, read, &who, &mut vars)?),
        };
        let (steps, segments) = self.steps(j, at, &who, &mut vars, data.as_ref(), base, read)?;
        if steps.iter().all(|s| s.once) {
            return Err(self.err(
                at,
                format!("{who}: every step has once = true, so its second journey would send nothing: leave once off the steps a user repeats"),
            ));
        }
        Ok(Journey {
            name,
            weight,
            think,
            data,
            steps,
            segments,
            vars,
            line: self.line(at),
        })
    }

    /// The journey's steps in order, and how they follow each other: one after another, or
    /// a group of weighted alternatives (tasks) of which each journey runs one.
    #[allow(clippy::too_many_arguments)]
    fn steps(
        &self,
        j: &FileJourney,
        at: usize,
        who: &str,
        vars: &mut Vec<String>,
        data: Option<&Data>,
        base: &Path,
        read: ReadFile,
    ) -> Result<(Vec<Step>, Vec<Segment>), JourneyError> {
        if j.step.is_empty() {
            return Err(self.err(
                at,
                format!("{who} has no step: add [[journey.step]] tables after it"),
            ));
        }
        if j.step.len() > MAX_ITEMS {
            return Err(self.err(at, format!("{who}: more than {MAX_ITEMS} steps")));
        }
        let scope = Scope {
            defined: vec![true; vars.len()],
            captured: j
                .step
                .iter()
                .filter_map(|s| s.get_ref().capture.as_ref())
                .flat_map(|c| c.get_ref().keys().cloned())
                .collect(),
            ..Scope::default()
        };
        let mut layout = Layout::new(scope);
        let mut steps: Vec<Step> = Vec::new();
        for s in &j.step {
            let raw = s.get_ref();
            let mut own = layout.enter(raw).map_err(|(at, task)| {
                self.err(
                    at,
                    format!("{who}: weight is given on a task's first step only (task \"{task}\" has one already): remove this one"),
                )
            })?;
            let mut names = Names {
                vars: &mut *vars,
                scope: &mut own,
                data,
            };
            let step = self.step(s, who, &mut names, base, read)?;
            if steps.iter().any(|k| k.name == step.name) {
                return Err(self.err(
                    s.span().start,
                    format!(
                        "{who}: two steps are named \"{}\": give each step its own name (reports count by it)",
                        step.name
                    ),
                ));
            }
            layout.leave(own, steps.len(), vars.len());
            steps.push(step);
        }
        let segments = layout.end();
        Ok((steps, segments))
    }

    fn data(
        &self,
        j: &FileJourney,
        d: &Spanned<String>,
        base: &Path,
        read: ReadFile,
        who: &str,
        vars: &mut Vec<String>,
    ) -> Result<Data, JourneyError> {
        let end = match j.data_end.as_ref().map(|e| (e.span().start, e.get_ref().as_str())) {
            None | Some((_, "wrap")) => DataEnd::Wrap,
            Some((_, "stop")) => DataEnd::Stop,
            Some((at, other)) => {
                return Err(self.err(
                    at,
                    format!("{who}: data_end = \"{other}\": write \"wrap\" (user n takes row n mod rows) or \"stop\" (users past the last row do not run it)"),
                ))
            }
        };
        let path = base.join(d.get_ref());
        let bytes = read(&path).map_err(|why| {
            self.err(
                d.span().start,
                format!(
                    "{who}: data = \"{}\": cannot read {}: {why}: fix the path (a relative one is read from the journey file's folder)",
                    d.get_ref(),
                    show_path(&path)
                ),
            )
        })?;
        let table = Table::parse(&bytes).map_err(|e| {
            self.err(
                d.span().start,
                format!("{who}: data file {}:{}: {}", d.get_ref(), e.line, e.message),
            )
        })?;
        let mut slots = Vec::new();
        for c in &table.columns {
            if BUILTINS.contains(&c.as_str()) {
                return Err(self.err(
                    d.span().start,
                    format!("{who}: data file {} has a column \"{c}\", a name templates own ({{{c}}}): rename the column", d.get_ref()),
                ));
            }
            slots.push(vars.len());
            vars.push(c.clone());
        }
        Ok(Data {
            file: d.get_ref().clone(),
            table,
            end,
            slots,
        })
    }

    fn step(
        &self,
        s: &Spanned<FileStep>,
        who: &str,
        names: &mut Names,
        base: &Path,
        read: ReadFile,
    ) -> Result<Step, JourneyError> {
        let at = s.span().start;
        let s = s.get_ref();
        let (method, path, path_key) = self.request_line(s, at, who)?;
        let name = match &s.name {
            Some(n) if n.get_ref().trim().is_empty() => {
                return Err(self.err(
                    n.span().start,
                    format!("{who}: a step's name is empty: name it or remove name (the default is the method and path)"),
                ))
            }
            Some(n) => n.get_ref().trim().to_string(),
            None => format!("{method} {}", path.get_ref()),
        };
        let who = format!("{who}, step \"{name}\"");
        let target = self.target(path, &path_key, names, &who)?;
        let mut headers = self.headers(s, names, &who)?;
        let (body, content_type) = self.body(s, names, &who, base, read)?;
        let has_type = headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"));
        if let (Some(ct), false) = (content_type, has_type) {
            headers.push(("Content-Type".into(), Template::literal(ct)));
        }
        check_body(literal_len(&body)).map_err(|e| self.err(at, format!("{who}: {e}")))?;
        let expect = match &s.expect {
            None => StepExpect {
                status: StatusSet::default(),
                length: None,
                body_contains: None,
                json: Vec::new(),
                within: DEFAULT_WITHIN,
            },
            Some(e) => self.expect(e, &who, names)?,
        };
        let captures = self.captures(s, names, &who)?;
        let (repeat, weight) = self.repeat_and_weight(s, &who)?;
        Ok(Step {
            name,
            method,
            target,
            headers,
            body,
            expect,
            captures,
            repeat,
            weight,
            task: s.task.as_ref().map(|t| t.get_ref().clone()),
            go_on: self.goes_on(s, &who)?,
            once: s.once.unwrap_or(false),
            line: self.line(at),
        })
    }

    /// The step's method, its path as written, and the key that gave the path (for errors).
    fn request_line<'s>(
        &self,
        s: &'s FileStep,
        at: usize,
        who: &str,
    ) -> Result<(String, &'s Spanned<String>, String), JourneyError> {
        let methods = [
            ("GET", &s.get),
            ("POST", &s.post),
            ("PUT", &s.put),
            ("DELETE", &s.delete),
            ("PATCH", &s.patch),
            ("HEAD", &s.head),
            ("OPTIONS", &s.options),
        ];
        let given: Vec<_> = methods
            .iter()
            .filter_map(|(m, v)| v.as_ref().map(|v| (m.to_string(), v)))
            .collect();
        match (given.as_slice(), &s.method, &s.path) {
            ([(m, p)], None, None) => Ok((m.clone(), *p, m.to_ascii_lowercase())),
            ([], Some(m), Some(p)) => {
                let upper = m.get_ref().to_ascii_uppercase();
                check_method(&upper).map_err(|e| self.err(m.span().start, format!("{who}: method: {e}")))?;
                Ok((upper, p, "path".to_string()))
            }
            _ => Err(self.err(
                at,
                format!("{who}: a step says its request once: get = \"/path\" (or post, put, delete, patch, head, options), or method = \"NAME\" with path = \"/path\""),
            )),
        }
    }

    /// The request target: a path template that starts with `/`.
    fn target(
        &self,
        path: &Spanned<String>,
        path_key: &str,
        names: &mut Names,
        who: &str,
    ) -> Result<Template, JourneyError> {
        let path_at = path.span().start;
        let literal_path = |lit: &str| template::encoded(lit, Encoding::Path);
        let mut target = Template::parse(path.get_ref(), Encoding::Path, &literal_path)
            .map_err(|e| self.err(path_at, format!("{who}: {path_key}: {e}")))?;
        match target.pieces.first() {
            Some(Piece::Lit(l)) if !l.starts_with('/') => {
                return Err(self.err(
                    path_at,
                    format!("{who}: {path_key} = \"{}\": the path must start with / (the journey's host is given by load's URL or the plan)", path.get_ref()),
                ))
            }
            None => {
                return Err(self.err(path_at, format!("{who}: {path_key}: the path is empty: write \"/\" at least")))
            }
            _ => {}
        }
        self.resolve(&mut target, names, path_at, who, path_key)?;
        Ok(target)
    }

    /// The step's own headers, each a template checked as a header may be sent.
    fn headers(
        &self,
        s: &FileStep,
        names: &mut Names,
        who: &str,
    ) -> Result<Vec<(String, Template)>, JourneyError> {
        let mut headers = Vec::new();
        let Some(h) = &s.headers else {
            return Ok(headers);
        };
        for (k, v) in h.get_ref() {
            let mut t = Template::parse(v, Encoding::Header, &|l| l.to_string())
                .map_err(|e| self.err(h.span().start, format!("{who}: headers.{k}: {e}")))?;
            let lit: String = t
                .pieces
                .iter()
                .filter_map(|p| match p {
                    Piece::Lit(l) => Some(l.as_str()),
                    Piece::Var(..) => None,
                })
                .collect();
            check_header(k, &lit)
                .map_err(|e| self.err(h.span().start, format!("{who}: headers.{k}: {e}")))?;
            self.resolve(&mut t, names, h.span().start, who, &format!("headers.{k}"))?;
            headers.push((k.clone(), t));
        }
        Ok(headers)
    }

    /// The step's body (one of body, form, json, body_file) and the content type it implies.
    fn body(
        &self,
        s: &FileStep,
        names: &mut Names,
        who: &str,
        base: &Path,
        read: ReadFile,
    ) -> Result<(Body, Option<&'static str>), JourneyError> {
        let bodies = [
            s.body.as_ref().map(|b| b.span().start),
            s.form.as_ref().map(|b| b.span().start),
            s.json.as_ref().map(|b| b.span().start),
            s.body_file.as_ref().map(|b| b.span().start),
        ];
        if let Some(second) = bodies.iter().flatten().nth(1) {
            return Err(self.err(
                *second,
                format!("{who}: give one of body, form, json and body_file"),
            ));
        }
        if let Some(b) = &s.body {
            let mut t = Template::parse(b.get_ref(), Encoding::Raw, &|l| l.to_string())
                .map_err(|e| self.err(b.span().start, format!("{who}: body: {e}")))?;
            self.resolve(&mut t, names, b.span().start, who, "body")?;
            Ok((Body::Template(t), None))
        } else if let Some(f) = &s.form {
            let mut t = Template::default();
            for (i, (k, v)) in f.get_ref().iter().enumerate() {
                if i > 0 {
                    t.push_lit("&");
                }
                t.push_lit(&form_lit(k));
                t.push_lit("=");
                let v = Template::parse(v, Encoding::Form, &form_lit)
                    .map_err(|e| self.err(f.span().start, format!("{who}: form.{k}: {e}")))?;
                t.extend(v);
            }
            self.resolve(&mut t, names, f.span().start, who, "form")?;
            Ok((Body::Template(t), Some("application/x-www-form-urlencoded")))
        } else if let Some(j) = &s.json {
            let mut t = Template::default();
            self.json_template(j.get_ref(), &mut t)
                .map_err(|e| self.err(j.span().start, format!("{who}: json: {e}")))?;
            self.resolve(&mut t, names, j.span().start, who, "json")?;
            Ok((Body::Template(t), Some("application/json")))
        } else if let Some(f) = &s.body_file {
            let p = base.join(f.get_ref());
            let bytes = read(&p).map_err(|why| {
                self.err(
                    f.span().start,
                    format!(
                        "{who}: body_file = \"{}\": cannot read {}: {why}: fix the path (a relative one is read from the journey file's folder)",
                        f.get_ref(),
                        show_path(&p)
                    ),
                )
            })?;
            Ok((Body::Bytes(bytes), None))
        } else {
            Ok((Body::None, None))
        }
    }

    fn captures(
        &self,
        s: &FileStep,
        names: &mut Names,
        who: &str,
    ) -> Result<Vec<Capture>, JourneyError> {
        let mut captures = Vec::new();
        if let Some(c) = &s.capture {
            if c.get_ref().len() > MAX_ITEMS {
                return Err(self.err(
                    c.span().start,
                    format!("{who}: more than {MAX_ITEMS} captures"),
                ));
            }
            for (name, cap) in c.get_ref() {
                captures.push(self.capture(name, cap, who, names)?);
            }
        }
        Ok(captures)
    }

    /// How many times in a row the step is sent (1 when not said) and its weight in a group.
    fn repeat_and_weight(
        &self,
        s: &FileStep,
        who: &str,
    ) -> Result<(u32, Option<u32>), JourneyError> {
        let count = |v: &Option<Spanned<i64>>, key: &str, max: u32, why: &str| match v {
            None => Ok(None),
            Some(n) => match positive(*n.get_ref()) {
                Some(k) if k <= max => Ok(Some(k)),
                _ => Err(self.err(
                    n.span().start,
                    format!(
                        "{who}: {key} = {} must be a whole number from 1 to {max} ({why})",
                        n.get_ref()
                    ),
                )),
            },
        };
        let repeat = count(
            &s.repeat,
            "repeat",
            MAX_REPEAT,
            "the times the step is sent in a row",
        )?
        .unwrap_or(1);
        let weight = count(
            &s.weight,
            "weight",
            u32::MAX,
            "a step of weight 0 is never chosen: remove it instead",
        )?;
        Ok((repeat, weight))
    }

    /// Whether the journey goes on after this step fails (`on_failure = "go on"`).
    fn goes_on(&self, s: &FileStep, who: &str) -> Result<bool, JourneyError> {
        match s.on_failure.as_ref().map(|o| (o.span().start, o.get_ref().as_str())) {
            None | Some((_, "stop")) => Ok(false),
            Some((_, "go on")) => Ok(true),
            Some((at, other)) => Err(self.err(
                at,
                format!("{who}: on_failure = \"{other}\": write \"stop\" (the journey ends there, the default) or \"go on\""),
            )),
        }
    }

    fn expect(
        &self,
        e: &Spanned<FileExpect>,
        who: &str,
        names: &mut Names,
    ) -> Result<StepExpect, JourneyError> {
        let at = e.span().start;
        let e = e.get_ref();
        let status = match &e.status {
            None => StatusSet::default(),
            Some(s) => self.status(s, who)?,
        };
        let length = match &e.length {
            None => None,
            Some(l) if *l.get_ref() >= 0 => Some(*l.get_ref() as u64),
            Some(l) => {
                return Err(self.err(
                    l.span().start,
                    format!(
                        "{who}: expect.length = {} must be a number of bytes, 0 or more",
                        l.get_ref()
                    ),
                ))
            }
        };
        let body_contains = match &e.body_contains {
            None => None,
            Some(b) if b.get_ref().is_empty() => {
                return Err(self.err(
                    b.span().start,
                    format!(
                        "{who}: expect.body_contains is empty: write the text the body must hold"
                    ),
                ))
            }
            Some(b) => {
                let mut t = Template::parse(b.get_ref(), Encoding::Raw, &|l| l.to_string())
                    .map_err(|m| {
                        self.err(b.span().start, format!("{who}: expect.body_contains: {m}"))
                    })?;
                self.resolve(&mut t, names, b.span().start, who, "expect.body_contains")?;
                Some(t)
            }
        };
        let json = match &e.json {
            None => Vec::new(),
            Some(j) => self.expect_json(j, who, names)?,
        };
        let within = match &e.within {
            None => DEFAULT_WITHIN,
            Some(w) => self.within(
                Some(*w.get_ref()),
                w.span().start,
                &format!("{who}: expect.within"),
            )?,
        };
        let _ = at;
        Ok(StepExpect {
            status,
            length,
            body_contains,
            json,
            within,
        })
    }

    /// `expect.status`: a code, a range or list as text, or an array of them.
    fn status(&self, s: &Spanned<toml::Value>, who: &str) -> Result<StatusSet, JourneyError> {
        let text = match s.get_ref() {
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::String(t) => t.clone(),
            toml::Value::Array(a) => a
                .iter()
                .map(|v| match v {
                    toml::Value::Integer(i) => i.to_string(),
                    toml::Value::String(t) => t.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(","),
            other => other.to_string(),
        };
        StatusSet::parse(&text)
            .map_err(|m| self.err(s.span().start, format!("{who}: expect.status: {m}")))
    }

    /// `expect.json`: JSON pointers and the value each must point at.
    fn expect_json(
        &self,
        j: &Spanned<BTreeMap<String, toml::Value>>,
        who: &str,
        names: &mut Names,
    ) -> Result<Vec<(String, JsonWant)>, JourneyError> {
        let mut json = Vec::new();
        for (pointer, value) in j.get_ref() {
            if !(pointer.is_empty() || pointer.starts_with('/')) {
                return Err(self.err(
                    j.span().start,
                    format!("{who}: expect.json: \"{pointer}\" is not a JSON pointer: write \"/{pointer}\" (RFC 6901)"),
                ));
            }
            let key = format!("expect.json.\"{pointer}\"");
            let want = match value {
                toml::Value::String(s) => {
                    let mut t = Template::parse(s, Encoding::Raw, &|l| l.to_string())
                        .map_err(|m| self.err(j.span().start, format!("{who}: {key}: {m}")))?;
                    self.resolve(&mut t, names, j.span().start, who, &key)?;
                    match t.as_literal() {
                        Some(text) => JsonWant::Value(serde_json::Value::String(text)),
                        None => JsonWant::Text(t),
                    }
                }
                value => JsonWant::Value(
                    serde_json::to_value(value)
                        .map_err(|m| self.err(j.span().start, format!("{who}: {key}: {m}")))?,
                ),
            };
            json.push((pointer.clone(), want));
        }
        Ok(json)
    }

    fn within(&self, w: Option<i64>, at: usize, key: &str) -> Result<usize, JourneyError> {
        match w {
            None => Ok(DEFAULT_WITHIN),
            Some(w) if w >= 1 && w as u64 <= MAX_WITHIN as u64 => Ok(w as usize),
            Some(w) => Err(self.err(
                at,
                format!("{key} = {w}: the bytes of the body read must be from 1 to {MAX_WITHIN} (16 MiB)"),
            )),
        }
    }

    fn capture(
        &self,
        name: &str,
        c: &Spanned<FileCapture>,
        who: &str,
        names: &mut Names,
    ) -> Result<Capture, JourneyError> {
        let at = c.span().start;
        let c = c.get_ref();
        let key = format!("{who}: capture.{name}");
        self.capture_name(name, at, &key, names.data)?;
        let from = match (&c.json, &c.header, &c.cookie) {
            (Some(p), None, None) => {
                if !(p.is_empty() || p.starts_with('/')) {
                    return Err(self.err(at, format!("{key}: json = \"{p}\" is not a JSON pointer: write \"/{p}\" (RFC 6901)")));
                }
                CaptureFrom::Json(p.clone())
            }
            (None, Some(h), None) => CaptureFrom::Header(h.clone()),
            (None, None, Some(k)) => CaptureFrom::Cookie(k.clone()),
            (None, None, None) if c.regex.is_some() => CaptureFrom::Body,
            (None, None, None) => {
                return Err(self.err(at, format!("{key}: say where the value is: json = \"/pointer\", regex = '...' (over the body), header = \"Name\" or cookie = \"name\"")))
            }
            _ => return Err(self.err(at, format!("{key}: give one of json, header and cookie (with a regex if need be)"))),
        };
        if matches!(from, CaptureFrom::Json(_)) && c.regex.is_some() {
            return Err(self.err(at, format!("{key}: a json capture takes no regex: capture the value, or use regex alone over the body")));
        }
        let regex = match &c.regex {
            None => None,
            Some(r) => Some(
                regex::bytes::RegexBuilder::new(r)
                    .size_limit(1 << 20)
                    .build()
                    .map_err(|e| {
                        let why = e.to_string();
                        let last = why.lines().last().unwrap_or("").trim().to_string();
                        self.err(at, format!("{key}: regex '{r}' does not compile: {last}: fix it (the syntax is the regex crate's, https://docs.rs/regex/#syntax)"))
                    })?,
            ),
        };
        if c.within.is_some() && !matches!(from, CaptureFrom::Body | CaptureFrom::Json(_)) {
            return Err(self.err(at, format!("{key}: within bounds what is read of the body: a header or cookie capture takes none")));
        }
        let within = self.within(c.within, at, &format!("{key}.within"))?;
        let slot = match names.vars.iter().position(|v| v == name) {
            Some(s) => s,
            None => {
                names.vars.push(name.to_string());
                names.vars.len() - 1
            }
        };
        names.scope.defined.resize(names.vars.len(), false);
        names.scope.defined[slot] = true;
        Ok(Capture {
            name: name.to_string(),
            slot,
            from,
            regex,
            within,
        })
    }

    /// A capture's name: a variable name, not a template's own nor a data file's column.
    fn capture_name(
        &self,
        name: &str,
        at: usize,
        key: &str,
        data: Option<&Data>,
    ) -> Result<(), JourneyError> {
        if !template::is_variable_name(name) {
            return Err(self.err(at, format!("{key}: a variable's name is letters, digits, _ - and ., starting with a letter or _")));
        }
        if BUILTINS.contains(&name) {
            return Err(self.err(
                at,
                format!("{key}: {{{name}}} is the templates' own: name the capture otherwise"),
            ));
        }
        if let Some(d) = data {
            if d.table.column(name).is_some() {
                return Err(self.err(at, format!("{key}: the data file {} has a column of this name: name the capture otherwise", d.file)));
            }
        }
        Ok(())
    }

    /// A TOML value as a JSON body template: strings are templates whose drawn values are
    /// JSON-escaped.
    fn json_template(&self, v: &toml::Value, t: &mut Template) -> Result<(), String> {
        match v {
            toml::Value::String(s) => {
                t.push_lit("\"");
                let lit = |l: &str| template::encoded(l, Encoding::Json);
                let inner = Template::parse(s, Encoding::Json, &lit).map_err(|e| e.0)?;
                t.extend(inner);
                t.push_lit("\"");
            }
            toml::Value::Array(a) => {
                t.push_lit("[");
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        t.push_lit(",");
                    }
                    self.json_template(x, t)?;
                }
                t.push_lit("]");
            }
            toml::Value::Table(m) => {
                t.push_lit("{");
                for (i, (k, x)) in m.iter().enumerate() {
                    if i > 0 {
                        t.push_lit(",");
                    }
                    t.push_lit(&serde_json::to_string(k).map_err(|e| e.to_string())?);
                    t.push_lit(":");
                    self.json_template(x, t)?;
                }
                t.push_lit("}");
            }
            other => {
                let j = serde_json::to_string(other).map_err(|e| e.to_string())?;
                t.push_lit(&j);
            }
        }
        Ok(())
    }

    /// Gives each named placeholder its slot; a name no column and no earlier capture
    /// defines, or a reuse of a value never drawn, is an error.
    fn resolve(
        &self,
        t: &mut Template,
        names: &mut Names,
        at: usize,
        who: &str,
        key: &str,
    ) -> Result<(), JourneyError> {
        let Names { vars, scope, data } = names;
        for p in &mut t.pieces {
            let Piece::Var(source, _, slot) = p else {
                continue;
            };
            match source {
                Source::Named(n) => match vars.iter().position(|v| v == n) {
                    Some(s) if scope.defined.get(s).copied().unwrap_or(false) => *slot = s,
                    _ if scope.captured.contains(n) => {
                        return Err(self.err(
                            at,
                            format!("{who}: {key}: {{{n}}} is used before a step captures it (or by another alternative of its group): move the capture to an earlier step, or use it in a later one"),
                        ))
                    }
                    _ => {
                        let columns = match data {
                            Some(d) => format!("not a column of {} (its columns: {})", d.file, d.table.columns.join(", ")),
                            None => "the journey has no data file".to_string(),
                        };
                        return Err(self.err(
                            at,
                            format!("{who}: {key}: unknown variable {{{n}}}: {columns}, and no earlier step captures it; add a capture of that name (or write {{{{{n}}}}} for literal braces)"),
                        ));
                    }
                },
                Source::Rand { .. } => scope.rand = true,
                Source::RandText(_) => scope.text = true,
                Source::RandLast if !scope.rand => {
                    return Err(self.err(at, format!("{who}: {key}: {{rand}} reuses the last {{rand:LO-HI}}, and none is drawn before it: draw one first, e.g. {{rand:1-1000}}")))
                }
                Source::RandTextLast if !scope.text => {
                    return Err(self.err(at, format!("{who}: {key}: {{rand_text}} reuses the last {{rand_text:N}}, and none is drawn before it: draw one first, e.g. {{rand_text:100}}")))
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// A whole number from 1, as `u32`.
fn positive(n: i64) -> Option<u32> {
    u32::try_from(n).ok().filter(|&n| n > 0)
}

/// The bytes of a body known before any value is drawn into it.
fn literal_len(body: &Body) -> usize {
    match body {
        Body::Bytes(b) => b.len(),
        Body::Template(t) => t
            .pieces
            .iter()
            .map(|p| match p {
                Piece::Lit(l) => l.len(),
                Piece::Var(..) => 0,
            })
            .sum(),
        Body::None => 0,
    }
}

fn form_lit(l: &str) -> String {
    template::encoded(l, Encoding::Form)
}

fn show_path(p: &Path) -> String {
    PathBuf::from(p).display().to_string()
}

#[cfg(test)]
mod tests;
