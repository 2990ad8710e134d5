//! How many profiles and samples a request holds, as `send` and `receive`
//! say it: a pprof profile of two sample types becomes two OTLP profiles
//! of the same 176 samples, which is `2 profiles × 176 samples`, not
//! "352 samples".

use serde::Serialize;

/// The profiles of a request and their samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Profiles.
    pub profiles: usize,
    /// Samples in all of them.
    pub samples: usize,
    /// The number of samples of each profile, when they all have the same
    /// (and there are profiles).
    pub samples_each: Option<usize>,
}

impl Counts {
    /// The counts of profiles with these numbers of samples.
    pub fn of(per_profile: impl IntoIterator<Item = usize>) -> Counts {
        let mut counts = Counts::default();
        let mut each = None;
        let mut same = true;
        for samples in per_profile {
            counts.profiles += 1;
            counts.samples += samples;
            same &= each.is_none_or(|n| n == samples);
            each = Some(samples);
        }
        counts.samples_each = each.filter(|_| same);
        counts
    }
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural = |n: usize, word: &str| match n {
            1 => format!("1 {word}"),
            n => format!("{n} {word}s"),
        };
        let profiles = plural(self.profiles, "profile");
        match self.samples_each {
            Some(each) if self.profiles > 1 => {
                write!(f, "{profiles} × {}", plural(each, "sample"))
            }
            _ => write!(f, "{profiles}, {}", plural(self.samples, "sample")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Counts;

    #[test]
    fn the_same_samples_in_each_profile_are_counted_once() {
        assert_eq!(
            Counts::of([176, 176]).to_string(),
            "2 profiles × 176 samples"
        );
        assert_eq!(Counts::of([176, 176]).samples, 352);
        assert_eq!(Counts::of([1]).to_string(), "1 profile, 1 sample");
        assert_eq!(Counts::of([3, 4]).to_string(), "2 profiles, 7 samples");
        assert_eq!(Counts::of([]).to_string(), "0 profiles, 0 samples");
    }
}
