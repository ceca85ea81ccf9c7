"""Type stub of the private extension module built from crates/py (PyO3 glue over the engine)."""

__version__: str

class WorkBudgetExceeded(RuntimeError):
    """A run needed more events than the `max_events` budget given to `run`."""

class ConfigError(ValueError):
    """An invalid scenario or value: `path` (key path, may be empty), `message`, `file`."""

    path: str
    message: str
    file: str | None

def run(
    scenario_json: str,
    seed: int | None = None,
    max_events: int | None = None,
    pcap_dir: str | None = None,
    pcap_per: str = "host",
    snaplen: int | None = None,
    sched_log: bool = False,
) -> tuple[str, list[tuple[str, str, str]], bytes, bytes, bytes, list[tuple[str, str, float, int, int, bool]]]:
    """Runs a scenario on a thread of its own, without holding the interpreter lock; the
    calling thread keeps running signal handlers, so Ctrl-C raises KeyboardInterrupt at once.

    Returns (summary_json, series, time_s, series_index, value): `series` lists
    (entity_kind, entity, metric); the buffers are little-endian f64 seconds, u32 indices
    into `series`, and f64 values. Raises ConfigError for an invalid scenario, and
    WorkBudgetExceeded when `max_events` is given and the run needs more events. With
    `pcap_dir`, captures are written there (`pcap_per`: host, interface or link); a capture
    that cannot be written raises OSError(errno, strerror, file), its files removed. The
    sixth item lists, with `sched_log`, every hand-off of data to a subflow as (connection,
    path, time_s, data_seq, bytes, retransmit); it is empty without.
    """

def check(scenario_json: str) -> str:
    """Validates a scenario; returns it fully resolved as pretty JSON. Raises ConfigError."""

def presets() -> list[tuple[str, str, str]]:
    """The bundled link presets: (name, one-line description, TOML source with its derivation)."""

def parse_duration_ns(text: str) -> int: ...
def format_duration_ns(ns: int) -> str: ...
def parse_rate_bps(text: str) -> int: ...
def format_rate_bps(bps: int) -> str: ...
def parse_size_bytes(text: str) -> int: ...
def parse_queue(text: str) -> tuple[int, str]: ...
def parse_probability(text: str) -> float: ...
