//! Reading a scenario: JSON or TOML through serde, with every error naming its key path
//! and, for a misspelt name, the closest allowed one; then the checks and the link files.

use super::link::{LinkSpec, QueueAt, Traces};
use super::{profile, ConfigError, Prob, QueueLimit, Scenario};
use crate::units::Dur;

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The closest allowed name to `given`, if it is close enough to be a typo.
pub fn did_you_mean<'a>(given: &str, allowed: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    allowed
        .into_iter()
        .map(|a| (edit_distance(given, a), a))
        .filter(|(d, a)| *d <= 2.max(a.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a)
}

/// Adds a "did you mean" to serde's "unknown field/variant `x`, expected one of ..." messages.
fn improve_message(msg: &str) -> String {
    let (Some(s), Some(e)) = (msg.find('`'), msg[msg.find('`').map_or(0, |i| i + 1)..].find('`')) else {
        return msg.to_string();
    };
    let given = &msg[s + 1..s + 1 + e];
    let allowed: Vec<&str> =
        msg[s + 1 + e + 1..].split('`').enumerate().filter(|(i, _)| i % 2 == 1).map(|(_, t)| t).collect();
    if allowed.is_empty() || !(msg.starts_with("unknown field") || msg.starts_with("unknown variant")) {
        return msg.to_string();
    }
    match did_you_mean(given, allowed.iter().copied()) {
        Some(s) => format!("{msg} (did you mean `{s}`?)"),
        None => msg.to_string(),
    }
}

fn strip_position(msg: &str) -> String {
    // serde_json appends " at line L column C", meaningless after TOML → JSON conversion.
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

fn path_string(p: &serde_path_to_error::Path) -> String {
    let s = p.to_string();
    if s == "." {
        String::new()
    } else {
        s
    }
}

/// Why `output.pcap` (the key captures once had) is refused: a scenario says what to
/// simulate, never where files are written.
const CAPTURES_ARE_ASKED_BY_THE_CALLER: &str = "captures are not a scenario setting (a scenario must not choose \
     where files are written); ask for them with `mptcplab run --pcap DIR` or `mptcplab.run(..., pcap_dir=DIR)`";

impl Scenario {
    /// Parses and validates a scenario given as JSON.
    pub fn from_json_str(s: &str) -> Result<Scenario, ConfigError> {
        let mut value: serde_json::Value = serde_json::from_str(s)
            .map_err(|e| ConfigError::new("", format!("malformed JSON: {}", strip_position(&e.to_string()))))?;
        if value.pointer("/output/pcap").is_some() {
            return Err(ConfigError::new("output.pcap", CAPTURES_ARE_ASKED_BY_THE_CALLER));
        }
        profile::apply_profiles(&mut value);
        let mut sc: Scenario = serde_path_to_error::deserialize(value).map_err(|e| {
            ConfigError::new(path_string(e.path()), improve_message(&strip_position(&e.inner().to_string())))
        })?;
        sc.validate()?;
        sc.load_links()?;
        Ok(sc)
    }

    /// Parses and validates a scenario given as TOML.
    pub fn from_toml_str(s: &str) -> Result<Scenario, ConfigError> {
        let value: toml::Value =
            toml::from_str(s).map_err(|e| ConfigError::new("", format!("malformed TOML: {}", e.message())))?;
        let json = serde_json::to_string(&value).map_err(|e| ConfigError::new("", e.to_string()))?;
        Scenario::from_json_str(&json)
    }

    /// The fully resolved scenario (every default filled in) as pretty JSON.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("scenario serialises")
    }

    /// Checks every link and reads the trace files it names (once each).
    fn load_links(&mut self) -> Result<(), ConfigError> {
        self.expand_presets()?;
        let mut traces = Traces::default();
        for p in self.paths.iter_mut() {
            // Fill the defaults in, so the resolved scenario shows them.
            p.queue.get_or_insert(QueueLimit::Packets(1000));
            p.loss.get_or_insert(Prob(0.0));
            p.delay.get_or_insert(Dur::ZERO);
        }
        for (i, p) in self.paths.iter().enumerate() {
            p.check(&format!("paths[{i}]"), "up", &p.up, &mut traces)?;
            p.check(&format!("paths[{i}]"), "down", &p.down, &mut traces)?;
        }
        for (i, l) in self.links.iter().enumerate() {
            l.as_path().check(&format!("links[{i}]"), "", &LinkSpec::default(), &mut traces)?;
            if l.queue_at == Some(QueueAt::Host) {
                return Err(ConfigError::new(
                    format!("links[{i}].queue_at"),
                    "a host queue is modelled on paths only (the first link a host's packets take); \
                     use a path, or `router`",
                ));
            }
        }
        self.route_table()?;
        self.traces = traces;
        Ok(())
    }
}
