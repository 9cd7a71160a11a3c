//! `SpanFacts`: what one span (or log events about it) tells about the turn, in convention-free
//! terms. The decoders build them, the assembler (assemble/) holds and reads them; none of
//! their content becomes a Python object on the way. Python sees them through read-only
//! properties (as monitor.model's Message, ToolCall, RetrievedDocument and Feedback), and builds
//! them by keyword (tests, log fragments, the Python decoder): pyclass.rs. to_python.rs makes
//! monitor.model's objects of them.

mod pyclass;
mod to_python;

pub use pyclass::count_conventions;
pub use to_python::{
    calls_py, construct, document_py, feedback_py, model, models, opt_str, register_models, untrack,
};

use pyo3::prelude::*;

use crate::value::Value;

// -- what the convention rules (conventions/) read of a span -----------------------------------

#[derive(Debug, Default, Clone)]
pub struct ToolCall {
    pub name: String,
    pub arguments: Value<'static>, // Null: none given; owned: kept after the body is gone
    pub result: Value<'static>,
    pub error: Option<String>,
    pub call_id: Option<String>,
}

#[derive(Debug, Default, Clone)]
pub struct Message {
    pub role: String,
    pub content: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub tool_call_id: Option<String>,
}

#[derive(Debug, Default, Clone)]
pub struct Document {
    pub id: Option<String>,
    pub content: Option<String>,
    pub score: Option<f64>,
}

#[derive(Debug, Clone)]
pub struct Feedback {
    pub score: f64,
    pub comment: Option<String>,
}

/// What one span tells about the turn, in convention-free terms (monitor.model.SpanFacts's
/// mapped fields).
#[derive(Debug, Clone)]
pub struct Facts {
    pub role: &'static str,
    pub conventions: Vec<&'static str>,
    pub input_messages: Option<Vec<Message>>,
    pub output_messages: Option<Vec<Message>>,
    pub event_inputs: Vec<Message>,
    pub event_outputs: Vec<Message>,
    pub input_text: Option<String>,
    pub output_text: Option<String>,
    pub documents: Vec<Document>,
    pub tool: Option<ToolCall>,
    pub model: Option<String>,
    pub question: Option<String>,
    pub answer: Option<String>,
    pub route: Option<String>,
    pub feedback: Option<Feedback>,
    pub scenario_id: Option<String>,
    pub expected_tool_calls: Option<Vec<ToolCall>>,
    pub conversation_id: Option<String>,
    pub session_end: bool, // the conversation ends with this turn (the app said so)
    pub input_tokens: i64,
    pub output_tokens: i64,
}

impl Default for Facts {
    fn default() -> Self {
        Facts {
            role: "other",
            conventions: Vec::new(),
            input_messages: None,
            output_messages: None,
            event_inputs: Vec::new(),
            event_outputs: Vec::new(),
            input_text: None,
            output_text: None,
            documents: Vec::new(),
            tool: None,
            model: None,
            question: None,
            answer: None,
            route: None,
            feedback: None,
            scenario_id: None,
            expected_tool_calls: None,
            conversation_id: None,
            session_end: false,
            input_tokens: 0,
            output_tokens: 0,
        }
    }
}

impl Facts {
    /// The first role found wins.
    pub fn set_role(&mut self, role: &'static str) {
        if self.role == "other" {
            self.role = role;
        }
    }
}

/// A string that is given and not empty (Python's truthiness of `str | None`).
pub fn truthy(s: &Option<String>) -> bool {
    s.as_deref().is_some_and(|s| !s.is_empty())
}

// -- one span's facts, as the assembler holds them ---------------------------------------------

#[pyclass(module = "monitor._native")]
#[derive(Debug, Clone)]
pub struct SpanFacts {
    pub trace_id: Vec<u8>,
    pub span_id: Vec<u8>,
    pub parent_span_id: Vec<u8>,
    pub service: Option<String>,
    pub tenant: Option<String>,
    pub name: String,
    pub start_ns: u64,
    pub end_ns: u64,
    pub error: Option<String>,
    pub is_root: bool,            // no parent, or a parent in another process (remote)
    pub is_log_fragment: bool,    // built from log events, merged into the span's facts
    pub conventions: Vec<String>, // sorted, each once
    pub facts: Facts,             // what the convention rules read (conventions/)
}

impl SpanFacts {
    pub fn new(trace_id: &[u8], span_id: &[u8]) -> Self {
        SpanFacts {
            trace_id: trace_id.to_vec(),
            span_id: span_id.to_vec(),
            parent_span_id: Vec::new(),
            service: None,
            tenant: None,
            name: String::new(),
            start_ns: 0,
            end_ns: 0,
            error: None,
            is_root: false,
            is_log_fragment: false,
            conventions: Vec::new(),
            facts: Facts::default(),
        }
    }

    /// The rules' output for this span; its conventions join those it had.
    pub fn set_facts(&mut self, mut facts: Facts) {
        for name in facts.conventions.drain(..) {
            self.add_convention(name);
        }
        self.facts = facts;
    }

    fn add_convention(&mut self, name: &str) {
        if let Err(at) = self.conventions.binary_search_by(|c| c.as_str().cmp(name)) {
            self.conventions.insert(at, name.to_string());
        }
    }

    /// Fold facts about the same span (from log events or a re-sent span) into this one.
    pub fn merge(&mut self, other: &SpanFacts) {
        let (f, o) = (&mut self.facts, &other.facts);
        fn fill<T: Clone>(slot: &mut Option<T>, other: &Option<T>) {
            if slot.is_none() {
                slot.clone_from(other);
            }
        }
        fill(&mut f.input_messages, &o.input_messages);
        fill(&mut f.output_messages, &o.output_messages);
        fill(&mut f.input_text, &o.input_text);
        fill(&mut f.output_text, &o.output_text);
        fill(&mut f.tool, &o.tool);
        fill(&mut f.model, &o.model);
        fill(&mut f.question, &o.question);
        fill(&mut f.answer, &o.answer);
        fill(&mut f.route, &o.route);
        fill(&mut f.feedback, &o.feedback);
        fill(&mut f.scenario_id, &o.scenario_id);
        fill(&mut f.expected_tool_calls, &o.expected_tool_calls);
        fill(&mut f.conversation_id, &o.conversation_id);
        f.session_end |= o.session_end;
        fill(&mut self.error, &other.error);
        if f.documents.is_empty() {
            f.documents.clone_from(&o.documents);
        }
        f.event_inputs.extend(o.event_inputs.iter().cloned());
        f.event_outputs.extend(o.event_outputs.iter().cloned());
        if f.role == "other" {
            f.role = o.role;
        }
        for name in &other.conventions {
            self.add_convention(name);
        }
        if !other.is_log_fragment {
            if self.parent_span_id.is_empty() {
                self.parent_span_id.clone_from(&other.parent_span_id);
            }
            if self.service.as_deref().unwrap_or("").is_empty() {
                self.service.clone_from(&other.service);
            }
            if self.name.is_empty() {
                self.name.clone_from(&other.name);
            }
            let f = &mut self.facts;
            for (mine, theirs) in [(&mut self.start_ns, other.start_ns), (&mut self.end_ns, other.end_ns)] {
                if *mine == 0 {
                    *mine = theirs;
                }
            }
            if f.input_tokens == 0 {
                f.input_tokens = o.input_tokens;
            }
            if f.output_tokens == 0 {
                f.output_tokens = o.output_tokens;
            }
            self.is_root = self.is_root || other.is_root;
            self.is_log_fragment = false;
        }
    }

    /// What these facts hold in memory, about: each string's text plus a string object's
    /// overhead, a fixed cost per object. The assembler's byte bound counts this.
    pub fn size(&self) -> usize {
        const SPAN: usize = 1024; // the object, its ids, lists, the slot holding it
        let f = &self.facts;
        let mut size = SPAN;
        for text in [
            &self.service,
            &self.tenant,
            &f.input_text,
            &f.output_text,
            &f.model,
            &f.question,
            &f.answer,
            &f.route,
            &f.scenario_id,
            &f.conversation_id,
            &self.error,
        ]
        .into_iter()
        .flatten()
        {
            size += str_size(text);
        }
        size += str_size(&self.name);
        for messages in [
            f.input_messages.as_deref().unwrap_or(&[]),
            f.output_messages.as_deref().unwrap_or(&[]),
            &f.event_inputs,
            &f.event_outputs,
        ] {
            for m in messages {
                size += ITEM + str_size(&m.role) + opt_size(&m.content) + opt_size(&m.tool_call_id);
                size += m.tool_calls.iter().map(call_size).sum::<usize>();
            }
        }
        for d in &f.documents {
            size += ITEM + opt_size(&d.content) + opt_size(&d.id);
        }
        size += f.tool.iter().chain(f.expected_tool_calls.iter().flatten()).map(call_size).sum::<usize>();
        if let Some(feedback) = &f.feedback {
            size += ITEM + opt_size(&feedback.comment);
        }
        size
    }
}

const ITEM: usize = 120; // a message, document, tool call or container entry
const STR: usize = 49; // a string object, before its text

fn str_size(s: &str) -> usize {
    STR + s.len()
}

fn opt_size(s: &Option<String>) -> usize {
    s.as_deref().map_or(32, str_size)
}

fn value_size(value: &Value) -> usize {
    let (mut size, mut stack) = (0, vec![value]);
    while let Some(item) = stack.pop() {
        match item {
            Value::Str(s) => size += str_size(s),
            Value::List(items) => {
                size += ITEM * items.len();
                stack.extend(items);
            }
            Value::Map(items) => {
                size += ITEM * items.len();
                for (k, v) in items {
                    size += str_size(k);
                    stack.push(v);
                }
            }
            _ => size += 32,
        }
    }
    size
}

fn call_size(c: &ToolCall) -> usize {
    ITEM + str_size(&c.name)
        + value_size(&c.arguments)
        + value_size(&c.result)
        + opt_size(&c.error)
        + opt_size(&c.call_id)
}
