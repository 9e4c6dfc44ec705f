//! A small line/band/scatter chart drawn as inline SVG text: two axes (linear or log10,
//! with "nice" ticks, or ticks given by the caller), titled in words with their unit, a
//! legend, and one `<title>` tooltip per marked point so a reader can hover for the value.
//!
//! Written by hand rather than with `plotters`: plotters' SVG backend cannot attach a
//! `<title>` element to a point (the tooltips the report needs), lays out its own legend
//! and text in ways that are hard to keep stable byte for byte (the golden file), and would
//! add a dependency tree for what is ~400 lines of coordinate arithmetic here.
//!
//! Seams: [`Chart`] is plain data filled by `charts.rs`; [`Chart::svg`] is a pure function
//! of it (same chart, same bytes). Every text that reaches the SVG goes through
//! [`html_text`](crate::safe::html_text); numbers that are not finite are dropped, never printed.

use crate::safe::html_text;
use std::fmt::Write;

/// The Okabe–Ito palette (colour-blind safe), yellow last: it is faint on white.
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000", "#F0E442",
];

/// The colour of series number `i` (contender `i`), cycling through [`PALETTE`].
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Values at least this many times apart get a log scale.
pub const LOG_RATIO: f64 = 100.0;

/// How positions along an axis follow values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Equal steps of value, equal steps of length.
    Linear,
    /// Equal ratios of value, equal steps of length (values must be > 0).
    Log,
}

/// One axis: its title (with the unit), its scale, its range and its labelled ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The axis title, unit included: `latency (ms)`.
    pub title: String,
    /// Linear or log.
    pub scale: Scale,
    /// The value at the start of the axis.
    pub lo: f64,
    /// The value at the end of the axis.
    pub hi: f64,
    /// Ticks: value and label.
    pub ticks: Vec<(f64, String)>,
}

impl Axis {
    /// An axis that holds every finite value of `values`: log10 when all of them are
    /// positive and the largest is at least [`LOG_RATIO`] times the smallest, else linear
    /// (from zero when `from_zero` and no value is negative).
    pub fn fit(title: &str, values: impl IntoIterator<Item = f64>, from_zero: bool) -> Axis {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.into_iter().filter(|v| v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            (lo, hi) = (0.0, 1.0);
        }
        if lo > 0.0 && hi / lo >= LOG_RATIO {
            return Axis::log(title, lo, hi);
        }
        if from_zero && lo >= 0.0 {
            lo = 0.0;
        }
        Axis::linear(title, lo, hi)
    }

    /// A linear axis over `lo..=hi`, widened to round ticks (about five of them).
    pub fn linear(title: &str, lo: f64, hi: f64) -> Axis {
        let (lo, hi) = if hi > lo {
            (lo, hi)
        } else if lo == 0.0 {
            (0.0, 1.0)
        } else {
            // One value: a range around it, from zero when it is positive.
            let d = lo.abs();
            (if lo > 0.0 { 0.0 } else { lo - d }, lo + d)
        };
        let step = nice_step((hi - lo) / 5.0);
        let first = (lo / step).floor();
        let last = (hi / step).ceil();
        let ticks: Vec<(f64, String)> = (first as i64..=last as i64)
            .map(|k| {
                let v = k as f64 * step;
                (v, number(v, step))
            })
            .collect();
        Axis {
            title: title.to_string(),
            scale: Scale::Linear,
            lo: first * step,
            hi: last * step,
            ticks,
        }
    }

    /// A log10 axis over `lo..=hi` (both > 0), widened to whole decades; ticks at each
    /// decade, and at 2× and 5× when the axis spans three decades or fewer.
    pub fn log(title: &str, lo: f64, hi: f64) -> Axis {
        let lo_exp = lo.log10().floor() as i32;
        let mut hi_exp = hi.log10().ceil() as i32;
        if hi_exp <= lo_exp {
            hi_exp = lo_exp + 1;
        }
        let dense = hi_exp - lo_exp <= 3;
        let mut ticks = Vec::new();
        for e in lo_exp..=hi_exp {
            let decade = 10f64.powi(e);
            ticks.push((decade, number(decade, decade)));
            if dense && e < hi_exp {
                for m in [2.0, 5.0] {
                    ticks.push((m * decade, number(m * decade, decade)));
                }
            }
        }
        Axis {
            title: format!("{title} · log scale"),
            scale: Scale::Log,
            lo: 10f64.powi(lo_exp),
            hi: 10f64.powi(hi_exp),
            ticks,
        }
    }

    /// A log2 axis over `lo..=hi` (both > 0), a quarter of a doubling wider at each end
    /// so the first and last points sit inside the frame; ticks at each power of two
    /// (1, 2, 4, 8 evenly spaced). Where positions fall does not depend on the logarithm's
    /// base, so it is a [`Scale::Log`] axis with its own range and ticks.
    pub fn log2(title: &str, lo: f64, hi: f64) -> Axis {
        let margin = 2f64.powf(0.25);
        let (lo, hi) = (lo / margin, hi.max(lo * 2.0) * margin);
        let ticks = (lo.log2().ceil() as i32..=hi.log2().floor() as i32)
            .map(|e| {
                let v = 2f64.powi(e);
                (v, number(v, v.min(1.0)))
            })
            .collect();
        Axis {
            title: format!("{title} · log2 scale"),
            scale: Scale::Log,
            lo,
            hi,
            ticks,
        }
    }

    /// Where `v` falls along the axis, 0 at `lo` and 1 at `hi` (clamped a little past the
    /// ends so an outlier stays visible on the frame); `None` when `v` cannot be placed.
    pub fn frac(&self, v: f64) -> Option<f64> {
        if !v.is_finite() {
            return None;
        }
        let f = match self.scale {
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
            Scale::Log => {
                if v <= 0.0 {
                    return Some(0.0);
                }
                (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
            }
        };
        f.is_finite().then_some(f.clamp(0.0, 1.0))
    }
}

/// A step of 1, 2, 2.5 or 5 times a power of ten, at least `rough`.
fn nice_step(rough: f64) -> f64 {
    if !(rough.is_finite() && rough > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(rough.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= rough * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag)
}

/// A tick label: `v` with as many decimals as `step` needs, `k`/`M` for thousands and
/// millions (`2500` → `2500`, `20000` → `20k`, `0.25` → `0.25`).
pub fn number(v: f64, step: f64) -> String {
    let a = v.abs();
    if a >= 1e6 && step >= 1e5 {
        return format!("{}M", trim(v / 1e6, 1));
    }
    if a >= 1e4 && step >= 1e3 {
        return format!("{}k", trim(v / 1e3, 1));
    }
    // The fewest decimals that write the step exactly (2.5 needs one, 0.25 two).
    let decimals = (0..6)
        .find(|d| {
            let scaled = step * 10f64.powi(*d as i32);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0)
        })
        .unwrap_or(6);
    trim(v, decimals)
}

/// `v` with at most `decimals` decimals, trailing zeros dropped, never `-0`.
fn trim(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// One point with its tooltip.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// Horizontal value.
    pub x: f64,
    /// Vertical value.
    pub y: f64,
    /// The tooltip (plain text; escaped when drawn).
    pub tip: String,
}

/// An error bar: a value's interval at one horizontal place, drawn as a vertical line
/// with caps; an upper end that is not a bound ([`Whisker::open`]) gets an arrowhead
/// pointing up instead of a cap.
#[derive(Debug, Clone, PartialEq)]
pub struct Whisker {
    /// Horizontal value.
    pub x: f64,
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// The upper end is only the largest value seen: the truth may lie above.
    pub open: bool,
    /// The tooltip (plain text; escaped when drawn).
    pub tip: String,
}

/// How a series' line is stroked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stroke {
    /// A solid line.
    #[default]
    Solid,
    /// Dashes (p99 next to a solid p50, raw next to corrected latency).
    Dashed,
    /// Dots (a reference, such as the target rate).
    Dotted,
    /// Dashes and dots (a fourth repetition).
    DashDot,
    /// Long dashes (a fifth repetition).
    LongDash,
}

impl Stroke {
    fn dasharray(self) -> &'static str {
        match self {
            Stroke::Solid => "",
            Stroke::Dashed => " stroke-dasharray=\"7 4\"",
            Stroke::Dotted => " stroke-dasharray=\"2 3\"",
            Stroke::DashDot => " stroke-dasharray=\"7 3 2 3\"",
            Stroke::LongDash => " stroke-dasharray=\"14 4\"",
        }
    }

    /// The strokes that tell repetitions 1, 2, 3… of one contender apart.
    pub const REPETITIONS: [Stroke; 5] = [
        Stroke::Solid,
        Stroke::Dashed,
        Stroke::Dotted,
        Stroke::DashDot,
        Stroke::LongDash,
    ];
}

/// The shape of a series' marks: contenders whose lines lie on one another keep apart by
/// shape (and by size, see [`Series::width`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Shape {
    /// A dot.
    #[default]
    Circle,
    /// A square.
    Square,
    /// A square on its corner.
    Diamond,
    /// A triangle, point up.
    Triangle,
}

impl Shape {
    /// The shape of the marks of contender `i` (cycling through the four).
    pub fn nth(i: usize) -> Shape {
        [
            Shape::Circle,
            Shape::Square,
            Shape::Diamond,
            Shape::Triangle,
        ][i % 4]
    }

    /// The element's name, to close it.
    fn tag(self) -> &'static str {
        match self {
            Shape::Circle => "circle",
            Shape::Square => "rect",
            Shape::Diamond | Shape::Triangle => "path",
        }
    }

    /// Opens the element drawing this shape around `(x, y)`, `r` px from centre to
    /// side (its attributes, without the closing `>`).
    fn open(self, o: &mut String, x: f64, y: f64, r: f64) {
        let _ = match self {
            Shape::Circle => write!(o, "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r}\""),
            Shape::Square => write!(
                o,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"",
                x - r,
                y - r,
                2.0 * r,
                2.0 * r
            ),
            Shape::Diamond => {
                let d = r * 1.3;
                write!(
                    o,
                    "<path d=\"M{x:.1} {:.1} L{:.1} {y:.1} L{x:.1} {:.1} L{:.1} {y:.1} Z\"",
                    y - d,
                    x + d,
                    y + d,
                    x - d
                )
            }
            Shape::Triangle => {
                let d = r * 1.4;
                write!(
                    o,
                    "<path d=\"M{x:.1} {:.1} L{:.1} {:.1} L{:.1} {:.1} Z\"",
                    y - d,
                    x + d,
                    y + d * 0.7,
                    x - d,
                    y + d * 0.7
                )
            }
        };
    }
}

/// One legend entry's worth of drawing: a line, a band around it and marked points.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    /// Legend label (plain text).
    pub name: String,
    /// Stroke and fill colour.
    pub color: &'static str,
    /// How the line is stroked.
    pub stroke: Stroke,
    /// The line, in order (fewer than two points: no line).
    pub line: Vec<(f64, f64)>,
    /// A shaded band: `(x, low, high)`, in order.
    pub band: Vec<(f64, f64, f64)>,
    /// Points drawn as dots, each with a tooltip.
    pub marks: Vec<Mark>,
    /// Error bars, each with a tooltip.
    pub whiskers: Vec<Whisker>,
    /// Dot radius in pixels.
    pub radius: f64,
    /// Dot opacity (scatter plots of many points want less than 1).
    pub opacity: f64,
    /// The marks' shape.
    pub shape: Shape,
    /// The line's width in pixels: a series drawn under another is drawn wider, so that
    /// where their lines coincide both colours show.
    pub width: f64,
    /// Listed in the legend (a repetition after the first is not: the page says which
    /// stroke is which repetition).
    pub legend: bool,
    /// Draw the marks in this many interleaved rounds with the other series' (a scatter
    /// of many points: no contender's dots all lie on top); 0 or 1 draws them at once.
    pub rounds: usize,
}

impl Series {
    /// An empty series with a name and a colour (solid, 2 px wide, round dots of radius 3,
    /// opaque, drawn at once).
    pub fn new(name: impl Into<String>, color: &'static str) -> Series {
        Series {
            name: name.into(),
            color,
            radius: 3.0,
            opacity: 1.0,
            width: 2.0,
            legend: true,
            ..Series::default()
        }
    }

    /// Every vertical value drawn (line, band and marks), to fit an axis to.
    pub fn ys(&self) -> impl Iterator<Item = f64> + '_ {
        self.line
            .iter()
            .map(|p| p.1)
            .chain(self.band.iter().flat_map(|b| [b.1, b.2]))
            .chain(self.marks.iter().map(|m| m.y))
            .chain(self.whiskers.iter().flat_map(|w| [w.lo, w.hi]))
    }

    /// Every horizontal value drawn.
    pub fn xs(&self) -> impl Iterator<Item = f64> + '_ {
        self.line
            .iter()
            .map(|p| p.0)
            .chain(self.band.iter().map(|b| b.0))
            .chain(self.marks.iter().map(|m| m.x))
            .chain(self.whiskers.iter().map(|w| w.x))
    }
}

/// A chart: title, axes, series, size in pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Shown above the plot and as the SVG's own `<title>`.
    pub title: String,
    /// A line under the title saying how to read the chart (empty: none).
    pub note: String,
    /// Horizontal axis.
    pub x: Axis,
    /// Vertical axis.
    pub y: Axis,
    /// What is drawn, in legend order (drawn in reverse, so the first is on top).
    pub series: Vec<Series>,
    /// Width in pixels.
    pub width: f64,
    /// Height in pixels.
    pub height: f64,
}

/// Font size of tick labels and the legend (px).
const FONT: f64 = 12.0;
/// A generous average glyph width at [`FONT`] (px), for laying text out without a font.
const GLYPH: f64 = 7.0;
/// Height of one legend row (px).
const LEGEND_ROW: f64 = 18.0;

/// Legend labels longer than this many characters are cut with `…` (the whole name is
/// in the entry's tooltip).
const LEGEND_CHARS: usize = 40;

/// `s`, cut to [`LEGEND_CHARS`] characters.
fn shorten(s: &str) -> String {
    if s.chars().count() <= LEGEND_CHARS {
        s.to_string()
    } else {
        let mut cut: String = s.chars().take(LEGEND_CHARS - 1).collect();
        cut.push('…');
        cut
    }
}

/// Approximate width of `s` in pixels at `font` px.
fn text_width(s: &str, font: f64) -> f64 {
    s.chars().count() as f64 * GLYPH * font / FONT
}

/// Where the plot area sits in a chart (px), and how values map onto it.
struct Frame<'a> {
    x: &'a Axis,
    y: &'a Axis,
    left: f64,
    top: f64,
    /// Plot width.
    pw: f64,
    /// Plot height.
    ph: f64,
}

impl Frame<'_> {
    /// The pixel column of `v` on the x axis (`None` off a log axis's domain).
    fn px(&self, v: f64) -> Option<f64> {
        self.x.frac(v).map(|f| self.left + f * self.pw)
    }

    /// The pixel row of `v` on the y axis.
    fn py(&self, v: f64) -> Option<f64> {
        self.y.frac(v).map(|f| self.top + self.ph - f * self.ph)
    }
}

/// Where the legend starts below the top (px), without a note under the title.
const HEAD: f64 = 30.0;
/// Height of the note under the title (px).
const NOTE_ROW: f64 = 16.0;

/// Legend entries by row, each with its offset from the row's start (px).
type LegendRows<'a> = Vec<Vec<(f64, &'a Series)>>;

impl Chart {
    /// The chart as one `<svg>` element (no XML prolog: it is inlined in HTML).
    pub fn svg(&self) -> String {
        let (w, h) = (self.width, self.height);
        let rows = self.legend_rows();
        let f = self.frame(rows.len());
        let mut o = String::new();
        let _ = write!(
            o,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif\" font-size=\"{FONT}\" role=\"img\">"
        );
        let _ = write!(o, "<title>{}</title>", html_text(&self.title));
        let _ = write!(
            o,
            "<rect width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/><text class=\"chart-title\" x=\"{:.1}\" y=\"20\" font-size=\"14\" font-weight=\"600\">{}</text>",
            12.0,
            html_text(&self.title)
        );
        if !self.note.is_empty() {
            let _ = write!(
                o,
                "<text class=\"chart-note\" x=\"12.0\" y=\"38\" fill=\"#555555\">{}</text>",
                html_text(&self.note)
            );
        }
        self.legend(&mut o, &rows);
        let _ = write!(
            o,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#999999\"/>",
            f.left, f.top, f.pw, f.ph
        );
        // Grid lines for every tick; a label only where it does not touch the last one
        // drawn (ticks of 1, 2, 4 on an axis up to 64 would overprint).
        o.push_str("<g class=\"ticks\" fill=\"#333333\">");
        self.x_ticks(&mut o, &f);
        self.y_ticks(&mut o, &f);
        o.push_str("</g>");
        self.axis_titles(&mut o, &f);
        // Series, the first on top.
        for s in self.series.iter().rev() {
            let _ = write!(
                o,
                "<g class=\"series\"><title>{}</title>",
                html_text(&s.name)
            );
            band_path(&mut o, s, &f);
            line_path(&mut o, s, &f);
            whiskers(&mut o, s, &f);
            if s.rounds <= 1 {
                points(&mut o, s, &f, 0, 1);
            }
            o.push_str("</g>");
        }
        self.interleaved_points(&mut o, &f);
        o.push_str("</svg>");
        o
    }

    /// The marks of series drawn in rounds ([`Series::rounds`]): round by round, each
    /// such series' share of its marks, so that none lies wholly on top.
    fn interleaved_points(&self, o: &mut String, f: &Frame) {
        let rounds = self.series.iter().map(|s| s.rounds).max().unwrap_or(0);
        for round in 0..rounds {
            for s in self.series.iter().rev().filter(|s| s.rounds > 1) {
                let _ = write!(
                    o,
                    "<g class=\"series\"><title>{}</title>",
                    html_text(&s.name)
                );
                points(o, s, f, round, s.rounds);
                o.push_str("</g>");
            }
        }
    }

    /// The top of the legend (px): below the title, and the note if there is one.
    fn head(&self) -> f64 {
        if self.note.is_empty() {
            HEAD
        } else {
            HEAD + NOTE_ROW
        }
    }

    /// Legend rows: entries flow left to right and wrap at the chart's width.
    fn legend_rows(&self) -> LegendRows<'_> {
        let mut rows: LegendRows = vec![Vec::new()];
        let mut cursor = 0.0;
        let room = self.width - 24.0;
        for s in self.series.iter().filter(|s| s.legend) {
            let entry = 30.0 + text_width(&shorten(&s.name), FONT) + 14.0;
            if cursor > 0.0 && cursor + entry > room {
                rows.push(Vec::new());
                cursor = 0.0;
            }
            rows.last_mut().expect("one row at least").push((cursor, s));
            cursor += entry;
        }
        rows
    }

    /// The plot area left inside the title, legend (`legend_rows` rows), tick labels
    /// and axis titles.
    fn frame(&self, legend_rows: usize) -> Frame<'_> {
        let legend_h = legend_rows as f64 * LEGEND_ROW;
        let label_w = self
            .y
            .ticks
            .iter()
            .map(|t| text_width(&t.1, FONT))
            .fold(0.0, f64::max);
        let left = 22.0 + label_w + 10.0;
        // Room for half of the last x tick label, which is centred on the frame's edge.
        let right = self
            .x
            .ticks
            .last()
            .map_or(0.0, |t| text_width(&t.1, FONT) / 2.0 + 4.0)
            .max(16.0);
        let top = self.head() + legend_h + 8.0;
        let bottom = 50.0;
        Frame {
            x: &self.x,
            y: &self.y,
            left,
            top,
            pw: self.width - left - right,
            ph: self.height - top - bottom,
        }
    }

    /// The legend: per series a line or dot in its colour and its (shortened) name.
    fn legend(&self, o: &mut String, rows: &LegendRows) {
        o.push_str("<g class=\"legend\">");
        for (r, row) in rows.iter().enumerate() {
            let y = self.head() + r as f64 * LEGEND_ROW + LEGEND_ROW / 2.0;
            for (x0, s) in row {
                let x = 12.0 + x0;
                let _ = write!(o, "<g><title>{}</title>", html_text(&s.name));
                if s.line.len() >= 2 || !s.band.is_empty() {
                    let _ = write!(
                    o,
                    "<line x1=\"{x:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{}\" stroke-width=\"{}\"{}/>",
                    x + 24.0,
                    s.color,
                    s.width + 0.5,
                    s.stroke.dasharray()
                );
                }
                if !s.marks.is_empty() {
                    s.shape.open(o, x + 12.0, y, 3.5);
                    let _ = write!(o, " fill=\"{}\"/>", s.color);
                }
                let _ = write!(
                    o,
                    "<text x=\"{:.1}\" y=\"{:.1}\">{}</text></g>",
                    x + 30.0,
                    y + 4.0,
                    html_text(&shorten(&s.name))
                );
            }
        }
        o.push_str("</g>");
    }

    /// The x axis's grid lines and the labels that do not overprint their left neighbour.
    fn x_ticks(&self, o: &mut String, f: &Frame) {
        let mut free_from = f64::NEG_INFINITY;
        for (v, label) in &self.x.ticks {
            let Some(x) = f.px(*v) else { continue };
            let _ = write!(
                o,
                "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#e3e3e3\"/>",
                f.top,
                f.top + f.ph
            );
            let half = text_width(label, FONT) / 2.0;
            if x - half >= free_from {
                free_from = x + half + 6.0;
                let _ = write!(
                    o,
                    "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                    f.top + f.ph + 16.0,
                    html_text(label)
                );
            }
        }
    }

    /// The y axis's grid lines and the labels that do not overprint the one below.
    fn y_ticks(&self, o: &mut String, f: &Frame) {
        let mut free_above = f64::INFINITY;
        for (v, label) in &self.y.ticks {
            let Some(y) = f.py(*v) else { continue };
            let _ = write!(
                o,
                "<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#e3e3e3\"/>",
                f.left,
                f.left + f.pw
            );
            if y <= free_above {
                free_above = y - FONT - 2.0;
                let _ = write!(
                    o,
                    "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                    f.left - 6.0,
                    y + 4.0,
                    html_text(label)
                );
            }
        }
    }

    /// The axis titles: the x one centred below, the y one rotated on the left.
    fn axis_titles(&self, o: &mut String, f: &Frame) {
        let _ = write!(
        o,
        "<text class=\"axis-title x\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"13\">{}</text>",
        f.left + f.pw / 2.0,
        self.height - 12.0,
        html_text(&self.x.title)
    );
        let (ax, ay) = (16.0, f.top + f.ph / 2.0);
        // A title longer than the frame is set smaller (down to 9 px) so that it fits.
        let size = (f.ph / text_width(&self.y.title, 1.0)).clamp(9.0 / FONT, 13.0 / FONT) * FONT;
        let _ = write!(
        o,
        "<text class=\"axis-title y\" x=\"{ax:.1}\" y=\"{ay:.1}\" text-anchor=\"middle\" font-size=\"{size:.1}\" transform=\"rotate(-90 {ax:.1} {ay:.1})\">{}</text>",
        html_text(&self.y.title)
    );
    }
}

/// A series's band (its range) as a filled path, if at least two points are on the chart.
fn band_path(o: &mut String, s: &Series, f: &Frame) {
    let band: Vec<(f64, f64, f64)> = s
        .band
        .iter()
        .filter_map(|(x, lo, hi)| Some((f.px(*x)?, f.py(*lo)?, f.py(*hi)?)))
        .collect();
    if band.len() >= 2 {
        let mut d = String::new();
        for (i, (x, _, hi)) in band.iter().enumerate() {
            let _ = write!(d, "{}{x:.1} {hi:.1}", if i == 0 { "M" } else { " L" });
        }
        for (x, lo, _) in band.iter().rev() {
            let _ = write!(d, " L{x:.1} {lo:.1}");
        }
        let _ = write!(
            o,
            "<path class=\"band\" d=\"{d} Z\" fill=\"{}\" fill-opacity=\"0.18\" stroke=\"none\"/>",
            s.color
        );
    }
}

/// A series's error bars: a vertical line from the lower to the upper end, a cap at
/// each, an arrowhead pointing up for an open upper end; the tooltip on each.
fn whiskers(o: &mut String, s: &Series, f: &Frame) {
    if s.whiskers.is_empty() {
        return;
    }
    let _ = write!(
        o,
        "<g class=\"whiskers\" stroke=\"{}\" stroke-width=\"1.5\" fill=\"none\">",
        s.color
    );
    for w in &s.whiskers {
        let (Some(x), Some(lo), Some(hi)) = (f.px(w.x), f.py(w.lo), f.py(w.hi)) else {
            continue;
        };
        let top = if w.open {
            format!(
                " M{:.1} {:.1} L{x:.1} {hi:.1} L{:.1} {:.1}",
                x - 4.0,
                hi + 5.0,
                x + 4.0,
                hi + 5.0
            )
        } else {
            format!(" M{:.1} {hi:.1} L{:.1} {hi:.1}", x - 4.0, x + 4.0)
        };
        let _ = write!(
            o,
            "<path d=\"M{x:.1} {lo:.1} L{x:.1} {hi:.1} M{:.1} {lo:.1} L{:.1} {lo:.1}{top}\"><title>{}</title></path>",
            x - 4.0,
            x + 4.0,
            html_text(&w.tip)
        );
    }
    o.push_str("</g>");
}

/// A series's line as a path, if at least two points are on the chart.
fn line_path(o: &mut String, s: &Series, f: &Frame) {
    let line: Vec<(f64, f64)> = s
        .line
        .iter()
        .filter_map(|(x, y)| Some((f.px(*x)?, f.py(*y)?)))
        .collect();
    if line.len() >= 2 {
        let mut d = String::new();
        for (i, (x, y)) in line.iter().enumerate() {
            let _ = write!(d, "{}{x:.1} {y:.1}", if i == 0 { "M" } else { " L" });
        }
        let _ = write!(
            o,
            "<path class=\"line\" d=\"{d}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\" stroke-linejoin=\"round\"{}/>",
            s.color,
            s.width,
            s.stroke.dasharray()
        );
    }
}

/// A series's marks in its shape with their tooltips: those of `round` out of `rounds`
/// (every `rounds`-th from the `round`-th; round 0 of 1 is all of them).
fn points(o: &mut String, s: &Series, f: &Frame, round: usize, rounds: usize) {
    if !s.marks.is_empty() {
        let opacity = if s.opacity < 1.0 {
            format!(" fill-opacity=\"{}\"", s.opacity)
        } else {
            String::new()
        };
        let _ = write!(o, "<g class=\"points\" fill=\"{}\"{opacity}>", s.color);
        for m in s.marks.iter().skip(round).step_by(rounds.max(1)) {
            let (Some(x), Some(y)) = (f.px(m.x), f.py(m.y)) else {
                continue;
            };
            s.shape.open(o, x, y, s.radius);
            let _ = write!(
                o,
                "><title>{}</title></{}>",
                html_text(&m.tip),
                s.shape.tag()
            );
        }
        o.push_str("</g>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hundredfold_spread_gets_a_log_scale_and_less_does_not() {
        // (values, expected scale)
        let cases = [
            (vec![1.0, 99.0], Scale::Linear),
            (vec![1.0, 100.0], Scale::Log),
            (vec![0.2, 3_000.0], Scale::Log),
            (vec![0.0, 3_000.0], Scale::Linear), // zero cannot go on a log axis
            (vec![-5.0, 1_000.0], Scale::Linear),
        ];
        for (values, scale) in cases {
            assert_eq!(
                Axis::fit("v", values.clone(), true).scale,
                scale,
                "{values:?}"
            );
        }
    }

    #[test]
    fn linear_ticks_are_round_and_cover_the_values() {
        let a = Axis::linear("req/s", 0.0, 2_460.0);
        assert_eq!(a.lo, 0.0);
        assert!(a.hi >= 2_460.0 && a.hi <= 3_000.0, "{a:?}");
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["0", "500", "1000", "1500", "2000", "2500"]);
        let a = Axis::linear("ms", 0.0, 0.74);
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["0", "0.2", "0.4", "0.6", "0.8"]);
    }

    #[test]
    fn log_ticks_are_decades_with_2_and_5_when_few() {
        let a = Axis::log("ms", 0.35, 12.0);
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(
            labels,
            ["0.1", "0.2", "0.5", "1", "2", "5", "10", "20", "50", "100"]
        );
        let a = Axis::log("ms", 0.01, 20_000.0);
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(
            labels,
            ["0.01", "0.1", "1", "10", "100", "1000", "10k", "100k"]
        );
        assert!(a.title.ends_with("log scale"));
    }

    #[test]
    fn log2_ticks_are_powers_of_two_evenly_spaced() {
        let a = Axis::log2("c (connections)", 1.0, 64.0);
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["1", "2", "4", "8", "16", "32", "64"]);
        assert!(a.title.ends_with("log2 scale"));
        // Each doubling takes the same length, and the ends sit inside the frame.
        let at: Vec<f64> = a.ticks.iter().map(|t| a.frac(t.0).unwrap()).collect();
        for w in at.windows(3) {
            assert!(((w[1] - w[0]) - (w[2] - w[1])).abs() < 1e-9, "{at:?}");
        }
        assert!(at[0] > 0.0 && at[6] < 1.0, "{at:?}");
    }

    #[test]
    fn one_value_or_none_still_gives_a_usable_axis() {
        let a = Axis::fit("v", [5.0], true);
        assert!(a.lo <= 0.0 && a.hi >= 5.0, "{a:?}");
        let a = Axis::fit("v", [f64::NAN], true);
        assert_eq!((a.lo, a.hi), (0.0, 1.0));
        assert_eq!(a.frac(f64::NAN), None);
    }

    /// A chart with one series over `x`, for layout tests.
    fn chart_over(x: Axis, name: &str) -> Chart {
        let mut s = Series::new(name, color(0));
        s.line = vec![(x.lo, 1.0), (x.hi, 2.0)];
        Chart {
            title: "t".into(),
            note: String::new(),
            x,
            y: Axis::fit("y (u)", [1.0, 2.0], true),
            series: vec![s],
            width: 600.0,
            height: 380.0,
        }
    }

    #[test]
    fn crowded_tick_labels_are_thinned_but_the_ends_stay() {
        let mut x = Axis::linear("c (connections)", 0.0, 64.0);
        x.ticks = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
            .map(|v| (v, number(v, 1.0)))
            .to_vec();
        let chart = chart_over(x, "a");
        let svg = chart.svg();
        let ticks = &svg[svg.find("class=\"ticks\"").unwrap()..];
        let ticks = &ticks[..ticks.find("</g>").unwrap()];
        let labels: Vec<&str> = ticks
            .split("text-anchor=\"middle\">")
            .skip(1)
            .map(|t| &t[..t.find('<').unwrap()])
            .collect();
        assert_eq!(labels.first(), Some(&"1"));
        assert_eq!(labels.last(), Some(&"64"));
        assert!(!labels.contains(&"2"), "2 overprints 1: {labels:?}");
        assert_eq!(
            ticks.matches("<line").count(),
            7 + chart.y.ticks.len(),
            "every tick keeps its grid line"
        );
    }

    #[test]
    fn long_legend_names_are_cut_and_whole_in_the_tooltip() {
        let name = "a-very-long-contender-name-that-goes-on-and-on-and-on";
        let svg = chart_over(Axis::linear("x (s)", 0.0, 1.0), name).svg();
        let legend = &svg[svg.find("class=\"legend\"").unwrap()..];
        assert!(legend.contains(&format!("<title>{name}</title>")));
        assert!(legend.contains("a-very-long-contender-name-that-goes-on…</text>"));
    }

    #[test]
    fn text_in_a_chart_is_escaped_and_nothing_prints_nan() {
        let mut s = Series::new("<b>&", color(0));
        s.line = vec![(0.0, 1.0), (1.0, f64::NAN), (2.0, 3.0)];
        s.marks = vec![Mark {
            x: 1.0,
            y: 2.0,
            tip: "\"<i>\"".into(),
        }];
        let c = Chart {
            title: "<t>".into(),
            note: String::new(),
            x: Axis::fit("x", [0.0, 2.0], true),
            y: Axis::fit("y", [1.0, 3.0], true),
            series: vec![s],
            width: 400.0,
            height: 300.0,
        };
        let svg = c.svg();
        assert!(!svg.contains("<b>") && !svg.contains("<i>") && !svg.contains("<t>"));
        assert!(svg.contains("&lt;b&gt;&amp;"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }
}
