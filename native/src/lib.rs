//! assistant-monitor's OTLP trace decoder and semantic-convention rules, compiled: the
//! `monitor._native` module.
//!
//! `TraceDecoder` (decode/) reads an OTLP request's bytes into span facts by the convention
//! rules (conventions/, one module per convention; facts/). `map_span` and `map_log_events`
//! apply the same rules to values Python decoded (the Python decoder, OTLP/JSON, log records;
//! pyvalue.rs converts them). `Assembler` (assemble/) turns spans into turns, which
//! `TurnSampler` (sample.rs) decides on. `GrpcServer` (grpc.rs) receives OTLP/gRPC.

mod alloc;
mod assemble;
mod conventions;
mod decode;
mod facts;
mod grpc;
mod json;
mod pyvalue;
mod readers;
mod sample;
#[cfg(feature = "testing")]
mod testing;
mod value;
mod wire;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

// The crate's hash maps (assembly's, a big JSON object's key index) are seeded per map, as
// hashbrown's default: std's SipHash was a tenth of assembly's tick, most of it hashing
// documents' contents to drop the repeated ones.
pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
pub(crate) type HashSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

/// The rules on one span, a panic in them (a bug) made an ordinary error: the span is refused
/// and counted, not the request failed (PyO3's PanicException is no Exception).
pub(crate) fn guarded<T>(rules: impl FnOnce() -> T) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(rules))
        .map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("the convention rules failed on a span"))
}

/// The rules (conventions/) on a span's attributes and events given as Python values (the
/// Python decoder's, OTLP/JSON's), into `facts`; returns the issues found.
#[pyfunction]
fn map_span(
    facts: &Bound<'_, facts::SpanFacts>,
    attrs: &Bound<'_, PyAny>,
    events: &Bound<'_, PyAny>,
) -> PyResult<Vec<(String, u64)>> {
    let attrs = pyvalue::attrs_from_py(attrs)?;
    let events = pyvalue::events_from_py(events)?;
    let mut issues = readers::Issues::default();
    let name = facts.borrow().name.clone();
    let mapped = guarded(|| conventions::extract(&attrs, &name, &events, &mut issues))?;
    facts.borrow_mut().set_facts(mapped);
    Ok(issues.0)
}

/// Log records' GenAI events about one span, in order, into its fragment `facts`; returns the
/// issues found.
#[pyfunction]
fn map_log_events(
    facts: &Bound<'_, facts::SpanFacts>,
    events: &Bound<'_, PyAny>,
) -> PyResult<Vec<(String, u64)>> {
    let events = pyvalue::events_from_py(events)?;
    let mut issues = readers::Issues::default();
    let mapped = guarded(|| conventions::extract_events(&events, &mut issues))?;
    facts.borrow_mut().set_facts(mapped);
    Ok(issues.0)
}

/// zlib's CRC-32 of `data`, resumed from `value` (`zlib.crc32(data, value)`), with SIMD: the
/// write-ahead log's record checksum, over every request body it logs.
#[pyfunction]
#[pyo3(signature = (data, value = 0))]
fn crc32(data: &[u8], value: u32) -> u32 {
    let mut hasher = crc32fast::Hasher::new_with_initial(value);
    hasher.update(data);
    hasher.finalize()
}

/// What each convention reads (conventions::Convention), as Python reads it.
#[pyclass(frozen, get_all, module = "monitor._native")]
struct Convention {
    name: &'static str,
    /// fact -> the span attributes it is read from ("*": any index or key path)
    attributes: Py<PyDict>,
    /// fact -> the events it is read from
    events: Py<PyDict>,
}

/// `CONVENTIONS`: name -> Convention, in the order the mappers run.
fn declared_conventions(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let by_fact = |reads: &[(&str, &[&str])]| -> PyResult<Py<PyDict>> {
        let dict = PyDict::new(py);
        for (fact, keys) in reads {
            dict.set_item(fact, PyList::new(py, *keys)?)?;
        }
        Ok(dict.unbind())
    };
    let declared = PyDict::new(py);
    for (convention, _) in conventions::CONVENTIONS {
        let name = convention.name;
        let (attributes, events) = (by_fact(convention.attributes)?, by_fact(convention.events)?);
        declared.set_item(name, Convention { name, attributes, events })?;
    }
    Ok(declared)
}

/// `monitor._native`: the compiled module of the `monitor` package.
#[pymodule]
#[pyo3(name = "_native")]
fn native_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // A panic's default message may quote the text it failed on: where it happened, only.
    std::panic::set_hook(Box::new(|info| {
        let at = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
        eprintln!("monitor._native: a bug at {at}");
    }));
    m.add_class::<decode::TraceDecoder>()?;
    m.add_class::<decode::DecodedTraces>()?;
    m.add_class::<decode::Refusal>()?;
    m.add_class::<grpc::GrpcServer>()?;
    m.add_class::<grpc::GrpcCall>()?;
    m.add_class::<facts::SpanFacts>()?;
    m.add_function(wrap_pyfunction!(facts::count_conventions, m)?)?;
    m.add_function(wrap_pyfunction!(facts::register_models, m)?)?;
    m.add_class::<assemble::Assembler>()?;
    m.add_class::<assemble::Added>()?;
    m.add_class::<assemble::Completed>()?;
    m.add_class::<assemble::TurnRecord>()?;
    m.add_class::<sample::TurnSampler>()?;
    m.add_function(wrap_pyfunction!(crc32, m)?)?;
    m.add_function(wrap_pyfunction!(map_span, m)?)?;
    m.add_function(wrap_pyfunction!(map_log_events, m)?)?;
    m.add("EVENT_PREFIXES", conventions::EVENT_PREFIXES.to_vec())?;
    m.add_class::<Convention>()?;
    m.add("CONVENTIONS", declared_conventions(m.py())?)?;
    #[cfg(feature = "testing")]
    testing::register(m)?;
    Ok(())
}
