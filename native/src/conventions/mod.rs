//! Semantic conventions: what a span says about a turn, whichever instrumentation wrote it.
//! This module and its children are where the rules live, one module per convention.
//!
//! Each convention's module has a mapper, `map`: a small function over a span's attributes that
//! fills `Facts` and says whether it recognised anything; and its `CONVENTION`: the attributes
//! and events it reads, by the fact each fills. All mappers run (a span may carry the project's
//! own `assistant.*` attributes next to GenAI ones), and the first value found wins, in the order
//! of `CONVENTIONS`. Nothing here fails on odd input: what cannot be read is counted in `Issues` by
//! reason, and the rest of the span is kept.
//!
//! Conventions understood:
//! - `assistant`: this project's attributes (exporters/attributes.py).
//! - `genai`: OpenTelemetry GenAI (gen_ai.operation.name, gen_ai.input/output.messages with
//!   parts, gen_ai.retrieval.*, gen_ai.tool.*), plus the GenAI events (gen_ai.user.message,
//!   gen_ai.choice, ...) that instrumentations emit as span events or as log records.
//! - `openinference`: Arize OpenInference (openinference.span.kind,
//!   llm.input_messages.N.message.*, retrieval.documents.N.document.*, tool.*,
//!   input.value/output.value).
//! - `openllmetry`: Traceloop's legacy attributes (gen_ai.prompt.N.*, gen_ai.completion.N.*,
//!   traceloop.span.kind / entity.*, vector-DB `db.query.result` events).
//!
//! Adding a convention: its module here (its `CONVENTION` and `map`), its line in `CONVENTIONS`,
//! and its row in docs/sending-traces.md's table (tests/test_conventions.py holds
//! the row to the declaration).
//!
//! Values are read as Python reads them (`str(x)`, truthiness, `dict.get` with a default): the
//! rules' tests were written against that reading (readers.rs).

mod assistant;
mod genai;
mod openinference;
mod openllmetry;

use std::borrow::Cow;

use crate::facts::{Facts, Message, ToolCall};
use crate::readers::{indexed, maybe_json, py_str, string, text, Entry, Issues};
use crate::value::{owned, Value};

/// A span's attributes, or an event's, or a JSON object: keys in order, each once.
pub type Attrs<'a> = [(Cow<'a, str>, Value<'a>)];
/// (event name, its attributes or body)
pub type Event<'a> = (String, Vec<(Cow<'a, str>, Value<'a>)>);

/// Span events the rules read (the decoders pass on only these).
pub const EVENT_PREFIXES: [&str; 2] = ["gen_ai.", "db.query.result"];

/// What a convention reads, declared beside its mapper: exported as
/// `monitor._native.CONVENTIONS`, which `turns --explain` names a field's source from and
/// tests/test_conventions.py holds the docs' table to. The tests below hold it to the keys its
/// module reads. A fact is a SpanFacts field, or what assembly reads off messages and records as
/// a turn field's source (`AssistantTurn.sources`): `input_events`, `output_events` (its
/// event_inputs, event_outputs), `requested_call` (a tool call the model asked for),
/// `tool_message` (the result a tool message gave it).
pub struct Convention {
    /// As a span's `conventions` name it.
    pub name: &'static str,
    /// (the fact, the span attributes it is read from); a `*` stands for any index or key path.
    pub attributes: &'static [(&'static str, &'static [&'static str])],
    /// (the fact, the events it is read from: span events, or log records about the span).
    pub events: &'static [(&'static str, &'static [&'static str])],
}

/// How the OpenAI Agents SDK names a hand-off's span (OpenInference TOOL, without a tool).
pub const HANDOFF_TO: &str = "handoff to ";

/// A convention's mapper: fills facts from a span's attributes (and its name); whether the span
/// used it.
type Mapper = fn(&Attrs, &str, &mut Facts, &mut Issues) -> bool;

/// Every convention and its mapper, in the order they run: the first value found wins.
pub const CONVENTIONS: [(&Convention, Mapper); 4] = [
    (&assistant::CONVENTION, assistant::map),
    (&genai::CONVENTION, genai::map),
    (&openinference::CONVENTION, openinference::map),
    (&openllmetry::CONVENTION, openllmetry::map),
];

/// Fill facts from a span's attributes, its name and its (already filtered) events.
pub fn extract(attrs: &Attrs, span_name: &str, events: &[Event], issues: &mut Issues) -> Facts {
    let mut facts = Facts::default();
    for (convention, mapper) in CONVENTIONS {
        if mapper(attrs, span_name, &mut facts, issues) {
            add_convention(&mut facts, convention.name);
        }
    }
    if !events.is_empty() {
        if genai::events(events, &mut facts, issues) {
            add_convention(&mut facts, genai::CONVENTION.name);
        }
        if openllmetry::vector_db_events(events, &mut facts) {
            add_convention(&mut facts, openllmetry::CONVENTION.name);
        }
    }
    if facts.conventions.is_empty() {
        issues.add("unknown_convention");
    }
    if facts.conversation_id.is_none() {
        // OpenTelemetry's general session attribute, on a span of any convention (OpenInference
        // reads it on its own spans, and counts a value of another type); a string only.
        facts.conversation_id = match get(attrs, "session.id") {
            Some(Value::Str(id)) if !id.is_empty() => Some(id.to_string()),
            _ => None,
        };
    }
    facts
}

/// Log records' GenAI events about one span, read in order into fresh facts.
pub fn extract_events(events: &[Event], issues: &mut Issues) -> Facts {
    let mut facts = Facts::default();
    if genai::events(events, &mut facts, issues) {
        add_convention(&mut facts, genai::CONVENTION.name);
    }
    facts
}

fn add_convention(facts: &mut Facts, name: &'static str) {
    if !facts.conventions.contains(&name) {
        facts.conventions.push(name);
    }
}

/// The first value found wins.
fn first<T>(slot: &mut Option<T>, value: Option<T>) {
    if slot.is_none() {
        *slot = value;
    }
}

// -- reading attributes as Python's dict does ----------------------------------------------

/// `attrs.get(key)`: a value, or None where the key is absent or its value is null.
fn get<'a, E: Entry>(attrs: &'a [E], key: &str) -> Option<&'a Value<'a>> {
    attrs.iter().find(|e| e.key() == key).map(Entry::value).filter(|v| **v != Value::Null)
}

fn has(attrs: &Attrs, key: &str) -> bool {
    attrs.iter().any(|(k, _)| k == key)
}

/// `attrs.get(key, default)`: the default only where the key is absent.
fn get_or<'a>(attrs: &'a Attrs<'a>, key: &str, default: Option<&'a Value<'a>>) -> Option<&'a Value<'a>> {
    match attrs.iter().find(|(k, _)| k == key) {
        Some((_, Value::Null)) => None,
        Some((_, v)) => Some(v),
        None => default,
    }
}

/// `a or b`.
fn or<'a>(a: Option<&'a Value<'a>>, b: Option<&'a Value<'a>>) -> Option<&'a Value<'a>> {
    if a.is_some_and(Value::truthy) {
        a
    } else {
        b
    }
}

/// `str(attrs.get(key, default))`.
fn str_or<E: Entry>(attrs: &[E], key: &str, default: &str) -> String {
    match attrs.iter().find(|e| e.key() == key) {
        Some(e) => py_str(e.value()),
        None => default.to_string(),
    }
}

/// Where a convention writes the fields of its flattened chat messages (`<prefix>N.<role>`, ...)
/// and of each message's tool calls (`<tool_calls>M.<call_name>`, ...).
struct MessageKeys {
    role: &'static str,
    content: &'static str,
    tool_call_id: &'static str,
    tool_calls: &'static str,
    call_name: &'static str,
    call_id: &'static str,
    call_arguments: &'static str,
}

/// A convention's flattened chat messages, in index order (None: none under `prefix`); `more`
/// reads what the convention adds to a message from the message's own attributes.
fn flattened_messages(
    attrs: &Attrs,
    prefix: &str,
    keys: &MessageKeys,
    issues: &mut Issues,
    more: impl Fn(&[(&str, &Value)], &mut Message, &mut Issues),
) -> Option<Vec<Message>> {
    let groups = indexed(attrs, prefix);
    if groups.is_empty() {
        return None;
    }
    let mut messages = Vec::with_capacity(groups.len());
    for group in &groups {
        let mut message = Message {
            role: str_or(group, keys.role, ""),
            content: text(get(group, keys.content)),
            tool_call_id: string(get(group, keys.tool_call_id), issues, "tool_call_id"),
            ..Default::default()
        };
        for call in indexed(group, keys.tool_calls) {
            if let Some(name) = get(&call, keys.call_name).filter(|n| n.truthy()) {
                message.tool_calls.push(ToolCall {
                    name: py_str(name),
                    call_id: string(get(&call, keys.call_id), issues, "tool_call_id"),
                    arguments: owned(maybe_json(get(&call, keys.call_arguments), issues)),
                    ..Default::default()
                });
            }
        }
        more(group, &mut message, issues);
        messages.push(message);
    }
    Some(messages)
}

fn map_of<'a>(value: &'a Value<'a>) -> Option<&'a Attrs<'a>> {
    match value {
        Value::Map(items) => Some(items),
        _ => None,
    }
}

fn str_value(s: &str) -> Value<'static> {
    Value::Str(Cow::Owned(s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each convention's declaration, and the rest of its module's source (its mapper).
    fn sources() -> [(&'static Convention, &'static str); 4] {
        let rules = |source: &'static str| source.split_once("\n};\n").expect("a CONVENTION").1;
        [
            (&assistant::CONVENTION, rules(include_str!("assistant.rs"))),
            (&genai::CONVENTION, rules(include_str!("genai.rs"))),
            (&openinference::CONVENTION, rules(include_str!("openinference.rs"))),
            (&openllmetry::CONVENTION, rules(include_str!("openllmetry.rs"))),
        ]
    }

    #[test]
    fn every_convention_is_checked_against_its_source() {
        let checked: Vec<&str> = sources().iter().map(|(c, _)| c.name).collect();
        let run: Vec<&str> = CONVENTIONS.iter().map(|(c, _)| c.name).collect();
        assert_eq!(checked, run);
    }

    fn attributes(convention: &Convention) -> impl Iterator<Item = &'static str> {
        convention.attributes.iter().flat_map(|(_, keys)| keys.iter().copied())
    }

    fn events(convention: &Convention) -> impl Iterator<Item = &'static str> {
        convention.events.iter().flat_map(|(_, names)| names.iter().copied())
    }

    /// A declared key up to its first `*`: what the mapper spells out.
    fn stem(key: &str) -> &str {
        key.split('*').next().unwrap_or(key)
    }

    #[test]
    fn every_attribute_a_mapper_reads_by_name_is_declared() {
        for (convention, rules) in sources() {
            // get(attrs, "key"), indexed(attrs, "prefix."), str_or(attrs, "key", ...), ...
            for read in rules.split("(attrs, \"").skip(1) {
                let key = &read[..read.find('"').expect("a string")];
                // a prefix the mapper reads under (indexed keys), or a name it builds keys on
                // (`payload_messages`: "output" -> output.mime_type, output.value)
                let declared = attributes(convention).any(|d| {
                    d == key
                        || (d.contains('*') && key.starts_with(stem(d)))
                        || d.strip_prefix(key).is_some_and(|rest| rest.starts_with('.'))
                });
                assert!(declared, "{} reads {key:?}: declare it in its CONVENTION", convention.name);
            }
        }
    }

    #[test]
    fn every_declared_attribute_and_event_is_named_by_its_mapper() {
        for (convention, rules) in sources() {
            for key in attributes(convention).map(stem).chain(events(convention)) {
                assert!(
                    rules.contains(&format!("\"{key}")),
                    "{} declares {key:?} but never reads it",
                    convention.name
                );
            }
        }
    }

    #[test]
    fn the_events_declared_are_those_the_decoders_pass_on() {
        for (convention, _) in CONVENTIONS {
            for event in events(convention) {
                // the decoders pass on only these
                assert!(EVENT_PREFIXES.iter().any(|p| event.starts_with(p)), "{event}");
            }
        }
    }
}
