//! `--svg FILE`: two panels over the seconds since the change, one line
//! per placement: the hit rate (top) and the database load as a multiple
//! of steady (bottom, log scale: 18× and 1.1× both readable). The change
//! is the dashed line at 0. Hand-written SVG, a few kilobytes.

use std::fmt::Write as _;

use crate::report::Summary;

const WIDTH: f64 = 820.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 50.0;
const PANEL: f64 = 190.0;
const GAP: f64 = 60.0;
const COLORS: [&str; 8] = [
    "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
];

/// The chart of every placement's intervals.
pub fn chart(summaries: &[Summary]) -> String {
    let height = TOP + 2.0 * PANEL + GAP + 50.0;
    let points = summaries.iter().flat_map(|s| s.intervals.iter());
    let (t0, t1) = points.fold((0.0f64, 1.0f64), |(a, b), p| (a.min(p.t), b.max(p.t)));
    let x = |t: f64| LEFT + (t - t0) / (t1 - t0).max(1e-9) * (WIDTH - LEFT - RIGHT);
    let low_hits = summaries
        .iter()
        .flat_map(|s| s.intervals.iter().map(|p| p.hit_rate))
        .fold(1.0f64, f64::min);
    let hit_floor = (low_hits * 10.0).floor() / 10.0;
    let peak = summaries
        .iter()
        .flat_map(|s| s.intervals.iter().map(|p| p.db_multiplier))
        .fold(2.0f64, f64::max);
    let (lo, hi) = (0.5f64.ln(), (peak * 1.3).ln());
    let top_y = |h: f64| TOP + (1.0 - (h - hit_floor) / (1.0 - hit_floor).max(1e-9)) * PANEL;
    let bottom = TOP + PANEL + GAP;
    let db_y = |m: f64| bottom + (1.0 - (m.max(0.5).ln() - lo) / (hi - lo)) * PANEL;

    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    let title = summaries
        .first()
        .map_or(String::new(), |s| s.change.clone());
    let _ = writeln!(
        svg,
        "<text x=\"{LEFT}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">Cache hit rate and database load, {}</text>",
        escape(&title)
    );
    frame(&mut svg, TOP, "hit rate");
    frame(&mut svg, bottom, "database load (× steady, log)");
    let mut h = hit_floor;
    while h <= 1.0 + 1e-9 {
        tick(&mut svg, top_y(h), &format!("{:.0} %", 100.0 * h));
        h += if 1.0 - hit_floor > 0.5 { 0.2 } else { 0.1 };
    }
    for m in [0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0] {
        if m <= peak * 1.3 {
            tick(&mut svg, db_y(m), &format!("{m}×"));
        }
    }
    let band = db_y(crate::run::RECOVERED);
    let _ = writeln!(
        svg,
        "<line x1=\"{LEFT}\" y1=\"{band:.1}\" x2=\"{:.1}\" y2=\"{band:.1}\" stroke=\"#888\" stroke-dasharray=\"2,3\"/>\n\
         <text x=\"{:.1}\" y=\"{:.1}\" fill=\"#555\">recovered: within 10 %</text>",
        WIDTH - RIGHT,
        WIDTH - RIGHT + 6.0,
        band + 4.0
    );
    x_ticks(&mut svg, t0, t1, &x, bottom + PANEL);
    for (i, s) in summaries.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        line(
            &mut svg,
            color,
            s.intervals.iter().map(|p| (x(p.t), top_y(p.hit_rate))),
        );
        line(
            &mut svg,
            color,
            s.intervals.iter().map(|p| (x(p.t), db_y(p.db_multiplier))),
        );
        legend(&mut svg, i, color, s);
    }
    let zero = x(0.0);
    let _ = writeln!(
        svg,
        "<line x1=\"{zero:.1}\" y1=\"{TOP}\" x2=\"{zero:.1}\" y2=\"{:.1}\" stroke=\"black\" stroke-dasharray=\"5,4\"/>\n\
         <text x=\"{:.1}\" y=\"{:.1}\">change</text>",
        bottom + PANEL,
        zero + 4.0,
        TOP + 14.0
    );
    let _ = writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">seconds since the change</text>\n</svg>",
        LEFT + (WIDTH - LEFT - RIGHT) / 2.0,
        bottom + PANEL + 38.0
    );
    svg
}

fn frame(svg: &mut String, y: f64, label: &str) {
    let w = WIDTH - LEFT - RIGHT;
    let _ = writeln!(
        svg,
        "<rect x=\"{LEFT}\" y=\"{y}\" width=\"{w}\" height=\"{PANEL}\" fill=\"none\" stroke=\"#888\"/>\n\
         <text x=\"{LEFT}\" y=\"{:.1}\" font-weight=\"bold\">{label}</text>",
        y - 6.0
    );
}

fn tick(svg: &mut String, y: f64, label: &str) {
    let _ = writeln!(
        svg,
        "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\n\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>",
        WIDTH - RIGHT,
        LEFT - 6.0,
        y + 4.0
    );
}

fn x_ticks(svg: &mut String, t0: f64, t1: f64, x: &dyn Fn(f64) -> f64, y: f64) {
    let span = t1 - t0;
    let step = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0]
        .into_iter()
        .find(|s| span / s <= 12.0)
        .unwrap_or(500.0);
    let mut t = (t0 / step).ceil() * step;
    while t <= t1 {
        let t_label = if t == 0.0 { 0.0 } else { t };
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{t}</text>",
            x(t_label),
            y + 16.0,
            t = t_label
        );
        t += step;
    }
}

fn line(svg: &mut String, color: &str, points: impl Iterator<Item = (f64, f64)>) {
    let path: Vec<String> = points.map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
    let _ = writeln!(
        svg,
        "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>",
        path.join(" ")
    );
}

fn legend(svg: &mut String, i: usize, color: &str, s: &Summary) {
    let x = WIDTH - RIGHT + 14.0;
    let y = TOP + 10.0 + 40.0 * i as f64;
    let peak = s
        .peak_multiplier
        .map_or("-".to_owned(), |p| format!("{p:.1}×"));
    let _ = writeln!(
        svg,
        "<line x1=\"{x}\" y1=\"{y}\" x2=\"{:.1}\" y2=\"{y}\" stroke=\"{color}\" stroke-width=\"3\"/>\n\
         <text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#555\">peak {peak}</text>",
        x + 22.0,
        x + 28.0,
        y + 4.0,
        escape(&s.algorithm),
        x + 28.0,
        y + 19.0
    );
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
