//! Applications: what the sending side wants to write and when it is finished.

use crate::config::AppCfg;
use crate::units::Time;

/// The sending application of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum App {
    /// Always has data (iperf-like) until `stop` (absolute time), if any.
    Bulk { stop: Option<Time> },
    /// Writes exactly `size` bytes.
    Download { size: u64 },
}

impl App {
    pub fn from_cfg(cfg: &AppCfg, start: Time) -> App {
        match cfg {
            AppCfg::Bulk { stop } => App::Bulk { stop: stop.map(|d| start + d) },
            AppCfg::Download { size } => App::Download { size: size.0 },
        }
    }

    /// Bytes the application still wants to write, having written `written`.
    pub fn wants(&self, now: Time, written: u64) -> u64 {
        match *self {
            App::Bulk { stop } => {
                if stop.is_some_and(|s| now >= s) {
                    0
                } else {
                    u64::MAX
                }
            }
            App::Download { size } => size - written.min(size),
        }
    }

    /// Total bytes for a download.
    pub fn size(&self) -> Option<u64> {
        match *self {
            App::Download { size } => Some(size),
            App::Bulk { .. } => None,
        }
    }
}
