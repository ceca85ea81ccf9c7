//! `_core.linkemu_main(argv)`: the Linux backend's real-time link emulator
//! (`mptcplab-linkemu`, a library) inside the extension module, so that every installation of
//! the package that has the extension has the emulator too. The backend starts it as
//! `python -m mptcplab.kernel.linkemu ARGS` in the link namespace; the emulator loop runs
//! without the interpreter lock (nothing else runs in that process).

use pyo3::prelude::*;

/// Runs the link emulator with `argv` (its arguments, without a program name) until SIGTERM
/// or SIGINT, and returns its exit code (0, or 2 after an error printed on stderr). It installs
/// its own SIGTERM and SIGINT handlers and sets `PR_SET_PDEATHSIG`: call it only in a process
/// of its own.
#[pyfunction]
pub fn linkemu_main(py: Python<'_>, argv: Vec<String>) -> i32 {
    py.detach(move || mptcplab_linkemu::main(argv))
}
