//! Mutated scenarios against the engine's own entry point: whatever JSON arrives, parsing
//! and validation return a scenario or a `ConfigError` naming a key path, and an accepted
//! scenario runs (within a work budget) without a panic. The Python layer's fuzzing
//! (`tests/python/test_fuzz.py`) covers the same ground through the command line and the
//! API; this one needs no Python and shrinks failures to the engine's terms.

use proptest::prelude::*;
use serde_json::{json, Value};

/// Engine events one generated run may use (bounded work whatever the values).
const MAX_EVENTS: u64 = 200_000;

fn base() -> Value {
    json!({
        "name": "fuzz",
        "duration": "2s",
        "seed": 7,
        "paths": [
            { "name": "wifi", "rate": "10Mbit", "delay": "10ms", "queue": "50 packets",
              "loss": "0.5%", "jitter": { "amount": "2ms" },
              "schedule": [{ "at": "1s", "rate": "5Mbit" }] },
            { "name": "cell", "rate": "3Mbit", "delay": "60ms", "queue": "100ms",
              "aqm": { "kind": "codel" }, "down": { "rate": "4Mbit" } }
        ],
        "connections": [
            { "name": "m", "kind": "mptcp", "paths": ["wifi", "cell"], "cc": "lia",
              "scheduler": "minrtt", "app": { "kind": "bulk" },
              "rcvbuf": { "min": "4KB", "default": "64KB", "max": "1MB" }, "sndbuf": "256KB",
              "tcp": { "recovery": "rack_tlp", "prr": true } },
            { "name": "t", "kind": "tcp", "paths": ["cell"], "cc": "cubic",
              "app": { "kind": "periodic", "size": "20KB", "period": "200ms", "count": 5 } }
        ],
        "output": { "warmup": "0s" }
    })
}

/// Values of every kind, with the edge cases that broke parsers before.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|v| json!(v)),
        any::<u64>().prop_map(|v| json!(v)),
        prop::num::f64::ANY.prop_filter("JSON numbers are finite", |v| v.is_finite()).prop_map(|v| json!(v)),
        prop::sample::select(vec![
            "",
            "0",
            "-1s",
            "1ns",
            "10 parsecs",
            "99999999999999999999999Gbit",
            "1e3Mbit",
            "64B",
            "0 packets",
            "0.5 packets",
            "150%",
            "nan",
            "inf",
            "18446744073709551616B",
            "\n",
            "µs",
        ])
        .prop_map(|s| json!(s)),
        "[ -~]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{0,6}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Every path to a value in `v` (object keys and array indices).
fn paths(v: &Value, prefix: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                prefix.push(json!(k));
                out.push(prefix.clone());
                paths(x, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                prefix.push(json!(i));
                out.push(prefix.clone());
                paths(x, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

/// Replaces (`Some`) or deletes (`None`) the value at `path`.
fn mutate(doc: &mut Value, path: &[Value], new: Option<Value>) {
    let (last, parents) = path.split_last().expect("non-empty path");
    let mut cur = doc;
    for k in parents {
        cur = match k {
            Value::String(s) => cur.get_mut(s.as_str()).expect("path exists"),
            _ => cur.get_mut(k.as_u64().expect("index") as usize).expect("path exists"),
        };
    }
    match (cur, last) {
        (Value::Object(m), Value::String(k)) => match new {
            Some(v) => {
                m.insert(k.clone(), v);
            }
            None => {
                m.remove(k);
            }
        },
        (Value::Array(a), i) => {
            let i = i.as_u64().expect("index") as usize;
            match new {
                Some(v) => a[i] = v,
                None => {
                    a.remove(i);
                }
            }
        }
        _ => unreachable!("paths() only yields keys of objects and indices of arrays"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]
    #[test]
    fn mutated_scenarios_are_refused_at_a_key_or_run_without_a_panic(
        picks in prop::collection::vec((any::<prop::sample::Index>(), prop::option::weighted(0.8, value())), 1..4),
    ) {
        let mut doc = base();
        for (at, new) in picks {
            let mut all = Vec::new();
            paths(&doc, &mut Vec::new(), &mut all);
            if all.is_empty() {
                break;
            }
            let path = all[at.index(all.len())].clone();
            mutate(&mut doc, &path, new);
        }
        let text = doc.to_string();
        match mptcplab_core::run_json_within(&text, None, MAX_EVENTS) {
            Ok(out) => prop_assert!(out.summary.end_s.is_finite()),
            Err(mptcplab_core::RunError::Config(e)) => {
                prop_assert!(!e.message.is_empty(), "empty message for {text}");
                prop_assert!(!e.to_string().contains('\n') || e.message.contains('\n'),
                    "the error's frame adds a line break: {e}");
            }
            Err(mptcplab_core::RunError::Budget { .. }) => {}
            // No scenario writes a file or is cancelled: only the caller's options do.
            Err(e @ (mptcplab_core::RunError::Capture(_) | mptcplab_core::RunError::Cancelled)) => {
                prop_assert!(false, "{e:?} from a scenario alone: {text}");
            }
        }
    }
}

#[test]
fn the_unmutated_base_runs() {
    let out = mptcplab_core::run_json_within(&base().to_string(), None, MAX_EVENTS);
    assert!(out.is_ok(), "{:?}", out.err());
}
