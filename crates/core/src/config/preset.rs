//! Link presets: named link settings for networks the seeds measured, compiled in from
//! `crates/core/presets/<name>.toml` (each file opens with its sources and derivation).
//!
//! A link field `preset = "att-lte"` (on a path, a path's `up` / `down`, or a `[[links]]`
//! entry) fills in whatever the scenario leaves unset there. Precedence, highest first: the
//! direction's own keys, the path's keys, the direction's preset, the path's preset. A preset
//! file has path-level keys and optional `[up]` / `[down]` tables; a path direction takes the
//! preset's values for that direction, a `[[links]]` entry those of `down` (the direction
//! towards the client), and a name ending in `.up` / `.down` picks a direction explicitly.
//!
//! Capacity is one unit: a preset's `rate` / `trace` / `rate_trace` is used only if the
//! scenario gives no capacity source of its own, and its `schedule` / `schedule_period` only
//! together with that capacity and if the scenario gives no schedule.

use super::{did_you_mean, ConfigError, LinkCfg, LinkSpec, PathCfg, Scenario};

/// The bundled presets: (name, TOML source).
const PRESETS: &[(&str, &str)] = &[
    ("home-wifi", include_str!("../../presets/home-wifi.toml")),
    ("att-lte", include_str!("../../presets/att-lte.toml")),
    ("verizon-lte", include_str!("../../presets/verizon-lte.toml")),
    ("sprint-3g", include_str!("../../presets/sprint-3g.toml")),
    ("nsdi12-wifi", include_str!("../../presets/nsdi12-wifi.toml")),
    ("nsdi12-3g", include_str!("../../presets/nsdi12-3g.toml")),
    ("nsdi12-wifi-jitter-low", include_str!("../../presets/nsdi12-wifi-jitter-low.toml")),
    ("nsdi12-wifi-jitter-high", include_str!("../../presets/nsdi12-wifi-jitter-high.toml")),
    ("nsdi12-3g-jitter-low", include_str!("../../presets/nsdi12-3g-jitter-low.toml")),
    ("nsdi12-3g-jitter-high", include_str!("../../presets/nsdi12-3g-jitter-high.toml")),
];

/// One bundled preset, for listings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PresetInfo {
    pub name: &'static str,
    /// The file's one-line `description`.
    pub description: String,
    /// The whole file, comments (sources and derivation) included.
    pub source: &'static str,
}

/// Every bundled preset, in a fixed order.
pub fn presets() -> Vec<PresetInfo> {
    PRESETS
        .iter()
        .map(|&(name, source)| {
            let (description, _) = parse(source).unwrap_or_else(|e| panic!("bundled preset `{name}` is invalid: {e}"));
            PresetInfo { name, description, source }
        })
        .collect()
}

/// Parses a preset file into its description and its link values (as a path).
fn parse(source: &str) -> Result<(String, PathCfg), ConfigError> {
    let mut value: toml::Table = toml::from_str(source).map_err(|e| ConfigError::new("", e.message().to_string()))?;
    let description = match value.remove("description") {
        Some(toml::Value::String(s)) => s,
        _ => return Err(ConfigError::new("description", "a preset needs a one-line description string")),
    };
    value.insert("name".into(), toml::Value::String("preset".into()));
    let json = serde_json::to_string(&value).map_err(|e| ConfigError::new("", e.to_string()))?;
    let de = &mut serde_json::Deserializer::from_str(&json);
    let path: PathCfg = serde_path_to_error::deserialize(de)
        .map_err(|e| ConfigError::new(e.path().to_string(), e.inner().to_string()))?;
    if path.preset.is_some() || path.up.preset.is_some() || path.down.preset.is_some() {
        return Err(ConfigError::new("preset", "a preset cannot name another preset"));
    }
    Ok((description, path))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    Up,
    Down,
}

/// The preset's values for one direction, looked up by `name` (`att-lte`, `att-lte.up`).
fn lookup(name: &str, default_dir: Dir, at: &str) -> Result<LinkSpec, ConfigError> {
    let (base, dir) = match name.rsplit_once('.') {
        Some((b, "up")) => (b, Dir::Up),
        Some((b, "down")) => (b, Dir::Down),
        _ => (name, default_dir),
    };
    let Some(&(_, source)) = PRESETS.iter().find(|(n, _)| *n == base) else {
        let names: Vec<&str> = PRESETS.iter().map(|p| p.0).collect();
        let hint =
            did_you_mean(base, names.iter().copied()).map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default();
        return Err(ConfigError::new(
            at,
            format!("no preset named `{base}`; presets: {}{hint} (optionally with .up or .down)", names.join(", ")),
        ));
    };
    let (_, p) = parse(source).map_err(|e| ConfigError::new(at, format!("bundled preset `{base}` is invalid: {e}")))?;
    let own = if dir == Dir::Up { &p.up } else { &p.down };
    Ok(direction(&top(&p), own))
}

/// A path's own (top-level) values as a link specification.
fn top(p: &PathCfg) -> LinkSpec {
    LinkSpec {
        preset: p.preset.clone(),
        rate: p.rate,
        trace: p.trace.clone(),
        rate_trace: p.rate_trace.clone(),
        delay: p.delay,
        jitter: p.jitter,
        queue: p.queue,
        queue_at: p.queue_at,
        aqm: p.aqm,
        loss: p.loss,
        loss_burst: p.loss_burst,
        drop: p.drop.clone(),
        schedule: p.schedule.clone(),
        schedule_period: p.schedule_period,
    }
}

fn has_capacity(s: &LinkSpec) -> bool {
    s.rate.is_some() || s.trace.is_some() || s.rate_trace.is_some()
}

/// One direction's values: its own keys over the path's; a capacity source of its own
/// replaces the path's whole capacity (as in [`PathCfg::resolve`]).
fn direction(path: &LinkSpec, own: &LinkSpec) -> LinkSpec {
    let mut d = own.clone();
    fill(&mut d, &LinkSpec::default(), path);
    d
}

/// Fills the keys that neither `target` nor `outer` sets from `p`; capacity as one unit.
fn fill(target: &mut LinkSpec, outer: &LinkSpec, p: &LinkSpec) {
    macro_rules! fill_keys {
        ($($k:ident),*) => {
            $(if target.$k.is_none() && outer.$k.is_none() {
                target.$k = p.$k.clone();
            })*
        };
    }
    fill_keys!(delay, jitter, queue, queue_at, aqm, loss, loss_burst, drop);
    if !has_capacity(target) && !has_capacity(outer) && has_capacity(p) {
        target.rate = p.rate;
        target.trace = p.trace.clone();
        target.rate_trace = p.rate_trace.clone();
        if target.schedule.is_none() && outer.schedule.is_none() {
            target.schedule = p.schedule.clone();
            target.schedule_period = p.schedule_period;
        }
    }
}

impl Scenario {
    /// Replaces every `preset` reference by the values it fills in (the reference stays, so
    /// the resolved scenario shows where the values came from; expanding again is a no-op).
    pub(crate) fn expand_presets(&mut self) -> Result<(), ConfigError> {
        for (i, p) in self.paths.iter_mut().enumerate() {
            let outer = top(p);
            for (dir, key) in [(Dir::Up, "up"), (Dir::Down, "down")] {
                let own = if dir == Dir::Up { &mut p.up } else { &mut p.down };
                let refs = [
                    own.preset.clone().map(|n| (n, format!("paths[{i}].{key}.preset"))),
                    outer.preset.clone().map(|n| (n, format!("paths[{i}].preset"))),
                ];
                for (name, at) in refs.into_iter().flatten() {
                    let values = lookup(&name, dir, &at)?;
                    fill(own, &outer, &values);
                }
            }
        }
        for (i, l) in self.links.iter_mut().enumerate() {
            if let Some(name) = l.preset.clone() {
                let values = lookup(&name, Dir::Down, &format!("links[{i}].preset"))?;
                let mut s = l.spec();
                fill(&mut s, &LinkSpec::default(), &values);
                set_spec(l, s);
            }
        }
        Ok(())
    }
}

fn set_spec(l: &mut LinkCfg, s: LinkSpec) {
    l.rate = s.rate;
    l.trace = s.trace;
    l.rate_trace = s.rate_trace;
    l.delay = s.delay;
    l.jitter = s.jitter;
    l.queue = s.queue;
    l.aqm = s.aqm;
    l.loss = s.loss;
    l.loss_burst = s.loss_burst;
    l.drop = s.drop;
    l.schedule = s.schedule;
    l.schedule_period = s.schedule_period;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::qdisc::{QdiscParams, QueueLimit};
    use crate::units::{Dur, Rate};

    fn scenario(paths: &str) -> Result<Scenario, ConfigError> {
        Scenario::from_toml_str(&format!(
            "duration = \"1s\"\n{paths}\n[[connections]]\nname = \"c\"\nkind = \"tcp\"\npaths = [\"p\"]\napp = {{ kind = \"bulk\" }}\n"
        ))
    }

    #[test]
    fn every_bundled_preset_parses_and_describes_itself() {
        for p in presets() {
            assert!(!p.description.is_empty() && !p.description.contains('\n'), "{}", p.name);
            assert!(p.source.starts_with('#'), "{} must open with its sources", p.name);
            let sc = scenario(&format!("[[paths]]\nname = \"p\"\npreset = \"{}\"", p.name))
                .unwrap_or_else(|e| panic!("{}: {e}", p.name));
            let [up, down] = sc.links_of(0);
            assert!(up.nominal_rate.bps() > 0 && down.nominal_rate.bps() > 0);
        }
    }

    #[test]
    fn scenario_values_win_over_the_preset() {
        let sc = scenario("[[paths]]\nname = \"p\"\npreset = \"nsdi12-wifi\"\ndelay = \"30ms\"").unwrap();
        let [up, down] = sc.links_of(0);
        assert_eq!(down.delay, Dur::from_ms(30));
        assert_eq!(up.delay, Dur::from_ms(30));
        assert_eq!(down.nominal_rate, Rate(8_000_000));
        assert_eq!(down.qdisc, QdiscParams::DropTail(QueueLimit::Time(Dur::from_ms(80))));
    }

    #[test]
    fn a_scenario_capacity_replaces_the_presets_capacity_and_schedule() {
        let sc = scenario("[[paths]]\nname = \"p\"\npreset = \"att-lte\"\nrate = \"20Mbit\"").unwrap();
        let [_, down] = sc.links_of(0);
        assert_eq!(down.nominal_rate, Rate(20_000_000));
        assert!(down.schedule.is_empty(), "the preset's rate schedule must not apply to a foreign rate");
        // The preset's other values still fill in.
        assert_eq!(down.qdisc, QdiscParams::DropTail(QueueLimit::Packets(100)));
    }

    #[test]
    fn a_direction_preset_applies_to_that_direction_only() {
        let sc = scenario("[[paths]]\nname = \"p\"\nrate = \"1Mbit\"\ndown = { preset = \"nsdi12-3g\" }").unwrap();
        let [up, down] = sc.links_of(0);
        assert_eq!(down.delay, Dur::from_ms(75));
        assert_eq!(up.delay, Dur::ZERO);
        // The path's rate is the scenario's, so it wins over the direction's preset.
        assert_eq!(down.nominal_rate, Rate(1_000_000));
    }

    #[test]
    fn resolving_twice_gives_the_same_scenario() {
        let sc = scenario("[[paths]]\nname = \"p\"\npreset = \"att-lte\"").unwrap();
        let again = Scenario::from_json_str(&sc.to_json_pretty()).unwrap();
        assert_eq!(again.to_json_pretty(), sc.to_json_pretty());
    }

    #[test]
    fn unknown_presets_are_named_with_a_suggestion() {
        let e = scenario("[[paths]]\nname = \"p\"\npreset = \"att-lt\"").unwrap_err();
        assert_eq!(e.path, "paths[0].preset");
        assert!(e.message.contains("did you mean `att-lte`"), "{e}");
        let e = scenario("[[paths]]\nname = \"p\"\nrate = \"1Mbit\"\nup = { preset = \"home-wify\" }").unwrap_err();
        assert_eq!(e.path, "paths[0].up.preset");
        assert!(e.message.contains("did you mean `home-wifi`"), "{e}");
    }
}
