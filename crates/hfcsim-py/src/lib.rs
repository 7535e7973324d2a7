//! PyO3 bindings of hfcsim: thin, no logic (docs/design.md, habit 10). Scenario errors become
//! `ValueError`, an engine panic becomes `RuntimeError`; runs release the GIL and stop on
//! Ctrl-C (`KeyboardInterrupt`).

use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::cell::{Cell, RefCell};
use std::io::Write;
use std::panic::UnwindSafe;
use std::path::PathBuf;

thread_local! {
    /// Whether this thread is inside an engine call (`guarded`): its panics are reported as a
    /// `RuntimeError`, so the panic hook stays quiet about them.
    static IN_ENGINE: Cell<bool> = const { Cell::new(false) };
    /// Where the last such panic happened, for the error message.
    static PANIC_AT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Panics inside engine calls become one `RuntimeError`: Rust's default hook would also print
/// "thread panicked at ..." (and a backtrace under RUST_BACKTRACE) to the user's terminal. Other
/// panics in the process keep the hook they had.
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_ENGINE.with(Cell::get) {
                let at = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
                PANIC_AT.with(|p| *p.borrow_mut() = at);
            } else {
                previous(info);
            }
        }));
    });
}

/// `catch_unwind` with the quiet hook: the engine's panics come back as `Err`.
fn guarded<T>(f: impl FnOnce() -> T + UnwindSafe) -> std::thread::Result<T> {
    IN_ENGINE.with(|g| g.set(true));
    PANIC_AT.with(|p| p.borrow_mut().take());
    let result = std::panic::catch_unwind(f);
    IN_ENGINE.with(|g| g.set(false));
    result
}

/// A run's result for Python: its JSON, or with `columns` its JSON without the flows and the flows
/// as columns.
enum Doc {
    Json(String),
    Columns(String, Vec<hfcsim_core::metrics::Column>),
}

impl Doc {
    fn of(out: hfcsim_core::Output, columns: bool) -> Doc {
        if columns {
            let (json, cols) = hfcsim_core::output_columns(&out);
            Doc::Columns(json, cols)
        } else {
            Doc::Json(hfcsim_core::output_json(&out))
        }
    }

    /// The JSON as `str`, or `(str, [(name, kind, data, state, strings), ...])`, each column's
    /// `data` and `state` as `bytes` (hfcsim-core metrics::Column), each column freed once copied.
    fn into_py(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        use pyo3::types::PyBytes;
        match self {
            Doc::Json(json) => Ok(json.into_pyobject(py)?.into_any().unbind()),
            Doc::Columns(json, cols) => {
                let mut list = Vec::with_capacity(cols.len());
                for c in cols {
                    let data = PyBytes::new(py, &c.data).unbind();
                    let state = PyBytes::new(py, &c.state).unbind();
                    list.push((c.name, c.kind.to_string(), data, state, c.strings));
                }
                Ok((json, list).into_pyobject(py)?.into_any().unbind())
            }
        }
    }
}

/// Run one resolved scenario (JSON) with `seed`; returns the result as JSON.
/// With `columns`, the result is `(json, flow_columns)`: the JSON's `"flows"` null and the flows
/// as columns (`Doc::into_py`).
#[pyfunction]
#[pyo3(signature = (scenario_json, seed, trace=false, columns=false))]
fn run(py: Python<'_>, scenario_json: &str, seed: u64, trace: bool, columns: bool) -> PyResult<Py<PyAny>> {
    let json = scenario_json.to_owned();
    let result = py.detach(move || {
        guarded(move || {
            // Honour Ctrl-C during long runs: take the GIL briefly every 2^18 events.
            let interrupted = || Python::attach(|py| py.check_signals().is_err());
            let sc = hfcsim_core::parse_scenario(&json)?;
            let opts = hfcsim_core::RunOptions { trace, ..Default::default() };
            let out =
                hfcsim_core::run_interruptible(&sc, seed, opts, interrupted).ok_or(hfcsim_core::Error::Interrupted)?;
            drop(sc);
            Ok::<_, hfcsim_core::Error>(Doc::of(out, columns))
        })
    });
    match result {
        Ok(Ok(out)) => out.into_py(py),
        Ok(Err(hfcsim_core::Error::Interrupted)) => Err(PyKeyboardInterrupt::new_err("interrupted")),
        Ok(Err(e)) => Err(PyValueError::new_err(e.to_string())),
        Err(panic) => Err(panic_error(panic)),
    }
}

/// What `run_trace_csv` can fail with, besides a panic.
enum TraceCsvError {
    Engine(hfcsim_core::Error),
    Io(std::io::Error),
}

/// Run one resolved scenario with the trace on and write the trace as CSV to `path`, an existing
/// file (truncated; the caller makes it and renames it into place), through a buffer straight from
/// the engine's columns: no copy of the trace as JSON or Python objects. Returns the result JSON
/// (its `"trace"` null) and the trace's row count. An I/O failure raises `OSError`.
/// With `columns`, the result JSON is `(json, flow_columns)` as `run` gives it.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed, path, columns=false))]
fn run_trace_csv(
    py: Python<'_>,
    scenario_json: &str,
    seed: u64,
    path: PathBuf,
    columns: bool,
) -> PyResult<(Py<PyAny>, u64)> {
    let json = scenario_json.to_owned();
    let result = py.detach(move || {
        guarded(move || {
            let interrupted = || Python::attach(|py| py.check_signals().is_err());
            let sc = hfcsim_core::parse_scenario(&json).map_err(TraceCsvError::Engine)?;
            let opts = hfcsim_core::RunOptions { trace: true, ..Default::default() };
            let mut out = hfcsim_core::run_interruptible(&sc, seed, opts, interrupted)
                .ok_or(TraceCsvError::Engine(hfcsim_core::Error::Interrupted))?;
            let trace = out.trace.take().unwrap_or_default();
            let doc = Doc::of(out, columns);
            let file = std::fs::OpenOptions::new().write(true).truncate(true).open(&path).map_err(TraceCsvError::Io)?;
            let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
            let rows = trace.write_csv(&mut w, interrupted).map_err(TraceCsvError::Io)?;
            w.flush().map_err(TraceCsvError::Io)?;
            let file = w.into_inner().map_err(|e| TraceCsvError::Io(e.into_error()))?;
            // Durable before the caller renames it into place; a device or pipe (/dev/null) cannot sync.
            if file.metadata().map_err(TraceCsvError::Io)?.is_file() {
                file.sync_all().map_err(TraceCsvError::Io)?;
            }
            Ok((doc, rows))
        })
    });
    match result {
        Ok(Ok((doc, rows))) => Ok((doc.into_py(py)?, rows)),
        Ok(Err(TraceCsvError::Engine(hfcsim_core::Error::Interrupted))) => {
            Err(PyKeyboardInterrupt::new_err("interrupted"))
        }
        Ok(Err(TraceCsvError::Engine(e))) => Err(PyValueError::new_err(e.to_string())),
        Ok(Err(TraceCsvError::Io(e))) if e.kind() == std::io::ErrorKind::Interrupted => {
            Err(PyKeyboardInterrupt::new_err("interrupted"))
        }
        // OSError(errno, message): Python picks the subclass (PermissionError, ...) from the errno.
        Ok(Err(TraceCsvError::Io(e))) => match e.raw_os_error() {
            Some(code) => Err(PyOSError::new_err((code, e.to_string()))),
            None => Err(PyOSError::new_err(e.to_string())),
        },
        Err(panic) => Err(panic_error(panic)),
    }
}

/// Open an existing file (the caller made it and renames it into place) for writing, truncated.
fn open_out(path: &PathBuf) -> std::io::Result<std::io::BufWriter<std::fs::File>> {
    let file = std::fs::OpenOptions::new().write(true).truncate(true).open(path)?;
    Ok(std::io::BufWriter::with_capacity(1 << 20, file))
}

/// Flush, and make durable before the caller renames it into place (a device or pipe such as
/// /dev/null cannot sync).
fn close_out(w: std::io::BufWriter<std::fs::File>) -> std::io::Result<()> {
    let file = w.into_inner().map_err(|e| e.into_error())?;
    if file.metadata()?.is_file() {
        file.sync_all()?;
    }
    Ok(())
}

/// Run one resolved scenario with the capture on and write every packet the endpoints sent and
/// received to `path` as pcapng (hfcsim-core capture/), each frame cut to its headers plus at
/// most `snap_payload` payload bytes; with `trace_csv`, also write the trace there as
/// `run_trace_csv` does. Both paths are existing files, truncated. Returns the result JSON (its
/// `"trace"` null), the packets written and the trace's rows (0 without `trace_csv`). A scenario
/// the capture cannot address raises `ValueError`; an I/O failure `OSError`.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed, path, trace_csv=None, snap_payload=0, columns=false))]
fn run_pcap(
    py: Python<'_>,
    scenario_json: &str,
    seed: u64,
    path: PathBuf,
    trace_csv: Option<PathBuf>,
    snap_payload: u32,
    columns: bool,
) -> PyResult<(Py<PyAny>, u64, u64)> {
    let json = scenario_json.to_owned();
    let result = py.detach(move || {
        guarded(move || {
            let interrupted = || Python::attach(|py| py.check_signals().is_err());
            let sc = hfcsim_core::parse_scenario(&json).map_err(TraceCsvError::Engine)?;
            hfcsim_core::capture::check(&sc).map_err(|m| TraceCsvError::Engine(hfcsim_core::Error::Scenario(m)))?;
            let opts = hfcsim_core::RunOptions { trace: trace_csv.is_some(), pcap: true };
            let mut out = hfcsim_core::run_interruptible(&sc, seed, opts, interrupted)
                .ok_or(TraceCsvError::Engine(hfcsim_core::Error::Interrupted))?;
            let trace = out.trace.take();
            let capture = out.capture.take().unwrap_or_default();
            let bursts = out.bursts.take();
            let doc = Doc::of(out, columns);
            let mut w = open_out(&path).map_err(TraceCsvError::Io)?;
            let written = hfcsim_core::capture::write_pcapng(&sc, &capture, bursts.as_deref(), snap_payload, &mut w)
                .map_err(TraceCsvError::Io)?;
            close_out(w).map_err(TraceCsvError::Io)?;
            drop(capture);
            drop(bursts);
            let mut rows = 0;
            if let (Some(trace), Some(csv)) = (trace, trace_csv) {
                let mut w = open_out(&csv).map_err(TraceCsvError::Io)?;
                rows = trace.write_csv(&mut w, interrupted).map_err(TraceCsvError::Io)?;
                w.flush().map_err(TraceCsvError::Io)?;
                close_out(w).map_err(TraceCsvError::Io)?;
            }
            Ok((doc, written.packets, rows))
        })
    });
    match result {
        Ok(Ok((doc, packets, rows))) => Ok((doc.into_py(py)?, packets, rows)),
        Ok(Err(e)) => Err(io_or_engine_error(e)),
        Err(panic) => Err(panic_error(panic)),
    }
}

fn io_or_engine_error(e: TraceCsvError) -> PyErr {
    match e {
        TraceCsvError::Engine(hfcsim_core::Error::Interrupted) => PyKeyboardInterrupt::new_err("interrupted"),
        TraceCsvError::Engine(e) => PyValueError::new_err(e.to_string()),
        TraceCsvError::Io(e) if e.kind() == std::io::ErrorKind::Interrupted => {
            PyKeyboardInterrupt::new_err("interrupted")
        }
        // OSError(errno, message): Python picks the subclass (PermissionError, ...) from the errno.
        TraceCsvError::Io(e) => match e.raw_os_error() {
            Some(code) => PyOSError::new_err((code, e.to_string())),
            None => PyOSError::new_err(e.to_string()),
        },
    }
}

fn panic_error(panic: Box<dyn std::any::Any + Send>) -> PyErr {
    let msg = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into());
    let at = PANIC_AT.with(|p| p.borrow_mut().take()).map(|at| format!(" at {at}")).unwrap_or_default();
    PyRuntimeError::new_err(format!("engine panic: {msg}{at}"))
}

/// An emulation (crates/hfcsim-emu): the scenario's network between two network namespaces on
/// the wall clock. Made by `Emulation(scenario_json, seed, fifo, cpu, spin_us, pcap, snap_payload)`
/// (`pcap`: a file to write what crossed to at `stop()`), which creates the
/// namespaces and devices; `start()` runs the relay, `stop()` returns its report (JSON), `close()`
/// removes the namespaces (also when the object goes away). An OS failure raises `OSError`.
#[pyclass(unsendable)]
struct Emulation {
    session: hfcsim_emu::Session,
}

fn os_error(e: std::io::Error) -> PyErr {
    match e.raw_os_error() {
        Some(code) => PyOSError::new_err((code, e.to_string())),
        None => PyOSError::new_err(e.to_string()),
    }
}

#[pymethods]
impl Emulation {
    #[new]
    #[pyo3(signature = (scenario_json, seed, fifo=true, cpu=None, spin_us=80.0, pcap=None, snap_payload=0))]
    fn new(
        scenario_json: &str,
        seed: u64,
        fifo: bool,
        cpu: Option<usize>,
        spin_us: f64,
        pcap: Option<PathBuf>,
        snap_payload: u32,
    ) -> PyResult<Emulation> {
        let sc = hfcsim_core::parse_scenario(scenario_json).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let timing = hfcsim_emu::relay::Timing { spin_ns: (spin_us.max(0.0) * 1e3) as u64, fifo, cpu };
        let opts = hfcsim_emu::Options { timing, pcap: pcap.map(|p| (p, snap_payload)) };
        let session = hfcsim_emu::Session::open(&sc, seed, opts).map_err(os_error)?;
        Ok(Emulation { session })
    }

    #[getter]
    fn server_ns(&self) -> String {
        self.session.server_ns.clone()
    }

    #[getter]
    fn client_ns(&self) -> String {
        self.session.client_ns.clone()
    }

    #[getter]
    fn modems(&self) -> u32 {
        self.session.modems
    }

    /// The built-in workload's flow i listens on `flow_port0 + i` at its receiver (the relay classifies by it).
    #[getter]
    fn flow_port0(&self) -> u16 {
        hfcsim_emu::relay::FLOW_PORT0
    }

    /// The built-in workload's ping i uses ICMP identifier `ping_ident0 + i` (the relay classifies by it).
    #[getter]
    fn ping_ident0(&self) -> u16 {
        hfcsim_emu::relay::PING_IDENT0
    }

    #[getter]
    fn removed_stale(&self) -> Vec<String> {
        self.session.removed_stale.clone()
    }

    /// Set a net.* sysctl inside the "server" or "client" namespace.
    fn sysctl(&self, side: &str, key: &str, value: &str) -> PyResult<()> {
        let ns = match side {
            "server" => &self.session.server_ns,
            "client" => &self.session.client_ns,
            _ => return Err(PyValueError::new_err(format!("side {side:?}: server or client"))),
        };
        hfcsim_emu::netns::sysctl(ns, key, value).map_err(os_error)
    }

    fn start(&mut self) -> PyResult<()> {
        self.session.start().map_err(os_error)
    }

    fn stop(&mut self) -> PyResult<String> {
        self.session.stop().map_err(os_error)
    }

    fn close(&mut self) -> PyResult<()> {
        self.session.close().map_err(os_error)
    }
}

/// Namespaces of killed emulations (our prefix, pid gone) removed; their names.
#[pyfunction]
fn emulation_cleanup() -> PyResult<Vec<String>> {
    hfcsim_emu::netns::remove_stale().map_err(os_error)
}

/// The scenario schema (crates/hfcsim-core/schema.toml) as TOML text: Python builds its keys from it.
#[pyfunction]
fn schema() -> &'static str {
    hfcsim_core::SCHEMA_TOML
}

/// The named presets as JSON, each whole (a preset's `base` laid under it).
#[pyfunction]
fn presets() -> &'static str {
    hfcsim_core::schema::schema().presets_json()
}

/// Check a resolved scenario document as the engine will run it: ValueError with one line naming
/// the key (the engine's cross-key rules, written once, in Rust).
#[pyfunction]
fn check(scenario_json: &str) -> PyResult<()> {
    match guarded(|| hfcsim_core::parse_scenario(scenario_json).map(|_| ())) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(PyValueError::new_err(e.to_string())),
        Err(panic) => Err(panic_error(panic)),
    }
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    install_panic_hook();
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_trace_csv, m)?)?;
    m.add_function(wrap_pyfunction!(run_pcap, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(emulation_cleanup, m)?)?;
    m.add_class::<Emulation>()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_panic_is_caught_quietly_with_its_place() {
        install_panic_hook();
        let result = guarded(|| -> u32 { panic!("boom") });
        assert!(result.is_err());
        let at = PANIC_AT.with(|p| p.borrow().clone()).expect("the hook recorded where");
        assert!(at.starts_with("crates/hfcsim-py/src/lib.rs:"), "{at}");
        assert!(!IN_ENGINE.with(Cell::get), "the flag is cleared after the call");
    }
}
