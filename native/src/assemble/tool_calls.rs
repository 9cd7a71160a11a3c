//! A turn's tool calls: executed tool spans, and the calls the model requested.

use std::collections::VecDeque;

use super::compose::{inputs, outputs, Span};
use super::sources::{Field, Sources};
use crate::conventions::HANDOFF_TO;
use crate::facts::{truthy, ToolCall};
use crate::readers;
use crate::value::{owned, Value};
use crate::{HashMap, HashSet};

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

/// The functions an agent SDK offers its model for the hand-offs a turn's spans record: the
/// OpenAI Agents SDK's `transfer_to_<agent>` (the agent's name in lower case, characters other
/// than ASCII letters and digits as `_`), for each "handoff to <agent>" span.
fn handoff_functions(spans: &[Span]) -> HashSet<String> {
    spans
        .iter()
        .filter(|s| s.facts.role == "tool" && s.facts.tool.is_none())
        .filter_map(|s| s.name.strip_prefix(HANDOFF_TO))
        .map(|agent| {
            let agent: String = agent
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' })
                .collect();
            format!("transfer_to_{agent}")
        })
        .collect()
}

/// Where a turn's tool call came from: the tool span that ran it, or the LLM call that asked
/// for it where no span recorded it running.
#[derive(Clone, Copy)]
pub(super) enum CallOrigin<'a> {
    Executed(Span<'a>),
    Requested(Span<'a>),
}

/// Executed tool spans first; then calls the model requested that no span recorded, with
/// their results taken from later `tool` messages. Each call's origin beside it.
pub(super) fn tool_calls<'a>(
    spans: &[Span<'a>],
    llm_calls: &[Span<'a>],
    sources: &mut Sources<'a>,
) -> (Vec<ToolCall>, Vec<CallOrigin<'a>>) {
    let mut calls: Vec<ToolCall> = Vec::new();
    let mut origins: Vec<CallOrigin<'a>> = Vec::new();
    for &span in spans {
        if let Some(tool) = &span.facts.tool {
            let mut call = tool.clone();
            if !truthy(&call.error) {
                call.error.clone_from(&span.error);
            }
            sources.set(Field::ToolCall(calls.len()), span, "tool");
            calls.push(call);
            origins.push(CallOrigin::Executed(span));
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
    let handed_to = handoff_functions(spans);
    for (request_span, requested) in requested_calls(llm_calls) {
        let requested_id = requested.call_id.as_deref().filter(|id| !id.is_empty());
        let mut found = requested_id.and_then(|id| by_id.get(id).copied());
        if found.is_none() {
            // executed spans without ids: match by name, in order
            found = unnamed.get_mut(&requested.name).and_then(VecDeque::pop_front);
        }
        if found.is_none() && handed_to.contains(requested.name.as_str()) {
            continue; // the model's request of a hand-off: its span is the step, not a tool call
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
        origins.push(CallOrigin::Requested(request_span));
    }
    (calls, origins)
}
