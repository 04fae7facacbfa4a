//! SVG pictures, written by hand into a `String`: the ring of `inspect
//! --svg` and the moves of `plan --svg`.
//!
//! The ring: hash position `h` sits at angle `h / 2^64 · 360°` clockwise
//! from the top; each arc `(p[i-1], p[i]]` is stroked in its owner's colour
//! (neighbouring arcs of one owner merged), with a tick per point when
//! there are at most 2,000, and an inner band coloured by zone when nodes
//! have zones (zone palette apart from the nodes', with a legend naming the
//! zones). Placements without a ring get a strip of their slot table (slots;
//! maglev's 65,537 slots as 600 columns, each stacked by its owners' share)
//! or nothing but the bars. Beside it, ownership bars with
//! the expected share marked: one labelled row per node up to 40 nodes;
//! beyond, one thin column per node sorted by `share / expected`, the
//! extremes labelled, so 100 nodes stay readable.
//!
//! `plan --svg` draws the old ring in grey and the moved ranges in their
//! receiver's colour (slot runs on a strip for tables; flows only when
//! sampled), with bars of what each node gives and receives. It draws from
//! plain data, a [`PlanPicture`] that `plan.rs` fills in.
//!
//! Cost: O(P + N) elements up to 20,000 arcs; 100 nodes × 160 vnodes is
//! about 16,000 arcs, 1.5 MB of SVG. A ring of more arcs is drawn as 720
//! sectors, each stacked by the shares of its (at most 12 named) owners,
//! with a note: O(P log P) time, at most about 10,000 elements (a million
//! points of `--nodes a,b --vnodes 1000000` drew a million arcs, 112 MB).

use std::fmt::Write as _;

use ringwise::{
    AnyPlacement, Method, MovedRange, Movement, NodeTable, Placement, PlacementStats, RingView,
};

/// What `plan --svg` draws, as plain data: `plan.rs` builds it from its
/// plan, so the picture needs nothing of the plan's own types.
pub struct PlanPicture<'a> {
    /// The diff: its method, moved ranges (or slots) and flows.
    pub movement: &'a Movement,
    /// The placement before the change: the grey ring (or table) and its
    /// nodes.
    pub old: &'a AnyPlacement,
    /// The algorithm as the title names it (`a -> b` for a migration).
    pub algorithm: String,
    /// Whether the change is a migration (the algorithm or its parameters
    /// change): then there is no optimum to compare with.
    pub migration: bool,
}

const SIZE: f64 = 640.0;
const WIDTH: f64 = 1240.0;
const CX: f64 = 320.0;
const CY: f64 = 340.0;
const R: f64 = 240.0;
const BAND: f64 = 40.0;

/// Node `i`'s colour of `n`: twelve distinct hues, then the golden angle.
fn colour(i: usize, n: usize) -> String {
    const TWELVE: [&str; 12] = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
        "#bcbd22", "#17becf", "#393b79", "#ad494a",
    ];
    if n <= TWELVE.len() {
        return TWELVE[i].into();
    }
    let light = [42, 55, 68][i % 3];
    format!("hsl({:.1},70%,{light}%)", (i as f64 * 137.508) % 360.0)
}

/// Zone `z`'s colour: pastels with dark ones between, a palette apart from
/// the nodes' saturated hues so the inner zone band never reads as a node.
fn zone_colour(z: usize) -> &'static str {
    const ZONES: [&str; 8] = [
        "#c7c7c7", "#525252", "#fdd0a2", "#9e9ac8", "#c7e9c0", "#8c6d31", "#fcbba1", "#6baed6",
    ];
    ZONES[z % ZONES.len()]
}

/// The zone band's legend under the circle: a swatch and the zone's name
/// (a zoneless node is a zone of its own, named after it).
fn zone_legend(out: &mut String, nodes: &NodeTable) {
    let mut names: Vec<(u32, String)> = Vec::new();
    for (id, node) in nodes.iter().enumerate() {
        let Some(z) = nodes.zone_id(id as u32) else {
            continue;
        };
        if names.iter().all(|(k, _)| *k != z) {
            let name = node
                .zone
                .clone()
                .unwrap_or_else(|| format!("({})", node.name));
            names.push((z, name));
        }
    }
    names.sort();
    let y = CY + R + BAND / 2.0 + 28.0;
    let _ = writeln!(
        out,
        r##"<text x="20" y="{y}" fill="#555">inner band: zones</text>"##
    );
    let mut x = 152.0;
    for (z, name) in names.iter().take(16) {
        let _ = writeln!(
            out,
            r##"<rect x="{x}" y="{}" width="14" height="10" fill="{}" stroke="#333" stroke-width="0.5"/><text x="{}" y="{y}">{}</text>"##,
            y - 10.0,
            zone_colour(*z as usize),
            x + 18.0,
            escape(name)
        );
        x += 24.0 + 7.5 * name.chars().count() as f64;
    }
    if names.len() > 16 {
        let _ = writeln!(
            out,
            r##"<text x="{x}" y="{y}" fill="#555">… {} zones in all</text>"##,
            names.len()
        );
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn angle(position: u64) -> f64 {
    position as f64 / 2f64.powi(64) * std::f64::consts::TAU - std::f64::consts::FRAC_PI_2
}

fn at(radius: f64, a: f64) -> (f64, f64) {
    (CX + radius * a.cos(), CY + radius * a.sin())
}

/// A filled ring sector over `(start, end]` between `radius ± width/2`,
/// at least `min_degrees` wide (so a moved sliver stays visible); the
/// whole annulus when `start == end`. Filled, not stroked: a wide stroke
/// on a tiny arc renders as a wedge.
fn arc(out: &mut String, start: u64, end: u64, radius: f64, width: f64, colour: &str) {
    sector(out, start, end, radius, width, colour, 0.0);
}

fn sector(
    out: &mut String,
    start: u64,
    end: u64,
    radius: f64,
    width: f64,
    colour: &str,
    min_degrees: f64,
) {
    let (r1, r2) = (radius + width / 2.0, radius - width / 2.0);
    let span = end.wrapping_sub(start);
    if span == 0 {
        let _ = writeln!(
            out,
            r#"<circle cx="{CX}" cy="{CY}" r="{radius}" fill="none" stroke="{colour}" stroke-width="{width}"/>"#
        );
        return;
    }
    let turn = (span as f64 / 2f64.powi(64) * std::f64::consts::TAU).max(min_degrees.to_radians());
    let middle = angle(start) + span as f64 / 2f64.powi(64) * std::f64::consts::PI;
    let (a, b) = (middle - turn / 2.0, middle + turn / 2.0);
    let large = u8::from(turn > std::f64::consts::PI);
    let ((x1, y1), (x2, y2)) = (at(r1, a), at(r1, b));
    let ((x3, y3), (x4, y4)) = (at(r2, b), at(r2, a));
    let _ = writeln!(
        out,
        r#"<path d="M{x1:.2},{y1:.2}A{r1},{r1} 0 {large} 1 {x2:.2},{y2:.2}L{x3:.2},{y3:.2}A{r2},{r2} 0 {large} 0 {x4:.2},{y4:.2}Z" fill="{colour}"/>"#
    );
}

fn header(title: &str, height: f64) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" font-family=\"sans-serif\" font-size=\"13\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"20\" y=\"30\" font-size=\"17\">{}</text>\n",
        escape(title)
    )
}

/// The ring's arcs by owner, neighbours merged: `(start, end, owner id)`.
fn arcs(ring: &dyn RingView) -> Vec<(u64, u64, u32)> {
    let last = ring.points().last().map_or(0, |(p, _)| p);
    let mut out: Vec<(u64, u64, u32)> = Vec::new();
    let mut prev = last;
    for (point, id) in ring.points() {
        match out.last_mut() {
            Some(a) if a.2 == id && a.1 == prev => a.1 = point,
            _ => out.push((prev, point, id)),
        }
        prev = point;
    }
    out
}

/// The most arcs drawn one by one: 20,000 (about 2 MB of SVG; 100 nodes
/// × 160 vnodes make 16,000). A ring with more (`--nodes a,b --vnodes
/// 1000000`: a million arcs, 112 MB of SVG) is drawn in [`SECTORS`]
/// sectors instead, with a note saying so.
const MAX_ARCS: usize = 20_000;

/// Sectors of an aggregated ring: half a degree each.
const SECTORS: u64 = 720;

/// Owners drawn per sector of an aggregated ring; the rest go in grey.
const SECTOR_OWNERS: usize = 12;

/// The hash space's positions, 2^64: one whole turn of the ring.
const TURN: u128 = 1 << 64;

/// The positions in each of the [`SECTORS`] sectors.
const SECTOR_LEN: u128 = TURN / SECTORS as u128;

/// Merged arcs of `ring` (as [`arcs`] counts them), without holding them.
fn arc_count(ring: &dyn RingView) -> usize {
    let mut count = 0;
    let mut last = None;
    for (_, id) in ring.points() {
        if last != Some(id) {
            count += 1;
        }
        last = Some(id);
    }
    count
}

/// A piece of an arc inside one sector: (sector, group, hash positions).
type Part = (u64, usize, u128);

/// Cuts the positions `start..end` (`end` at most 2^64) held by `group`
/// at the ends of the [`SECTORS`] sectors, into `parts`.
fn cut(parts: &mut Vec<Part>, start: u128, end: u128, group: usize) {
    let mut at = start;
    while at < end {
        let sector = at / SECTOR_LEN;
        let stop = ((sector + 1) * SECTOR_LEN).min(end);
        parts.push((sector as u64, group, stop - at));
        at = stop;
    }
}

/// Calls `draw(sector, stack)` for each sector, in order, that the arcs
/// reach. An arc `(start, end, group)` holds the positions `start..end`,
/// or, when `end <= start`, wraps past the top (`start..2^64`, then
/// `0..end`: a lone point's arc is the whole turn). A sector's stack is
/// each group's positions in it, most first (ties: the lower group). Both
/// aggregated pictures, the ring's owners and a plan's receivers, are
/// stacked here, so they cut and sum alike. O(A log A) for A pieces of
/// arcs, O(A) transient memory.
fn stack_sectors(
    arcs: impl IntoIterator<Item = (u128, u128, usize)>,
    mut draw: impl FnMut(u64, &[(u128, usize)]),
) {
    let mut parts: Vec<Part> = Vec::new();
    for (start, end, group) in arcs {
        if start < end {
            cut(&mut parts, start, end, group);
        } else {
            cut(&mut parts, start, TURN, group);
            cut(&mut parts, 0, end, group);
        }
    }
    parts.sort_unstable_by_key(|&(sector, group, _)| (sector, group));
    let mut stack: Vec<(u128, usize)> = Vec::new();
    for same in parts.chunk_by(|a, b| a.0 == b.0) {
        stack.clear();
        for &(_, group, len) in same {
            match stack.last_mut() {
                Some(last) if last.1 == group => last.0 += len,
                _ => stack.push((len, group)),
            }
        }
        stack.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        draw(same[0].0, &stack);
    }
}

/// The first and last hash positions of `sector`, as [`arc`] takes them
/// (the last sector ends at 2^64 - 1, the top).
fn sector_span(sector: u64) -> (u64, u64) {
    let sector = u128::from(sector);
    let end = ((sector + 1) * SECTOR_LEN).min(TURN - 1);
    ((sector * SECTOR_LEN) as u64, end as u64)
}

/// The ring in [`SECTORS`] equal sectors, each a stack from the inside out
/// of the groups (`group(id)`: the node, or its zone) owning most of it,
/// each as thick as its share of the sector, at most [`SECTOR_OWNERS`] of
/// them, the rest grey. O(P log P) time, O(P) transient memory, O(SECTORS
/// · SECTOR_OWNERS) elements.
fn sectors(
    out: &mut String,
    ring: &dyn RingView,
    group: impl Fn(u32) -> usize,
    colour_of: impl Fn(usize) -> String,
    radius: f64,
    width: f64,
) {
    // Arc i is (p[i-1], p[i]], the first one wrapping from the last point.
    let mut prev = u128::from(ring.points().last().map_or(0, |(p, _)| p));
    let arcs = ring.points().map(|(point, id)| {
        let start = std::mem::replace(&mut prev, u128::from(point));
        (start, prev, group(id))
    });
    stack_sectors(arcs, |sector, owners| {
        let total: u128 = owners.iter().map(|o| o.0).sum();
        let (start, end) = sector_span(sector);
        let mut inner = radius - width / 2.0;
        let rest: u128 = owners.iter().skip(SECTOR_OWNERS).map(|o| o.0).sum();
        let drawn = owners
            .iter()
            .take(SECTOR_OWNERS)
            .map(|&(len, g)| (len, Some(g)));
        for (len, g) in drawn.chain((rest > 0).then_some((rest, None))) {
            let thick = width * len as f64 / total as f64;
            let c = g.map_or_else(|| "#bbbbbb".to_owned(), &colour_of);
            arc(out, start, end, inner + thick / 2.0, thick, &c);
            inner += thick;
        }
    });
}

/// The moved ranges of a plan with more than [`MAX_ARCS`] of them (a
/// million-point ring gained 666,000 ranges, a 75 MB SVG): per sector of
/// [`SECTORS`], a stack from the inside out of the receivers, each as thick
/// as the share of the sector it receives, over the grey old ring; a
/// sector nothing moved in stays grey. O(R log R) time for R ranges,
/// O(SECTORS · receivers) elements.
fn moved_sectors(out: &mut String, ranges: &[MovedRange], n: usize, radius: f64, width: f64) {
    // A range is (start, end]: positions start+1 ..= end.
    let arcs = ranges.iter().map(|r| {
        let (start, end) = (u128::from(r.start) + 1, u128::from(r.end) + 1);
        (start, end, r.to as usize)
    });
    stack_sectors(arcs, |sector, receivers| {
        let (start, end) = sector_span(sector);
        let mut inner = radius - width / 2.0;
        for &(len, receiver) in receivers {
            let thick = (width * len as f64 / SECTOR_LEN as f64).min(width);
            let c = colour(receiver, n);
            arc(out, start, end, inner + thick / 2.0, thick, &c);
            inner += thick;
        }
    });
}

/// The circle of `ring`: arcs, ticks, zones.
fn circle(out: &mut String, ring: &dyn RingView, nodes: &NodeTable, faded: bool) {
    let n = nodes.len();
    let aggregated = arc_count(ring) > MAX_ARCS;
    let zoned = nodes.zone_count() > 0 && nodes.iter().any(|node| node.zone.is_some());
    if aggregated {
        match faded {
            true => arc(out, 0, 0, R, BAND, "#d9d9d9"),
            false => sectors(out, ring, |id| id as usize, |i| colour(i, n), R, BAND),
        }
        if zoned {
            let zone = |id| nodes.zone_id(id).map_or(0, |z| z as usize);
            let inner = R - BAND / 2.0 - 8.0;
            sectors(out, ring, zone, |z| zone_colour(z).to_owned(), inner, 10.0);
            zone_legend(out, nodes);
        }
        let _ = writeln!(
            out,
            r##"<text x="{CX}" y="{CY}" text-anchor="middle">{} points</text>"##,
            ring.point_count()
        );
        let _ = writeln!(
            out,
            r##"<text x="{CX}" y="{}" text-anchor="middle" fill="#555">over {MAX_ARCS} arcs: drawn as {SECTORS} sectors,</text>"##,
            CY + 20.0
        );
        let _ = writeln!(
            out,
            r##"<text x="{CX}" y="{}" text-anchor="middle" fill="#555">each stacked by its owners' shares (top {SECTOR_OWNERS}; grey: the rest)</text>"##,
            CY + 36.0
        );
        return;
    }
    for (start, end, id) in arcs(ring) {
        let c = if faded {
            "#d9d9d9".into()
        } else {
            colour(id as usize, n)
        };
        arc(out, start, end, R, BAND, &c);
    }
    if ring.point_count() <= 2000 {
        for (point, _) in ring.points() {
            let a = angle(point);
            let ((x1, y1), (x2, y2)) = (at(R + BAND / 2.0, a), at(R + BAND / 2.0 + 7.0, a));
            let _ = writeln!(
                out,
                r##"<line x1="{x1:.2}" y1="{y1:.2}" x2="{x2:.2}" y2="{y2:.2}" stroke="#333" stroke-width="1"/>"##
            );
        }
    }
    if zoned {
        for (start, end, id) in arcs(ring) {
            let zone = nodes.zone_id(id).map_or(0, |z| z as usize);
            arc(
                out,
                start,
                end,
                R - BAND / 2.0 - 8.0,
                10.0,
                zone_colour(zone),
            );
        }
        zone_legend(out, nodes);
    }
    let _ = writeln!(
        out,
        r##"<text x="{CX}" y="{CY}" text-anchor="middle">{} points</text>"##,
        ring.point_count()
    );
    let note = if ring.point_count() > 2000 {
        "ticks omitted above 2,000 points"
    } else {
        "ticks: points"
    };
    let _ = writeln!(
        out,
        r##"<text x="{CX}" y="{}" text-anchor="middle" fill="#555">{note}</text>"##,
        CY + 20.0
    );
}

/// Width of a slot strip, in SVG units.
const STRIP_WIDTH: f64 = 600.0;

/// A plan's moved slots of a table wider than the strip: grey columns of
/// `size / 600` slots, each with a bar as tall as the share of its slots
/// that moved, coloured by the receiver of most of them; the caption gives
/// the tallest share, since one moved slot in 109 would not show at scale.
fn moved_columns(out: &mut String, m: &ringwise::Movement, size: u64, y: f64) {
    let columns = STRIP_WIDTH as u64;
    let mut moved = vec![std::collections::BTreeMap::<u32, u64>::new(); columns as usize];
    for r in &m.ranges {
        for slot in r.start..=r.end {
            *moved[(slot * columns / size) as usize]
                .entry(r.to)
                .or_default() += 1;
        }
    }
    let share = |c: u64| {
        let slots = ((c + 1) * size).div_ceil(columns) - (c * size).div_ceil(columns);
        moved[c as usize].values().sum::<u64>() as f64 / slots.max(1) as f64
    };
    let tallest = (0..columns).map(share).fold(0.0, f64::max);
    let _ = writeln!(
        out,
        r##"<rect x="20" y="{y}" width="{STRIP_WIDTH}" height="60" fill="#d9d9d9"/>"##
    );
    for c in (0..columns).filter(|&c| share(c) > 0.0) {
        let Some((&to, _)) = moved[c as usize].iter().max_by_key(|&(_, &k)| k) else {
            continue;
        };
        let height = 60.0 * share(c) / tallest;
        let _ = writeln!(
            out,
            r#"<rect x="{}" y="{:.2}" width="1" height="{height:.2}" fill="{}"/>"#,
            20 + c,
            y + 60.0 - height,
            colour(to as usize, m.nodes.len())
        );
    }
    let _ = writeln!(
        out,
        r##"<text x="20" y="{}" fill="#555">one column per {} slots, as tall as the share of them that moved</text><text x="20" y="{}" fill="#555">(tallest: {:.1}%), coloured by their main receiver</text>"##,
        y + 100.0,
        size / columns,
        y + 118.0,
        tallest * 100.0
    );
    slot_labels(out, y, size);
}

/// The owners of a table wider than the strip (maglev's 65,537 slots):
/// single slots would be 0.01 units wide and blend into grey, so the slots
/// go into columns (600 up to 12 nodes, else 60, so 100 nodes stay a few
/// thousand rectangles), each stacked by its owners' share of its slots,
/// in node order, coloured as the bars.
fn owner_columns(out: &mut String, placement: &AnyPlacement, size: u64, y: f64) {
    let n = placement.len();
    let columns: u64 = if n <= 12 { 600 } else { 60 };
    let width = STRIP_WIDTH / columns as f64;
    let mut counts = vec![0u64; n];
    for c in 0..columns {
        let (first, end) = (
            (c * size).div_ceil(columns),
            ((c + 1) * size).div_ceil(columns),
        );
        counts.iter_mut().for_each(|k| *k = 0);
        for slot in first..end {
            if let Some(id) = placement.owner(slot) {
                counts[id as usize] += 1;
            }
        }
        let slots = (end - first).max(1) as f64;
        let mut top = y;
        for (id, &k) in counts.iter().enumerate().filter(|&(_, &k)| k > 0) {
            let height = 60.0 * k as f64 / slots;
            let _ = writeln!(
                out,
                r#"<rect x="{:.2}" y="{top:.2}" width="{width:.2}" height="{height:.2}" fill="{}"/>"#,
                20.0 + width * c as f64,
                colour(id, n)
            );
            top += height;
        }
    }
    let _ = writeln!(
        out,
        r##"<text x="20" y="{}" fill="#555">one column per {} slots, stacked by the share of them each node owns</text>"##,
        y + 100.0,
        size / columns
    );
    slot_labels(out, y, size);
}

/// "slot 0" and "slot N-1" under a strip drawn at `y`.
fn slot_labels(out: &mut String, y: f64, size: u64) {
    let _ = writeln!(
        out,
        r##"<text x="20" y="{}" fill="#555">slot 0</text><text x="620" y="{}" text-anchor="end" fill="#555">slot {}</text>"##,
        y + 80.0,
        y + 80.0,
        size - 1
    );
}

/// A horizontal strip of a slot table: grey, with each run of slots of one
/// colour (`colour_of`, `None` stays grey) drawn over it at least
/// `min_width` wide, so a single moved slot of 65,537 still shows.
fn strip(
    out: &mut String,
    size: u64,
    colour_of: impl Fn(u64) -> Option<String>,
    y: f64,
    min_width: f64,
) {
    let (x0, w) = (20.0, STRIP_WIDTH);
    let _ = writeln!(
        out,
        r##"<rect x="{x0}" y="{y}" width="{w}" height="60" fill="#d9d9d9"/>"##
    );
    let mut slot = 0;
    while slot < size {
        let c = colour_of(slot);
        let start = slot;
        while slot < size && colour_of(slot) == c {
            slot += 1;
        }
        let Some(fill) = c else { continue };
        let (x, width) = (
            x0 + w * start as f64 / size as f64,
            w * (slot - start) as f64 / size as f64,
        );
        let _ = writeln!(
            out,
            r#"<rect x="{x:.2}" y="{y}" width="{:.2}" height="60" fill="{fill}"/>"#,
            width.max(min_width)
        );
    }
    slot_labels(out, y, size);
}

/// Bars of `values` (fraction per node) with `marks` (expected) drawn as
/// black lines, right of the circle.
fn bars(out: &mut String, names: &[String], values: &[f64], marks: &[f64], title: &str) {
    let (x0, y0, w) = (720.0, 70.0, 360.0);
    let _ = writeln!(
        out,
        r#"<text x="{x0}" y="{}">{}</text>"#,
        y0 - 10.0,
        escape(title)
    );
    let n = names.len();
    let top = values.iter().chain(marks).copied().fold(1e-12, f64::max);
    if n <= 40 {
        let row = (540.0 / n.max(1) as f64).min(24.0);
        for i in 0..n {
            let y = y0 + row * i as f64;
            let len = w * values[i] / top;
            let _ = writeln!(
                out,
                r#"<rect x="{x0}" y="{y:.1}" width="{len:.2}" height="{:.1}" fill="{}"/>"#,
                row * 0.75,
                colour(i, n)
            );
            let mark = x0 + w * marks[i] / top;
            let _ = writeln!(
                out,
                r#"<line x1="{mark:.2}" y1="{:.1}" x2="{mark:.2}" y2="{:.1}" stroke="black" stroke-width="2"/>"#,
                y - 2.0,
                y + row * 0.75 + 2.0
            );
            let label = format!("{} {:.2}%", names[i], values[i] * 100.0);
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{:.1}" font-size="{:.0}" text-anchor="end">{}</text>"#,
                x0 - 8.0,
                y + row * 0.6,
                (row * 0.6).clamp(8.0, 13.0),
                escape(&label)
            );
        }
    } else {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| {
            (values[a] / marks[a].max(1e-300)).total_cmp(&(values[b] / marks[b].max(1e-300)))
        });
        let col = w / n as f64;
        for (k, &i) in order.iter().enumerate() {
            let h = 480.0 * values[i] / top;
            let x = x0 + col * k as f64;
            let _ = writeln!(
                out,
                r#"<rect x="{x:.2}" y="{:.2}" width="{:.2}" height="{h:.2}" fill="{}"/>"#,
                y0 + 480.0 - h,
                col * 0.85,
                colour(i, n)
            );
            let m = y0 + 480.0 - 480.0 * marks[i] / top;
            let _ = writeln!(
                out,
                r#"<line x1="{x:.2}" y1="{m:.2}" x2="{:.2}" y2="{m:.2}" stroke="black" stroke-width="1.5"/>"#,
                x + col
            );
        }
        for (line, (k, word)) in [(0, "lowest"), (n - 1, "highest")].into_iter().enumerate() {
            let i = order[k];
            let label = format!(
                "{word}: {} {:.3}% (expected {:.3}%)",
                names[i],
                values[i] * 100.0,
                marks[i] * 100.0
            );
            let _ = writeln!(
                out,
                r#"<text x="{x0}" y="{}">{}</text>"#,
                y0 + 500.0 + 18.0 * line as f64,
                escape(&label)
            );
        }
        let _ = writeln!(
            out,
            r##"<text x="{x0}" y="{}" fill="#555">one column per node, sorted by share / expected; black: expected</text>"##,
            y0 + 536.0
        );
    }
}

/// The largest flows, one labelled bar each, coloured by receiver.
fn flow_bars(out: &mut String, m: &ringwise::Movement) {
    const SHOWN: usize = 30;
    let (x0, y0, w) = (900.0, 70.0, 300.0);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}">largest flows: donor → receiver</text>"#,
        x0 - 200.0,
        y0 - 10.0
    );
    let mut flows: Vec<&ringwise::Flow> = m.flows.iter().collect();
    flows.sort_by(|a, b| b.fraction.total_cmp(&a.fraction));
    let top = flows.first().map_or(1.0, |f| f.fraction).max(1e-12);
    let row = (540.0 / flows.len().clamp(1, SHOWN) as f64).min(24.0);
    for (k, f) in flows.iter().take(SHOWN).enumerate() {
        let y = y0 + row * k as f64;
        let c = colour(f.to as usize, m.nodes.len());
        let _ = writeln!(
            out,
            r#"<rect x="{x0}" y="{y:.1}" width="{:.2}" height="{:.1}" fill="{c}"/>"#,
            w * f.fraction / top,
            row * 0.75
        );
        let label = format!(
            "{} → {} {:.3}%",
            m.name(f.from),
            m.name(f.to),
            f.fraction * 100.0
        );
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{:.1}" font-size="{:.0}" text-anchor="end">{}</text>"#,
            x0 - 8.0,
            y + row * 0.6,
            (row * 0.6).clamp(8.0, 13.0),
            escape(&label)
        );
    }
    if flows.len() > SHOWN {
        let _ = writeln!(
            out,
            r##"<text x="{x0}" y="{}" fill="#555">… and {} smaller flows</text>"##,
            y0 + row * SHOWN as f64 + 14.0,
            flows.len() - SHOWN
        );
    }
}

/// `inspect --svg`: the ring (or slot strip) and the ownership bars.
pub fn inspect(title: &str, placement: &AnyPlacement, stats: &PlacementStats) -> String {
    let nodes = placement.nodes();
    let mut out = header(title, SIZE + 60.0);
    match (placement.as_ring(), placement.table_size()) {
        (Some(ring), _) => circle(&mut out, ring, nodes, false),
        (None, Some(size)) if size > STRIP_WIDTH as u64 => {
            owner_columns(&mut out, placement, size, 300.0);
        }
        (None, Some(size)) => {
            let n = nodes.len();
            strip(
                &mut out,
                size,
                |s| placement.owner(s).map(|id| colour(id as usize, n)),
                300.0,
                0.3,
            );
        }
        (None, None) => {
            let _ = writeln!(
                out,
                r##"<text x="40" y="330" fill="#555">{} has no ring or table to draw: shares sampled</text>"##,
                placement.algorithm()
            );
        }
    }
    let names: Vec<String> = stats.nodes.iter().map(|n| n.name.clone()).collect();
    let shares: Vec<f64> = stats.nodes.iter().map(|n| n.share).collect();
    let expected: Vec<f64> = stats.nodes.iter().map(|n| n.expected).collect();
    bars(
        &mut out,
        &names,
        &shares,
        &expected,
        "share of the key space (black: expected from weights)",
    );
    out + "</svg>\n"
}

/// `plan --svg`: what moves, coloured by receiver.
pub fn plan(plan: &PlanPicture) -> String {
    let m = plan.movement;
    let n = m.nodes.len();
    // A sampled figure carries its interval wherever it is shown.
    let how = match m.method {
        Method::Sampled { low, high, .. } => {
            format!(
                " (sampled, 95% interval {:.2}–{:.2}%)",
                low * 100.0,
                high * 100.0
            )
        }
        _ => String::new(),
    };
    // A change of algorithm or parameters has no optimum to compare with.
    let optimum = if plan.migration {
        "a migration, no optimum".to_owned()
    } else {
        format!("optimum {:.2}%", m.optimum() * 100.0)
    };
    let algorithm = &plan.algorithm;
    let title = format!(
        "{algorithm}: {:.2}%{how} of the key space moves ({optimum}), coloured by receiver",
        m.moved() * 100.0,
    );
    let mut out = header(&title, SIZE + 60.0);
    match (m.method, plan.old.as_ring()) {
        (Method::Arcs, Some(ring)) => {
            circle(&mut out, ring, plan.old.nodes(), true);
            let note = if m.ranges.len() > MAX_ARCS {
                moved_sectors(&mut out, &m.ranges, n, R, BAND + 14.0);
                "grey: unchanged; moved: per ½°, stacked by receiver"
            } else {
                for r in &m.ranges {
                    let c = colour(r.to as usize, n);
                    sector(&mut out, r.start, r.end, R, BAND + 14.0, &c, 0.4);
                }
                "grey: unchanged; moved arcs drawn at least 0.4° wide"
            };
            let _ = writeln!(
                out,
                r##"<text x="{CX}" y="{}" text-anchor="middle" fill="#555">{note}</text>"##,
                CY + 60.0
            );
        }
        (Method::Table { size }, _) => {
            let owner = |slot: u64| {
                let r = m.ranges.partition_point(|r| r.end < slot);
                m.ranges
                    .get(r)
                    .filter(|r| r.start <= slot)
                    .map(|r| colour(r.to as usize, n))
            };
            // A table wider than the strip (maglev's 65,537 slots on 600
            // units) cannot show single slots: one column per unit instead,
            // as tall as the share of its slots that moved.
            if size > STRIP_WIDTH as u64 {
                moved_columns(&mut out, m, size, 300.0);
            } else {
                strip(&mut out, size, owner, 300.0, 0.3);
                let _ = writeln!(
                    out,
                    r##"<text x="20" y="400" fill="#555">grey: unchanged</text>"##
                );
            }
        }
        _ => {
            let _ = writeln!(
                out,
                r##"<text x="40" y="330" fill="#555">sampled: no ranges to draw; the bars are estimates</text>"##
            );
        }
    }
    flow_bars(&mut out, m);
    out + "</svg>\n"
}
