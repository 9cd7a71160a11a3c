//! A batch of traces taken out of the buffer: their turns composed, counted and decided on;
//! recorded (or, with no sampler, built) where Python needs them.

use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyBytes, PyDict, PyList, PyTuple};

use super::compose::{compose, Turn};
use super::output::hex;
use super::{Assembler, Pending, Revision};
use crate::facts::{truthy, SpanFacts};
use crate::sample::Traits;
use crate::HashMap;

/// A composed turn as Python gets it: its ids and its JSON, which
/// `AssistantTurn.model_validate_json` reads as the turn `to_py` builds (no Python object is
/// built for it while ingest waits). What the judge queue stores of a kept turn; what
/// /api/turns shows of the latest.
#[pyclass(module = "monitor._native", frozen, get_all)]
pub struct TurnRecord {
    trace_id: String,
    service: String,
    route: Option<String>,
    json: String,
    /// 0 as first completed; each later one re-opened by late spans that changed it.
    revision: u32,
}

#[pymethods]
impl TurnRecord {
    /// Its JSON's bytes (what /api/turns holds it to), without copying the JSON out.
    #[getter]
    fn size(&self) -> usize {
        self.json.len()
    }
}

/// Turns completed at once. Python gets objects only for the turns passed on and the batch's
/// last `recent`; every turn is counted and its trace id listed.
#[pyclass(module = "monitor._native", frozen, get_all)]
pub struct Completed {
    /// (turn, reason, inclusion probability) of each turn passed on, in order: a `TurnRecord`
    /// kept by the sampler (its always-keep rule or "rate"), or, when there is no sampler, every
    /// turn ("all") as an AssistantTurn.
    passed: Py<PyList>,
    /// The batch's last turns (up to `recent`), oldest first, as `TurnRecord`s.
    recent: Py<PyList>,
    /// Every completed turn's trace id (bytes), in order.
    trace_ids: Py<PyList>,
    /// Turns the sampler decided against.
    not_sampled: u64,
    /// (service, route) -> [turns, tool calls ok, tool calls failed, repeated tool calls (loops),
    /// recoveries, nanoseconds in tools, input tokens, output tokens]: `TURN_COUNTS`.
    received: Py<PyDict>,
    /// (service, route) -> each turn's steps (the trajectory's length), in order.
    steps: Py<PyDict>,
    /// Each turn of a conversation, in order: (conversation id, service, route, question,
    /// answered, failed, feedback score, the session ended, its tool calls' and hand-offs'
    /// names): what monitor/sessions.py follows sessions by.
    sessions: Py<PyList>,
    no_question: u64,
    no_answer: u64,
    /// completion reason -> turns.
    completions: Py<PyDict>,
    /// Kept turns re-opened by late spans: passed on again as a revision (`revised`; not counted
    /// above again), or left as judged (`unchanged`: nothing a judge reads changed).
    revised: u64,
    unchanged: u64,
    /// Bytes of the turns Python holds (passed on, recent): a record's JSON, a built turn's span
    /// facts as the assembler accounted them. The turn queue's byte bound counts it.
    size: usize,
}

/// What `Assembler.add` did with a batch of spans.
#[pyclass(module = "monitor._native", frozen, get_all)]
pub struct Added {
    /// The turns flushed early to make room.
    pub flushed: Py<Completed>,
    /// Spans refused as late: their turn was completed already.
    pub late: u64,
    /// Spans refused because their trace holds `max_spans_per_trace` already.
    pub too_large: u64,
    /// The limit ("traces", "spans", "bytes") each early flush was for.
    pub evicted: Vec<&'static str>,
}

impl Assembler {
    /// The turns of traces taken out: composed, counted, decided on; recorded (or, with no
    /// sampler, built) where Python needs them. The backlog grows by each turn kept, as the
    /// judge queue will. A kept turn is held for late spans (`now`: None at shutdown); a
    /// re-opened one is passed on again only if what a judge reads of it changed.
    pub(super) fn complete(
        &mut self,
        py: Python<'_>,
        done: Vec<(Vec<u8>, Pending, &'static str)>,
        backlog: i64,
        now: Option<f64>,
    ) -> PyResult<Completed> {
        let sampler = self.sampler.as_ref().map(|s| s.get());
        let (passed, recent, trace_ids) = (PyList::empty(py), PyList::empty(py), PyList::empty(py));
        let sessions = PyList::empty(py);
        // (service, route) -> counts and steps, in order of first appearance (the label guards
        // admit new values in that order); indexed: a batch may carry many.
        let mut received: Vec<(Key, [u64; TURN_COUNTS], Vec<u64>)> = Vec::new();
        let mut index: HashMap<Key, usize> = HashMap::default();
        let (mut kept, mut not_sampled, mut no_question, mut no_answer) = (0i64, 0, 0, 0);
        let mut size = 0;
        let mut completions: Vec<(&str, u64)> = Vec::new();
        let (mut revised, mut unchanged) = (0, 0);
        let mut to_hold: Vec<(usize, Revision)> = Vec::new();
        let spans: Vec<Vec<PyRef<'_, SpanFacts>>> =
            done.iter().map(|(_, pending, _)| pending.spans.iter().map(|s| s.borrow(py)).collect()).collect();
        let recent_from = done.len().saturating_sub(self.recent);
        for (n, ((trace_id, pending, reason), spans)) in done.iter().zip(&spans).enumerate() {
            let mut turn = compose(trace_id, spans.iter().map(|s| &**s).collect(), reason);
            if let Some(before) = pending.revision {
                let digest = turn.judged_digest();
                trace_ids.append(PyBytes::new(py, trace_id))?;
                if digest == before.digest {
                    unchanged += 1;
                    to_hold.push((n, before));
                    continue;
                }
                revised += 1;
                let revision = Revision { number: before.number + 1, digest, ..before };
                turn.revision = revision.number;
                let passed_turn = if sampler.is_some() {
                    let record = record(py, &turn)?;
                    size += record.borrow().json.len();
                    record.into_any()
                } else {
                    size += pending.size;
                    turn.to_py(py)?
                };
                passed.append((passed_turn, revision.reason, revision.probability))?;
                to_hold.push((n, revision));
                continue;
            }
            let key = (turn.service, turn.route);
            let at = *index.entry(key).or_insert_with(|| {
                received.push((key, [0; TURN_COUNTS], Vec::new()));
                received.len() - 1
            });
            let (_, counts, steps) = &mut received[at];
            let signals = &turn.signals;
            let calls = turn.tool_calls.len() as u64;
            let tokens = |n: i128| u64::try_from(n).unwrap_or(0);
            for (count, add) in counts.iter_mut().zip([
                1,
                calls - signals.tool_errors,
                signals.tool_errors,
                signals.loops,
                signals.recoveries,
                signals.tool_ns,
                tokens(turn.input_tokens),
                tokens(turn.output_tokens),
            ]) {
                *count = count.saturating_add(add);
            }
            steps.push(signals.steps);
            if let Some(conversation) = turn.conversation_id {
                sessions.append(session_turn(py, &turn, conversation)?)?;
            }
            no_question += u64::from(turn.question.is_none());
            no_answer += u64::from(turn.answer.is_none());
            match completions.iter_mut().find(|(r, _)| r == reason) {
                Some((_, count)) => *count += 1,
                None => completions.push((reason, 1)),
            }
            let (keep, why, probability) = match sampler {
                Some(sampler) => sampler.decide_traits(&traits(&turn), backlog + kept),
                None => (true, "all", 1.0),
            };
            trace_ids.append(PyBytes::new(py, trace_id))?;
            let record = if (keep && sampler.is_some()) || n >= recent_from {
                let record = record(py, &turn)?;
                size += record.borrow().json.len();
                Some(record)
            } else {
                None
            };
            if keep {
                let digest = turn.judged_digest();
                to_hold.push((n, Revision { number: 0, digest, reason: why, probability }));
            }
            if !keep {
                not_sampled += 1;
            } else if sampler.is_some() {
                kept += 1;
                passed.append((record.as_ref().expect("a kept turn's record"), why, probability))?;
            } else {
                size += pending.size;
                passed.append((turn.to_py(py)?, why, probability))?;
            }
            if n >= recent_from {
                recent.append(record.expect("a recent turn's record"))?;
            }
        }
        let (received_py, steps_py) = (PyDict::new(py), PyDict::new(py));
        for ((service, route), counts, steps) in received {
            received_py.set_item((service, route), counts.to_vec())?;
            steps_py.set_item((service, route), steps)?;
        }
        drop(spans);
        if let Some(now) = now {
            let mut to_hold = to_hold.into_iter().peekable();
            for (n, (trace_id, pending, _)) in done.into_iter().enumerate() {
                if let Some((_, revision)) = to_hold.next_if(|(at, _)| *at == n) {
                    self.hold(trace_id, pending, revision, now);
                }
            }
        }
        Ok(Completed {
            passed: passed.unbind(),
            recent: recent.unbind(),
            trace_ids: trace_ids.unbind(),
            not_sampled,
            received: received_py.unbind(),
            steps: steps_py.unbind(),
            sessions: sessions.unbind(),
            no_question,
            no_answer,
            completions: completions.into_py_dict(py)?.unbind(),
            revised,
            unchanged,
            size,
        })
    }
}

fn record<'py>(py: Python<'py>, turn: &Turn) -> PyResult<Bound<'py, TurnRecord>> {
    Bound::new(
        py,
        TurnRecord {
            trace_id: hex(turn.trace_id),
            service: turn.service.to_string(),
            route: turn.route.map(str::to_string),
            json: turn.to_json(),
            revision: turn.revision,
        },
    )
}

type Key<'a> = (&'a str, Option<&'a str>); // a turn's service and route
const TURN_COUNTS: usize = 8; // what `Completed.received` counts of each service and route

/// A turn of a conversation, as `Completed.sessions` lists it.
fn session_turn<'py>(py: Python<'py>, turn: &Turn, conversation: &str) -> PyResult<Bound<'py, PyTuple>> {
    let named: Vec<&str> = turn
        .steps
        .iter()
        .filter(|s| matches!(s.kind, "tool" | "handoff"))
        .map(|s| s.name(&turn.tool_calls))
        .collect();
    let failed = turn.error.is_some() || turn.signals.tool_errors > 0;
    (
        conversation,
        turn.service,
        turn.route,
        turn.question,
        turn.answer.is_some(),
        failed,
        turn.feedback.map(|f| f.score),
        turn.session_end,
        named,
    )
        .into_pyobject(py)
}

/// What the sampler's rules read of a composed turn.
fn traits<'a>(turn: &'a Turn<'a>) -> Traits<'a> {
    Traits {
        trace_id_low: turn.trace_id[turn.trace_id.len().saturating_sub(8)..]
            .iter()
            .fold(0, |n, b| n << 8 | u64::from(*b)),
        conversation_id: turn.conversation_id,
        service: turn.service,
        route: turn.route,
        feedback_score: turn.feedback.map(|f| f.score),
        documents: turn.documents.len(),
        tool_calls: turn.tool_calls.len(),
        error: turn.error.is_some(),
        failed_tool_call: turn.tool_calls.iter().any(|c| truthy(&c.error)),
    }
}
