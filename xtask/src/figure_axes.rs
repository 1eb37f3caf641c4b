//! The axes of a figure: where a value lands on the page, where the ticks go, and how
//! their labels read.
//!
//! Ticks follow the data. On a logarithmic x axis they sit on measured values (the sizes
//! a sweep ran), as many as fit side by side; a byte axis reads `4 KiB … 256 MiB`. On a
//! logarithmic y axis they sit on 1-2-5 steps (or whole decades when those would crowd),
//! and the axis ends on such a step just past the data, so a value of 0.14 gets a tick
//! at 0.1 below it rather than an unlabelled stretch down to the previous decade.

use crate::figure_labels::text_width;

/// How the tick labels of an axis are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TickFormat {
    /// Plain numbers: `0.5`, `64`, `4096`, `10 000`.
    Number,
    /// Sizes in bytes: `512 B`, `4 KiB`, `256 MiB`, `1 GiB`.
    Bytes,
    /// Counts, written with binary prefixes from 16 Ki up (`16 Ki`, `4 Mi`), as the text
    /// writes "64 Ki values".
    Count,
}

/// One axis on the page: the values it shows and the pixels they map to.
#[derive(Debug, Clone, PartialEq)]
pub struct Scale {
    pub low: f64,
    pub high: f64,
    pub logarithmic: bool,
    /// The pixel of `low` and of `high` (for a y axis `start` is below `end`).
    pub start: f64,
    pub end: f64,
}

impl Scale {
    /// The pixel coordinate of `value`.
    pub fn pixel(&self, value: f64) -> f64 {
        let fraction = if self.logarithmic {
            (value.ln() - self.low.ln()) / (self.high.ln() - self.low.ln())
        } else {
            (value - self.low) / (self.high - self.low)
        };
        self.start + fraction * (self.end - self.start)
    }
}

/// The tick format an axis label asks for, and the label without the unit it replaces:
/// `array size (bytes)` becomes `array size` with [`TickFormat::Bytes`].
pub fn tick_format(label: &str, values: &[f64]) -> (TickFormat, String) {
    if let Some(without) = label
        .strip_suffix(" (bytes)")
        .or_else(|| label.strip_suffix("(bytes)"))
    {
        return (TickFormat::Bytes, without.trim_end().to_string());
    }
    let whole = !values.is_empty() && values.iter().all(|v| *v >= 1.0 && v.fract() == 0.0);
    let format = if whole && values.iter().any(|v| *v >= 16384.0) {
        TickFormat::Count
    } else {
        TickFormat::Number
    };
    (format, label.to_string())
}

/// The text of a tick at `value`.
pub fn tick_label(value: f64, format: TickFormat) -> String {
    match format {
        TickFormat::Number => number(value),
        TickFormat::Bytes => binary_prefixed(value, &["B", "KiB", "MiB", "GiB", "TiB"], 1.0),
        TickFormat::Count if value >= 16384.0 => {
            binary_prefixed(value, &["", "Ki", "Mi", "Gi", "Ti"], 16384.0)
        }
        TickFormat::Count => number(value),
    }
}

/// `value` in the largest binary unit it reaches (from `threshold` up), with a space:
/// `4 KiB`, `1.5 MiB`.
fn binary_prefixed(value: f64, units: &[&str], threshold: f64) -> String {
    let mut scaled = value;
    let mut unit = 0;
    while unit + 1 < units.len() && scaled >= 1024.0 && value >= threshold {
        scaled /= 1024.0;
        unit += 1;
    }
    let text = number(scaled);
    if units[unit].is_empty() {
        text
    } else {
        format!("{text} {}", units[unit])
    }
}

/// A number without trailing zeros, three significant digits at most after the point:
/// `0.05`, `0.125`, `1.5`, `64`, `4096`, `10 000`.
pub fn number(value: f64) -> String {
    if value == 0.0 {
        return "0".to_string();
    }
    let magnitude = value.abs();
    let decimals = (2 - magnitude.log10().floor() as i32).clamp(0, 9) as usize;
    let text = format!("{value:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    if magnitude >= 10000.0 && !text.contains('.') {
        group_thousands(&text)
    } else {
        text
    }
}

/// `12345678` as `12 345 678`.
fn group_thousands(digits: &str) -> String {
    let (sign, digits) = match digits.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", digits),
    };
    let mut grouped = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index) % 3 == 0 {
            grouped.push(' ');
        }
        grouped.push(digit);
    }
    format!("{sign}{grouped}")
}

/// The range of an x axis: the data with a margin, so the first and last points are not
/// on the frame. Logarithmic axes need positive values (checked before).
pub fn x_range(low: f64, high: f64, logarithmic: bool) -> (f64, f64) {
    if logarithmic {
        let margin = ((high / low).powf(0.03)).max(1.08);
        (low / margin, high * margin)
    } else {
        let span = if high > low {
            high - low
        } else {
            low.abs().max(1.0)
        };
        (low - 0.03 * span, high + 0.03 * span)
    }
}

/// The ticks of an x axis: measured values that fit side by side. On a logarithmic axis
/// the candidates are the distinct x values of the data (only the powers of two among them
/// when they form a regular series beside irregular sizes); every `k`-th is kept, for the
/// smallest `k` at which the labels do not touch. A linear axis gets evenly spaced ticks.
pub fn x_ticks(values: &[f64], scale: &Scale, format: TickFormat, font_size: f64) -> Vec<f64> {
    if !scale.logarithmic {
        return linear_ticks(scale, 60.0);
    }
    let mut distinct: Vec<f64> = values.to_vec();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    let powers_of_two: Vec<f64> = distinct
        .iter()
        .copied()
        .filter(|v| *v >= 1.0 && v.fract() == 0.0 && (*v as u64).is_power_of_two())
        .collect();
    let candidates = if powers_of_two.len() >= 4 && powers_of_two.len() < distinct.len() {
        powers_of_two
    } else {
        distinct
    };
    // Two neighbouring labels need half of each one's width, and a gap, between ticks.
    let half_widths: Vec<f64> = candidates
        .iter()
        .map(|v| text_width(&tick_label(*v, format), font_size) / 2.0)
        .collect();
    for step in 1..=candidates.len().max(1) {
        let kept: Vec<usize> = (0..candidates.len()).step_by(step).collect();
        let fits = kept.windows(2).all(|pair| {
            let distance =
                (scale.pixel(candidates[pair[1]]) - scale.pixel(candidates[pair[0]])).abs();
            distance >= half_widths[pair[0]] + half_widths[pair[1]] + 6.0
        });
        if fits {
            return kept.into_iter().map(|index| candidates[index]).collect();
        }
    }
    candidates.into_iter().take(1).collect()
}

/// The range and ticks of a y axis holding `low..=high`, `pixels` tall. A logarithmic axis
/// ends on 1-2-5 steps around the data; its ticks are the 1-2-5 steps when they are at
/// least `min_gap` pixels apart, else every decade (or every other decade). A linear axis
/// starts at zero for positive data and ends on a round step.
pub fn y_axis(
    low: f64,
    high: f64,
    logarithmic: bool,
    pixels: f64,
    min_gap: f64,
) -> (f64, f64, Vec<f64>) {
    if !logarithmic {
        let base = if low >= 0.0 { 0.0 } else { low };
        let top = if high > base { high } else { base + 1.0 };
        let step = nice_step((top - base) * 1.05, pixels / min_gap.max(1.0));
        let axis_low = (base / step).floor() * step;
        let axis_high = ((top * 1.04) / step).ceil() * step;
        let scale = Scale {
            low: axis_low,
            high: axis_high,
            logarithmic: false,
            start: pixels,
            end: 0.0,
        };
        return (axis_low, axis_high, linear_ticks(&scale, min_gap));
    }
    let (padded_low, padded_high) = (low / 1.1, high * 1.1);
    let axis_low = step_at_or_below(padded_low, &[1.0, 2.0, 5.0]);
    let axis_high = step_at_or_above(padded_high, &[1.0, 2.0, 5.0]);
    let decades = (axis_high / axis_low).log10();
    let per_decade = pixels / decades;
    // The closest two 1…9 ticks are 9 and 10; the closest 1-2-5 ticks a factor of two
    // apart.
    let families: [(&[f64], f64); 4] = [
        (
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
            (10.0f64 / 9.0).log10(),
        ),
        (&[1.0, 2.0, 5.0], 2f64.log10()),
        (&[1.0], 1.0),
        (&[1.0], 2.0),
    ];
    for (index, (family, closest)) in families.iter().enumerate() {
        if per_decade * closest < min_gap && index + 1 < families.len() {
            continue;
        }
        let every_other_decade = *closest > 1.0;
        let ticks = steps_between(axis_low, axis_high, family, every_other_decade);
        if ticks.len() >= 2 || index + 1 == families.len() {
            return (axis_low, axis_high, ticks);
        }
    }
    unreachable!("the last family always returns")
}

/// Evenly spaced ticks on a linear scale, about `min_gap` pixels apart or more.
fn linear_ticks(scale: &Scale, min_gap: f64) -> Vec<f64> {
    let count = (scale.end - scale.start).abs() / min_gap;
    let step = nice_step(scale.high - scale.low, count.max(1.0));
    let first = (scale.low / step).ceil() as i64;
    let last = (scale.high / step).floor() as i64;
    (first..=last)
        // Multiplying the index (rather than adding steps) keeps 0.3 from becoming
        // 0.30000000000000004 in the labels.
        .map(|index| round_to_step(index as f64 * step, step))
        .collect()
}

fn round_to_step(value: f64, step: f64) -> f64 {
    let decimals = (-step.log10().floor()).max(0.0) as i32 + 1;
    let factor = 10f64.powi(decimals);
    (value * factor).round() / factor
}

/// The 1-2-5 step that divides `span` into at most `count` parts.
fn nice_step(span: f64, count: f64) -> f64 {
    let rough = span / count.max(1.0);
    let decade = 10f64.powf(rough.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * decade)
        .find(|step| *step >= rough)
        .unwrap_or(10.0 * decade)
}

/// The largest `m × 10^k` (m from `family`) at or below `value`.
fn step_at_or_below(value: f64, family: &[f64]) -> f64 {
    let decade = 10f64.powf(value.log10().floor());
    family
        .iter()
        .rev()
        .map(|m| m * decade)
        .find(|step| *step <= value * (1.0 + 1e-9))
        .unwrap_or(decade)
}

/// The smallest `m × 10^k` (m from `family`, or the next decade) at or above `value`.
fn step_at_or_above(value: f64, family: &[f64]) -> f64 {
    let decade = 10f64.powf(value.log10().floor());
    family
        .iter()
        .map(|m| m * decade)
        .chain([10.0 * decade])
        .find(|step| *step >= value * (1.0 - 1e-9))
        .unwrap_or(10.0 * decade)
}

/// Every `m × 10^k` (m from `family`) within `low..=high`, exact decimal values.
fn steps_between(low: f64, high: f64, family: &[f64], every_other_decade: bool) -> Vec<f64> {
    let first = low.log10().floor() as i32 - 1;
    let last = high.log10().ceil() as i32 + 1;
    let mut ticks = Vec::new();
    for exponent in first..=last {
        if every_other_decade && exponent.rem_euclid(2) != 0 {
            continue;
        }
        for m in family {
            // `m * 10^k` written and parsed as decimal text: 0.2, not 0.20000000000000004.
            let value: f64 = format!("{m}e{exponent}").parse().unwrap_or(f64::NAN);
            if value >= low * (1.0 - 1e-9) && value <= high * (1.0 + 1e-9) {
                ticks.push(value);
            }
        }
    }
    ticks
}

/// The y axis unit the data reads best in: a time axis in ms whose values all stay below
/// 1 ms reads in µs, a GFLOP/s axis that reaches 10 000 in TFLOP/s. Returns the new label
/// and the factor to multiply every value by, or `None` to keep the axis as it is.
/// `force_microseconds` asks for µs on a ms axis whatever its values (the text of that
/// figure speaks in µs).
pub fn y_unit_change(label: &str, highest: f64, force_microseconds: bool) -> Option<(String, f64)> {
    if label.contains("(ms") && (highest < 1.0 || force_microseconds) {
        return Some((label.replacen("(ms", "(µs", 1), 1000.0));
    }
    if label.contains("GFLOP/s") && highest >= 10000.0 {
        return Some((label.replacen("GFLOP/s", "TFLOP/s", 1), 0.001));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_scale(low: f64, high: f64, pixels: f64) -> Scale {
        Scale {
            low,
            high,
            logarithmic: true,
            start: 0.0,
            end: pixels,
        }
    }

    #[test]
    fn numbers_are_short_and_exact() {
        assert_eq!(number(0.05), "0.05");
        assert_eq!(number(0.125), "0.125");
        assert_eq!(number(1.5), "1.5");
        assert_eq!(number(64.0), "64");
        assert_eq!(number(4096.0), "4096");
        assert_eq!(number(10000.0), "10 000");
        assert_eq!(number(1234567.0), "1 234 567");
        assert_eq!(number(0.0), "0");
        assert_eq!(number(0.3), "0.3");
    }

    #[test]
    fn bytes_and_counts_read_with_binary_prefixes() {
        assert_eq!(tick_label(4096.0, TickFormat::Bytes), "4 KiB");
        assert_eq!(tick_label(268435456.0, TickFormat::Bytes), "256 MiB");
        assert_eq!(tick_label(1073741824.0, TickFormat::Bytes), "1 GiB");
        assert_eq!(tick_label(512.0, TickFormat::Bytes), "512 B");
        assert_eq!(tick_label(1572864.0, TickFormat::Bytes), "1.5 MiB");
        assert_eq!(tick_label(4096.0, TickFormat::Count), "4096");
        assert_eq!(tick_label(16384.0, TickFormat::Count), "16 Ki");
        assert_eq!(tick_label(4194304.0, TickFormat::Count), "4 Mi");
    }

    #[test]
    fn a_byte_label_loses_its_unit_and_large_counts_get_prefixes() {
        assert_eq!(
            tick_format("array size (bytes)", &[4096.0]),
            (TickFormat::Bytes, "array size".to_string())
        );
        assert_eq!(
            tick_format("values counted", &[16384.0, 4194304.0]).0,
            TickFormat::Count
        );
        assert_eq!(
            tick_format("matrix size n", &[64.0, 4096.0]).0,
            TickFormat::Number
        );
        assert_eq!(tick_format("fraction", &[0.5]).0, TickFormat::Number);
    }

    #[test]
    fn x_ticks_sit_on_the_measured_values() {
        // Filter lengths 3, 9, 17, 33: all four, not only 1, 10, 100.
        let values = [3.0, 9.0, 17.0, 33.0];
        let (low, high) = x_range(3.0, 33.0, true);
        let ticks = x_ticks(
            &values,
            &log_scale(low, high, 560.0),
            TickFormat::Number,
            12.0,
        );
        assert_eq!(ticks, values);
        // 17 byte sizes from 4 KiB to 256 MiB on 560 pixels: every other one, 4 KiB first.
        let sizes: Vec<f64> = (12..=28).map(|k| 2f64.powi(k)).collect();
        let (low, high) = x_range(sizes[0], sizes[16], true);
        let ticks = x_ticks(
            &sizes,
            &log_scale(low, high, 560.0),
            TickFormat::Bytes,
            12.0,
        );
        let labels: Vec<String> = ticks
            .iter()
            .map(|t| tick_label(*t, TickFormat::Bytes))
            .collect();
        assert_eq!(labels[0], "4 KiB");
        assert_eq!(labels[1], "16 KiB");
        assert_eq!(labels.last().unwrap(), "256 MiB");
        // Powers of two beside irregular sizes: the powers of two are the ticks.
        let mixed = [16.0, 21.0, 32.0, 41.0, 64.0, 81.0, 128.0, 161.0, 256.0];
        let (low, high) = x_range(16.0, 256.0, true);
        let ticks = x_ticks(
            &mixed,
            &log_scale(low, high, 560.0),
            TickFormat::Number,
            12.0,
        );
        assert_eq!(ticks, [16.0, 32.0, 64.0, 128.0, 256.0]);
    }

    #[test]
    fn log_y_ticks_reach_below_the_smallest_value() {
        // 0.136 to 28 ns on 300 pixels: ticks from 0.1 with 1-2-5 steps.
        let (low, high, ticks) = y_axis(0.136, 28.0, true, 300.0, 22.0);
        assert_eq!(low, 0.1);
        assert_eq!(high, 50.0);
        assert_eq!(ticks, [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0]);
        // Six decades on 150 pixels: decades only, or every other one.
        let (_, _, ticks) = y_axis(0.008, 7600.0, true, 150.0, 22.0);
        assert!(
            ticks.iter().all(|t| t.log10().fract().abs() < 1e-9),
            "{ticks:?}"
        );
        assert!(ticks.len() >= 3, "{ticks:?}");
        // A narrow range gets the ticks between: 20, 30, 40, 50.
        let (low, high, ticks) = y_axis(28.0, 41.0, true, 300.0, 22.0);
        assert!(low <= 28.0 && high >= 41.0, "{low}..{high}");
        assert_eq!(ticks, [20.0, 30.0, 40.0, 50.0]);
    }

    #[test]
    fn linear_y_axes_start_at_zero() {
        let (low, high, ticks) = y_axis(0.43, 4.4, false, 300.0, 40.0);
        assert_eq!(low, 0.0);
        assert!((4.4..6.0).contains(&high), "{high}");
        assert_eq!(ticks[0], 0.0);
        assert!(ticks.len() >= 4, "{ticks:?}");
    }

    #[test]
    fn microseconds_and_teraflops_where_the_values_call_for_them() {
        assert_eq!(
            y_unit_change("time (ms, kernel only)", 0.041, false),
            Some(("time (µs, kernel only)".to_string(), 1000.0))
        );
        assert_eq!(y_unit_change("time (ms, kernel only)", 1.3, false), None);
        assert!(y_unit_change("time (ms, kernel only)", 1.3, true).is_some());
        assert_eq!(
            y_unit_change("GFLOP/s, log", 63451.0, false),
            Some(("TFLOP/s, log".to_string(), 0.001))
        );
        assert_eq!(y_unit_change("GFLOP/s", 192.0, false), None);
    }

    #[test]
    fn scales_map_ends_to_pixels() {
        let scale = log_scale(1.0, 100.0, 200.0);
        assert!((scale.pixel(10.0) - 100.0).abs() < 1e-9);
    }
}
