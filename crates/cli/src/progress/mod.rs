//! What shows while a load runs: nothing (`-q`), the live view on stdout (stdout a
//! terminal, see [`live`]) or, as before it, one progress line on stderr (stderr a
//! terminal; `--no-live`). Either observes the engine's live counters from its own thread;
//! neither owns results, and both are gone before the report prints.

pub(crate) mod live;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use shootout_engine::{Control, Snapshot};
use shootout_model::LoadSpec;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A running progress display; [`Progress::finish`] clears it.
pub struct Progress {
    /// The control the load runs with (the display watches it).
    pub control: Arc<Control>,
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// What bounds the run, for the bar's length.
#[derive(Debug, Clone, Copy)]
pub enum Bound {
    /// This many requests.
    Requests(u64),
    /// This long.
    Time(Duration),
}

impl Bound {
    /// What bounds `spec`'s run.
    pub fn of(spec: &LoadSpec) -> Bound {
        match (spec.requests, spec.duration) {
            (Some(n), _) => Bound::Requests(n),
            (None, d) => Bound::Time(d.unwrap_or_default()),
        }
    }

    /// How far the run is (0 to 1) and the time it has left, if it can be told yet
    /// (by requests: at the pace so far).
    pub fn progress(self, s: &Snapshot) -> (f64, Option<Duration>) {
        let secs = s.elapsed.as_secs_f64();
        match self {
            Bound::Requests(n) => {
                let done = (s.completed as f64 / n.max(1) as f64).min(1.0);
                let rate = s.completed as f64 / secs.max(1e-3);
                let left = (s.completed > 0).then(|| {
                    Duration::from_secs_f64((n.saturating_sub(s.completed) as f64 / rate).min(1e9))
                });
                (done, left)
            }
            Bound::Time(t) => (
                (secs / t.as_secs_f64().max(1e-9)).min(1.0),
                Some(t.saturating_sub(s.elapsed)),
            ),
        }
    }
}

/// How a running load is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Display {
    /// Nothing.
    Nothing,
    /// One progress line on stderr, when stderr is a terminal.
    Line,
    /// The live view on stdout.
    Live,
}

impl Display {
    /// `-q`: nothing; stdout a terminal and not `--no-live`: the live view; else the line.
    pub fn choose(quiet: bool, no_live: bool) -> Display {
        if quiet {
            Display::Nothing
        } else if !no_live && std::io::stdout().is_terminal() {
            Display::Live
        } else {
            Display::Line
        }
    }
}

impl Progress {
    /// Starts showing a load run with `control`, as `display` says: the line begins with
    /// `label`, the live view's title is `title`.
    pub fn start(
        mut control: Control,
        spec: &LoadSpec,
        label: &'static str,
        title: String,
        display: Display,
    ) -> Progress {
        let done = Arc::new(AtomicBool::new(false));
        let show = match display {
            Display::Nothing => false,
            Display::Line => std::io::stderr().is_terminal(),
            Display::Live => {
                control.watch();
                true
            }
        };
        let control = Arc::new(control);
        if !show {
            return Progress {
                control,
                done,
                thread: None,
            };
        }
        let (c, d) = (control.clone(), done.clone());
        let (bound, names) = (Bound::of(spec), live::Names::of(spec));
        let per_s = per_second(spec);
        let thread = std::thread::spawn(move || match display {
            Display::Live => live::show(&c, (bound, per_s), names, &title, &d),
            _ => line(&c, (bound, per_s), label, &d),
        });
        Progress {
            control,
            done,
            thread: Some(thread),
        }
    }

    /// Stops and clears the display.
    pub fn finish(mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What a second of a running load's counts is called, as its report will call it: `req/s`,
/// or for gRPC `calls/s`, `replies/s` (server streaming: a reply is the unit) or
/// `messages/s` (bidirectional: a message and its reply), the method's shape read from
/// the spec's schema (`calls/s` when it cannot be).
pub fn per_second(spec: &LoadSpec) -> &'static str {
    let Some(g) = &spec.expect.grpc else {
        return "req/s";
    };
    let shape = shootout_engine::grpc::Reply::new(g, false)
        .ok()
        .and_then(|r| r.shape());
    match shape {
        Some("server") => "replies/s",
        Some("bidi") => "messages/s",
        _ => "calls/s",
    }
}

/// The progress line, redrawn ten times a second until `done`.
fn line(
    control: &Control,
    (bound, per_s): (Bound, &'static str),
    label: &'static str,
    done: &AtomicBool,
) {
    const LEN: u64 = 10_000;
    let bar = ProgressBar::with_draw_target(Some(LEN), ProgressDrawTarget::stderr_with_hz(10));
    let style = ProgressStyle::with_template("{prefix} {bar:30} {msg}")
        .expect("static template")
        .progress_chars("█▉▊▋▌▍▎▏ ");
    bar.set_style(style);
    bar.set_prefix(label);
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        let s = control.snapshot();
        let secs = s.elapsed.as_secs_f64();
        let (part, eta) = bound.progress(&s);
        bar.set_position((part * LEN as f64) as u64);
        let eta = eta.map_or("?".into(), |e| format!("{:.0}s", e.as_secs_f64()));
        bar.set_message(format!(
            "{} done, {:.0} {per_s}, {} failed, {secs:.1}s elapsed, ETA {eta}",
            s.completed,
            s.completed as f64 / secs.max(1e-3),
            s.failed
        ));
    }
    bar.finish_and_clear();
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_model::{GrpcReply, Target};

    /// The progress line and the live view said req/s for every run: a gRPC run's rate is
    /// in its unit, the method's shape read from its schema.
    #[test]
    fn a_running_load_s_rate_is_in_its_unit() {
        let spec = |method: Option<&str>| {
            let mut s = LoadSpec::new(Target::parse("http://127.0.0.1:1/x").unwrap());
            let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/grpc");
            let schema = protox::Compiler::new([dir])
                .unwrap()
                .include_imports(true)
                .open_file("helloworld.proto")
                .unwrap()
                .descriptor_pool()
                .encode_to_vec();
            s.expect.grpc = method.map(|m| GrpcReply {
                schema: schema.into(),
                method: format!("helloworld.Greeter.{m}"),
                max_message: 1 << 20,
                json: None,
                stream: Default::default(),
                compress: false,
            });
            s
        };
        for (method, want) in [
            (None, "req/s"),
            (Some("SayHello"), "calls/s"),
            (Some("SayHelloToAll"), "calls/s"),
            (Some("SayHellos"), "replies/s"),
            (Some("Chat"), "messages/s"),
            (Some("NoSuchMethod"), "calls/s"),
        ] {
            assert_eq!(per_second(&spec(method)), want, "{method:?}");
        }
    }
}
