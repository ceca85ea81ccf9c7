//! Windowed maximum over a sliding window of "time" (here: BBR's round-trip count), by
//! Kathleen Nichols' algorithm as Linux `lib/win_minmax.c` (`minmax_running_max`): the best,
//! second-best and third-best samples of the window's sub-windows are kept, so the maximum
//! of the last `win` units is available in O(1) with three samples of memory.
//!
//! Deviation: none (u64 values and times instead of u32).

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sample {
    t: u64,
    v: u64,
}

/// A windowed running maximum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinMax {
    s: [Sample; 3],
}

impl MinMax {
    /// The current maximum (0 before any sample).
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    /// Forgets everything but `meas` at `t` (Linux `minmax_reset`).
    pub fn reset(&mut self, t: u64, meas: u64) -> u64 {
        self.s = [Sample { t, v: meas }; 3];
        meas
    }

    /// Adds `meas` taken at `t` to a maximum over the window `win` (Linux
    /// `minmax_running_max`); returns the maximum.
    pub fn running_max(&mut self, win: u64, t: u64, meas: u64) -> u64 {
        let val = Sample { t, v: meas };
        if val.v >= self.s[0].v || val.t - self.s[2].t > win {
            return self.reset(t, meas);
        }
        if val.v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// Linux `minmax_subwin_update`: ages the best samples out of the window, and keeps the
    /// second and third choices from sub-windows of a quarter and a half window.
    fn subwin_update(&mut self, win: u64, val: Sample) -> u64 {
        let dt = val.t - self.s[0].t;
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t - self.s[0].t > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_maximum_lasts_exactly_the_window() {
        // Window of 10 rounds: a peak of 100 at round 0 followed by 50 every round is the
        // maximum through round 10 and replaced at round 11 (11 − 0 > 10).
        let mut m = MinMax::default();
        m.running_max(10, 0, 100);
        for t in 1..=10 {
            assert_eq!(m.running_max(10, t, 50), 100, "round {t}");
        }
        assert_eq!(m.running_max(10, 11, 50), 50);
    }

    #[test]
    fn the_second_best_takes_over_when_the_best_expires() {
        // 100 at round 0, 80 at round 3, then 10s: at round 11 the 100 ages out and the 80
        // (kept from the quarter sub-window) is the maximum until it ages out at round 14.
        let mut m = MinMax::default();
        m.running_max(10, 0, 100);
        m.running_max(10, 3, 80);
        for t in 4..=10 {
            assert_eq!(m.running_max(10, t, 10), 100);
        }
        assert_eq!(m.running_max(10, 11, 10), 80);
        assert_eq!(m.running_max(10, 13, 10), 80);
        assert_eq!(m.running_max(10, 14, 10), 10);
    }
}
