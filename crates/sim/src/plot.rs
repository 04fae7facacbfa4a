//! SVG charts of a [`Report`] (plotters, no fonts needed). Each chart says
//! in its title and axis names what it shows, so it reads without the
//! README:
//!
//! - `spread.svg`: load spread against vnodes on log axes (ticks 1-2-5), one
//!   ring and the mean over the name sets, with the `1/√V` reference line;
//! - `moved.svg`: the share of keys moved in every name set, per vnodes, with
//!   the ideal `1/(N+1)`: virtual nodes make moves predictable, not fewer;
//! - `failure.svg`: every node's share before and after the failure, one
//!   panel per vnodes value;
//! - `compare.svg`: keys moved on join and leave over the optimum, one panel
//!   per cluster size.
//!
//! Category labels are thinned (every k-th) when they would not fit side by
//! side; a test checks that no two labels of any chart overlap.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::SimError;
use crate::report::Report;
use crate::table::thousands;

type Plot = Result<(), Box<dyn std::error::Error>>;
type Chart = fn(&Report, &mut String) -> Plot;
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

const SIZE: (u32, u32) = (800, 500);
const CAPTION: (&str, u32) = ("sans-serif", 22);
const LABEL: (&str, u32) = ("sans-serif", 16);
const DESC: (&str, u32) = ("sans-serif", 17);
/// Plotters writes a font of size `s` as `s / 1.24` px; a glyph of the
/// sans-serif fonts is at most about 0.6 em wide on average.
const LABEL_PX_PER_CHAR: f64 = LABEL.1 as f64 / 1.24 * 0.6;

/// Writes every chart the report has data for into `dir` (created if
/// missing) and returns their paths.
pub fn write(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, SimError> {
    let failed = |path: &Path, message: String| SimError::Output {
        path: path.to_owned(),
        message,
    };
    std::fs::create_dir_all(dir).map_err(|e| failed(dir, e.to_string()))?;
    let mut written = Vec::new();
    let charts: [(&str, bool, Chart); 4] = [
        (
            "spread.svg",
            report.single.is_some() || report.seeds.is_some(),
            spread,
        ),
        ("moved.svg", report.seeds.is_some(), moved),
        ("failure.svg", report.failure.is_some(), failure),
        ("compare.svg", report.compare.is_some(), compare),
    ];
    for (name, has_data, draw) in charts {
        if has_data {
            let path = dir.join(name);
            // Drawn into memory, then written: a file error is the plain
            // I/O reason, not plotters' "Drawing backend error".
            let mut svg = String::new();
            draw(report, &mut svg).map_err(|e| failed(&path, format!("cannot draw: {e}")))?;
            crate::files::write_atomically(&path, crate::files::Mode::Plain, |out| {
                out.write_all(svg.as_bytes())
            })
            .map_err(SimError::Write)?;
            written.push(path);
        }
    }
    Ok(written)
}

/// True when the report has data for at least one chart.
pub fn has_charts(report: &Report) -> bool {
    report.single.is_some()
        || report.seeds.is_some()
        || report.failure.is_some()
        || report.compare.is_some()
}

fn spread(report: &Report, svg: &mut String) -> Plot {
    let single: Vec<(f64, f64)> = report
        .single
        .iter()
        .flatten()
        .map(|r| (f64::from(r.vnodes), r.spread))
        .collect();
    let seeds: Vec<(f64, f64)> = report
        .seeds
        .iter()
        .flatten()
        .map(|r| (f64::from(r.vnodes), r.spread_avg))
        .collect();
    let xs = single.iter().chain(&seeds).map(|p| p.0);
    let (x_min, x_max) = xs.fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let ys = single
        .iter()
        .chain(&seeds)
        .map(|p| p.1)
        .filter(|&y| y > 0.0);
    // The range holds the data and the reference line 1/√V.
    let (y_min, y_max) = ys.fold((1.0 / x_max.sqrt(), 1.0 / x_min.sqrt()), |(lo, hi), y| {
        (lo.min(y), hi.max(y))
    });
    let (x_lo, x_hi) = (x_min / 1.5, x_max * 1.5);
    let (y_lo, y_hi) = (y_min / 1.3, y_max * 1.3);

    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let p = &report.params;
    let caption = format!("Load spread vs virtual nodes, {} nodes", p.nodes);
    let mut chart = builder(&root, &caption).build_cartesian_2d(
        (x_lo..x_hi)
            .log_scale()
            .with_key_points(decades(x_lo, x_hi)),
        (y_lo..y_hi)
            .log_scale()
            .with_key_points(one_two_five(y_lo, y_hi)),
    )?;
    chart
        .configure_mesh()
        .x_desc("virtual nodes per node, V (log scale)")
        .y_desc("spread = stddev / mean of node loads (log scale)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&percent)
        .label_style(LABEL)
        .axis_desc_style(DESC)
        .draw()?;
    let reference: Vec<(f64, f64)> = (0..=60)
        .map(|i| {
            let v = x_min * (x_max / x_min).powf(f64::from(i) / 60.0);
            (v, 1.0 / v.sqrt())
        })
        .collect();
    chart
        .draw_series(LineSeries::new(reference, BLACK.mix(0.5).stroke_width(1)))?
        .label("1/sqrt(V), the expected spread")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.5)));
    for (points, color, label) in [
        (
            &single,
            RED,
            format!("one ring (node-0.., {} keys)", thousands(p.keys)),
        ),
        (
            &seeds,
            BLUE,
            format!(
                "mean over {} name sets ({} keys each)",
                p.seeds,
                thousands(p.seed_keys.min(p.keys))
            ),
        ),
    ] {
        if points.is_empty() {
            continue;
        }
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                color.stroke_width(2),
            ))?
            .label(label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
    }
    legend(&mut chart, SeriesLabelPosition::LowerLeft)?;
    root.present()?;
    Ok(())
}

/// A chart builder with the common caption, margin and label areas.
fn builder<'a, 'b>(area: &'a Area<'b>, caption: &str) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(caption, CAPTION)
        .margin(15)
        .margin_right(25)
        .x_label_area_size(55)
        .y_label_area_size(80);
    builder
}

/// The legend box, at `position`.
fn legend<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    position: SeriesLabelPosition,
) -> Plot
where
    X: Ranged,
    Y: Ranged,
{
    chart
        .configure_series_labels()
        .position(position)
        .label_font(LABEL)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// Powers of ten inside `lo..hi` (the ends themselves if there is none).
fn decades(lo: f64, hi: f64) -> Vec<f64> {
    let ticks: Vec<f64> = (-12..=12)
        .map(|k| 10f64.powi(k))
        .filter(|t| (lo..=hi).contains(t))
        .collect();
    if ticks.is_empty() {
        vec![lo, hi]
    } else {
        ticks
    }
}

/// 1, 2, 5 times the powers of ten inside `lo..hi`: on a log axis they are
/// about evenly spaced, and each reads as a round percentage.
fn one_two_five(lo: f64, hi: f64) -> Vec<f64> {
    (-12..=12)
        .flat_map(|k| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(k)))
        .filter(|t| (lo..=hi).contains(t))
        .collect()
}

/// Labels for categories drawn at x = 0, 1, 2, ...; blank between them,
/// and only every `step`-th one when they would not fit side by side in
/// `width` pixels.
fn category(labels: &[String], width: u32) -> impl Fn(&f64) -> String + '_ {
    let widest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(1);
    // A label's width plus two characters of gap, per category slot.
    let needed = (widest + 2) as f64 * LABEL_PX_PER_CHAR * labels.len().max(1) as f64;
    let step = (needed / f64::from(width)).ceil().max(1.0) as usize;
    move |x| {
        let i = x.round();
        if (x - i).abs() < 0.01 && i >= 0.0 && (i as usize) % step == 0 {
            labels.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    }
}

/// The narrowest chart whose plotting width fits every label of `labels`
/// side by side (the inverse of [`plot_width`] and [`category`]'s test).
fn width_for(labels: &[String]) -> u32 {
    let widest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(1);
    let mut distinct = labels.to_vec();
    distinct.sort();
    distinct.dedup();
    let needed = (widest + 2) as f64 * LABEL_PX_PER_CHAR * distinct.len().max(1) as f64;
    needed.ceil() as u32 + (80 + 15 + 25)
}

/// The plotting width of a chart `total` pixels wide.
fn plot_width(total: u32) -> u32 {
    total.saturating_sub(80 + 15 + 25)
}

/// `0.25` → `25%`, `0.031` → `3.1%`, `0.05` → `5%`.
fn percent(y: &f64) -> String {
    let p = y * 100.0;
    if p >= 10.0 || (p - p.round()).abs() < 1e-9 {
        format!("{p:.0}%")
    } else if p >= 0.1 {
        format!("{p:.1}%")
    } else {
        format!("{p:.2}%")
    }
}

fn moved(report: &Report, svg: &mut String) -> Plot {
    let rows = report.seeds.as_deref().unwrap_or_default();
    let n = report.params.nodes;
    let ideal = 1.0 / f64::from(n + 1);
    let y_max = rows
        .iter()
        .flat_map(|r| r.moved_runs.iter().copied())
        .fold(ideal * 2.0, f64::max);
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let caption = format!(
        "Keys moved when a node joins {n} nodes, in {} name sets",
        report.params.seeds
    );
    let mut chart = builder(&root, &caption)
        .build_cartesian_2d(-0.5f64..rows.len() as f64 - 0.5, 0f64..y_max * 1.25)?;
    let labels: Vec<String> = rows.iter().map(|r| r.vnodes.to_string()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(rows.len())
        .x_label_formatter(&category(&labels, plot_width(SIZE.0)))
        .x_desc("virtual nodes per node (V)")
        .y_desc("share of all keys moved")
        .y_label_formatter(&percent)
        .label_style(LABEL)
        .axis_desc_style(DESC)
        .draw()?;
    chart
        .draw_series(LineSeries::new(
            [(-0.5, ideal), (rows.len() as f64 - 0.5, ideal)],
            BLACK.mix(0.5).stroke_width(1),
        ))?
        .label(format!("ideal 1/(N+1) = {}", percent(&ideal)))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.5)));
    let runs = rows.iter().enumerate().flat_map(|(i, r)| {
        let n = r.moved_runs.len().max(1) as f64;
        r.moved_runs.iter().enumerate().map(move |(s, &m)| {
            // Spread the seeds sideways so they do not hide each other.
            let x = i as f64 + (s as f64 / n - 0.5) * 0.5;
            Circle::new((x, m), 3, BLUE.mix(0.7).filled())
        })
    });
    chart
        .draw_series(runs)?
        .label("one name set (s0-0.., s1-0.., ...)")
        .legend(|(x, y)| Circle::new((x + 10, y), 3, BLUE.filled()));
    legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    root.present()?;
    Ok(())
}

fn failure(report: &Report, svg: &mut String) -> Plot {
    let rows = report.failure.as_deref().unwrap_or_default();
    let height = SIZE.1 * rows.len().max(1) as u32;
    let root = SVGBackend::with_string(svg, (SIZE.0, height)).into_drawing_area();
    root.fill(&WHITE)?;
    for (area, r) in root.split_evenly((rows.len().max(1), 1)).iter().zip(rows) {
        let n = r.shares_before.0.len();
        let y_max = r
            .shares_before
            .0
            .iter()
            .chain(&r.shares_after.0)
            .fold(0.0f64, |m, (_, s)| m.max(*s));
        let caption = format!(
            "V = {}: {} fails; each node's share before and after",
            r.vnodes, r.victim
        );
        let mut chart = builder(area, &caption)
            .build_cartesian_2d(-0.5f64..n as f64 - 0.5, 0f64..y_max * 1.3)?;
        let names: Vec<String> = r
            .shares_before
            .0
            .iter()
            .map(|(name, _)| name.clone())
            .collect();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n)
            .x_label_formatter(&category(&names, plot_width(SIZE.0)))
            .y_desc("share of all keys")
            .y_label_formatter(&percent)
            .label_style(LABEL)
            .axis_desc_style(DESC)
            .draw()?;
        for (shares, offset, color, label) in [
            (&r.shares_before, -0.2, BLUE, "before the failure"),
            (&r.shares_after, 0.2, RED, "after"),
        ] {
            let bars = shares.0.iter().enumerate().map(move |(i, (_, s))| {
                let x = i as f64 + offset;
                Rectangle::new([(x - 0.18, 0.0), (x + 0.18, *s)], color.mix(0.8).filled())
            });
            chart.draw_series(bars)?.label(label).legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 15, y + 5)], color.filled())
            });
        }
        legend(&mut chart, SeriesLabelPosition::UpperMiddle)?;
    }
    root.present()?;
    Ok(())
}

/// Keys moved on join and on leave, as multiples of the optimum, per
/// algorithm; one panel per cluster size. 1.0 is minimal disruption.
fn compare(report: &Report, svg: &mut String) -> Plot {
    let rows = report.compare.as_deref().unwrap_or_default();
    let mut sizes: Vec<u32> = rows.iter().map(|r| r.nodes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let ratio = |moved: f64, optimal: f64| if optimal > 0.0 { moved / optimal } else { 0.0 };
    let y_max = rows
        .iter()
        .flat_map(|r| {
            [
                ratio(r.add_moved, r.add_optimal),
                ratio(r.remove_moved, r.remove_optimal),
            ]
        })
        .fold(2.0f64, f64::max);
    let height = SIZE.1 * sizes.len().max(1) as u32;
    // Wide enough for every algorithm's name under its bars: the chart
    // compares them, so none may be thinned out (11 names need ~900 px).
    let names: Vec<String> = rows.iter().map(|r| r.algorithm.clone()).collect();
    let width = SIZE.0.max(width_for(&names));
    let root = SVGBackend::with_string(svg, (width, height)).into_drawing_area();
    root.fill(&WHITE)?;
    for (area, &n) in root
        .split_evenly((sizes.len().max(1), 1))
        .iter()
        .zip(&sizes)
    {
        let panel: Vec<_> = rows.iter().filter(|r| r.nodes == n).collect();
        let caption = format!("Keys moved at {n} nodes, over the optimum (1.0 = minimal)");
        let mut chart = builder(area, &caption)
            .build_cartesian_2d(-0.5f64..panel.len() as f64 - 0.5, 0f64..y_max * 1.3)?;
        let labels: Vec<String> = panel.iter().map(|r| r.algorithm.clone()).collect();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(panel.len())
            .x_label_formatter(&category(&labels, plot_width(width)))
            .x_desc("algorithm")
            .y_desc("moved / optimum")
            .label_style(LABEL)
            .axis_desc_style(DESC)
            .draw()?;
        chart
            .draw_series(LineSeries::new(
                [(-0.5, 1.0), (panel.len() as f64 - 0.5, 1.0)],
                BLACK.mix(0.5).stroke_width(1),
            ))?
            .label("optimum: 1/(N+1) on join, 1/N on leave")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.5)));
        let series = [
            (
                -0.2,
                BLUE,
                "node N+1 joins",
                panel
                    .iter()
                    .map(|r| ratio(r.add_moved, r.add_optimal))
                    .collect::<Vec<_>>(),
            ),
            (
                0.2,
                RED,
                "last node leaves",
                panel
                    .iter()
                    .map(|r| ratio(r.remove_moved, r.remove_optimal))
                    .collect(),
            ),
        ];
        for (offset, color, label, values) in series {
            let bars = values.into_iter().enumerate().map(move |(i, v)| {
                let x = i as f64 + offset;
                Rectangle::new([(x - 0.18, 0.0), (x + 0.18, v)], color.mix(0.8).filled())
            });
            chart.draw_series(bars)?.label(label).legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 15, y + 5)], color.filled())
            });
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_inside_the_range() {
        assert_eq!(decades(0.6, 1500.0), [1.0, 10.0, 100.0, 1000.0]);
        assert_eq!(decades(20.0, 80.0), [20.0, 80.0]);
        let labels: Vec<String> = one_two_five(0.015, 1.2).iter().map(percent).collect();
        assert_eq!(labels, ["2%", "5%", "10%", "20%", "50%", "100%"]);
        assert_eq!(percent(&0.031), "3.1%");
        assert_eq!(percent(&0.005), "0.5%");
    }

    #[test]
    fn category_labels_are_thinned_when_they_do_not_fit() {
        let names: Vec<String> = (0..40).map(|i| format!("node-{i}")).collect();
        let label = category(&names, 680);
        let shown = (0..40)
            .filter(|&i| !label(&f64::from(i)).is_empty())
            .count();
        assert!(shown < 20 && shown > 1, "{shown} of 40 labels shown");
        let few = category(&names[..10], 680);
        assert!((0..10).all(|i| !few(&f64::from(i)).is_empty()));
    }
}
