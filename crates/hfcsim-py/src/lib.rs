//! PyO3 bindings of hfcsim: thin, no logic (STYLE.md item 10). Scenario errors become
//! `ValueError`, an engine panic becomes `RuntimeError`; runs release the GIL and stop on
//! Ctrl-C (`KeyboardInterrupt`).

use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// Run one resolved scenario (JSON) with `seed`; returns the result as JSON.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed, trace=false))]
fn run(py: Python<'_>, scenario_json: &str, seed: u64, trace: bool) -> PyResult<String> {
    let json = scenario_json.to_owned();
    let result = py.detach(move || {
        std::panic::catch_unwind(move || {
            // Honour Ctrl-C during long runs: take the GIL briefly every 2^18 events.
            let interrupted = || Python::attach(|py| py.check_signals().is_err());
            hfcsim_core::run_json_interruptible(&json, seed, trace, interrupted)
        })
    });
    match result {
        Ok(Ok(out)) => Ok(out),
        Ok(Err(hfcsim_core::Error::Interrupted)) => Err(PyKeyboardInterrupt::new_err("interrupted")),
        Ok(Err(e)) => Err(PyValueError::new_err(e.to_string())),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(PyRuntimeError::new_err(format!("engine panic: {msg}")))
        }
    }
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
