//! A small SVG line chart: bandwidth against size, one line per algorithm, the copy bandwidth
//! as the ceiling, one panel per case.

use std::collections::BTreeMap;
use std::fmt::Write;

/// One measured point.
pub struct Point {
    /// Panel (case) name.
    pub case: String,
    /// Line (algorithm) name.
    pub series: String,
    /// log2 of the element count.
    pub log2_n: f64,
    /// GB/s.
    pub gbps: f64,
}

const COLORS: [&str; 7] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
];
const W: f64 = 460.0;
const H: f64 = 300.0;
const PAD: f64 = 50.0;

/// Renders the panels side by side, two per row.
pub fn chart(title: &str, points: &[Point]) -> String {
    let mut cases: BTreeMap<&str, Vec<&Point>> = BTreeMap::new();
    for p in points {
        cases.entry(&p.case).or_default().push(p);
    }
    let cols = 2usize;
    let rows = cases.len().div_ceil(cols).max(1);
    let (tw, th) = (cols as f64 * W, rows as f64 * H + 40.0);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{tw}" height="{th}" font-family="sans-serif" font-size="11">
<rect width="100%" height="100%" fill="white"/>
<text x="{}" y="24" font-size="15" text-anchor="middle">{}</text>
"#,
        tw / 2.0,
        escape(title)
    );
    for (k, (case, pts)) in cases.iter().enumerate() {
        let (ox, oy) = ((k % cols) as f64 * W, 40.0 + (k / cols) as f64 * H);
        panel(&mut s, case, pts, ox, oy);
    }
    s.push_str("</svg>\n");
    s
}

fn panel(s: &mut String, case: &str, pts: &[&Point], ox: f64, oy: f64) {
    let xmin = pts.iter().map(|p| p.log2_n).fold(f64::INFINITY, f64::min);
    let xmax = pts
        .iter()
        .map(|p| p.log2_n)
        .fold(f64::NEG_INFINITY, f64::max)
        .max(xmin + 1.0);
    let ymax = pts.iter().map(|p| p.gbps).fold(1.0, f64::max) * 1.1;
    let x = |v: f64| ox + PAD + (v - xmin) / (xmax - xmin) * (W - 2.0 * PAD);
    let y = |v: f64| oy + H - PAD - v / ymax * (H - 2.0 * PAD);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" font-size="13" text-anchor="middle">{}</text>"#,
        ox + W / 2.0,
        oy + 16.0,
        escape(case)
    );
    let _ = writeln!(
        s,
        r#"<path d="M{} {} V{} H{}" stroke="black" fill="none"/>"#,
        x(xmin),
        y(ymax),
        y(0.0),
        x(xmax)
    );
    for i in 0..=4 {
        let v = ymax / 1.1 * i as f64 / 4.0;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">{:.0}</text>"#,
            x(xmin) - 4.0,
            y(v) + 4.0,
            v
        );
    }
    let mut lx = xmin.ceil();
    while lx <= xmax {
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">2^{lx}</text>"#,
            x(lx),
            y(0.0) + 14.0
        );
        lx += 2.0;
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">GB/s (read + write)</text>"#,
        ox + 14.0,
        oy + H / 2.0
    );
    let mut series: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    for p in pts {
        series
            .entry(&p.series)
            .or_default()
            .push((p.log2_n, p.gbps));
    }
    for (i, (name, mut line)) in series.into_iter().enumerate() {
        line.sort_by(|a, b| a.0.total_cmp(&b.0));
        let ceiling = name.starts_with("copy") || name.starts_with("read");
        let color = if ceiling {
            "black"
        } else {
            COLORS[i % COLORS.len()]
        };
        let dash = if ceiling {
            r#" stroke-dasharray="5,3""#
        } else {
            ""
        };
        let d: Vec<String> = line
            .iter()
            .map(|(a, b)| format!("{:.1},{:.1}", x(*a), y(*b)))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="1.6"{dash}/>"#,
            d.join(" ")
        );
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" fill="{color}">{}</text>"#,
            x(xmin) + 8.0,
            oy + 34.0 + 13.0 * i as f64,
            escape(name)
        );
    }
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_series() {
        let pts: Vec<Point> = [("single-pass", 100.0), ("copy (ceiling)", 200.0)]
            .iter()
            .flat_map(|(s, g)| {
                (10..=12).map(move |l| Point {
                    case: "sum i32".into(),
                    series: s.to_string(),
                    log2_n: l as f64,
                    gbps: g * l as f64,
                })
            })
            .collect();
        let svg = chart("t", &pts);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("stroke-dasharray"));
    }
}
