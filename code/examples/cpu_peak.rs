//! Measures this CPU's limits and writes them in the figure format: the fp32 FMA peak on
//! one core and on all cores, and the read bandwidth of one core and of all cores from
//! buffers sized for L1, L2, L3 and main memory.
//!
//! ```sh
//! cargo run --release -p galaxy --example cpu_peak -- figures/data/cpu-peak.txt
//! ```

use std::fmt::Write as _;

use galaxy::bench::cpu_peak::{measure_peak, read_bandwidth};
use galaxy::bench::hardware_description;

/// Buffer sizes: 16 KiB (L1), 512 KiB (L2), 8 MiB (L3), 512 MiB (memory).
const BUFFERS: [(&str, usize); 4] = [
    ("L1 (16 KiB)", 16 << 10),
    ("L2 (512 KiB)", 512 << 10),
    ("L3 (8 MiB)", 8 << 20),
    ("memory (512 MiB)", 512 << 20),
];

fn main() {
    let path = std::env::args().nth(1);
    let threads = rayon::current_num_threads();
    let mut rows = Vec::new();
    for count in [1, threads] {
        let peak = measure_peak(count, 0.2, 5);
        println!(
            "fp32 peak, {} thread(s), {}: {:.1} GFLOP/s",
            count,
            peak.width.name(),
            peak.gigaflops_per_second
        );
        rows.push(format!(
            "fp32 FMA peak ({}),{count},{:.2}",
            peak.width.name(),
            peak.gigaflops_per_second
        ));
        for (name, bytes) in BUFFERS {
            let seconds = if bytes > 64 << 20 { 1.0 } else { 0.1 };
            let bandwidth = read_bandwidth(bytes, count, seconds, 3);
            println!("read bandwidth, {count} thread(s), {name}: {bandwidth:.1} GB/s");
            rows.push(format!("read {name} GB/s,{count},{bandwidth:.2}"));
        }
    }
    let mut text = String::new();
    let _ = writeln!(
        text,
        "# title: The CPU's limits: fp32 FMA peak and read bandwidths"
    );
    let _ = writeln!(text, "# x: threads");
    let _ = writeln!(text, "# y: GFLOP/s for the peak, GB/s for the bandwidths");
    let _ = writeln!(text, "# hardware: {}", hardware_description(None));
    let _ = writeln!(
        text,
        "# command: cargo run --release -p galaxy --example cpu_peak -- figures/data/cpu-peak.txt ({})",
        today()
    );
    let _ = writeln!(text, "series,x,y");
    for row in rows {
        let _ = writeln!(text, "{row}");
    }
    if let Some(path) = path {
        std::fs::write(&path, text).unwrap_or_else(|error| {
            eprintln!("cpu_peak: {path}: {error}");
            std::process::exit(1);
        });
        println!("wrote {path}");
    }
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs() / 86_400) as i64;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
