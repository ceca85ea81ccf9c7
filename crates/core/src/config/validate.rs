//! The semantic checks of a scenario that the types alone cannot express.

use super::{
    algorithms, did_you_mean, AppCfg, BufferAccounting, ConfigError, ConnCfg, ConnKind, PerMss, QueueLimit, Scenario,
    MIN_APP_PERIOD, MIN_RTO,
};
use crate::units::Dur;

impl Scenario {
    /// A queue given in bytes must hold one full-sized packet of every connection that
    /// crosses it; a smaller one drops every data packet.
    fn check_queues_hold_a_packet(&self) -> Result<(), ConfigError> {
        let mtu_of =
            |uses: &dyn Fn(&ConnCfg) -> bool| self.connections.iter().filter(|c| uses(c)).map(|c| c.tcp.mtu).max();
        let refuse = |key: String, b: u64, mtu: u64| {
            ConfigError::new(key, format!("{b} B cannot hold one {mtu}-byte packet (the largest MTU crossing it)"))
        };
        for (i, p) in self.paths.iter().enumerate() {
            let Some(mtu) = mtu_of(&|c: &ConnCfg| c.paths.contains(&p.name)) else { continue };
            for (dir, o) in [("up", &p.up), ("down", &p.down)] {
                let (key, q) = match (&o.queue, &p.queue) {
                    (Some(q), _) => (format!("paths[{i}].{dir}.queue"), q),
                    (None, Some(q)) => (format!("paths[{i}].queue"), q),
                    (None, None) => continue,
                };
                if let QueueLimit::Bytes(b) = *q {
                    if b < mtu {
                        return Err(refuse(key, b, mtu));
                    }
                }
            }
        }
        for (i, l) in self.links.iter().enumerate() {
            let crosses = |c: &ConnCfg| c.routes.iter().any(|r| r.up.contains(&l.name) || r.down.contains(&l.name));
            let Some(mtu) = mtu_of(&crosses) else { continue };
            if let Some(QueueLimit::Bytes(b)) = l.queue {
                if b < mtu {
                    return Err(refuse(format!("links[{i}].queue"), b, mtu));
                }
            }
        }
        Ok(())
    }

    /// Semantic checks that the types alone cannot express.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.duration == Dur::ZERO {
            return Err(ConfigError::new("duration", "must be > 0 (e.g. \"60s\")"));
        }
        if self.paths.is_empty() && self.links.is_empty() {
            return Err(ConfigError::new("paths", "at least one path (or [[links]] with routes) is needed"));
        }
        if self.paths.len() > 64 {
            return Err(ConfigError::new(
                "paths",
                format!("{} paths given; at most 64 are supported", self.paths.len()),
            ));
        }
        for (i, p) in self.paths.iter().enumerate() {
            let at = |k: &str| format!("paths[{i}].{k}");
            if p.name.is_empty() {
                return Err(ConfigError::new(at("name"), "must not be empty"));
            }
            if self.paths[..i].iter().any(|q| q.name == p.name) {
                return Err(ConfigError::new(
                    at("name"),
                    format!("`{}` is used by two paths; names must be unique", p.name),
                ));
            }
        }
        if self.connections.is_empty() {
            return Err(ConfigError::new("connections", "at least one connection is needed"));
        }
        let names: Vec<&str> = self.paths.iter().map(|p| p.name.as_str()).collect();
        for (i, c) in self.connections.iter().enumerate() {
            let at = |k: &str| format!("connections[{i}].{k}");
            if c.name.is_empty() {
                return Err(ConfigError::new(at("name"), "must not be empty"));
            }
            if self.connections[..i].iter().any(|o| o.name == c.name) {
                return Err(ConfigError::new(
                    at("name"),
                    format!("`{}` is used by two connections; names must be unique", c.name),
                ));
            }
            if c.paths.is_empty() == c.routes.is_empty() {
                return Err(ConfigError::new(
                    at("paths"),
                    "give either paths (names of [[paths]]) or routes (over [[links]]), exactly one of them",
                ));
            }
            for (j, p) in c.paths.iter().chain(c.backup.iter()).enumerate() {
                if !names.contains(&p.as_str()) {
                    let key = if j < c.paths.len() {
                        format!("paths[{j}]")
                    } else {
                        format!("backup[{}]", j - c.paths.len())
                    };
                    let hint = did_you_mean(p, names.iter().copied())
                        .map(|s| format!(" (did you mean `{s}`?)"))
                        .unwrap_or_default();
                    return Err(ConfigError::new(
                        at(&key),
                        format!("no path named `{p}`; defined paths: {}{hint}", names.join(", ")),
                    ));
                }
            }
            for (j, b) in c.backup.iter().enumerate() {
                if !c.paths.contains(b) {
                    return Err(ConfigError::new(
                        at(&format!("backup[{j}]")),
                        format!("`{b}` is not one of this connection's paths ({})", c.paths.join(", ")),
                    ));
                }
            }
            if c.kind == ConnKind::Tcp {
                if c.paths.len() + c.routes.len() != 1 {
                    return Err(ConfigError::new(
                        at("paths"),
                        format!(
                            "a tcp connection uses exactly one path, {} given (use kind = \"mptcp\" for several)",
                            c.paths.len() + c.routes.len()
                        ),
                    ));
                }
                if let Err(msg) = algorithms::check_single_path(c.cc) {
                    return Err(ConfigError::new(at("cc"), msg));
                }
            }
            if let Err((key, msg)) = c.cc_params.check() {
                return Err(ConfigError::new(at(&format!("cc_params.{key}")), msg));
            }
            if c.start >= self.duration {
                return Err(ConfigError::new(
                    at("start"),
                    format!("{} is not before the end of the run ({})", c.start, self.duration),
                ));
            }
            if let Some(a) = &c.after {
                check_after(&self.connections, i, a).map_err(|msg| ConfigError::new(at("after"), msg))?;
            }
            match c.app {
                AppCfg::Download { size } if size.0 == 0 => {
                    return Err(ConfigError::new(at("app.size"), "a download needs at least one byte"));
                }
                AppCfg::Bulk { write: Some(w), .. } if w.0 == 0 => {
                    return Err(ConfigError::new(at("app.write"), "each write needs at least one byte"));
                }
                AppCfg::Periodic { size, period, count } => {
                    if size.0 == 0 {
                        return Err(ConfigError::new(at("app.size"), "each period needs at least one byte"));
                    }
                    if period < MIN_APP_PERIOD {
                        return Err(ConfigError::new(
                            at("app.period"),
                            format!(
                                "{period} is below 1us: writes that often are a bulk sender (a 1500-byte packet \
                                 takes 1.2us even at 10 Gbit/s); use kind = \"bulk\""
                            ),
                        ));
                    }
                    if count == Some(0) {
                        return Err(ConfigError::new(at("app.count"), "must be >= 1"));
                    }
                    // The total must be a byte count the engine keeps exactly (as any size).
                    let writes = count.unwrap_or(self.duration.0 / period.0 + 1);
                    if size.0.checked_mul(writes).is_none_or(|t| t > 1 << 53) {
                        return Err(ConfigError::new(
                            at("app.count"),
                            format!("{writes} writes of {} B exceed 2^53 B (9 PB) in total", size.0),
                        ));
                    }
                }
                _ => {}
            }
            if let Err((key, msg)) = c.sched_params.check() {
                return Err(ConfigError::new(at(&format!("sched_params.{key}")), msg));
            }
            if c.per_mss == PerMss::Build && c.buffer_accounting != BufferAccounting::Skb {
                return Err(ConfigError::new(
                    at("per_mss"),
                    "\"build\" applies only with buffer_accounting = \"skb\" (the out-of-tree stack's one-MSS skbs)",
                ));
            }
            if let Some(h) = c.max_tcp_header {
                if c.buffer_accounting != BufferAccounting::Skb {
                    return Err(ConfigError::new(
                        at("max_tcp_header"),
                        "applies only with buffer_accounting = \"skb\" (the out-of-tree stack's one-MSS skbs)",
                    ));
                }
                if h > 1024 {
                    return Err(ConfigError::new(at("max_tcp_header"), format!("{h} B is outside 0..=1024 B")));
                }
            }
            let t = &c.tcp;
            if !(64..=65_495).contains(&t.mss) {
                return Err(ConfigError::new(at("tcp.mss"), format!("{} B is outside 64..=65495 B", t.mss)));
            }
            if t.mtu < t.mss + 40 {
                return Err(ConfigError::new(
                    at("tcp.mtu"),
                    format!("{} B cannot carry mss {} B plus 40 B of TCP/IP headers", t.mtu, t.mss),
                ));
            }
            if t.iw == 0 || t.iw > 1000 {
                return Err(ConfigError::new(at("tcp.iw"), format!("{} segments is outside 1..=1000", t.iw)));
            }
            if t.delack_segments == 0 || t.delack_segments > 64 {
                return Err(ConfigError::new(
                    at("tcp.delack_segments"),
                    format!("{} is outside 1..=64", t.delack_segments),
                ));
            }
            if t.dupthresh == 0 {
                return Err(ConfigError::new(at("tcp.dupthresh"), "must be >= 1"));
            }
            if t.rto_min < MIN_RTO || t.rto_min > t.rto_max {
                return Err(ConfigError::new(
                    at("tcp.rto_min"),
                    format!(
                        "{} must be >= 1us (a shorter timer is below one packet's serialisation time at \
                         10 Gbit/s) and <= rto_max ({})",
                        t.rto_min, t.rto_max
                    ),
                ));
            }
            if t.rto_initial < t.rto_min || t.rto_initial > t.rto_max {
                return Err(ConfigError::new(
                    at("tcp.rto_initial"),
                    format!("{} must lie between rto_min ({}) and rto_max ({})", t.rto_initial, t.rto_min, t.rto_max),
                ));
            }
            let seg = t.mss;
            for (key, b) in [("sndbuf", &c.sndbuf), ("rcvbuf", &c.rcvbuf)] {
                if let Err((sub, msg)) = b.check(seg) {
                    return Err(ConfigError::new(at(&format!("{key}{sub}")), msg));
                }
            }
        }
        for (i, c) in self.connections.iter().enumerate() {
            for (r, route) in c.routes.iter().enumerate() {
                if c.routes[..r].iter().any(|o| o.name == route.name) {
                    return Err(ConfigError::new(
                        format!("connections[{i}].routes[{r}].name"),
                        format!("`{}` names two routes of this connection; route names must be unique", route.name),
                    ));
                }
            }
        }
        self.check_queues_hold_a_packet()?;
        if self.output.warmup >= self.duration {
            return Err(ConfigError::new(
                "output.warmup",
                format!(
                    "{} leaves nothing to measure in a {} run; must be < duration",
                    self.output.warmup, self.duration
                ),
            ));
        }
        if let Some(iv) = self.output.timeseries {
            if iv < Dur::from_us(100) {
                return Err(ConfigError::new(
                    "output.timeseries",
                    format!("{iv} is below the 100us minimum sampling interval"),
                ));
            }
        }
        Ok(())
    }
}

/// `connections[i].after = a`: a connection listed before this one whose application ends
/// (a download, or periodic with a count), so the two cannot overlap and the chain has an
/// order.
fn check_after(conns: &[ConnCfg], i: usize, a: &str) -> Result<(), String> {
    let Some(j) = conns.iter().position(|o| o.name == a) else {
        return Err(format!("no connection named `{a}`"));
    };
    if j >= i {
        return Err(format!("`{a}` must be listed before this connection (a connection starts after an earlier one)"));
    }
    match conns[j].app {
        AppCfg::Download { .. } | AppCfg::Periodic { count: Some(_), .. } => Ok(()),
        _ => Err(format!(
            "`{a}` never closes (its application has no end: bulk, or periodic without a count), so this \
             connection would overlap it for ever"
        )),
    }
}
