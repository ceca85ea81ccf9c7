//! `mptcplab._core`: the PyO3 binding of `mptcplab-core`. Glue only: every function parses
//! its arguments, calls the core and converts the result; no simulation logic lives here.
//!
//! Results cross the boundary as a JSON summary plus the time series as raw little-endian
//! column buffers (`f64` time, `u32` series index, `f64` value), which the Python side wraps
//! with `numpy.frombuffer` without creating one Python object per sample.
//! Runs release the interpreter lock, so threads (and the sweep's worker processes) run
//! simulations in parallel; a run simulates on a thread of its own while the calling thread
//! keeps answering signals, so Ctrl-C stops it at once (`run_interruptibly`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use mptcplab_core::units::{self, Amount, Dur, Rate};
use mptcplab_core::{
    CaptureError, CaptureOptions, CapturePoint, ConfigError as CoreConfigError, RunError, RunOptions, Scenario,
};

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
type RunReturn<'py> =
    (String, Vec<SeriesKey>, Bound<'py, PyBytes>, Bound<'py, PyBytes>, Bound<'py, PyBytes>, Vec<HandoffRow>);
/// One hand-off: connection, path, time (s), data sequence, bytes, retransmitted.
type HandoffRow = (String, String, f64, u64, u64, bool);
/// A finished run, encoded on the simulation's thread: the summary (JSON), the series and the
/// hand-offs.
type Encoded = (serde_json::Result<String>, Vec<SeriesKey>, (Vec<u8>, Vec<u8>, Vec<u8>), Vec<HandoffRow>);

/// How long the calling thread waits for the simulation between two looks at the
/// interpreter's signals: Ctrl-C stops a run within this slice plus the engine's own
/// look at its cancellation flag (every few thousand events, a few milliseconds).
const SIGNAL_SLICE: Duration = Duration::from_millis(25);

/// Runs the scenario and encodes its output (on the simulation's thread).
fn run_and_encode(json: &str, seed: Option<u64>, opts: &RunOptions) -> Result<Encoded, RunError> {
    mptcplab_core::run_json_with(json, seed, opts).map(|out| {
        let summary = serde_json::to_string(&out.summary);
        let ts = out.timeseries;
        let cols = (
            le_bytes(&ts.time_s, f64::to_le_bytes),
            le_bytes(&ts.series_index, u32::to_le_bytes),
            le_bytes(&ts.value, f64::to_le_bytes),
        );
        let series: Vec<SeriesKey> = ts.series.into_iter().map(|m| (m.entity_kind, m.entity, m.metric)).collect();
        let handoffs = out
            .handoffs
            .into_iter()
            .map(|h| (h.connection, h.path, h.time_s, h.data_seq, h.bytes, h.retransmit))
            .collect();
        (summary, series, cols, handoffs)
    })
}

/// Runs `work` on a thread of its own while this thread, without the interpreter lock,
/// waits for it in short slices and in between runs Python's signal handlers: a
/// `KeyboardInterrupt` (or any exception a handler raises) sets `cancel`, waits for the
/// simulation to stop at its next look at the flag, and is returned. A panic of the
/// simulation is resumed here, where PyO3 turns it into a Python exception as before.
fn run_interruptibly<T: Send>(py: Python<'_>, cancel: &AtomicBool, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel();
        let worker = std::thread::Builder::new()
            .name("mptcplab-run".into())
            // As much stack as the main thread of a process gets by default on Linux.
            .stack_size(8 << 20)
            .spawn_scoped(s, move || {
                // The receiver may be gone only once the caller gave up on the result.
                let _ = tx.send(work());
            })
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start the simulation's thread: {e}")))?;
        let mut rx = rx;
        loop {
            let (back, got) = py.detach(move || {
                let got = rx.recv_timeout(SIGNAL_SLICE);
                (rx, got)
            });
            rx = back;
            match got {
                Ok(out) => {
                    py.detach(|| worker.join()).unwrap_or_else(|p| std::panic::resume_unwind(p));
                    return Ok(out);
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    // The worker ended without a result: it panicked.
                    let p = py.detach(|| worker.join()).expect_err("a worker that sent nothing panicked");
                    std::panic::resume_unwind(p);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if let Err(e) = py.check_signals() {
                        cancel.store(true, Ordering::Relaxed);
                        // A panic while stopping is moot: the run is being abandoned.
                        let _ = py.detach(|| worker.join());
                        return Err(e);
                    }
                }
            }
        }
    })
}

/// Validates and runs a scenario given as JSON; `seed` (if not None) replaces the scenario's.
///
/// Returns `(summary_json, series, time_s, series_index, value)`: `series` lists
/// `(entity_kind, entity, metric)` per series; the three column buffers hold little-endian
/// `f64` seconds, `u32` indices into `series`, and `f64` values.
/// With `max_events`, a run that needs more events raises `WorkBudgetExceeded` instead.
/// With `sched_log`, a sixth item lists every hand-off of data to a subflow as
/// `(connection, path, time_s, data_seq, bytes, retransmit)` (empty without).
/// With `pcap_dir`, packet captures are written there (`pcap_per`: `host`, `interface` or
/// `link`; `snaplen`: bytes kept per packet): the directory should be new and empty, and a
/// file that cannot be written raises `OSError` (errno, strerror, the file) after the
/// run's capture files are removed. The run can be interrupted (Ctrl-C raises
/// `KeyboardInterrupt` within a few tens of milliseconds, its captures removed).
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, max_events=None, pcap_dir=None, pcap_per="host", snaplen=None, sched_log=false))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    scenario_json: &str,
    seed: Option<u64>,
    max_events: Option<u64>,
    pcap_dir: Option<PathBuf>,
    pcap_per: &str,
    snaplen: Option<u32>,
    sched_log: bool,
) -> PyResult<RunReturn<'py>> {
    let per = CapturePoint::from_name(pcap_per)
        .ok_or_else(|| PyValueError::new_err(format!("pcap_per `{pcap_per}` is not one of host, interface, link")))?;
    let capture = pcap_dir.map(|dir| CaptureOptions { dir, per, snaplen });
    let json = scenario_json.to_owned();
    let cancel = AtomicBool::new(false);
    let opts = RunOptions { max_events, capture, cancel: Some(&cancel), sched_log };
    let done = run_interruptibly(py, &cancel, || run_and_encode(&json, seed, &opts))?;
    let (summary, series, (t, i, v), handoffs) = done.map_err(|e| match e {
        RunError::Config(e) => config_error(py, &e),
        RunError::Budget { max_events, reached_s } => WorkBudgetExceeded::new_err(format!(
            "the run needed more than {max_events} events (stopped at {reached_s:.6} s of simulated time)"
        )),
        RunError::Capture(e) => capture_error(&e),
        RunError::Cancelled => PyKeyboardInterrupt::new_err("interrupted"),
    })?;
    let summary = summary.map_err(|e| PyRuntimeError::new_err(format!("cannot serialise the summary: {e}")))?;
    Ok((summary, series, PyBytes::new(py, &t), PyBytes::new(py, &i), PyBytes::new(py, &v), handoffs))
}

/// `OSError(errno, strerror, file)` for a capture file that could not be written (errno
/// None when the error did not come from the system).
fn capture_error(e: &CaptureError) -> PyErr {
    let text = e.error.to_string();
    // Rust's text of a system error ends in " (os error N)"; Python's strerror has no suffix.
    let strerror = text.split(" (os error ").next().unwrap_or(&text).to_string();
    PyOSError::new_err((e.error.raw_os_error(), strerror, e.file.clone()))
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
