//! Assembly: spans of one trace become one turn (monitor/assemble.py states the rules; this is
//! where they run). `Assembler` buffers each trace's SpanFacts until its turn is due, within
//! bounds (this module); `compose` makes the turn (compose.rs, sources.rs, tool_calls.rs) and
//! the sampler decides on it (complete.rs). A kept turn goes on as its JSON (`TurnRecord`), what
//! the judge queue stores, and so do the last few turns of a batch, for /api/turns; only where
//! no sampler decides do turns become monitor.model.AssistantTurn objects (output.rs writes
//! both).

mod complete;
pub mod compose;
mod output;
mod sources;
mod steps;
mod tool_calls;

use std::collections::VecDeque;

use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::facts::SpanFacts;
use crate::sample::TurnSampler;
use crate::HashMap;
pub use complete::{Added, Completed, TurnRecord};

/// A trace being assembled.
struct Pending {
    seq: u64, // its place in `order` (held: in `held_order`)
    first_seen: f64,
    spans: Vec<Py<SpanFacts>>,      // in order of arrival
    index: HashMap<Vec<u8>, usize>, // span id -> its place in `spans`
    root_seen: bool,
    size: usize,                // accounted bytes of its span facts
    revision: Option<Revision>, // a held turn re-opened by late spans: what was passed on last
}

/// What was passed on of a kept turn: a late span that changes what a judge reads of it makes
/// the next revision, kept as it was (the sampler is not asked again).
#[derive(Clone, Copy)]
pub(super) struct Revision {
    pub(super) number: u32, // 0: as first completed
    pub(super) digest: u64, // of what a judge reads (Turn::judged_digest)
    pub(super) reason: &'static str,
    pub(super) probability: f64,
}

/// A kept turn, held `revise_within_s` after it completed, within `max_held_size`: its
/// `pending` as it was completed, its `seq` now its place in `held_order`, its `revision` what
/// was passed on.
struct Held {
    until: f64,
    pending: Pending,
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
    revise_within_s: f64,
    max_held_size: usize,
    held: HashMap<Vec<u8>, Held>,
    held_order: VecDeque<(u64, Vec<u8>)>, // oldest first, as `order`; the window is constant
    #[pyo3(get)]
    held_size: usize,
    seq: u64,
    #[pyo3(get)]
    span_count: usize,
    #[pyo3(get)]
    size: usize,
    sampler: Option<Py<TurnSampler>>, // decides which completed turns are passed on; None: all
    recent: usize,                    // how many of a batch's last turns are recorded for /api/turns
}

#[pymethods]
impl Assembler {
    #[new]
    #[pyo3(signature = (*, max_traces, max_spans, max_spans_per_trace, max_size, root_grace_s,
                        decision_wait_s, remember_completed, recent = 0, sampler = None,
                        revise_within_s = 0.0, max_held_size = 0))]
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
        revise_within_s: f64,
        max_held_size: usize,
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
            revise_within_s,
            max_held_size,
            held: HashMap::default(),
            held_order: VecDeque::new(),
            held_size: 0,
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
    fn add(&mut self, py: Python<'_>, facts: &Bound<'_, PyList>, now: f64, backlog: i64) -> PyResult<Added> {
        let (mut late, mut too_large) = (0u64, 0u64);
        for item in facts.iter() {
            let item = item.downcast_into::<SpanFacts>()?;
            let f = item.borrow();
            let trace_id = &f.trace_id;
            if !self.pending.contains_key(trace_id) {
                let held = self.release_held(trace_id).filter(|held| held.until > now);
                if held.is_none() && self.completed.contains_key(trace_id) {
                    late += 1;
                    continue;
                }
                self.seq += 1;
                self.order.push_back((self.seq, trace_id.clone()));
                let pending = match held {
                    // Completed again a root grace after its first late span, as a turn is.
                    Some(Held { pending, .. }) => {
                        self.span_count += pending.spans.len();
                        self.size += pending.size;
                        self.root_deadlines.push_back((now + self.root_grace_s, trace_id.clone()));
                        Pending { seq: self.seq, first_seen: now, root_seen: true, ..pending }
                    }
                    None => Pending {
                        seq: self.seq,
                        first_seen: now,
                        spans: Vec::new(),
                        index: HashMap::default(),
                        root_seen: false,
                        size: 0,
                        revision: None,
                    },
                };
                self.pending.insert(trace_id.clone(), pending);
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
        let flushed = Py::new(py, self.complete(py, flushed, backlog, Some(now))?)?;
        Ok(Added { flushed, late, too_large, evicted })
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
        while let Some((seq, trace_id)) = self.held_order.front() {
            match self.held.get(trace_id) {
                Some(held) if held.pending.seq == *seq && held.until > now => break,
                Some(held) if held.pending.seq == *seq => {
                    let trace_id = trace_id.clone();
                    self.release_held(&trace_id);
                }
                _ => {}
            }
            self.held_order.pop_front();
        }
        self.complete(py, done, backlog, Some(now))
    }

    /// Drop turns being assembled without completing them (their source will re-send), and
    /// forget those completed: a re-send is assembled again, not refused as late.
    fn discard(&mut self, trace_ids: &Bound<'_, PyAny>) -> PyResult<usize> {
        let mut dropped = 0;
        for trace_id in trace_ids.try_iter()? {
            let trace_id: Vec<u8> = trace_id?.extract()?;
            self.completed.remove(&trace_id);
            self.release_held(&trace_id);
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
        self.complete(py, done, backlog, None)
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

    /// Hold a kept turn's spans for late spans, the oldest let go beyond `max_held_size`.
    fn hold(&mut self, trace_id: Vec<u8>, pending: Pending, revision: Revision, now: f64) {
        if self.revise_within_s <= 0.0 {
            return;
        }
        self.seq += 1;
        self.held_order.push_back((self.seq, trace_id.clone()));
        self.held_size += pending.size;
        let pending = Pending { seq: self.seq, revision: Some(revision), ..pending };
        if let Some(before) = self.held.insert(trace_id, Held { until: now + self.revise_within_s, pending })
        {
            self.held_size -= before.pending.size;
        }
        while self.held_size > self.max_held_size {
            let Some((seq, oldest)) = self.held_order.pop_front() else { break };
            if self.held.get(&oldest).is_some_and(|h| h.pending.seq == seq) {
                self.release_held(&oldest);
            }
        }
        if self.held_order.len() > 2 * self.held.len() + 64 {
            let held = &self.held;
            self.held_order.retain(|(seq, t)| held.get(t).is_some_and(|h| h.pending.seq == *seq));
        }
    }

    /// A held turn let go: returned while its window is open, for a late span to re-open it.
    fn release_held(&mut self, trace_id: &[u8]) -> Option<Held> {
        let held = self.held.remove(trace_id)?;
        self.held_size -= held.pending.size;
        Some(held)
    }
}
