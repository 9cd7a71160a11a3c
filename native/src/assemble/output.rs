//! A composed turn's output: its JSON (what the judge queue stores) and the
//! monitor.model.AssistantTurn, each writing AssistantTurn's fields in declaration order
//! (tests/test_conventions.py holds both to AssistantTurn's fields).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySet, PyString};

use super::compose::Turn;
use super::sources::Sources;
use super::steps::Step;
use crate::facts::{
    calls_py, construct, document_py, feedback_py, model, models, opt_str, untrack, SpanFacts, ToolCall,
};
use crate::value::{write_json_str, write_pydantic_float};
use crate::HashMap;

pub(super) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}

impl Sources<'_> {
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

impl Turn<'_> {
    /// A step's start (from the turn's) and duration, in milliseconds.
    fn step_times(&self, step: &Step) -> [f64; 2] {
        let start = self.start.unwrap_or(step.start_ns);
        [
            (step.start_ns as i128 - start as i128) as f64 / 1e6,
            step.end_ns.saturating_sub(step.start_ns) as f64 / 1e6,
        ]
    }

    fn steps_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let class = &models(py)?.step;
        let list = PyList::empty(py);
        let index = |n: Option<usize>| n.into_pyobject(py).map(|n| n.into_any());
        for step in &self.steps {
            let [start_ms, duration_ms] = self.step_times(step);
            let fields = [
                (intern!(py, "kind"), step.kind.into_pyobject(py)?.into_any()),
                (intern!(py, "name"), step.name(&self.tool_calls).into_pyobject(py)?.into_any()),
                (intern!(py, "span_id"), opt_str(py, &step.span.map(|s| hex(&s.span_id)))),
                (intern!(py, "parent"), index(step.parent)?),
                (intern!(py, "start_ms"), start_ms.into_pyobject(py)?.into_any()),
                (intern!(py, "duration_ms"), duration_ms.into_pyobject(py)?.into_any()),
                (intern!(py, "error"), opt_str(py, &step.error(&self.tool_calls).map(str::to_string))),
                (intern!(py, "tool_call"), index(step.tool_call)?),
            ];
            list.append(model(class, py, &fields)?)?;
        }
        Ok(list)
    }

    fn signals_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = &self.signals;
        let count = |n: u64| n.into_pyobject(py).map(|n| n.into_any());
        let fields = [
            (intern!(py, "steps"), count(s.steps)?),
            (intern!(py, "tool_errors"), count(s.tool_errors)?),
            (intern!(py, "loops"), count(s.loops)?),
            (intern!(py, "recoveries"), count(s.recoveries)?),
            (intern!(py, "tool_ms"), (s.tool_ns as f64 / 1e6).into_pyobject(py)?.into_any()),
        ];
        model(&models(py)?.signals, py, &fields)
    }

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
        o.push_str(",\"steps\":[");
        for (n, step) in self.steps.iter().enumerate() {
            o.push_str(if n == 0 { "{\"kind\":" } else { ",{\"kind\":" });
            write_json_str(step.kind, o);
            o.push_str(",\"name\":");
            write_json_str(step.name(&self.tool_calls), o);
            o.push_str(",\"span_id\":");
            text(o, step.span.map(|s| hex(&s.span_id)).as_deref());
            o.push_str(",\"parent\":");
            match step.parent {
                Some(parent) => o.push_str(&parent.to_string()),
                None => o.push_str("null"),
            }
            let [start_ms, duration_ms] = self.step_times(step);
            o.push_str(",\"start_ms\":");
            write_pydantic_float(start_ms, o);
            o.push_str(",\"duration_ms\":");
            write_pydantic_float(duration_ms, o);
            o.push_str(",\"error\":");
            text(o, step.error(&self.tool_calls));
            o.push_str(",\"tool_call\":");
            match step.tool_call {
                Some(call) => o.push_str(&call.to_string()),
                None => o.push_str("null"),
            }
            o.push('}');
        }
        o.push(']');
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
            ",\"input_tokens\":{},\"output_tokens\":{},\"span_count\":{},\"signals\":{{\"steps\":{},\
             \"tool_errors\":{},\"loops\":{},\"recoveries\":{},\"tool_ms\":",
            self.input_tokens,
            self.output_tokens,
            self.span_count,
            self.signals.steps,
            self.signals.tool_errors,
            self.signals.loops,
            self.signals.recoveries
        ));
        write_pydantic_float(self.signals.tool_ns as f64 / 1e6, o);
        o.push_str("},\"conventions\":[");
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
        o.push_str(&format!("}},\"revision\":{}}}", self.revision));
        out
    }

    /// A hash of what a judge reads of the turn: its question, documents, answer, error, tool
    /// calls and steps; not timing, tokens or feedback. A late span that leaves it alone does
    /// not make a revision.
    pub fn judged_digest(&self) -> u64 {
        let mut h = DefaultHasher::new();
        (self.question, self.answer, self.error).hash(&mut h);
        for doc in &self.documents {
            (&doc.id, &doc.content).hash(&mut h);
        }
        let mut json = String::new();
        for call in &self.tool_calls {
            json.clear();
            call.arguments.write_pydantic_json(&mut json);
            call.result.write_pydantic_json(&mut json);
            (&call.name, &call.error, &json).hash(&mut h);
        }
        for step in &self.steps {
            (step.kind, step.name(&self.tool_calls), step.error(&self.tool_calls)).hash(&mut h);
        }
        h.finish()
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
        set(intern!(py, "steps"), self.steps_py(py)?.into_any())?;
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
        set(intern!(py, "signals"), self.signals_py(py)?)?;
        set(intern!(py, "conventions"), PyList::new(py, &self.conventions)?.into_any())?;
        set(intern!(py, "completion"), self.completion.into_pyobject(py)?.into_any())?;
        set(intern!(py, "sources"), self.sources.to_py(py)?.into_any())?;
        set(intern!(py, "revision"), self.revision.into_pyobject(py)?.into_any())?;
        construct(models(py)?.turn.bind(py), values, given)
    }
}
