//! A loop that runs at a fixed rate: frame `k` is released at `start + k · period`.
//!
//! The naive loop does its work and then calls `sleep(period)`. Every frame then takes
//! `work + period + oversleep`, so the loop runs slower than asked and the error grows
//! without bound: after a minute at 120 Hz with 2 ms of work it is 14 seconds behind.
//! Scheduling by *deadline* instead, computing each release from the start and the frame
//! number, makes errors not add up: a late frame makes the next wait shorter.
//!
//! Two questions every such loop must answer, and this one answers explicitly:
//!
//! - **How to wait.** `sleep` returns when the operating system gets round to it, often
//!   50–100 µs late on a quiet Linux machine and far later on a busy one. Sleeping until
//!   shortly before the release and spinning for the rest trades a core's time for a
//!   punctual start ([`Waiting`]).
//! - **What to do after a miss.** When a frame finishes after the next release, the loop
//!   either *catches up* (runs the overdue frames back to back, as a physics simulation
//!   must) or *skips* to the next release still in the future (as a display or a sensor
//!   filter that wants the freshest data should) ([`MissPolicy`]).

use std::time::{Duration, Instant};

use crate::realtime::frame_stats::FrameStatsError;

/// A loop rate, kept as the period between releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedRate {
    period: Duration,
}

impl FixedRate {
    /// `hertz` frames per second; zero, negative, infinite or NaN rates are errors.
    pub fn hertz(hertz: f64) -> Result<FixedRate, FrameStatsError> {
        if !(hertz.is_finite() && hertz > 0.0) || hertz > 1e9 {
            return Err(FrameStatsError::InvalidRate { hertz });
        }
        Ok(FixedRate {
            period: Duration::from_secs_f64(1.0 / hertz),
        })
    }

    pub fn period(&self) -> Duration {
        self.period
    }

    /// How many frames `seconds` of running holds (at least one).
    pub fn frames_in(&self, seconds: f64) -> u64 {
        ((seconds / self.period.as_secs_f64()).round() as u64).max(1)
    }
}

/// What the loop does when a frame finishes after the next frame's release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissPolicy {
    /// Skip the frames whose release has passed; go on with the next release still in the
    /// future. The skipped frames are counted as misses.
    Skip,
    /// Run every overdue frame at once, back to back, until the loop is on time again.
    CatchUp,
}

/// How the loop waits for a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// `std::thread::sleep` until the release.
    Sleep,
    /// Sleep until this long before the release, then spin on the clock.
    SleepThenSpin(Duration),
}

/// One frame handed to the loop's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tick {
    pub index: u64,
    /// The frame's release, from the start of the loop.
    pub release: Duration,
    /// When the body was called, from the start of the loop.
    pub start: Duration,
    /// The clock every time of the loop is measured from.
    pub origin: Instant,
}

/// Which frames the loop ran and which it skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopOutcome {
    pub ran: u64,
    pub skipped: Vec<u64>,
}

/// The loop itself: a rate, a number of frames, and the two policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedRateLoop {
    pub rate: FixedRate,
    pub frames: u64,
    pub miss_policy: MissPolicy,
    pub waiting: Waiting,
}

impl FixedRateLoop {
    // ANCHOR: run_loop
    /// Calls `body` once per frame, each at (or just after) its release, until `frames`
    /// frames have been run or skipped. Stops at the first error the body returns.
    pub fn run<Error>(
        &self,
        mut body: impl FnMut(Tick) -> Result<(), Error>,
    ) -> Result<LoopOutcome, Error> {
        let period = self.rate.period();
        let origin = Instant::now();
        let mut outcome = LoopOutcome {
            ran: 0,
            skipped: Vec::new(),
        };
        let mut index = 0;
        while index < self.frames {
            // The release comes from the frame number, never from the previous frame's
            // end: lateness does not accumulate.
            let release = period * index as u32;
            wait_until(origin + release, self.waiting);
            body(Tick {
                index,
                release,
                start: origin.elapsed(),
                origin,
            })?;
            outcome.ran += 1;
            index += 1;
            let finished = origin.elapsed();
            if self.miss_policy == MissPolicy::Skip && finished > period * index as u32 {
                // The first release strictly after now; the ones in between are lost.
                let next = (finished.as_nanos() / period.as_nanos()) as u64 + 1;
                let next = next.min(self.frames);
                outcome.skipped.extend(index..next);
                index = next;
            }
        }
        Ok(outcome)
    }
    // ANCHOR_END: run_loop
}

// ANCHOR: wait_until
/// Blocks until `target`, as `waiting` says. Returns at once when `target` has passed.
pub fn wait_until(target: Instant, waiting: Waiting) {
    let spin_margin = match waiting {
        Waiting::Sleep => Duration::ZERO,
        Waiting::SleepThenSpin(margin) => margin,
    };
    let now = Instant::now();
    if target > now + spin_margin {
        std::thread::sleep(target - now - spin_margin);
    }
    // The last stretch: ask the clock until the moment has come. `spin_loop` tells the
    // CPU that this is a busy wait (on x86 the PAUSE instruction), which saves power
    // and frees the core for its hyper-thread.
    while Instant::now() < target {
        std::hint::spin_loop();
    }
}
// ANCHOR_END: wait_until

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_that_are_not_a_positive_number_are_errors() {
        for hertz in [0.0, -120.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                FixedRate::hertz(hertz),
                Err(FrameStatsError::InvalidRate { .. })
            ));
        }
        let rate = FixedRate::hertz(125.0).unwrap();
        assert_eq!(rate.period(), Duration::from_millis(8));
        assert_eq!(rate.frames_in(2.0), 250);
        assert_eq!(rate.frames_in(0.0), 1);
    }

    #[test]
    fn no_frame_starts_before_its_release() {
        let run = FixedRateLoop {
            rate: FixedRate::hertz(1000.0).unwrap(),
            frames: 30,
            miss_policy: MissPolicy::CatchUp,
            waiting: Waiting::SleepThenSpin(Duration::from_micros(200)),
        };
        let mut ticks = Vec::new();
        let outcome = run
            .run(|tick| {
                ticks.push(tick);
                Ok::<(), ()>(())
            })
            .unwrap();
        assert_eq!(outcome.ran, 30);
        assert!(outcome.skipped.is_empty());
        for (index, tick) in ticks.iter().enumerate() {
            assert_eq!(tick.index, index as u64);
            assert_eq!(tick.release, Duration::from_millis(index as u64));
            assert!(tick.start >= tick.release, "{tick:?}");
        }
    }

    #[test]
    fn a_slow_frame_skips_exactly_the_releases_it_overran() {
        // Every third frame works for 2.5 periods. Whatever the machine's timing, the
        // frames run plus the frames skipped are every frame once, and a frame is skipped
        // only if its release had passed when the frame before it finished.
        let period = Duration::from_millis(4);
        let run = FixedRateLoop {
            rate: FixedRate::hertz(250.0).unwrap(),
            frames: 24,
            miss_policy: MissPolicy::Skip,
            waiting: Waiting::Sleep,
        };
        let mut finishes = Vec::new();
        let outcome = run
            .run(|tick| {
                if tick.index % 3 == 0 {
                    std::thread::sleep(period * 5 / 2);
                }
                finishes.push((tick.index, tick.origin.elapsed()));
                Ok::<(), ()>(())
            })
            .unwrap();
        assert!(!outcome.skipped.is_empty());
        let mut seen: Vec<u64> = finishes.iter().map(|(index, _)| *index).collect();
        seen.extend(&outcome.skipped);
        seen.sort_unstable();
        assert_eq!(seen, (0..24).collect::<Vec<_>>());
        for skipped in &outcome.skipped {
            let (_, finish_before) = finishes
                .iter()
                .rev()
                .find(|(index, _)| index < skipped)
                .unwrap();
            assert!(*finish_before > period * *skipped as u32);
        }
    }

    #[test]
    fn catching_up_runs_every_frame() {
        let run = FixedRateLoop {
            rate: FixedRate::hertz(500.0).unwrap(),
            frames: 10,
            miss_policy: MissPolicy::CatchUp,
            waiting: Waiting::Sleep,
        };
        let mut indices = Vec::new();
        let outcome = run
            .run(|tick| {
                if tick.index == 2 {
                    std::thread::sleep(Duration::from_millis(9));
                }
                indices.push(tick.index);
                Ok::<(), ()>(())
            })
            .unwrap();
        assert_eq!(indices, (0..10).collect::<Vec<_>>());
        assert!(outcome.skipped.is_empty());
    }

    #[test]
    fn the_body_s_error_stops_the_loop() {
        let run = FixedRateLoop {
            rate: FixedRate::hertz(1000.0).unwrap(),
            frames: 10,
            // Catching up, so that a busy machine cannot skip frame 3.
            miss_policy: MissPolicy::CatchUp,
            waiting: Waiting::Sleep,
        };
        let mut calls = 0;
        let result = run.run(|tick| {
            calls += 1;
            if tick.index == 3 {
                Err("sensor unplugged")
            } else {
                Ok(())
            }
        });
        assert_eq!(result, Err("sensor unplugged"));
        assert_eq!(calls, 4);
    }
}
