//! Text on a figure without a font library: how wide a label will be, where the direct
//! labels of the lines go so that none covers another, and how a long caption wraps.
//!
//! The SVG names a generic `sans-serif` font and the reader's browser picks it, so widths
//! can only be estimated. The estimate errs on the wide side (it is calibrated on DejaVu
//! Sans, wider than Arial or Helvetica), so a label that fits here fits on the page.

/// The estimated width in pixels of `text` set in a sans-serif font of `size` pixels.
pub fn text_width(text: &str, size: f64) -> f64 {
    let ems: f64 = text
        .chars()
        .map(|character| match character {
            'i' | 'l' | 'j' | '\'' | '|' | '.' | ',' | ':' | ';' | '!' => 0.30,
            ' ' | 'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '/' | '-' => 0.38,
            'm' | 'w' | 'M' | 'W' | '@' | '%' => 0.90,
            '0'..='9' => 0.64,
            'A'..='Z' | '×' | '&' | '#' => 0.70,
            _ => 0.60,
        })
        .sum();
    ems * size
}

/// A direct label to place: it wants to sit with its left edge at `x` and its middle at
/// `y` (the end of its line), and is `width` by `height` pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabelRequest {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// The vertical middles of the labels, moved as little as possible so that no two
/// labels that share some horizontal extent overlap, and every label stays within
/// `top..=bottom`. Labels that overlap push each other apart symmetrically until none
/// does; labels at the same height keep their order in `requests`.
pub fn place_labels(requests: &[LabelRequest], top: f64, bottom: f64) -> Vec<f64> {
    let clamp = |y: f64, height: f64| {
        let (low, high) = (top + height / 2.0, bottom - height / 2.0);
        if low > high {
            (top + bottom) / 2.0
        } else {
            y.clamp(low, high)
        }
    };
    let mut middles: Vec<f64> = requests.iter().map(|r| clamp(r.y, r.height)).collect();
    // Process in order of the wanted height, so that ties break the same way every time.
    let mut order: Vec<usize> = (0..requests.len()).collect();
    order.sort_by(|a, b| requests[*a].y.total_cmp(&requests[*b].y).then(a.cmp(b)));
    for _ in 0..500 {
        let mut moved = false;
        for (position, &upper) in order.iter().enumerate() {
            for &lower in &order[position + 1..] {
                let (first, second) = (&requests[upper], &requests[lower]);
                let share_columns =
                    first.x < second.x + second.width && second.x < first.x + first.width;
                if !share_columns {
                    continue;
                }
                let needed = (first.height + second.height) / 2.0;
                let distance = middles[lower] - middles[upper];
                if distance.abs() < needed - 1e-6 {
                    // `upper` wanted to be higher (or tied and first): it goes up.
                    let push = (needed - distance) / 2.0 + 0.01;
                    middles[upper] = clamp(middles[upper] - push, first.height);
                    middles[lower] = clamp(middles[lower] + push, second.height);
                    moved = true;
                }
            }
        }
        if !moved {
            break;
        }
    }
    middles
}

/// A label's box on the page: left, top, right, bottom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabelBox {
    pub left: f64,
    pub top: f64,
    pub right: f64,
    pub bottom: f64,
}

/// A straight piece of a drawn line, from one point to the next, in pixels.
pub type Segment = ((f64, f64), (f64, f64));

/// How many of `segments` pass through `area`: the cost of putting a label there.
pub fn crossings(area: &LabelBox, segments: &[Segment]) -> usize {
    segments
        .iter()
        .filter(|segment| segment_meets_box(segment, area))
        .count()
}

/// Whether the segment has a point inside the box (Liang–Barsky clipping).
fn segment_meets_box(((x0, y0), (x1, y1)): &Segment, area: &LabelBox) -> bool {
    let (dx, dy) = (x1 - x0, y1 - y0);
    let (mut enter, mut leave) = (0.0f64, 1.0f64);
    for (step, room) in [
        (-dx, x0 - area.left),
        (dx, area.right - x0),
        (-dy, y0 - area.top),
        (dy, area.bottom - y0),
    ] {
        if step == 0.0 {
            if room < 0.0 {
                return false;
            }
        } else {
            let t = room / step;
            if step < 0.0 {
                enter = enter.max(t);
            } else {
                leave = leave.min(t);
            }
        }
    }
    enter <= leave
}

/// `text` broken into lines no wider than `width` pixels at `size`, between words.
pub fn wrap(text: &str, width: f64, size: f64) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for word in text.split_whitespace() {
        let candidate = if current.is_empty() {
            word.to_string()
        } else {
            format!("{current} {word}")
        };
        if !current.is_empty() && text_width(&candidate, size) > width {
            lines.push(std::mem::replace(&mut current, word.to_string()));
        } else {
            current = candidate;
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(y: f64) -> LabelRequest {
        LabelRequest {
            x: 600.0,
            y,
            width: 100.0,
            height: 15.0,
        }
    }

    #[test]
    fn wider_text_is_wider() {
        assert!(text_width("GraphLoopCachedFused", 12.0) > text_width("Graph", 12.0));
        assert!(text_width("mmm", 12.0) > text_width("iii", 12.0));
        assert!((text_width("ab", 24.0) - 2.0 * text_width("ab", 12.0)).abs() < 1e-9);
        // A long mode name at 12 px: about 130 to 150 pixels.
        let width = text_width("GraphLoopCachedFused", 12.0);
        assert!((120.0..160.0).contains(&width), "{width}");
    }

    #[test]
    fn labels_apart_stay_where_they_are() {
        let placed = place_labels(&[request(100.0), request(200.0)], 0.0, 400.0);
        assert_eq!(placed, vec![100.0, 200.0]);
    }

    #[test]
    fn overlapping_labels_are_pushed_apart_in_order() {
        let requests = [
            request(100.0),
            request(104.0),
            request(102.0),
            request(300.0),
        ];
        let placed = place_labels(&requests, 0.0, 400.0);
        let mut sorted = [(placed[0], 0), (placed[2], 2), (placed[1], 1)];
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        // The order of the wanted heights is kept: 100 above 102 above 104.
        assert_eq!(sorted.iter().map(|s| s.1).collect::<Vec<_>>(), [0, 2, 1]);
        for pair in sorted.windows(2) {
            assert!(pair[1].0 - pair[0].0 >= 15.0 - 1e-6, "{placed:?}");
        }
        // They stay near where they wanted to be, and the far one does not move.
        assert!((placed[2] - 102.0).abs() < 16.0, "{placed:?}");
        assert_eq!(placed[3], 300.0);
    }

    #[test]
    fn labels_at_the_edge_stay_inside() {
        let placed = place_labels(
            &[request(398.0), request(399.0), request(400.0)],
            0.0,
            400.0,
        );
        for middle in &placed {
            assert!(
                *middle <= 400.0 - 7.5 + 1e-6 && *middle >= 7.5,
                "{placed:?}"
            );
        }
        let mut sorted = placed.clone();
        sorted.sort_by(f64::total_cmp);
        assert!(sorted[1] - sorted[0] >= 15.0 - 1e-6 && sorted[2] - sorted[1] >= 15.0 - 1e-6);
    }

    #[test]
    fn labels_in_different_columns_may_share_a_height() {
        let left = LabelRequest {
            x: 100.0,
            ..request(100.0)
        };
        let placed = place_labels(&[left, request(100.0)], 0.0, 400.0);
        assert_eq!(placed, vec![100.0, 100.0]);
    }

    #[test]
    fn crossings_count_the_segments_through_a_box() {
        let area = LabelBox {
            left: 10.0,
            top: 10.0,
            right: 20.0,
            bottom: 20.0,
        };
        let through = ((0.0, 15.0), (30.0, 15.0));
        let inside = ((12.0, 12.0), (13.0, 13.0));
        let above = ((0.0, 5.0), (30.0, 5.0));
        let short = ((0.0, 15.0), (5.0, 15.0));
        let diagonal_past = ((0.0, 30.0), (30.0, 21.0));
        assert_eq!(
            crossings(&area, &[through, inside, above, short, diagonal_past]),
            2
        );
    }

    #[test]
    fn captions_wrap_between_words() {
        let text = "Measured on CPU Intel(R) Xeon(R) Processor (x86_64, 16 cores, AVX2 FMA \
                    AVX-512); GPU NVIDIA H100 80GB HBM3 (Vulkan, DiscreteGpu)";
        let lines = wrap(text, 500.0, 12.0);
        assert!(lines.len() >= 2, "{lines:?}");
        assert_eq!(lines.join(" "), text);
        assert!(lines.iter().all(|line| text_width(line, 12.0) <= 500.0));
        assert_eq!(wrap("", 500.0, 12.0), Vec::<String>::new());
    }
}
