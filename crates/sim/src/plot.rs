//! SVG charts of a [`Report`] (plotters, no fonts needed).
//!
//! - `spread.svg`: load spread against vnodes on log axes, one ring and the
//!   mean over the name sets, with the `1/√V` reference line;
//! - `moved.svg`: the share of keys moved in every name set, per vnodes, with
//!   the ideal `1/(N+1)`: virtual nodes make moves predictable, not fewer;
//! - `failure.svg`: every node's share before and after the failure, one
//!   panel per vnodes value.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::error::SimError;
use crate::report::Report;

type Plot = Result<(), Box<dyn std::error::Error>>;
type Chart = fn(&Report, &Path) -> Plot;

const SIZE: (u32, u32) = (800, 500);
const FONT: (&str, u32) = ("sans-serif", 20);

/// Writes every chart the report has data for into `dir` (created if
/// missing) and returns their paths.
pub fn write(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, SimError> {
    let failed = |path: &Path, e: &dyn std::fmt::Display| SimError::Output {
        path: path.to_owned(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(|e| failed(dir, &e))?;
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
            draw(report, &path).map_err(|e| failed(&path, &e))?;
            written.push(path);
        }
    }
    Ok(written)
}

fn spread(report: &Report, path: &Path) -> Plot {
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
    let (y_min, y_max) = ys.fold((1.0 / x_max.sqrt(), 1.0f64), |(lo, hi), y| {
        (lo.min(y), hi.max(y))
    });

    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = builder(&root, "Load spread (stddev / mean) vs virtual nodes")
        .build_cartesian_2d(
            (x_min / 1.5..x_max * 1.5).log_scale(),
            (y_min / 1.5..y_max * 1.5).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("virtual nodes per node (V)")
        .y_desc("spread")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&percent)
        .light_line_style(WHITE)
        .draw()?;
    let reference: Vec<(f64, f64)> = (0..=60)
        .map(|i| {
            let v = x_min * (x_max / x_min).powf(f64::from(i) / 60.0);
            (v, 1.0 / v.sqrt())
        })
        .collect();
    chart
        .draw_series(LineSeries::new(reference, BLACK.mix(0.5).stroke_width(1)))?
        .label("1/sqrt(V)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.5)));
    for (points, color, label) in [
        (&single, RED, "one ring"),
        (&seeds, BLUE, "mean over name sets"),
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
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// A chart builder with the common caption, margin and label areas.
fn builder<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(caption, FONT)
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(65);
    builder
}

/// Labels for categories drawn at x = 0, 1, 2, ...; blank between them.
fn category(labels: &[String]) -> impl Fn(&f64) -> String + '_ {
    move |x| {
        let i = x.round();
        if (x - i).abs() < 0.01 && i >= 0.0 {
            labels.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    }
}

/// `0.25` → `25%`, `0.031` → `3.1%`.
fn percent(y: &f64) -> String {
    if *y >= 0.1 {
        format!("{:.0}%", y * 100.0)
    } else {
        format!("{:.1}%", y * 100.0)
    }
}

fn moved(report: &Report, path: &Path) -> Plot {
    let rows = report.seeds.as_deref().unwrap_or_default();
    let ideal = 1.0 / f64::from(report.params.nodes + 1);
    let y_max = rows
        .iter()
        .flat_map(|r| r.moved_runs.iter().copied())
        .fold(ideal * 2.0, f64::max);
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = builder(&root, "Keys moved when one node joins, per name set")
        .build_cartesian_2d(-0.5f64..rows.len() as f64 - 0.5, 0f64..y_max * 1.1)?;
    let labels: Vec<String> = rows.iter().map(|r| format!("V = {}", r.vnodes)).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(rows.len())
        .x_label_formatter(&category(&labels))
        .y_desc("share of keys moved")
        .y_label_formatter(&percent)
        .draw()?;
    chart
        .draw_series(LineSeries::new(
            [(-0.5, ideal), (rows.len() as f64 - 0.5, ideal)],
            BLACK.mix(0.5).stroke_width(1),
        ))?
        .label(format!("1/(N+1) = {:.2}%", ideal * 100.0))
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
        .label("one name set")
        .legend(|(x, y)| Circle::new((x + 10, y), 3, BLUE.filled()));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

fn failure(report: &Report, path: &Path) -> Plot {
    let rows = report.failure.as_deref().unwrap_or_default();
    let height = SIZE.1 * rows.len().max(1) as u32;
    let root = SVGBackend::new(path, (SIZE.0, height)).into_drawing_area();
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
            "V = {}: {} fails; share per node before and after",
            r.vnodes, r.victim
        );
        let mut chart = builder(area, &caption)
            .build_cartesian_2d(-0.5f64..n as f64 - 0.5, 0f64..y_max * 1.15)?;
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
            .x_label_formatter(&category(&names))
            .y_label_formatter(&percent)
            .draw()?;
        for (shares, offset, color, label) in [
            (&r.shares_before, -0.2, BLUE, "before"),
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
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperMiddle)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    Ok(())
}

/// Keys moved on join and on leave, as multiples of the optimum, per
/// algorithm and cluster size: 1.0 is minimal disruption.
fn compare(report: &Report, path: &Path) -> Plot {
    let rows = report.compare.as_deref().unwrap_or_default();
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
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = builder(&root, "Keys moved, as a multiple of the optimum")
        .build_cartesian_2d(-0.5f64..rows.len() as f64 - 0.5, 0f64..y_max * 1.1)?;
    let labels: Vec<String> = rows
        .iter()
        .map(|r| format!("{} N={}", r.algorithm, r.nodes))
        .collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(rows.len())
        .x_label_formatter(&category(&labels))
        .y_desc("moved / optimum")
        .draw()?;
    chart.draw_series(LineSeries::new(
        [(-0.5, 1.0), (rows.len() as f64 - 0.5, 1.0)],
        BLACK.mix(0.5).stroke_width(1),
    ))?;
    let series = [
        (
            -0.2,
            BLUE,
            "node joins",
            rows.iter()
                .map(|r| ratio(r.add_moved, r.add_optimal))
                .collect::<Vec<_>>(),
        ),
        (
            0.2,
            RED,
            "last node leaves",
            rows.iter()
                .map(|r| ratio(r.remove_moved, r.remove_optimal))
                .collect(),
        ),
    ];
    for (offset, color, label, values) in series {
        let bars = values.into_iter().enumerate().map(move |(i, v)| {
            let x = i as f64 + offset;
            Rectangle::new([(x - 0.18, 0.0), (x + 0.18, v)], color.mix(0.8).filled())
        });
        chart
            .draw_series(bars)?
            .label(label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperMiddle)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
