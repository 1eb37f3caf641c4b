//! A type-safe enum instead of a string or an integer: the channels of a mixer, named by
//! `&str` in the loop, against an enum parsed once at the edge of the program.
//!
//! Module 3 measured string keys against ids and enums in hash tables
//! (`numbers::hash_keys`), and module 0's `operator-enum` exercise turns operator names into
//! an enum; this file is the small version for a real-time loop.

use std::str::FromStr;
use thiserror::Error;

/// A name that is not one of the mixer's channels.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("there is no channel called {name:?}; the channels are left, right, centre and bass")]
pub struct UnknownChannel {
    pub name: String,
}

// ANCHOR: by_name
/// The gain of a channel named by a string, looked up every time it is called: string
/// comparisons at run time, and a typo (`"centr"`) is an error found only when that line
/// runs.
pub fn gain_by_name(name: &str) -> Result<f32, UnknownChannel> {
    match name {
        "left" | "right" => Ok(0.8),
        "centre" => Ok(1.0),
        "bass" => Ok(0.5),
        _ => Err(UnknownChannel {
            name: name.to_string(),
        }),
    }
}
// ANCHOR_END: by_name

// ANCHOR: channel_enum
/// The same channels as an enum: a typo does not compile, a `match` that forgets a channel
/// does not compile, and `channel as usize` indexes an array with no lookup at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    Left,
    Right,
    Centre,
    Bass,
}

impl Channel {
    pub const ALL: [Channel; 4] = [
        Channel::Left,
        Channel::Right,
        Channel::Centre,
        Channel::Bass,
    ];

    pub fn gain(self) -> f32 {
        match self {
            Channel::Left | Channel::Right => 0.8,
            Channel::Centre => 1.0,
            Channel::Bass => 0.5,
        }
    }
}

/// Strings become channels once, where they enter the program (a configuration file, a
/// command line), and the error names the bad string for the person who typed it.
impl FromStr for Channel {
    type Err = UnknownChannel;

    fn from_str(name: &str) -> Result<Channel, UnknownChannel> {
        match name {
            "left" => Ok(Channel::Left),
            "right" => Ok(Channel::Right),
            "centre" => Ok(Channel::Centre),
            "bass" => Ok(Channel::Bass),
            _ => Err(UnknownChannel {
                name: name.to_string(),
            }),
        }
    }
}
// ANCHOR_END: channel_enum

// ANCHOR: mix
/// Mixes one sample per channel into one output sample. The loop sees only `Channel`s:
/// nothing in it can fail.
pub fn mix(samples: &[(Channel, f32)]) -> f32 {
    samples
        .iter()
        .map(|&(channel, sample)| channel.gain() * sample)
        .sum()
}
// ANCHOR_END: mix

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_channel_parses_and_has_the_gain_its_name_has() {
        for channel in Channel::ALL {
            let name = format!("{channel:?}").to_lowercase();
            assert_eq!(name.parse::<Channel>(), Ok(channel));
            assert_eq!(gain_by_name(&name), Ok(channel.gain()));
        }
    }

    #[test]
    fn a_typo_is_an_error_that_names_it() {
        let error = "centr".parse::<Channel>().unwrap_err();
        assert_eq!(
            error.to_string(),
            "there is no channel called \"centr\"; the channels are left, right, centre and bass"
        );
        assert_eq!(gain_by_name("centr"), Err(error));
    }

    #[test]
    fn mixing_weights_each_sample_by_its_channel() {
        let samples = [
            (Channel::Left, 1.0),
            (Channel::Centre, 2.0),
            (Channel::Bass, 4.0),
        ];
        assert_eq!(mix(&samples), 0.8 + 2.0 + 2.0);
    }
}
