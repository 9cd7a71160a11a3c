//! Assembly: spans of one trace become one turn (monitor/assemble.py states the rules; this is
//! where they run). `Assembler` buffers each trace's SpanFacts until its turn is due, within
//! bounds; `compose` makes the turn and the sampler decides on it. A kept turn goes on as its
//! JSON (`TurnRecord`), what the judge queue stores, and so do the last few turns of a batch, for
//! /api/turns; only where no sampler decides do turns become monitor.model.AssistantTurn objects.

use std::collections::VecDeque;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyBytes, PyDict, PyList, PySet, PyString};

use crate::facts::{calls_py, construct, document_py, feedback_py, models, opt_str, untrack, SpanFacts};
use crate::readers;
use crate::sample::{Traits, TurnSampler};
use crate::semconv::{Document, Feedback, Message, ToolCall};
use crate::value::{owned, write_json_str, write_pydantic_float, Ordered, Value};
use crate::{HashMap, HashSet};

struct Pending {
    seq: u64, // its place in `order`
    first_seen: f64,
    spans: Vec<Py<SpanFacts>>,      // in order of arrival
    index: HashMap<Vec<u8>, usize>, // span id -> its place in `spans`
    root_seen: bool,
    size: usize, // accounted bytes of its span facts
}

/// Turns being assembled and the traces recently completed, bounded.
#[pyclass(module = "monitor._native")]
pub struct Assembler {
    max_traces: usize,
    max_spans: usize,
    max_spans_per_trace: usize,
    max_size: usize,
    root_grace_s: f64,
    decision_wait_s: f64,
    remember_completed: usize,
    pending: HashMap<Vec<u8>, Pending>,
    // Oldest first; an entry whose trace left `pending` (or came back: another seq) is skipped.
    order: VecDeque<(u64, Vec<u8>)>,
    root_deadlines: VecDeque<(f64, Vec<u8>)>, // the grace is constant: sorted
    completed: HashMap<Vec<u8>, u64>,
    completed_order: VecDeque<(u64, Vec<u8>)>,
    seq: u64,
    #[pyo3(get)]
    span_count: usize,
    #[pyo3(get)]
    size: usize,
    sampler: Option<Py<TurnSampler>>, // decides which completed turns are passed on; None: all
    recent: usize,                    // how many of a batch's last turns are recorded for /api/turns
}

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
    /// (service, route) -> [turns, tool calls ok, tool calls failed].
    received: Py<PyDict>,
    no_question: u64,
    no_answer: u64,
    /// completion reason -> turns.
    completions: Py<PyDict>,
    /// Bytes of the turns Python holds (passed on, recent): a record's JSON, a built turn's span
    /// facts as the assembler accounted them. The turn queue's byte bound counts it.
    size: usize,
}

#[pymethods]
impl Assembler {
    #[new]
    #[pyo3(signature = (*, max_traces, max_spans, max_spans_per_trace, max_size, root_grace_s,
                        decision_wait_s, remember_completed, recent = 0, sampler = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        max_traces: usize,
        max_spans: usize,
        max_spans_per_trace: usize,
        max_size: usize,
        root_grace_s: f64,
        decision_wait_s: f64,
        remember_completed: usize,
        recent: usize,
        sampler: Option<Py<TurnSampler>>,
    ) -> Self {
        Assembler {
            max_traces,
            max_spans,
            max_spans_per_trace,
            max_size,
            root_grace_s,
            decision_wait_s,
            remember_completed,
            pending: HashMap::default(),
            order: VecDeque::new(),
            root_deadlines: VecDeque::new(),
            completed: HashMap::default(),
            completed_order: VecDeque::new(),
            seq: 0,
            span_count: 0,
            size: 0,
            sampler,
            recent,
        }
    }

    #[getter]
    fn trace_count(&self) -> usize {
        self.pending.len()
    }

    fn holds(&self, trace_id: &[u8]) -> bool {
        self.pending.contains_key(trace_id)
    }

    /// Buffer spans. Returns (turns flushed early to make room, spans refused as late, spans
    /// refused because their trace is too large, the limit each flush was for). `backlog`: the
    /// sampled turns waiting for a judge, which the sampler's rates fall with.
    #[pyo3(signature = (facts, now, backlog = 0))]
    fn add(
        &mut self,
        py: Python<'_>,
        facts: &Bound<'_, PyList>,
        now: f64,
        backlog: i64,
    ) -> PyResult<(Completed, u64, u64, Vec<&'static str>)> {
        let (mut late, mut too_large) = (0u64, 0u64);
        for item in facts.iter() {
            let item = item.downcast_into::<SpanFacts>()?;
            let f = item.borrow();
            let trace_id = &f.trace_id;
            if !self.pending.contains_key(trace_id) {
                if self.completed.contains_key(trace_id) {
                    late += 1;
                    continue;
                }
                self.seq += 1;
                self.order.push_back((self.seq, trace_id.clone()));
                self.pending.insert(
                    trace_id.clone(),
                    Pending {
                        seq: self.seq,
                        first_seen: now,
                        spans: Vec::new(),
                        index: HashMap::default(),
                        root_seen: false,
                        size: 0,
                    },
                );
            }
            let pending = self.pending.get_mut(trace_id).expect("inserted above");
            let known = pending.index.get(&f.span_id).copied();
            if known.is_none() && pending.spans.len() >= self.max_spans_per_trace && !f.is_root {
                // The root is always kept: it ends the turn and often carries its question.
                too_large += 1;
                continue;
            }
            let size = f.size(); // a merged fragment is charged whole: an upper bound
            pending.size += size;
            self.size += size;
            let known = match known {
                Some(n) => {
                    let known = pending.spans[n].bind(py);
                    if !known.is(&item) {
                        known.borrow_mut().merge(&f);
                    }
                    known.clone()
                }
                None => {
                    pending.index.insert(f.span_id.clone(), pending.spans.len());
                    pending.spans.push(item.clone().unbind());
                    self.span_count += 1;
                    item.clone()
                }
            };
            drop(f);
            let known = known.borrow();
            if known.is_root && !known.is_log_fragment && !pending.root_seen {
                pending.root_seen = true;
                self.root_deadlines.push_back((now + self.root_grace_s, known.trace_id.clone()));
            }
        }
        let mut flushed = Vec::new();
        let mut evicted = Vec::new();
        while let Some(limit) = self.over_limit() {
            let Some(oldest) = self.oldest() else { break };
            evicted.push(limit);
            flushed.push(self.take(oldest, "evicted"));
        }
        Ok((self.complete(py, flushed, backlog)?, late, too_large, evicted))
    }

    /// Complete the turns that are due.
    #[pyo3(signature = (now, backlog = 0))]
    fn expire(&mut self, py: Python<'_>, now: f64, backlog: i64) -> PyResult<Completed> {
        let mut done = Vec::new();
        while self.root_deadlines.front().is_some_and(|(due, _)| *due <= now) {
            let (_, trace_id) = self.root_deadlines.pop_front().expect("checked");
            if self.pending.contains_key(&trace_id) {
                done.push(self.take(trace_id, "root_ended"));
            }
        }
        while let Some(oldest) = self.oldest() {
            if self.pending[&oldest].first_seen + self.decision_wait_s > now {
                break;
            }
            done.push(self.take(oldest, "decision_wait"));
        }
        self.complete(py, done, backlog)
    }

    /// Drop turns being assembled without completing them (their source will re-send), and
    /// forget those completed: a re-send is assembled again, not refused as late.
    fn discard(&mut self, trace_ids: &Bound<'_, PyAny>) -> PyResult<usize> {
        let mut dropped = 0;
        for trace_id in trace_ids.try_iter()? {
            let trace_id: Vec<u8> = trace_id?.extract()?;
            self.completed.remove(&trace_id);
            if let Some(pending) = self.pending.remove(&trace_id) {
                self.span_count -= pending.spans.len();
                self.size -= pending.size;
                dropped += 1;
            }
        }
        Ok(dropped)
    }

    #[pyo3(signature = (backlog = 0))]
    fn flush_all(&mut self, py: Python<'_>, backlog: i64) -> PyResult<Completed> {
        let mut done = Vec::new();
        while let Some(oldest) = self.oldest() {
            done.push(self.take(oldest, "shutdown"));
        }
        self.complete(py, done, backlog)
    }
}

impl Assembler {
    fn over_limit(&self) -> Option<&'static str> {
        if self.pending.len() > self.max_traces {
            Some("traces")
        } else if self.span_count > self.max_spans {
            Some("spans")
        } else if self.size > self.max_size {
            Some("bytes")
        } else {
            None
        }
    }

    /// The trace pending longest, skipping the places of traces gone.
    fn oldest(&mut self) -> Option<Vec<u8>> {
        while let Some((seq, trace_id)) = self.order.front() {
            if self.pending.get(trace_id).is_some_and(|p| p.seq == *seq) {
                return Some(trace_id.clone());
            }
            self.order.pop_front();
        }
        None
    }

    /// A due trace out of the buffer, remembered as completed.
    fn take(&mut self, trace_id: Vec<u8>, reason: &'static str) -> (Vec<u8>, Pending, &'static str) {
        let pending = self.pending.remove(&trace_id).expect("a pending trace");
        self.span_count -= pending.spans.len();
        self.size -= pending.size;
        if self.remember_completed > 0 {
            self.seq += 1;
            self.completed.insert(trace_id.clone(), self.seq);
            self.completed_order.push_back((self.seq, trace_id.clone()));
            while self.completed.len() > self.remember_completed {
                let (seq, oldest) = self.completed_order.pop_front().expect("as many as remembered");
                if self.completed.get(&oldest) == Some(&seq) {
                    self.completed.remove(&oldest);
                }
            }
            if self.completed_order.len() > 2 * self.remember_completed {
                let completed = &self.completed;
                self.completed_order.retain(|(seq, t)| completed.get(t) == Some(seq));
            }
        }
        (trace_id, pending, reason)
    }

    /// The turns of traces taken out: composed, counted, decided on; recorded (or, with no
    /// sampler, built) where Python needs them. The backlog grows by each turn kept, as the
    /// judge queue will.
    fn complete(
        &self,
        py: Python<'_>,
        done: Vec<(Vec<u8>, Pending, &'static str)>,
        backlog: i64,
    ) -> PyResult<Completed> {
        let sampler = self.sampler.as_ref().map(|s| s.get());
        let (passed, recent, trace_ids) = (PyList::empty(py), PyList::empty(py), PyList::empty(py));
        // (service, route) -> [turns, tool calls ok, failed], in order of first appearance (the
        // label guards admit new values in that order); indexed: a batch may carry many.
        let mut received: Vec<(Key, [u64; 3])> = Vec::new();
        let mut index: HashMap<Key, usize> = HashMap::default();
        let (mut kept, mut not_sampled, mut no_question, mut no_answer) = (0i64, 0, 0, 0);
        let mut size = 0;
        let mut completions: Vec<(&str, u64)> = Vec::new();
        let spans: Vec<Vec<PyRef<'_, SpanFacts>>> =
            done.iter().map(|(_, pending, _)| pending.spans.iter().map(|s| s.borrow(py)).collect()).collect();
        let recent_from = done.len().saturating_sub(self.recent);
        for (n, ((trace_id, pending, reason), spans)) in done.iter().zip(&spans).enumerate() {
            let turn = compose(trace_id, spans.iter().map(|s| &**s).collect(), reason);
            let key = (turn.service, turn.route);
            let at = *index.entry(key).or_insert_with(|| {
                received.push((key, [0; 3]));
                received.len() - 1
            });
            let counts = &mut received[at].1;
            counts[0] += 1;
            for call in &turn.tool_calls {
                counts[if truthy(&call.error) { 2 } else { 1 }] += 1;
            }
            no_question += u64::from(turn.question.is_none());
            no_answer += u64::from(turn.answer.is_none());
            match completions.iter_mut().find(|(r, _)| r == reason) {
                Some((_, count)) => *count += 1,
                None => completions.push((reason, 1)),
            }
            let (keep, why, probability) = match sampler {
                Some(sampler) => sampler.decide_traits(&Traits::of(&turn), backlog + kept),
                None => (true, "all", 1.0),
            };
            trace_ids.append(PyBytes::new(py, trace_id))?;
            let record = if (keep && sampler.is_some()) || n >= recent_from {
                let json = turn.to_json();
                size += json.len();
                Some(Bound::new(
                    py,
                    TurnRecord {
                        trace_id: hex(trace_id),
                        service: turn.service.to_string(),
                        route: turn.route.map(str::to_string),
                        json,
                    },
                )?)
            } else {
                None
            };
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
        let received_py = PyDict::new(py);
        for ((service, route), counts) in received {
            received_py.set_item((service, route), counts.to_vec())?;
        }
        Ok(Completed {
            passed: passed.unbind(),
            recent: recent.unbind(),
            trace_ids: trace_ids.unbind(),
            not_sampled,
            received: received_py.unbind(),
            no_question,
            no_answer,
            completions: completions.into_py_dict(py)?.unbind(),
            size,
        })
    }
}

type Key<'a> = (&'a str, Option<&'a str>); // a turn's service and route

// -- composition: the rules of monitor/assemble.py's docstring ---------------------------------

type Span<'a> = &'a SpanFacts;

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}

pub fn truthy(s: &Option<String>) -> bool {
    s.as_deref().is_some_and(|s| !s.is_empty())
}

fn inputs<'a>(s: Span<'a>) -> &'a [Message] {
    match &s.facts.input_messages {
        Some(m) if !m.is_empty() => m,
        _ => &s.facts.event_inputs,
    }
}

fn outputs<'a>(s: Span<'a>) -> &'a [Message] {
    match &s.facts.output_messages {
        Some(m) if !m.is_empty() => m,
        _ => &s.facts.event_outputs,
    }
}

fn last_user_text(messages: &[Message]) -> Option<&str> {
    messages.iter().rev().find(|m| m.role == "user" && truthy(&m.content))?.content.as_deref()
}

fn final_text(messages: &[Message]) -> Option<&str> {
    messages
        .iter()
        .rev()
        .find(|m| (m.role == "assistant" || m.role.is_empty()) && truthy(&m.content))?
        .content
        .as_deref()
}

/// Python's str.isspace for one character.
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Does a user message carry the retrieved documents? Then it is a prompt built around the
/// question, not the question. (A document's first 200 characters, stripped.)
fn quotes_documents(prompt: &str, spans: &[Span]) -> bool {
    spans.iter().flat_map(|s| &s.facts.documents).any(|d| match d.content.as_deref() {
        Some(content) if !content.is_empty() => {
            let stripped = content.trim_matches(py_space);
            // The quote is at least this long in bytes: a shorter prompt (a plain question)
            // cannot hold it, and is answered without counting 200 characters.
            if prompt.len() < stripped.len().min(200) {
                return false;
            }
            let cut = match stripped.as_bytes().get(..200) {
                Some(head) if head.is_ascii() => 200,
                _ => stripped.char_indices().nth(200).map_or(stripped.len(), |(at, _)| at),
            };
            prompt.contains(&stripped[..cut])
        }
        _ => false,
    })
}

/// field -> [span id, span name, the span's fact it came from, the span's conventions]: what
/// `turns --explain` shows. A field set twice keeps its first place, as a dict's key does.
#[derive(Default)]
struct Sources<'a>(Ordered<Field, (Span<'a>, &'static str)>);

/// A field of the turn that a source is recorded for. Its name ("tool_calls.0.arguments") is
/// written only when the sources are (a turn's JSON, `explain`): formatting it for every
/// turn composed was 2 % of the compiled path's instructions.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Field {
    Named(&'static str),
    Document(usize),
    ToolCall(usize),
    ToolArguments(usize),
    ToolResult(usize),
}

impl Field {
    fn name(self) -> String {
        match self {
            Field::Named(name) => name.to_string(),
            Field::Document(n) => format!("documents.{n}"),
            Field::ToolCall(n) => format!("tool_calls.{n}"),
            Field::ToolArguments(n) => format!("tool_calls.{n}.arguments"),
            Field::ToolResult(n) => format!("tool_calls.{n}.result"),
        }
    }
}

impl<'a> Sources<'a> {
    fn set(&mut self, field: Field, span: Span<'a>, origin: &'static str) {
        self.0.insert(field, (span, origin));
    }

    fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let explained = PyDict::new(py);
        // A span is the source of several fields: its id, name and conventions are made once.
        // By the span's address: a hostile turn's 20,000 tool spans, compared one by one, were
        // 0.2 s.
        let mut made: HashMap<*const SpanFacts, [Bound<'py, PyString>; 3]> = HashMap::default();
        for (field, (span, origin)) in self.0.entries() {
            let [id, name, conventions] = made.entry(std::ptr::from_ref(*span)).or_insert_with(|| {
                [
                    PyString::new(py, &hex(&span.span_id)),
                    PyString::new(py, &span.name),
                    PyString::new(py, &span.conventions.join(",")),
                ]
            });
            let source = PyList::new(py, [id, name, &PyString::new(py, origin), conventions])?;
            untrack(&source);
            explained.set_item(field.name(), source)?;
        }
        Ok(explained)
    }
}

fn messages_origin(s: Span, outputs: bool) -> &'static str {
    let given = |m: &Option<Vec<Message>>| m.as_ref().is_some_and(|m| !m.is_empty());
    match outputs {
        true if given(&s.facts.output_messages) => "output_messages",
        true => "output_events",
        false if given(&s.facts.input_messages) => "input_messages",
        false => "input_events",
    }
}

/// Tool calls the model asked for in this turn: in each call's output, and in the history it
/// was given after the last user message (earlier turns' calls are not this turn's).
fn requested_calls<'a>(llm_calls: &[Span<'a>]) -> Vec<(Span<'a>, &'a ToolCall)> {
    let mut requested = Vec::new();
    let mut seen: HashSet<&str> = HashSet::default();
    for &span in llm_calls {
        let inputs = inputs(span);
        let after_user = inputs.iter().rposition(|m| m.role == "user").map_or(0, |i| i + 1);
        let history = inputs[after_user..].iter().filter(|m| m.role == "assistant");
        for message in history.chain(outputs(span)) {
            for call in &message.tool_calls {
                if let Some(id) = call.call_id.as_deref().filter(|id| !id.is_empty()) {
                    if !seen.insert(id) {
                        continue;
                    }
                }
                requested.push((span, call));
            }
        }
    }
    requested
}

/// Executed tool spans first; then calls the model requested that no span recorded, with
/// their results taken from later `tool` messages.
fn tool_calls<'a>(spans: &[Span<'a>], llm_calls: &[Span<'a>], sources: &mut Sources<'a>) -> Vec<ToolCall> {
    let mut calls: Vec<ToolCall> = Vec::new();
    for &span in spans {
        if let Some(tool) = &span.facts.tool {
            let mut call = tool.clone();
            if !truthy(&call.error) {
                call.error.clone_from(&span.error);
            }
            sources.set(Field::ToolCall(calls.len()), span, "tool");
            calls.push(call);
        }
    }
    let mut results: HashMap<&str, (&Option<String>, Span<'a>)> = HashMap::default();
    for &s in llm_calls {
        for m in inputs(s) {
            if let Some(id) = m.tool_call_id.as_deref().filter(|id| !id.is_empty() && m.role == "tool") {
                results.insert(id, (&m.content, s));
            }
        }
    }
    let mut by_id: HashMap<String, usize> = HashMap::default();
    for (n, c) in calls.iter().enumerate() {
        if let Some(id) = c.call_id.as_ref().filter(|id| !id.is_empty()) {
            by_id.insert(id.clone(), n);
        }
    }
    // Calls without an id, by name, in order: a request without a known id takes the first
    // (one by one, a hostile turn's 20,000 requested calls took 1.7 s).
    let mut unnamed: HashMap<String, VecDeque<usize>> = HashMap::default();
    for (n, c) in calls.iter().enumerate() {
        if c.call_id.is_none() {
            unnamed.entry(c.name.clone()).or_default().push_back(n);
        }
    }
    for (request_span, requested) in requested_calls(llm_calls) {
        let requested_id = requested.call_id.as_deref().filter(|id| !id.is_empty());
        let mut found = requested_id.and_then(|id| by_id.get(id).copied());
        if found.is_none() {
            // executed spans without ids: match by name, in order
            found = unnamed.get_mut(&requested.name).and_then(VecDeque::pop_front);
        }
        let at = found.unwrap_or(calls.len());
        sources.set(Field::ToolArguments(at), request_span, "requested_call");
        let answer_id =
            found.and_then(|n| calls[n].call_id.as_deref().filter(|id| !id.is_empty())).or(requested_id);
        let answered = answer_id.and_then(|id| results.get(id)).copied();
        let answer = answered.and_then(|(content, span)| content.as_deref().map(|c| (c, span)));
        if let Some((_, span)) = answer {
            sources.set(Field::ToolResult(at), span, "tool_message");
        }
        if let Some(n) = found {
            // the conversation is the record; the span fills its gaps
            let call = &mut calls[n];
            if !truthy(&call.call_id) {
                call.call_id.clone_from(&requested.call_id);
            }
            if requested.arguments != Value::Null {
                call.arguments = requested.arguments.clone();
            }
            if let Some((content, _)) = answer {
                // as the tool returned it
                let mut uncounted = readers::Issues::default();
                let text = Value::Str(content.into());
                call.result = owned(readers::maybe_json(Some(&text), &mut uncounted));
            }
            continue;
        }
        let mut call = requested.clone();
        call.result = answer.map_or(Value::Null, |(c, _)| Value::Str(c.to_string().into()));
        sources.set(Field::ToolCall(at), request_span, "requested_call");
        if let Some(id) = call.call_id.as_ref().filter(|id| !id.is_empty()) {
            by_id.insert(id.clone(), calls.len());
        } else if call.call_id.is_none() {
            unnamed.entry(call.name.clone()).or_default().push_back(calls.len());
        }
        calls.push(call);
    }
    calls
}

type Candidate<'a> = (Option<&'a str>, Span<'a>, &'static str); // a value, its span, which fact

/// The first candidate with a value; where it came from goes into `sources`.
fn pick<'a>(
    field: &'static str,
    candidates: impl Iterator<Item = Candidate<'a>>,
    sources: &mut Sources<'a>,
) -> Option<&'a str> {
    for (value, span, origin) in candidates {
        if let Some(value) = value.filter(|v| !v.is_empty()) {
            sources.set(Field::Named(field), span, origin);
            return Some(value);
        }
    }
    None
}

fn question_candidates<'a>(
    spans: &[Span<'a>],
    entry: &[Span<'a>],
    llm_calls: &[Span<'a>],
) -> Vec<Candidate<'a>> {
    let mut out: Vec<Candidate<'a>> = Vec::new();
    out.extend(spans.iter().map(|s| (s.facts.question.as_deref(), *s, "question")));
    out.extend(entry.iter().map(|s| (s.facts.input_text.as_deref(), *s, "input_text")));
    // the last user message the agent received
    out.extend(entry.iter().rev().map(|s| (last_user_text(inputs(s)), *s, messages_origin(s, false))));
    let retrieval = spans.iter().find(|s| s.facts.role == "retrieval" && truthy(&s.facts.input_text));
    if let Some(&first_call) = llm_calls.first() {
        let prompt = last_user_text(inputs(first_call));
        if let (Some(prompt), Some(r)) = (prompt.filter(|p| !p.is_empty()), retrieval) {
            if quotes_documents(prompt, spans) {
                out.push((r.facts.input_text.as_deref(), r, "input_text"));
            }
        }
        out.push((prompt, first_call, messages_origin(first_call, false)));
    }
    if let Some(r) = retrieval {
        out.push((r.facts.input_text.as_deref(), r, "input_text"));
    }
    out
}

fn by_end_latest_first<'a>(spans: &[Span<'a>]) -> Vec<Span<'a>> {
    let mut sorted = spans.to_vec();
    sorted.sort_by_key(|s| std::cmp::Reverse(s.end_ns)); // stable, as Python's sorted(reverse=True)
    sorted
}

fn answer_candidates<'a>(
    spans: &[Span<'a>],
    entry: &[Span<'a>],
    llm_calls: &[Span<'a>],
) -> Vec<Candidate<'a>> {
    let mut out: Vec<Candidate<'a>> = Vec::new();
    out.extend(spans.iter().rev().map(|s| (s.facts.answer.as_deref(), *s, "answer")));
    out.extend(entry.iter().map(|s| (s.facts.output_text.as_deref(), *s, "output_text")));
    for s in entry.iter().copied().chain(by_end_latest_first(llm_calls)) {
        out.push((final_text(outputs(s)), s, messages_origin(s, true)));
    }
    out
}

fn first_text<'a>(spans: impl Iterator<Item = &'a Option<String>>) -> Option<&'a str> {
    spans.filter_map(|s| s.as_deref()).find(|s| !s.is_empty())
}

/// A turn composed from its spans, still compiled: what sampling and the turn counters read,
/// and what becomes a monitor.model.AssistantTurn (`to_py`) only where Python needs one.
pub struct Turn<'a> {
    pub trace_id: &'a [u8],
    root: Option<Span<'a>>,
    pub service: &'a str,
    pub route: Option<&'a str>,
    tenant: Option<&'a str>,
    pub question: Option<&'a str>,
    pub documents: Vec<&'a Document>,
    pub answer: Option<&'a str>,
    pub tool_calls: Vec<ToolCall>,
    model: Option<&'a str>,
    pub feedback: Option<&'a Feedback>,
    pub error: Option<&'a str>,
    scenario_id: Option<&'a str>,
    expected_tool_calls: Option<&'a [ToolCall]>,
    conversation_id: Option<&'a str>,
    start: Option<u64>,
    end: Option<u64>,
    input_tokens: i128,
    output_tokens: i128,
    span_count: usize,
    conventions: Vec<&'a str>,
    completion: &'a str,
    sources: Sources<'a>,
}

pub fn compose<'a>(trace_id: &'a [u8], mut spans: Vec<Span<'a>>, completion: &'a str) -> Turn<'a> {
    // Log fragments whose span never arrived still carry content: they stay, untimed, first.
    spans.sort_by_key(|s| (s.start_ns, s.end_ns)); // stable
    let root = spans.iter().copied().find(|s| s.is_root);
    let llm_calls: Vec<Span> = spans
        .iter()
        .copied()
        .filter(|s| s.facts.role == "llm" && (!inputs(s).is_empty() || !outputs(s).is_empty()))
        .collect();
    let mut entry: Vec<Span> =
        spans.iter().copied().filter(|s| s.facts.role == "chain" || s.facts.role == "agent").collect();
    if let Some(root) = root {
        if let Some(at) = entry.iter().position(|s| std::ptr::eq(*s, root)) {
            entry.remove(at);
            entry.insert(0, root);
        }
    }

    let mut sources = Sources::default();
    let question =
        pick("question", question_candidates(&spans, &entry, &llm_calls).into_iter(), &mut sources);
    let answer = pick("answer", answer_candidates(&spans, &entry, &llm_calls).into_iter(), &mut sources);

    let mut documents: Vec<&Document> = Vec::new();
    let mut seen: HashSet<(Option<&str>, Option<&str>)> = HashSet::default();
    for &span in &spans {
        for doc in &span.facts.documents {
            if seen.insert((doc.id.as_deref(), doc.content.as_deref())) {
                sources.set(Field::Document(documents.len()), span, "documents");
                documents.push(doc);
            }
        }
    }

    let start = spans.iter().map(|s| s.start_ns).filter(|n| *n != 0).min();
    let end = spans.iter().map(|s| s.end_ns).filter(|n| *n != 0).max();
    let model_span = by_end_latest_first(&llm_calls).into_iter().find(|s| truthy(&s.facts.model));
    if let Some(s) = model_span {
        sources.set(Field::Named("model"), s, "model");
    }
    let first = root.or(spans.first().copied());
    let tool_calls = tool_calls(&spans, &llm_calls, &mut sources);
    let service = first
        .and_then(|f| f.service.as_deref())
        .filter(|s| !s.is_empty())
        .or_else(|| first_text(spans.iter().map(|s| &s.service)))
        .unwrap_or("unknown");
    let model = match model_span {
        Some(s) => s.facts.model.as_deref(),
        None => first_text(spans.iter().map(|s| &s.facts.model)),
    };
    let tokens = |read: fn(Span) -> i64| spans.iter().map(|s| read(s) as i128).sum::<i128>();
    let mut conventions: Vec<&str> =
        spans.iter().flat_map(|s| s.conventions.iter().map(String::as_str)).collect();
    conventions.sort_unstable();
    conventions.dedup();
    Turn {
        trace_id,
        root,
        service,
        route: first_text(spans.iter().map(|s| &s.facts.route)),
        tenant: first_text(spans.iter().map(|s| &s.tenant)),
        question,
        documents,
        answer,
        tool_calls,
        model,
        feedback: spans.iter().rev().find_map(|s| s.facts.feedback.as_ref()),
        error: first_text(spans.iter().map(|s| &s.error)),
        scenario_id: first_text(spans.iter().map(|s| &s.facts.scenario_id)),
        expected_tool_calls: spans.iter().find_map(|s| s.facts.expected_tool_calls.as_deref()),
        conversation_id: first_text(spans.iter().map(|s| &s.facts.conversation_id)),
        start,
        end,
        input_tokens: tokens(|s| s.facts.input_tokens),
        output_tokens: tokens(|s| s.facts.output_tokens),
        span_count: spans.len(),
        conventions,
        completion,
        sources,
    }
}

impl Turn<'_> {
    fn duration_ms(&self) -> f64 {
        match (self.start, self.end) {
            (Some(start), Some(end)) => (end as i128 - start as i128) as f64 / 1e6,
            _ => 0.0,
        }
    }

    /// The AssistantTurn's JSON as pydantic's `model_dump_json` writes it: every field in
    /// declaration order, no spaces, a float that is not finite as null (only the digits of a
    /// float may be spelled otherwise, the same number).
    pub fn to_json(&self) -> String {
        fn text(out: &mut String, t: Option<&str>) {
            match t {
                Some(t) => write_json_str(t, out),
                None => out.push_str("null"),
            }
        }
        fn calls(out: &mut String, calls: &[ToolCall]) {
            out.push('[');
            for (n, c) in calls.iter().enumerate() {
                out.push_str(if n == 0 { "{\"name\":" } else { ",{\"name\":" });
                write_json_str(&c.name, out);
                out.push_str(",\"arguments\":");
                c.arguments.write_pydantic_json(out);
                out.push_str(",\"result\":");
                c.result.write_pydantic_json(out);
                out.push_str(",\"error\":");
                text(out, c.error.as_deref());
                out.push_str(",\"call_id\":");
                text(out, c.call_id.as_deref());
                out.push('}');
            }
            out.push(']');
        }
        let mut out = String::with_capacity(1024);
        let o = &mut out;
        o.push_str("{\"trace_id\":");
        write_json_str(&hex(self.trace_id), o);
        o.push_str(",\"root_span_id\":");
        text(o, self.root.map(|r| hex(&r.span_id)).as_deref());
        o.push_str(",\"service\":");
        write_json_str(self.service, o);
        for (key, value) in [("route", self.route), ("tenant", self.tenant), ("question", self.question)] {
            o.push_str(",\"");
            o.push_str(key);
            o.push_str("\":");
            text(o, value);
        }
        o.push_str(",\"documents\":[");
        for (n, doc) in self.documents.iter().enumerate() {
            o.push_str(if n == 0 { "{\"id\":" } else { ",{\"id\":" });
            text(o, doc.id.as_deref());
            o.push_str(",\"content\":");
            text(o, doc.content.as_deref());
            o.push_str(",\"score\":");
            match doc.score {
                Some(score) => write_pydantic_float(score, o),
                None => o.push_str("null"),
            }
            o.push('}');
        }
        o.push_str("],\"answer\":");
        text(o, self.answer);
        o.push_str(",\"tool_calls\":");
        calls(o, &self.tool_calls);
        o.push_str(",\"model\":");
        text(o, self.model);
        o.push_str(",\"feedback\":");
        match self.feedback {
            Some(feedback) => {
                o.push_str("{\"score\":");
                write_pydantic_float(feedback.score, o);
                o.push_str(",\"comment\":");
                text(o, feedback.comment.as_deref());
                o.push('}');
            }
            None => o.push_str("null"),
        }
        o.push_str(",\"error\":");
        text(o, self.error);
        o.push_str(",\"scenario_id\":");
        text(o, self.scenario_id);
        o.push_str(",\"expected_tool_calls\":");
        match self.expected_tool_calls {
            Some(expected) => calls(o, expected),
            None => o.push_str("null"),
        }
        o.push_str(",\"conversation_id\":");
        text(o, self.conversation_id);
        o.push_str(&format!(",\"start_time_unix_nano\":{},\"duration_ms\":", self.start.unwrap_or(0)));
        write_pydantic_float(self.duration_ms(), o);
        o.push_str(&format!(
            ",\"input_tokens\":{},\"output_tokens\":{},\"span_count\":{},\"conventions\":[",
            self.input_tokens, self.output_tokens, self.span_count
        ));
        for (n, convention) in self.conventions.iter().enumerate() {
            if n > 0 {
                o.push(',');
            }
            write_json_str(convention, o);
        }
        o.push_str("],\"completion\":");
        write_json_str(self.completion, o);
        o.push_str(",\"sources\":{");
        for (n, (field, (span, origin))) in self.sources.0.entries().iter().enumerate() {
            if n > 0 {
                o.push(',');
            }
            write_json_str(&field.name(), o);
            o.push_str(":[");
            for (m, part) in [&hex(&span.span_id), &span.name, *origin, &span.conventions.join(",")]
                .into_iter()
                .enumerate()
            {
                if m > 0 {
                    o.push(',');
                }
                write_json_str(part, o);
            }
            o.push(']');
        }
        o.push_str("}}");
        out
    }

    /// The monitor.model.AssistantTurn.
    pub fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        // Every field in AssistantTurn's declaration order; `given` those set (not defaulted).
        let values = PyDict::new(py);
        let given = PySet::empty(py)?;
        let set = |key: &Bound<'py, PyString>, value: Bound<'py, PyAny>| -> PyResult<()> {
            untrack(&value); // lists and dicts of ours; a no-op on strings and numbers
            given.add(key)?;
            values.set_item(key, value)
        };
        let none = || py.None().into_bound(py);
        let text = |t: Option<&str>| opt_str(py, &t.map(str::to_string));
        set(intern!(py, "trace_id"), hex(self.trace_id).into_pyobject(py)?.into_any())?;
        set(intern!(py, "root_span_id"), text(self.root.map(|r| hex(&r.span_id)).as_deref()))?;
        set(intern!(py, "service"), self.service.into_pyobject(py)?.into_any())?;
        set(intern!(py, "route"), text(self.route))?;
        set(intern!(py, "tenant"), text(self.tenant))?;
        set(intern!(py, "question"), text(self.question))?;
        let documents = PyList::empty(py);
        for doc in &self.documents {
            documents.append(document_py(py, doc)?)?;
        }
        set(intern!(py, "documents"), documents.into_any())?;
        set(intern!(py, "answer"), text(self.answer))?;
        set(intern!(py, "tool_calls"), calls_py(py, &self.tool_calls)?.into_any())?;
        set(intern!(py, "model"), text(self.model))?;
        match self.feedback {
            Some(feedback) => set(intern!(py, "feedback"), feedback_py(py, feedback)?)?,
            None => values.set_item(intern!(py, "feedback"), none())?,
        }
        set(intern!(py, "error"), text(self.error))?;
        set(intern!(py, "scenario_id"), text(self.scenario_id))?;
        match self.expected_tool_calls {
            Some(expected) => set(intern!(py, "expected_tool_calls"), calls_py(py, expected)?.into_any())?,
            None => values.set_item(intern!(py, "expected_tool_calls"), none())?,
        }
        set(intern!(py, "conversation_id"), text(self.conversation_id))?;
        set(intern!(py, "start_time_unix_nano"), self.start.unwrap_or(0).into_pyobject(py)?.into_any())?;
        set(intern!(py, "duration_ms"), self.duration_ms().into_pyobject(py)?.into_any())?;
        set(intern!(py, "input_tokens"), self.input_tokens.into_pyobject(py)?.into_any())?;
        set(intern!(py, "output_tokens"), self.output_tokens.into_pyobject(py)?.into_any())?;
        set(intern!(py, "span_count"), self.span_count.into_pyobject(py)?.into_any())?;
        set(intern!(py, "conventions"), PyList::new(py, &self.conventions)?.into_any())?;
        set(intern!(py, "completion"), self.completion.into_pyobject(py)?.into_any())?;
        set(intern!(py, "sources"), self.sources.to_py(py)?.into_any())?;
        construct(models(py)?.turn.bind(py), values, given)
    }
}
