//! hfcsim-core: a deterministic discrete-event engine for TCP over hybrid fibre-coax access
//! networks (Cohen & Ramanathan 1998) and over a single bottleneck (Lakshman & Madhow 1997).
//!
//! Time is integer nanoseconds, events are ordered by (time, insertion), every random process
//! draws from its own stream seeded by (run seed, component). TCP endpoints are pure state
//! machines handed the time (`tcp::sender`, `tcp::receiver`).

pub mod access;
pub mod apps;
pub mod capture;
pub mod fabric;
pub mod metrics;
pub mod net;
pub mod packet;
pub mod realtime;
pub mod rng;
pub mod rules;
pub mod scenario;
pub mod sched;
pub mod schema;
pub mod sim;
pub mod slab;
pub mod tcp;
pub mod time;
pub mod topology;

pub use scenario::Scenario;
pub use sim::{run, run_interruptible, Output, RunOptions};

/// Errors a caller of the JSON interface can get.
#[derive(Debug)]
pub enum Error {
    /// The scenario document does not fit the schema; the message names the field.
    Scenario(String),
    /// The caller's interrupt check asked the run to stop.
    Interrupted,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Scenario(m) => write!(f, "{m}"),
            Error::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for Error {}

/// The scenario schema, every key declared once (schema.toml; `schema.rs` reads it).
pub const SCHEMA_TOML: &str = include_str!("../schema.toml");

/// Parse and check a resolved scenario document.
pub fn parse_scenario(json: &str) -> Result<Scenario, Error> {
    Scenario::from_json(json).map_err(Error::Scenario)
}

/// Run a resolved scenario given as JSON; the result is the JSON object of `_core.pyi`.
pub fn run_json(json: &str, seed: u64, trace: bool) -> Result<String, Error> {
    run_json_interruptible(json, seed, trace, || false)
}

/// As `run_json`, polling `interrupted` during long runs.
pub fn run_json_interruptible(
    json: &str,
    seed: u64,
    trace: bool,
    interrupted: impl FnMut() -> bool,
) -> Result<String, Error> {
    let sc = parse_scenario(json)?;
    let out = run_interruptible(&sc, seed, RunOptions { trace, ..Default::default() }, interrupted)
        .ok_or(Error::Interrupted)?;
    Ok(output_json(&out))
}

/// A run's output as the JSON object of `_core.pyi` (`"trace": null` when not traced, or when the
/// caller took the trace out to write it elsewhere, as `hfcsim run --trace` does).
pub fn output_json(out: &Output) -> String {
    output_json_with(out, true)
}

/// As `output_json` with `"flows": null`, and the flows as columns (`metrics::columns`): a
/// million flows' results as JSON objects, then Python dicts, did not fit in memory (issue 26,
/// defect 3).
pub fn output_columns(out: &Output) -> (String, Vec<metrics::Column>) {
    (output_json_with(out, false), metrics::columns(&out.flows))
}

fn output_json_with(out: &Output, flows: bool) -> String {
    let doc = serde_json::json!({
        "flows": if flows { serde_json::to_value(&out.flows).expect("flows serialise") } else { serde_json::Value::Null },
        "engine": out.engine,
        "stations": out.stations,
        "pings": out.pings,
        "apps": out.app_rows,
        "trace": out.trace,
    });
    // `[[games]]` and `[[calls]]` (issue 37): present only with such sessions, so that every other
    // run's output stays as it was.
    let mut doc = doc;
    for (name, rows) in [("games", &out.games), ("calls", &out.calls)] {
        if !rows.is_empty() {
            doc[name] = serde_json::to_value(rows).expect("rows serialise");
        }
    }
    doc.to_string()
}
