//! Applications: what the sending side wants to write and when it is finished.

use crate::config::AppCfg;
use crate::units::{Dur, Time};

/// The sending application of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum App {
    /// Always has data (iperf-like) until `stop` (absolute time), if any. With `write`, the
    /// application is a loop of blocking `send()` calls of `write` bytes each (iperf's
    /// client: `write(sock, buf, len)` until its end time, checked between calls), which the
    /// connection's send side runs as Linux `tcp_sendmsg_locked` does
    /// ([`crate::mptcp::sendbuf::ConnSender`]): a call copies while the buffer has room,
    /// sleeps in `sk_stream_wait_memory` when it has none and returns only once all its bytes
    /// are copied, so a call begun before `stop` is finished after it.
    Bulk { stop: Option<Time>, write: Option<u64> },
    /// Writes exactly `size` bytes.
    Download { size: u64 },
    /// Writes `size` bytes at `start + k·period`, k = 0..count.
    Periodic { size: u64, period: Dur, start: Time, count: Option<u64> },
}

impl App {
    pub fn from_cfg(cfg: &AppCfg, start: Time) -> App {
        match cfg {
            AppCfg::Bulk { stop, write } => App::Bulk { stop: stop.map(|d| start + d), write: write.map(|w| w.0) },
            AppCfg::Download { size } => App::Download { size: size.0 },
            AppCfg::Periodic { size, period, count } => {
                App::Periodic { size: size.0, period: *period, start, count: *count }
            }
        }
    }

    /// Bytes the application still wants to write, having written `written`.
    pub fn wants(&self, now: Time, written: u64) -> u64 {
        match *self {
            App::Bulk { stop, .. } => {
                if stop.is_some_and(|s| now >= s) {
                    0
                } else {
                    u64::MAX
                }
            }
            App::Download { size } => size - written.min(size),
            App::Periodic { size, period, start, count } => {
                let k = now.since(start).0 / period.0 + 1;
                let k = count.map_or(k, |c| k.min(c));
                k.saturating_mul(size).saturating_sub(written)
            }
        }
    }

    /// When the application next wants to write, if that is later than `now`.
    pub fn next_write(&self, now: Time) -> Option<Time> {
        match *self {
            App::Periodic { period, start, count, .. } => {
                let k = now.since(start).0 / period.0 + 1;
                if count.is_some_and(|c| k >= c) {
                    None
                } else {
                    Some(start + period.times(k))
                }
            }
            _ => None,
        }
    }

    /// Total bytes for a download.
    pub fn size(&self) -> Option<u64> {
        match *self {
            App::Download { size } => Some(size),
            App::Periodic { size, count: Some(c), .. } => Some(size.saturating_mul(c)),
            _ => None,
        }
    }
}
