//! The live view of a running load, drawn on stdout when it is a terminal (as oha's is):
//! requests per second in the last second and overall, latency percentiles so far, status
//! codes, failures by class, a small latency histogram, progress and time left.
//!
//! Its one input is a [`Figures`] snapshot, made from the engine's counters and details
//! ([`Control::snapshot`], [`Control::detail`]) ten times a second; [`render`] draws it
//! into any ratatui frame (the tests draw into a `TestBackend`). The view owns nothing:
//! [`show`] runs on its own thread until the load ends, then leaves the terminal as it
//! found it so that the report prints on the normal screen, as without the view.
//!
//! Drawing uses ratatui over crossterm (as oha does): ratatui lays the boxes out, diffs
//! frames (only changed cells are written) and has a test backend; crossterm switches to
//! the alternate screen and back. The terminal is left in cooked mode, so Ctrl-C still
//! reaches the process's handler and stops the run as it does without the view; a second
//! Ctrl-C, which exits at once, restores the screen first ([`restore`]).

use super::Bound;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::{cursor, execute, terminal};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Gauge, Paragraph};
use ratatui::{Frame, Terminal};
use shootout_engine::{Control, Detail};
use shootout_model::LatencySummary;
use shootout_report::{human_span, ms3};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What the view shows at one moment.
#[derive(Debug, Clone)]
pub struct Figures {
    /// What runs: `load URL`, or the step of a shootout.
    pub title: String,
    /// Time since the measured run started.
    pub elapsed: Duration,
    /// How far the run is, from 0 to 1.
    pub done: f64,
    /// Time left, when it can be told.
    pub eta: Option<Duration>,
    /// Requests completed so far.
    pub completed: u64,
    /// Of which failed.
    pub failed: u64,
    /// Requests completed per second over the last second.
    pub rps_now: f64,
    /// Requests completed per second since the start.
    pub rps_overall: f64,
    /// What a second of them is called: `req/s`, or a gRPC run's unit
    /// ([`super::per_second`]).
    pub per_s: &'static str,
    /// Failures by class, status codes and latencies so far, and per kind of request.
    pub detail: Detail,
    /// The names of the kinds of request and of the journeys `detail` counts apart.
    pub names: Names,
}

/// The names of what a run counts apart, in the order the engine counts them: a journey's
/// steps (`JOURNEY › STEP`) and its journeys, or a list's entries.
#[derive(Debug, Clone, Default)]
pub struct Names {
    pub kinds: Vec<String>,
    pub journeys: Vec<String>,
}

impl Names {
    /// The names of `spec`'s kinds and journeys.
    pub fn of(spec: &shootout_model::LoadSpec) -> Names {
        Names {
            kinds: shootout_engine::kind_labels(spec),
            journeys: shootout_engine::journey_labels(spec),
        }
    }
}

/// Rows of the steps box, at most (a longer journey shows its first steps).
const STEP_ROWS: usize = 12;

/// How often the view is redrawn.
const EVERY: Duration = Duration::from_millis(100);

/// Rows of the latency histogram, at most (fewer when the terminal is short).
const BINS: usize = 8;

/// Whether the alternate screen is on (for [`restore`] from the Ctrl-C handler).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Leaves the alternate screen and shows the cursor, if the view had taken them.
pub(crate) fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = execute!(
            std::io::stdout(),
            terminal::LeaveAlternateScreen,
            cursor::Show
        );
    }
}

/// Restores the terminal when dropped, however the view's thread ends.
struct Screen;

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
    }
}

/// Shows `control`'s load on the alternate screen until `done` is set. A terminal that
/// cannot be drawn on leaves the load running without a view.
pub fn show(
    control: &Control,
    (bound, per_s): (Bound, &'static str),
    names: Names,
    title: &str,
    done: &AtomicBool,
) {
    let mut out = std::io::stdout();
    if execute!(out, terminal::EnterAlternateScreen, cursor::Hide).is_err() {
        return;
    }
    ACTIVE.store(true, Ordering::SeqCst);
    let _screen = Screen;
    let Ok(mut term) = Terminal::new(CrosstermBackend::new(out)) else {
        return;
    };
    let mut window = Window::default();
    while !done.load(Ordering::Relaxed) {
        let s = control.snapshot();
        let Some(detail) = control.detail() else {
            return;
        };
        window.push(s.elapsed, s.completed);
        let (part, eta) = bound.progress(&s);
        let figures = Figures {
            title: title.to_string(),
            elapsed: s.elapsed,
            done: part,
            eta,
            completed: s.completed,
            failed: s.failed,
            rps_now: window.rate(),
            rps_overall: s.completed as f64 / s.elapsed.as_secs_f64().max(1e-3),
            per_s,
            detail,
            names: names.clone(),
        };
        if term.draw(|f| render(f, &figures)).is_err() {
            return;
        }
        let next = Instant::now() + EVERY;
        while !done.load(Ordering::Relaxed) && Instant::now() < next {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// The completed count over the last second, for the rate "now".
#[derive(Default)]
struct Window(VecDeque<(Duration, u64)>);

impl Window {
    fn push(&mut self, at: Duration, completed: u64) {
        self.0.push_back((at, completed));
        while self.0.len() > 2 && at.saturating_sub(self.0[1].0) >= Duration::from_secs(1) {
            self.0.pop_front();
        }
    }

    /// Requests per second between the oldest and newest entry (at most about a second).
    fn rate(&self) -> f64 {
        match (self.0.front(), self.0.back()) {
            (Some(a), Some(b)) if b.0 > a.0 => (b.1 - a.1) as f64 / (b.0 - a.0).as_secs_f64(),
            _ => 0.0,
        }
    }
}

/// Draws `f` into `frame`: title and progress, requests and latency side by side, status
/// codes and failures side by side, then the latency histogram.
pub fn render(frame: &mut Frame, f: &Figures) {
    let steps = step_rows(f);
    let steps_height = if steps.is_empty() {
        0
    } else {
        steps.len() as u16 + 2
    };
    let [top, figures, counts, by_step, histogram, foot] = Layout::vertical([
        Constraint::Length(3),
        Constraint::Length(6),
        Constraint::Length(counts_height(f)),
        Constraint::Length(steps_height),
        Constraint::Max(BINS as u16 + 2),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    if !steps.is_empty() {
        let title = if f.names.journeys.is_empty() {
            "By entry so far"
        } else {
            "By step so far"
        };
        frame.render_widget(rows(title, steps), by_step);
    }
    frame.render_widget(gauge(f), top);
    figures_box(frame, f, figures);
    counts_box(frame, f, counts);
    frame.render_widget(bars(&f.detail, histogram), histogram);
    frame.render_widget(
        Line::from("Ctrl-C stops the load; the report follows.").dim(),
        foot,
    );
}

/// The title and how far the load has come.
fn gauge(f: &Figures) -> Gauge<'_> {
    let eta = f.eta.map_or("?".into(), human_span);
    Gauge::default()
        .block(Block::bordered().title(format!(" {} ", f.title)))
        .gauge_style(Style::new().fg(Color::Cyan))
        .ratio(f.done.clamp(0.0, 1.0))
        .label(format!(
            "{:.0}% · {} elapsed · {eta} left",
            f.done * 100.0,
            human_span(f.elapsed)
        ))
}

/// Requests (left) and latency so far (right).
fn figures_box(frame: &mut Frame, f: &Figures, area: Rect) {
    let [left, right] = halves(area);
    let failed_share = 100.0 * f.failed as f64 / f.completed.max(1) as f64;
    frame.render_widget(
        rows(
            "Requests",
            vec![
                ("now", format!("{:.0} {}", f.rps_now, f.per_s)),
                ("overall", format!("{:.0} {}", f.rps_overall, f.per_s)),
                ("completed", f.completed.to_string()),
                ("failed", format!("{} ({failed_share:.2}%)", f.failed)),
            ],
        ),
        left,
    );
    let l = LatencySummary::of(&f.detail.latency);
    let ms = |v: f64| match f.detail.latency.is_empty() {
        true => "–".to_string(),
        false => format!("{} ms", ms3(v * 1e3)),
    };
    frame.render_widget(
        rows(
            "Latency so far",
            vec![
                ("p50", ms(l.p50)),
                ("p90", ms(l.p90)),
                ("p99", ms(l.p99)),
                ("max", ms(l.max)),
            ],
        ),
        right,
    );
}

/// Status codes (left) and failures (right).
fn counts_box(frame: &mut Frame, f: &Figures, area: Rect) {
    let [left, right] = halves(area);
    let status: Vec<_> = f
        .detail
        .status
        .iter()
        .map(|(code, n)| (code.to_string(), n.to_string()))
        .collect();
    frame.render_widget(rows("Status codes", or_none(status)), left);
    let failures: Vec<_> = f
        .detail
        .failures
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| (k.name().to_string(), n.to_string()))
        .collect();
    frame.render_widget(rows("Failures", or_none(failures)), right);
}

/// ` (status)`: the class most of a step's failures fell under, when it failed (a sent
/// request that never went out counts as `unsent`); empty when it did not fail.
fn most_failed(t: &shootout_model::TargetStats) -> String {
    let top = t.failures.iter().max_by_key(|(_, n)| *n);
    match top {
        Some((kind, n)) if n > 0 && n >= t.unsent => format!(" ({kind})"),
        _ if t.unsent > 0 => " (unsent)".to_string(),
        _ => String::new(),
    }
}

/// The rows of the steps box: per kind of request (when the engine told them apart and
/// their names are known) its count, failures (and their commonest class) and p99 so far; then per journey, those that
/// ended and were ok. At most [`STEP_ROWS`], the last saying how many more there are.
fn step_rows(f: &Figures) -> Vec<(String, String)> {
    let d = &f.detail;
    if d.kinds.is_empty() || d.kinds.len() != f.names.kinds.len() {
        return Vec::new();
    }
    let mut out: Vec<(String, String)> = f
        .names
        .kinds
        .iter()
        .zip(&d.kinds)
        .map(|(name, t)| {
            let p99 = match t.latency.is_empty() {
                true => "–".to_string(),
                false => format!("{} ms", ms3(LatencySummary::of(&t.latency).p99 * 1e3)),
            };
            (
                name.clone(),
                format!(
                    "{} done · {} failed{} · p99 {p99}",
                    t.completed,
                    t.failed(),
                    most_failed(t)
                ),
            )
        })
        .collect();
    if d.journeys.len() == f.names.journeys.len() {
        out.extend(f.names.journeys.iter().zip(&d.journeys).map(|(name, t)| {
            (
                format!("journey {name}"),
                format!("{} ended · {} ok", t.completed, t.ok),
            )
        }));
    }
    if out.len() > STEP_ROWS {
        let more = out.len() - (STEP_ROWS - 1);
        out.truncate(STEP_ROWS - 1);
        out.push(("…".into(), format!("{more} more")));
    }
    out
}

/// Rows for the status and failure boxes: the longer list, at least one, plus borders.
fn counts_height(f: &Figures) -> u16 {
    let failures = f.detail.failures.iter().filter(|(_, n)| *n > 0).count();
    (f.detail.status.len().max(failures).clamp(1, 6) + 2) as u16
}

fn halves(area: Rect) -> [Rect; 2] {
    Layout::horizontal([Constraint::Percentage(50); 2]).areas(area)
}

fn or_none(list: Vec<(String, String)>) -> Vec<(String, String)> {
    if list.is_empty() {
        vec![("none".into(), String::new())]
    } else {
        list
    }
}

/// A box of `name  value` rows.
fn rows<K: AsRef<str>>(title: &str, rows: Vec<(K, String)>) -> Paragraph<'static> {
    let width = rows
        .iter()
        .map(|(k, _)| k.as_ref().chars().count())
        .max()
        .unwrap_or(0);
    let lines: Vec<Line> = rows
        .into_iter()
        .map(|(k, v)| {
            Line::from(vec![
                Span::raw(format!("{:width$}  ", k.as_ref())).bold(),
                Span::raw(v),
            ])
        })
        .collect();
    Paragraph::new(lines).block(Block::bordered().title(format!(" {title} ")))
}

/// The latency histogram: up to [`BINS`] rows (as many as `area` holds) of equal ratio
/// between the fastest and the slowest answer so far (latencies spread over orders of
/// magnitude), each a bar as long as its count.
fn bars(d: &Detail, area: Rect) -> Paragraph<'static> {
    let h = &d.latency;
    let block = Block::bordered().title(" Latency histogram ");
    if h.is_empty() {
        return Paragraph::new("no answer yet").block(block);
    }
    let (lo, hi) = (h.min().max(1) as f64, h.max().max(1) as f64);
    let bins = usize::from(area.height.saturating_sub(2)).clamp(1, BINS);
    let step = (hi / lo).powf(1.0 / bins as f64);
    let edges: Vec<f64> = (1..=bins).map(|i| lo * step.powi(i as i32)).collect();
    let mut counts = vec![0u64; bins];
    for v in h.iter_recorded() {
        let x = v.value_iterated_to() as f64;
        let i = edges.iter().position(|e| x <= *e).unwrap_or(bins - 1);
        counts[i] += v.count_at_value();
    }
    let peak = counts.iter().copied().max().unwrap_or(1).max(1);
    // Borders, the edge's label and the count take the rest of the width.
    let room = usize::from(area.width).saturating_sub(2 + 14 + 12).max(1);
    let lines: Vec<Line> = edges
        .iter()
        .zip(counts.iter().copied())
        .map(|(e, n)| {
            let len = (n as f64 / peak as f64 * room as f64).round() as usize;
            Line::from(vec![
                Span::raw(format!("≤ {:>8} ms ", ms3(*e))),
                Span::styled("█".repeat(len), Style::new().fg(Color::Cyan)),
                Span::raw(format!(" {n}")),
            ])
        })
        .collect();
    Paragraph::new(lines).block(block)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;
    use shootout_model::{FailureCounts, FailureKind};

    /// A snapshot with latencies from 0.1 ms to 40 ms, two status codes and two classes.
    fn figures() -> Figures {
        let mut latency = shootout_model::result::second_histogram();
        for (us, n) in [(100, 50), (250, 400), (800, 900), (2_000, 300), (40_000, 3)] {
            latency.record_n(us, n).unwrap();
        }
        let mut failures = FailureCounts::default();
        failures[FailureKind::Timeout] = 3;
        failures[FailureKind::Status] = 20;
        Figures {
            title: "load http://127.0.0.1:8080/".into(),
            elapsed: Duration::from_millis(4_200),
            done: 0.42,
            eta: Some(Duration::from_millis(5_800)),
            completed: 1_656,
            failed: 23,
            rps_now: 401.0,
            rps_overall: 394.3,
            per_s: "req/s",
            detail: Detail {
                failures,
                status: [(200, 1_633), (502, 20)].into_iter().collect(),
                latency,
                kinds: Vec::new(),
                journeys: Vec::new(),
            },
            names: Names::default(),
        }
    }

    /// [`figures`] of a journey run: two steps (the second failing 20 times) and a
    /// journey, with their names.
    fn journey_figures() -> Figures {
        let mut f = figures();
        let tally = |completed, ok, us: &[u64]| {
            let mut latency = shootout_model::result::second_histogram();
            for v in us {
                latency.record(*v).unwrap();
            }
            let mut t = shootout_model::TargetStats::new("");
            t.completed = completed;
            t.ok = ok;
            t.failures[FailureKind::Status] = completed - ok;
            t.latency = latency;
            t
        };
        f.detail.kinds = vec![tally(828, 828, &[800; 100]), tally(828, 808, &[2_000; 100])];
        f.detail.journeys = vec![tally(828, 808, &[])];
        f.names = Names {
            kinds: vec!["writer › login".into(), "writer › post".into()],
            journeys: vec!["writer".into()],
        };
        f
    }

    /// The frame's text, one line per row, trailing blanks cut.
    fn draw(f: &Figures, width: u16, height: u16) -> String {
        let mut t = Terminal::new(TestBackend::new(width, height)).unwrap();
        t.draw(|frame| render(frame, f)).unwrap();
        let buf = t.backend().buffer();
        (0..height)
            .map(|y| {
                let row: String = (0..width).map(|x| buf[(x, y)].symbol()).collect();
                row.trim_end().to_string()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_view_draws_the_snapshots_figures() {
        let f = figures();
        let text = draw(&f, 80, 26);
        insta::assert_snapshot!(text);
        // What the snapshot holds, not the drawing, gives the figures.
        let l = LatencySummary::of(&f.detail.latency);
        for want in [
            format!("{} ms", ms3(l.p99 * 1e3)),
            format!("{} ms", ms3(l.max * 1e3)),
            f.completed.to_string(),
            format!("{:.0} req/s", f.rps_now),
        ] {
            assert!(text.contains(&want), "{want} missing from\n{text}");
        }
        let mut other = f.clone();
        other.detail.status.insert(404, 7);
        other.detail.failures[FailureKind::Reset] = 9;
        let text = draw(&other, 80, 26);
        assert!(text.contains("404") && text.contains("reset"), "{text}");
    }

    #[test]
    fn the_view_before_any_answer_says_so() {
        let mut f = figures();
        f.detail.latency.reset();
        f.detail.status.clear();
        f.detail.failures = FailureCounts::default();
        f.eta = None;
        insta::assert_snapshot!(draw(&f, 80, 26));
    }

    #[test]
    fn a_short_terminal_gets_fewer_histogram_rows() {
        let text = draw(&figures(), 80, 21);
        // 3 + 6 + 4 rows of boxes and the foot leave 7: 5 rows of bars.
        let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("│≤")).collect();
        assert_eq!(rows.len(), 5, "{text}");
        let total: u64 = figures().detail.latency.len();
        let drawn: u64 = rows
            .iter()
            .map(|l| {
                let l = l.trim_end_matches('│').trim_end();
                l.rsplit(' ').next().unwrap().parse::<u64>().unwrap()
            })
            .sum();
        assert_eq!(drawn, total, "every answer in some row");
    }

    #[test]
    fn a_journey_run_shows_each_step_and_journey_so_far() {
        let f = journey_figures();
        let text = draw(&f, 100, 32);
        let p99 = |i: usize| ms3(LatencySummary::of(&f.detail.kinds[i].latency).p99 * 1e3);
        for want in [
            "By step so far".to_string(),
            format!("writer › login  828 done · 0 failed · p99 {} ms", p99(0)),
            format!(
                "writer › post   828 done · 20 failed (status) · p99 {} ms",
                p99(1)
            ),
            "journey writer  828 ended · 808 ok".to_string(),
        ] {
            assert!(text.contains(&want), "{want} missing from\n{text}");
        }
        // Names that do not match what the engine counted (a different run's) show nothing.
        let mut other = f.clone();
        other.names.kinds.pop();
        assert!(!draw(&other, 100, 32).contains("By step"));
        // A plain run has no such box.
        let plain = draw(&figures(), 100, 32);
        assert!(
            !plain.contains("By step") && !plain.contains("By entry"),
            "{plain}"
        );
    }

    #[test]
    fn a_long_journey_shows_its_first_steps_and_how_many_more() {
        let mut f = journey_figures();
        let one = f.detail.kinds[0].clone();
        f.detail.kinds = vec![one; 20];
        f.names.kinds = (1..=20).map(|i| format!("j › step {i}")).collect();
        let rows = step_rows(&f);
        assert_eq!(rows.len(), STEP_ROWS);
        assert_eq!(rows[STEP_ROWS - 2].0, format!("j › step {}", STEP_ROWS - 1));
        // 20 steps and a journey, of which STEP_ROWS - 1 are shown.
        assert_eq!(
            rows[STEP_ROWS - 1].1,
            format!("{} more", 21 - (STEP_ROWS - 1))
        );
    }

    #[test]
    fn the_rate_now_counts_the_last_second_only() {
        let mut w = Window::default();
        let s = Duration::from_millis;
        w.push(s(0), 0);
        w.push(s(500), 10_000);
        w.push(s(1_000), 10_100);
        w.push(s(1_500), 10_200);
        w.push(s(2_000), 10_300);
        // The burst of the first half second is more than a second old: 200 in the last second.
        assert!((w.rate() - 200.0).abs() < 1e-9, "{}", w.rate());
    }
}
