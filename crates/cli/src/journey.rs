//! `shootout journey`: the journey file's tools. `check FILE` reads a journey file as a
//! load would (every mistake named with its line, before anything runs) and prints what it
//! holds; `from-locust LOCUSTFILE` translates a Locustfile into a journey file, reading the
//! Python with Python's own `ast` module (the embedded `journey/from_locust.py`, run with
//! python3 and never running the Locustfile); every construct it cannot translate is named
//! with its line, and then nothing is written.

use crate::output::{emit, Failure};
use anyhow::{anyhow, Context};
use clap::{Args, Subcommand};
use shootout_model::journey::{
    self, Body, CaptureFrom, DataEnd, Journey, JourneyFile, Piece, Segment, Source, Think,
};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The translator, run as `python3 -I -c SCRIPT LOCUSTFILE`.
const FROM_LOCUST: &str = include_str!("journey/from_locust.py");

/// The translator's exit status when it names constructs it cannot translate.
const UNTRANSLATABLE: i32 = 3;

/// The largest journey file read: 16 MiB.
const MAX_FILE: u64 = 16 << 20;

#[derive(Debug, Args)]
pub struct JourneyArgs {
    #[command(subcommand)]
    command: JourneyCommand,
}

#[derive(Debug, Subcommand)]
enum JourneyCommand {
    /// Check a journey file (its data and body files too) and print what it holds.
    Check {
        /// The journey file (TOML).
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Translate a Locustfile into a journey file (on stdout, or -o FILE).
    FromLocust {
        /// The Locustfile (read with Python's ast module, never run).
        #[arg(value_name = "LOCUSTFILE")]
        locustfile: PathBuf,
        /// Write the journey file here instead of stdout.
        #[arg(short = 'o', long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// Runs `shootout journey …`.
pub fn journey(args: JourneyArgs) -> Result<i32, Failure> {
    match args.command {
        JourneyCommand::Check { file } => check(&file),
        JourneyCommand::FromLocust { locustfile, output } => {
            from_locust(&locustfile, output.as_deref())
        }
    }
}

/// Reads a file the journey names, at most `limit` bytes.
fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    f.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(format!("larger than {limit} bytes"));
    }
    Ok(bytes)
}

/// Reads and checks a journey file, with the files it names.
pub fn load(file: &Path) -> Result<JourneyFile, Failure> {
    let shown = file.display().to_string();
    let bytes = read_limited(file, MAX_FILE)
        .map_err(|why| Failure::usage(anyhow!("cannot read the journey file {shown}: {why}")))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Failure::usage(anyhow!("{shown} is not UTF-8 text: save it as UTF-8")))?;
    let limit = journey::data::MAX_DATA.max(shootout_model::spec::MAX_BODY) as u64;
    journey::parse(&text, &shown, &mut |p| read_limited(p, limit)).map_err(Failure::usage)
}

fn check(file: &Path) -> Result<i32, Failure> {
    let f = load(file)?;
    emit(&describe(&f, &file.display().to_string()))?;
    Ok(0)
}

/// What a journey file holds, for `journey check`.
pub fn describe(f: &JourneyFile, name: &str) -> String {
    let total: u64 = f.journeys.iter().map(|j| j.weight as u64).sum();
    let mut out = format!(
        "{name}: {} journey{}, all checked\n",
        f.journeys.len(),
        if f.journeys.len() == 1 { "" } else { "s" }
    );
    for j in &f.journeys {
        out.push_str(&format!(
            "\njourney \"{}\": weight {} ({:.0}% of users), think {}\n",
            j.name,
            j.weight,
            100.0 * j.weight as f64 / total as f64,
            think(j.think)
        ));
        if let Some(d) = &j.data {
            let rows = d.table.rows.len();
            out.push_str(&format!(
                "  data {}: {rows} row{} ({}), {}\n",
                d.file,
                if rows == 1 { "" } else { "s" },
                d.table.columns.join(", "),
                match d.end {
                    DataEnd::Wrap => "user n takes row n mod rows",
                    DataEnd::Stop => "users past the last row do not run it",
                }
            ));
        }
        for (k, seg) in j.segments.iter().enumerate() {
            match seg {
                Segment::One(s) => out.push_str(&step_line(j, *s, &format!("{}.", k + 1))),
                Segment::Choice(alts) => {
                    let weights: u64 = alts
                        .iter()
                        .map(|a| j.steps[a[0]].weight.unwrap_or(1) as u64)
                        .sum();
                    out.push_str(&format!("  {}. one of {}, by weight:\n", k + 1, alts.len()));
                    for a in alts {
                        let w = j.steps[a[0]].weight.unwrap_or(1);
                        out.push_str(&format!(
                            "     {:.0}%{}\n",
                            100.0 * w as f64 / weights as f64,
                            match &j.steps[a[0]].task {
                                Some(t) => format!(" task \"{t}\""),
                                None => String::new(),
                            }
                        ));
                        for &s in a {
                            out.push_str(&step_line(j, s, "   -"));
                        }
                    }
                }
            }
        }
    }
    out
}

fn think(t: Think) -> String {
    let h = |d| humantime::format_duration(d).to_string();
    match t {
        Think::None => "none".into(),
        Think::Constant(d) => h(d),
        Think::Uniform(a, b) => format!("uniform({}, {})", h(a), h(b)),
        Think::Exp(d) => format!("exponential, mean {}", h(d)),
        Think::Pacing(d) => format!("a step every {}", h(d)),
    }
}

fn step_line(j: &Journey, s: usize, mark: &str) -> String {
    let step = &j.steps[s];
    let mut line = format!(
        "  {mark} \"{}\": {} {}",
        step.name,
        step.method,
        show(&step.target, j)
    );
    let mut notes = Vec::new();
    match &step.body {
        Body::None => {}
        Body::Template(t) => notes.push(format!("body {}", show(t, j))),
        Body::Bytes(b) => notes.push(format!("body of {} bytes", b.len())),
    }
    for (n, v) in &step.headers {
        notes.push(format!("{n}: {}", show(v, j)));
    }
    notes.push(format!("status {}", step.expect.status.describe()));
    if let Some(l) = step.expect.length {
        notes.push(format!("length {l}"));
    }
    if let Some(b) = &step.expect.body_contains {
        notes.push(format!("body holds \"{}\"", show(b, j)));
    }
    for (p, want) in &step.expect.json {
        match want {
            journey::JsonWant::Value(v) => notes.push(format!("json {p} = {v}")),
            journey::JsonWant::Text(t) => notes.push(format!("json {p} = \"{}\"", show(t, j))),
        }
    }
    for c in &step.captures {
        let from = match &c.from {
            CaptureFrom::Body => format!("the body's first {} bytes", c.within),
            CaptureFrom::Json(p) => format!("json {p}"),
            CaptureFrom::Header(h) => format!("header {h}"),
            CaptureFrom::Cookie(k) => format!("cookie {k}"),
        };
        let regex = c
            .regex
            .as_ref()
            .map_or(String::new(), |r| format!(" by /{}/", r.as_str()));
        notes.push(format!("captures {{{}}} from {from}{regex}", c.name));
    }
    if step.repeat > 1 {
        notes.push(format!("{} times", step.repeat));
    }
    if step.once {
        notes.push("in the user's first journey only".into());
    }
    if step.go_on {
        notes.push("goes on after a failure".into());
    }
    line.push('\n');
    for n in notes {
        line.push_str(&format!("       {n}\n"));
    }
    line
}

/// A template as the file wrote it (drawn values as placeholders).
fn show(t: &journey::Template, j: &Journey) -> String {
    let mut out = String::new();
    for p in &t.pieces {
        match p {
            Piece::Lit(l) => out.push_str(l),
            Piece::Var(source, _, slot) => out.push_str(&match source {
                Source::Named(_) => format!("{{{}}}", j.vars.get(*slot).map_or("?", |v| v)),
                Source::Seq => "{seq}".into(),
                Source::User => "{user}".into(),
                Source::Rand { lo, hi } => format!("{{rand:{lo}-{hi}}}"),
                Source::RandLast => "{rand}".into(),
                Source::RandText(n) => format!("{{rand_text:{n}}}"),
                Source::RandTextLast => "{rand_text}".into(),
            }),
        }
    }
    out
}

fn from_locust(locustfile: &Path, output: Option<&Path>) -> Result<i32, Failure> {
    let shown = locustfile.display().to_string();
    std::fs::File::open(locustfile)
        .map_err(|e| Failure::usage(anyhow!("cannot read the Locustfile {shown}: {e}")))?;
    let ran = Command::new("python3")
        .arg("-I")
        .arg("-c")
        .arg(FROM_LOCUST)
        .arg(locustfile)
        .output()
        .map_err(|e| {
            Failure::run(anyhow!(
                "cannot run python3 ({e}): from-locust reads the Locustfile with Python's ast module; install python3"
            ))
        })?;
    let stderr = String::from_utf8_lossy(&ran.stderr);
    if ran.status.code() == Some(UNTRANSLATABLE) {
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        for l in &lines {
            say!("{shown}:{l}");
        }
        return Err(Failure::run(anyhow!(
            "{shown}: {} construct{} cannot be translated (named above with their lines); nothing was written",
            lines.len(),
            if lines.len() == 1 { "" } else { "s" }
        )));
    }
    if !ran.status.success() {
        return Err(Failure::run(anyhow!(
            "the translator failed on {shown} ({}): {}",
            ran.status,
            stderr.trim_end()
        )));
    }
    let text = String::from_utf8(ran.stdout)
        .map_err(|_| Failure::run(anyhow!("the translation of {shown} is not UTF-8")))?;
    // The translation is read back as `load` would read it: a file it cannot read is a
    // fault of the translator, never handed to the user.
    journey::parse(&text, "(translation)", &mut |p| {
        Err(format!("the translation names a file ({})", p.display()))
    })
    .map_err(|e| {
        Failure::run(anyhow!(
            "the translation of {shown} does not read back: {e}"
        ))
    })?;
    match output {
        None => emit(&text)?,
        Some(path) => {
            std::fs::write(path, &text)
                .with_context(|| format!("cannot write {}", path.display()))
                .map_err(Failure::run)?;
            say!(
                "wrote {} (check it with: shootout journey check {})",
                path.display(),
                path.display()
            );
        }
    }
    Ok(0)
}
