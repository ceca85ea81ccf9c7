//! `mptcplab._core`: the PyO3 binding of `mptcplab-core`. Glue only: every function parses
//! its arguments, calls the core and converts the result; no simulation logic lives here.
//!
//! Results cross the boundary as a JSON summary plus the time series as raw little-endian
//! column buffers (`f64` time, `u32` series index, `f64` value), which the Python side wraps
//! with `numpy.frombuffer` without creating one Python object per sample.
//! Runs release the interpreter lock, so threads (and the sweep's worker processes) run
//! simulations in parallel.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use mptcplab_core::units::{self, Amount, Dur, Rate};
use mptcplab_core::{ConfigError as CoreConfigError, Scenario};

create_exception!(
    _core,
    ConfigError,
    PyValueError,
    "An invalid scenario. Attributes: `path` (key path such as `connections[0].paths[0]`, empty \
     for the whole file), `message` (what is wrong and what is allowed) and `file` (the \
     scenario's source, set by the Python layer; None if unknown)."
);

create_exception!(
    _core,
    WorkBudgetExceeded,
    PyRuntimeError,
    "A run stopped because it needed more events than the `max_events` budget given to `run`."
);

/// Builds a `ConfigError` carrying `path`, `message` and `file = None` as attributes.
fn config_error(py: Python<'_>, e: &CoreConfigError) -> PyErr {
    let err = ConfigError::new_err(e.to_string());
    let value = err.value(py);
    let set = || -> PyResult<()> {
        value.setattr("path", e.path.as_str())?;
        value.setattr("message", e.message.as_str())?;
        value.setattr("file", py.None())?;
        Ok(())
    };
    match set() {
        Ok(()) => err,
        Err(other) => other,
    }
}

/// Little-endian bytes of a column.
fn le_bytes<T: Copy, const N: usize>(xs: &[T], to: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    let mut out = Vec::with_capacity(xs.len() * N);
    for &x in xs {
        out.extend_from_slice(&to(x));
    }
    out
}

type SeriesKey = (String, String, String);
type RunReturn<'py> = (String, Vec<SeriesKey>, Bound<'py, PyBytes>, Bound<'py, PyBytes>, Bound<'py, PyBytes>);

/// Validates and runs a scenario given as JSON; `seed` (if not None) replaces the scenario's.
///
/// Returns `(summary_json, series, time_s, series_index, value)`: `series` lists
/// `(entity_kind, entity, metric)` per series; the three column buffers hold little-endian
/// `f64` seconds, `u32` indices into `series`, and `f64` values.
/// With `max_events`, a run that needs more events raises `WorkBudgetExceeded` instead.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, max_events=None))]
fn run<'py>(
    py: Python<'py>,
    scenario_json: &str,
    seed: Option<u64>,
    max_events: Option<u64>,
) -> PyResult<RunReturn<'py>> {
    let json = scenario_json.to_owned();
    let done = py.detach(move || {
        mptcplab_core::run_json_within(&json, seed, max_events.unwrap_or(u64::MAX)).map(|out| {
            let summary = serde_json::to_string(&out.summary);
            let ts = out.timeseries;
            let cols = (
                le_bytes(&ts.time_s, f64::to_le_bytes),
                le_bytes(&ts.series_index, u32::to_le_bytes),
                le_bytes(&ts.value, f64::to_le_bytes),
            );
            let series: Vec<SeriesKey> = ts.series.into_iter().map(|m| (m.entity_kind, m.entity, m.metric)).collect();
            (summary, series, cols)
        })
    });
    let (summary, series, (t, i, v)) = done.map_err(|e| match e {
        mptcplab_core::RunError::Config(e) => config_error(py, &e),
        mptcplab_core::RunError::Budget { max_events, reached_s } => WorkBudgetExceeded::new_err(format!(
            "the run needed more than {max_events} events (stopped at {reached_s:.6} s of simulated time)"
        )),
    })?;
    let summary = summary.map_err(|e| PyRuntimeError::new_err(format!("cannot serialise the summary: {e}")))?;
    Ok((summary, series, PyBytes::new(py, &t), PyBytes::new(py, &i), PyBytes::new(py, &v)))
}

/// The bundled link presets: `(name, one-line description, TOML source with its derivation)`.
#[pyfunction]
fn presets() -> Vec<(String, String, String)> {
    mptcplab_core::config::presets()
        .into_iter()
        .map(|p| (p.name.to_string(), p.description, p.source.to_string()))
        .collect()
}

/// Validates a scenario given as JSON and returns it fully resolved (every default filled
/// in, units normalised) as pretty JSON.
#[pyfunction]
fn check(py: Python<'_>, scenario_json: &str) -> PyResult<String> {
    Scenario::from_json_str(scenario_json).map(|s| s.to_json_pretty()).map_err(|e| config_error(py, &e))
}

/// Parses a duration (`"10ms"`, `"2s"`) into integer nanoseconds.
#[pyfunction]
fn parse_duration_ns(text: &str) -> PyResult<u64> {
    units::parse_dur(text).map(|d| d.ns()).map_err(PyValueError::new_err)
}

/// Formats integer nanoseconds in the largest unit that keeps it whole (`"10ms"`).
#[pyfunction]
fn format_duration_ns(ns: u64) -> String {
    Dur::from_ns(ns).to_string()
}

/// Parses a bit rate (`"8Mbit"`, `"2MB/s"`) into bit/s.
#[pyfunction]
fn parse_rate_bps(text: &str) -> PyResult<u64> {
    units::parse_rate(text).map(|r| r.bps()).map_err(PyValueError::new_err)
}

/// Formats bit/s in the largest unit that keeps it whole (`"8Mbit"`).
#[pyfunction]
fn format_rate_bps(bps: u64) -> String {
    Rate(bps).to_string()
}

/// Parses a size (`"600KB"`, `"1MiB"`) into bytes.
#[pyfunction]
fn parse_size_bytes(text: &str) -> PyResult<u64> {
    units::parse_bytes(text).map_err(PyValueError::new_err)
}

/// Parses a queue limit into `(count, "packets" | "bytes")`.
#[pyfunction]
fn parse_queue(text: &str) -> PyResult<(u64, &'static str)> {
    units::parse_amount(text)
        .map(|a| match a {
            Amount::Packets(p) => (p, "packets"),
            Amount::Bytes(b) => (b, "bytes"),
        })
        .map_err(PyValueError::new_err)
}

/// Parses a probability (`"0.9%"`, `"0.009"`) into a fraction.
#[pyfunction]
fn parse_probability(text: &str) -> PyResult<f64> {
    units::parse_prob(text).map_err(PyValueError::new_err)
}

mod linkemu;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    m.add("WorkBudgetExceeded", m.py().get_type::<WorkBudgetExceeded>())?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration_ns, m)?)?;
    m.add_function(wrap_pyfunction!(format_duration_ns, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rate_bps, m)?)?;
    m.add_function(wrap_pyfunction!(format_rate_bps, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(parse_queue, m)?)?;
    m.add_function(wrap_pyfunction!(parse_probability, m)?)?;
    m.add_function(wrap_pyfunction!(linkemu::linkemu_main, m)?)?;
    Ok(())
}
