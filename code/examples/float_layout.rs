//! The bits of real values in f32, f16 and bf16: sign, exponent and fraction, the value
//! the format really holds after rounding, and what kind of number it is.
//!
//! `cargo run --release --example float_layout`

use galaxy::numbers::float_layout::{BF16, F16, F32, FloatFormat, bit_pattern};

fn show(format: FloatFormat, value: f32) {
    // The three formats are the module's own, so `bit_pattern` always has an answer.
    let Some(pattern) = bit_pattern(format, value) else {
        return;
    };
    println!(
        "  {:<5} {:<34} {:<14} {:?}",
        format.name,
        format.show_bits(pattern),
        format!("{:.8e}", format.decode(pattern)),
        format.classify(pattern),
    );
}

fn main() {
    let values = [
        1.0,
        -2.5,
        0.1,
        std::f32::consts::PI,
        16_777_217.0,
        65_504.0,
        70_000.0,
        1.0e-5,
        1.0e-40,
        f32::INFINITY,
        f32::NAN,
    ];
    println!("format  sign exponent fraction              value held     kind");
    for value in values {
        println!("{value:e}");
        for format in [F32, F16, BF16] {
            show(format, value);
        }
    }
    println!("\nlimits          largest finite   smallest normal  smallest subnormal  epsilon");
    for format in [F32, F16, BF16] {
        println!(
            "  {:<5} bias {:<4} {:<16.6e} {:<16.6e} {:<19.6e} {:.6e}",
            format.name,
            format.bias(),
            format.largest_finite(),
            format.smallest_normal(),
            format.smallest_subnormal(),
            format.epsilon(),
        );
    }
}
