//! Where each field of a turn came from: what `turns --explain` shows.

use super::compose::Span;
use crate::facts::Message;
use crate::value::Ordered;

/// field -> [span id, span name, the span's fact it came from, the span's conventions]: what
/// `turns --explain` shows. A field set twice keeps its first place, as a dict's key does.
#[derive(Default)]
pub(super) struct Sources<'a>(pub(super) Ordered<Field, (Span<'a>, &'static str)>);

/// A field of the turn that a source is recorded for. Its name ("tool_calls.0.arguments") is
/// written only when the sources are (a turn's JSON, `explain`): formatting it for every
/// turn composed was 2 % of the compiled path's instructions.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Field {
    Named(&'static str),
    Document(usize),
    ToolCall(usize),
    ToolArguments(usize),
    ToolResult(usize),
}

impl Field {
    pub(super) fn name(self) -> String {
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
    pub(super) fn set(&mut self, field: Field, span: Span<'a>, origin: &'static str) {
        self.0.insert(field, (span, origin));
    }
}

pub(super) fn messages_origin(s: Span, outputs: bool) -> &'static str {
    let given = |m: &Option<Vec<Message>>| m.as_ref().is_some_and(|m| !m.is_empty());
    match outputs {
        true if given(&s.facts.output_messages) => "output_messages",
        true => "output_events",
        false if given(&s.facts.input_messages) => "input_messages",
        false => "input_events",
    }
}
