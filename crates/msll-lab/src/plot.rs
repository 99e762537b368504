//! Figure rendering with plotters: x = error level, one curve per scheme, error bars of +/- 1 sd
//! as in the seeds' figures (or the mean's 95 % confidence interval, `error_bars = "ci95"`). SVG
//! always; PNG when a TrueType font is available (text in PNGs needs one: DejaVu Sans from the
//! system, or `MSLL_FONT`).

use std::path::Path;
use std::sync::OnceLock;

use anyhow::{anyhow, Result};
use plotters::prelude::*;

#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    /// (x, mean, error-bar half-width)
    pub points: Vec<(f64, f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct Plot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// Tick positions and labels on the x axis.
    pub x_ticks: Vec<(f64, String)>,
    pub series: Vec<Series>,
    pub log_y: bool,
    /// A trace: each series is a step function of a numeric x (time), drawn as steps without
    /// markers or bars, on an axis with plain numeric ticks (`x_ticks` unused).
    pub steps: bool,
    /// With `steps`: the x axis's range (a trace figure's `window_s`); default the data's.
    pub x_range: Option<(f64, f64)>,
}

const FONT_CANDIDATES: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
];

/// Register a sans-serif font once; false if none could be found.
pub fn font_available() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        let mut paths: Vec<String> = std::env::var("MSLL_FONT").into_iter().collect();
        paths.extend(FONT_CANDIDATES.iter().map(|s| s.to_string()));
        for p in paths {
            if let Ok(bytes) = std::fs::read(&p) {
                let leaked: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font("sans-serif", FontStyle::Normal, leaked).is_ok() {
                    return true;
                }
            }
        }
        false
    })
}

const COLORS: [RGBColor; 8] = [
    RGBColor(0, 0, 0),
    RGBColor(214, 39, 40),
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
    RGBColor(23, 190, 207),
];

fn bounds(p: &Plot) -> (f64, f64, f64, f64) {
    if p.steps {
        let pts = || p.series.iter().flat_map(|s| s.points.iter());
        let (x0, x1) = pts().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), q| {
            (a.min(q.0), b.max(q.0))
        });
        let y1 = pts().fold(f64::NEG_INFINITY, |a, q| a.max(q.1));
        let (x0, x1) = p.x_range.unwrap_or((x0, x1));
        let y1 = if y1.is_finite() {
            y1.max(1.0) * 1.08
        } else {
            1.0
        };
        return if x0.is_finite() && x1 > x0 {
            (x0, x1, 0.0, y1)
        } else {
            // No data, or one instant: a unit range around it.
            let x = if x0.is_finite() { x0 } else { 0.0 };
            (x, x + 1.0, 0.0, y1)
        };
    }
    let xs = p.x_ticks.iter().map(|t| t.0);
    let (xmin, xmax) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let mut ymin = f64::INFINITY;
    let mut ymax = f64::NEG_INFINITY;
    for s in &p.series {
        for &(_, m, sd) in &s.points {
            if m.is_finite() {
                ymin = ymin.min(m - sd.max(0.0));
                ymax = ymax.max(m + sd.max(0.0));
            }
        }
    }
    if !ymin.is_finite() {
        ymin = 0.0;
        ymax = 1.0;
    }
    if p.log_y {
        let lo = p
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|q| q.1))
            .filter(|v| *v > 0.0)
            .fold(f64::INFINITY, f64::min);
        ymin = if lo.is_finite() { lo / 2.0 } else { 1e-3 };
        ymax = ymax.max(ymin * 10.0) * 2.0;
    } else {
        ymin = ymin.min(0.0);
        let pad = (ymax - ymin).abs() * 0.08;
        ymax += if pad > 0.0 { pad } else { 1.0 };
    }
    (xmin - 0.3, xmax + 0.3, ymin, ymax)
}

/// An f64 axis whose ticks are exactly `keys`. plotters' own `with_key_points` wrapper cannot
/// take a label formatter over f64 (no `ValueFormatter` for it), hence this one.
struct XTicks {
    inner: plotters::coord::types::RangedCoordf64,
    keys: Vec<f64>,
}

impl XTicks {
    fn new(range: std::ops::Range<f64>, keys: Vec<f64>) -> Self {
        XTicks {
            inner: range.into(),
            keys,
        }
    }
}

impl plotters::coord::ranged1d::Ranged for XTicks {
    type ValueType = f64;
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<H: plotters::coord::ranged1d::KeyPointHint>(&self, hint: H) -> Vec<f64> {
        // Bold points (ticks and labels) only: no light mesh lines between them.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.keys.clone()
        }
    }
}

/// Whether a mean can be drawn: finite, and above 0 on a log scale.
fn drawable(v: f64, log_y: bool) -> bool {
    v.is_finite() && (!log_y || v > 0.0)
}

/// A series' (x, mean) points in the pieces of curve to draw. A point that measured nothing
/// (NaN) breaks the curve: a line drawn across it would show a value there (review, session
/// 42). So does a mean of 0 or below on a log scale, which was drawn at the axis' bottom edge
/// as if it were a small value (review, session 47).
fn pieces(points: &[(f64, f64, f64)], log_y: bool) -> Vec<Vec<(f64, f64)>> {
    let mut pieces: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
    for q in points {
        if drawable(q.1, log_y) {
            pieces.last_mut().expect("one piece").push((q.0, q.1));
        } else if !pieces.last().expect("one piece").is_empty() {
            pieces.push(Vec::new());
        }
    }
    pieces
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, plotters::coord::Shift>, p: &Plot) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| anyhow!("{e:?}"))?;
    let (x0, x1, y0, y1) = bounds(p);
    let ticks = p.x_ticks.clone();
    let label = move |x: &f64| {
        ticks
            .iter()
            .find(|t| (t.0 - x).abs() < 1e-9)
            .map(|t| t.1.clone())
            .unwrap_or_default()
    };
    if p.steps {
        let mut chart = ChartBuilder::on(&root)
            .caption(p.title.as_str(), ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(|e| anyhow!("{e:?}"))?;
        chart
            .configure_mesh()
            .x_desc(p.x_label.as_str())
            .y_desc(p.y_label.as_str())
            .disable_x_mesh()
            .draw()
            .map_err(|e| anyhow!("{e:?}"))?;
        for (i, s) in p.series.iter().enumerate() {
            let c = COLORS[i % COLORS.len()];
            // A step function: each value holds until the next step.
            let mut pts: Vec<(f64, f64)> = Vec::with_capacity(2 * s.points.len());
            for q in &s.points {
                if let Some(&(_, prev)) = pts.last() {
                    pts.push((q.0, prev));
                }
                pts.push((q.0, q.1));
            }
            chart
                .draw_series(LineSeries::new(pts, c.stroke_width(2)))
                .map_err(|e| anyhow!("{e:?}"))?
                .label(s.name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE.mix(0.85))
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(|e| anyhow!("{e:?}"))?;
        root.present().map_err(|e| anyhow!("{e:?}"))?;
        return Ok(());
    }
    macro_rules! body {
        ($chart:expr, $map:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_desc(p.x_label.as_str())
                .y_desc(p.y_label.as_str())
                .x_label_formatter(&label)
                .disable_x_mesh()
                .draw()
                .map_err(|e| anyhow!("{e:?}"))?;
            for (i, s) in p.series.iter().enumerate() {
                let c = COLORS[i % COLORS.len()];
                let pieces: Vec<Vec<(f64, f64)>> = pieces(&s.points, p.log_y)
                    .into_iter()
                    .map(|piece| piece.into_iter().map(|(x, y)| (x, $map(y))).collect())
                    .collect();
                let pts: Vec<(f64, f64)> = pieces.concat();
                for (k, piece) in pieces.into_iter().enumerate() {
                    let line = chart
                        .draw_series(LineSeries::new(piece, c.stroke_width(2)))
                        .map_err(|e| anyhow!("{e:?}"))?;
                    if k == 0 {
                        line.label(s.name.as_str()).legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
                        });
                    }
                }
                chart
                    .draw_series(pts.iter().map(|&(x, y)| Circle::new((x, y), 3, c.filled())))
                    .map_err(|e| anyhow!("{e:?}"))?;
                for q in s
                    .points
                    .iter()
                    .filter(|q| drawable(q.1, p.log_y) && q.2 > 0.0)
                {
                    let (lo, hi) = (
                        $map((q.1 - q.2).max(if p.log_y { q.1 / 10.0 } else { f64::MIN })),
                        $map(q.1 + q.2),
                    );
                    chart
                        .draw_series(std::iter::once(PathElement::new(
                            vec![(q.0, lo), (q.0, hi)],
                            c.stroke_width(1),
                        )))
                        .map_err(|e| anyhow!("{e:?}"))?;
                    for y in [lo, hi] {
                        chart
                            .draw_series(std::iter::once(PathElement::new(
                                vec![(q.0 - 0.04, y), (q.0 + 0.04, y)],
                                c.stroke_width(1),
                            )))
                            .map_err(|e| anyhow!("{e:?}"))?;
                    }
                }
            }
            chart
                .configure_series_labels()
                .border_style(BLACK)
                .background_style(WHITE.mix(0.85))
                .position(SeriesLabelPosition::UpperLeft)
                .draw()
                .map_err(|e| anyhow!("{e:?}"))?;
        }};
    }
    let mut builder = ChartBuilder::on(&root);
    builder
        .caption(p.title.as_str(), ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70);
    // Ticks exactly at the points' x (levels, or numbers of flows 1, 5, 10, 20, ...): left to
    // plotters they fell at 2, 4, ..., 40 and only the x that happened to be among them got a
    // label (review, session 42: N = 1 and 5 had none in every seed 003 video figure).
    let keys: Vec<f64> = p.x_ticks.iter().map(|t| t.0).collect();
    if p.log_y {
        let chart = builder
            .build_cartesian_2d(XTicks::new(x0..x1, keys), (y0..y1).log_scale())
            .map_err(|e| anyhow!("{e:?}"))?;
        body!(chart, |v: f64| v.max(y0));
    } else {
        let chart = builder
            .build_cartesian_2d(XTicks::new(x0..x1, keys), y0..y1)
            .map_err(|e| anyhow!("{e:?}"))?;
        body!(chart, |v: f64| v);
    }
    root.present().map_err(|e| anyhow!("{e:?}"))?;
    Ok(())
}

/// Write `stem.svg` and (with a font) `stem.png`. Returns whether a PNG was written.
pub fn render(p: &Plot, stem: &Path) -> Result<bool> {
    // Figure ids contain dots ("seed004-fig5.4"): append, never replace, the extension.
    let with_ext = |e: &str| std::path::PathBuf::from(format!("{}.{e}", stem.display()));
    if !font_available() {
        // Without a font the SVG still carries text elements, but plotters cannot lay out
        // labels: write a minimal SVG and skip the PNG.
        let svg = with_ext("svg");
        std::fs::write(&svg, format!("<svg xmlns=\"http://www.w3.org/2000/svg\"><text x=\"10\" y=\"20\">{}: no font available for plotting</text></svg>", crate::report::html_escape(&p.title)))?;
        return Ok(false);
    }
    let svg = with_ext("svg");
    draw(SVGBackend::new(&svg, (800, 520)).into_drawing_area(), p)?;
    let png = with_ext("png");
    draw(BitMapBackend::new(&png, (800, 520)).into_drawing_area(), p)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves_break_at_nan_and_at_zero_on_a_log_scale() {
        let pts = [
            (1.0, 0.5, 0.0),
            (2.0, 0.0, 0.0),
            (3.0, 0.1, 0.0),
            (4.0, f64::NAN, 0.0),
            (5.0, -1.0, 0.0),
            (6.0, 0.2, 0.0),
        ];
        assert_eq!(
            pieces(&pts, true),
            vec![vec![(1.0, 0.5)], vec![(3.0, 0.1)], vec![(6.0, 0.2)]]
        );
        assert_eq!(
            pieces(&pts, false),
            vec![
                vec![(1.0, 0.5), (2.0, 0.0), (3.0, 0.1)],
                vec![(5.0, -1.0), (6.0, 0.2)]
            ]
        );
    }

    /// Every x tick gets its label at its own x, whatever the spacing (review, session 42:
    /// seed 003's N = 1, 5, 10, 20, 30, 40 had ticks at 2, 4, ..., 40, and N = 1 and 5 no label);
    /// a point that measured nothing breaks its curve in two.
    #[test]
    fn uneven_ticks_are_all_labelled_and_nan_breaks_the_curve() {
        if !font_available() {
            eprintln!("no font: plotters cannot lay out labels, nothing to check");
            return;
        }
        let xs = [1.0, 5.0, 10.0, 20.0, 30.0, 40.0];
        let p = Plot {
            title: "t".into(),
            x_label: "flows".into(),
            y_label: "goodput".into(),
            x_ticks: xs.iter().map(|&x| (x, format!("N{x}"))).collect(),
            series: vec![Series {
                name: "s".into(),
                points: xs
                    .iter()
                    .map(|&x| (x, if x == 20.0 { f64::NAN } else { 1000.0 + x }, 0.0))
                    .collect(),
            }],
            log_y: false,
            steps: false,
            x_range: None,
        };
        let dir = std::env::temp_dir().join(format!("msll-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let stem = dir.join("f");
        render(&p, &stem).unwrap();
        let svg = std::fs::read_to_string(dir.join("f.svg")).unwrap();
        for x in xs {
            assert!(svg.contains(&format!(">\nN{x}\n</text>")), "no label N{x}");
        }
        // Two pieces of line, 1-5-10 and 30-40, and the legend's sample: the curves' width.
        assert_eq!(
            svg.matches("stroke-width=\"2\" points=").count(),
            3,
            "{svg}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
