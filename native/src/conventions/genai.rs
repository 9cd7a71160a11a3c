//! `genai`: OpenTelemetry GenAI attributes, typed message parts, and the GenAI events.

use crate::facts::{Document, Facts, Message, ToolCall};
use crate::readers::{float, int, json_value, maybe_json, py_str, string, text, tool_message, Issues};
use crate::value::{owned, Value};

use super::{first, get, get_or, has, map_of, or, str_or, str_value, Attrs, Convention, Event};

pub const CONVENTION: Convention = Convention {
    name: "genai",
    attributes: &[
        ("role", &["gen_ai.operation.name"]),
        ("input_messages", &["gen_ai.input.messages"]),
        ("output_messages", &["gen_ai.output.messages"]),
        ("requested_call", &["gen_ai.output.messages", "gen_ai.input.messages"]),
        ("tool_message", &["gen_ai.input.messages"]),
        ("model", &["gen_ai.response.model", "gen_ai.request.model"]),
        ("input_tokens", &["gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"]),
        ("output_tokens", &["gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"]),
        ("conversation_id", &["gen_ai.conversation.id"]),
        ("documents", &["gen_ai.retrieval.documents"]),
        ("input_text", &["gen_ai.retrieval.query.text"]),
        (
            "tool",
            &[
                "gen_ai.tool.name",
                "gen_ai.tool.call.arguments",
                "gen_ai.tool.call.result",
                "gen_ai.tool.call.id",
            ],
        ),
    ],
    events: &[
        // its body holds the attributes above: read as a span's
        ("input_messages", &["gen_ai.client.inference.operation.details"]),
        ("output_messages", &["gen_ai.client.inference.operation.details"]),
        (
            "input_events",
            &[
                "gen_ai.system.message",
                "gen_ai.user.message",
                "gen_ai.assistant.message",
                "gen_ai.tool.message",
                "gen_ai.content.prompt",
            ],
        ),
        ("output_events", &["gen_ai.choice", "gen_ai.content.completion"]),
        (
            "requested_call",
            &[
                "gen_ai.choice",
                "gen_ai.content.completion",
                "gen_ai.assistant.message",
                "gen_ai.content.prompt",
            ],
        ),
        ("tool_message", &["gen_ai.tool.message", "gen_ai.content.prompt"]),
    ],
};

fn role(op: &str) -> &'static str {
    match op {
        "chat" | "text_completion" | "generate_content" => "llm",
        "retrieval" => "retrieval",
        "execute_tool" => "tool",
        "invoke_agent" | "create_agent" => "agent",
        "invoke_workflow" => "chain",
        _ => "other",
    }
}

fn tool_call(part: &Attrs, issues: &mut Issues) -> Option<ToolCall> {
    let mut name = get(part, "name");
    let arguments;
    match get(part, "function").and_then(map_of) {
        Some(function) if !name.is_some_and(Value::truthy) => {
            // OpenAI-shaped tool_calls
            name = get(function, "name");
            arguments = get(function, "arguments");
        }
        _ => arguments = get(part, "arguments"),
    }
    let name = name.filter(|n| n.truthy())?;
    Some(ToolCall {
        name: py_str(name),
        arguments: owned(maybe_json(arguments, issues)),
        call_id: string(get(part, "id"), issues, "tool_call_id"),
        ..Default::default()
    })
}

/// gen_ai.input.messages / gen_ai.output.messages (JSON with typed parts).
pub(super) fn messages(raw: &Value, issues: &mut Issues) -> Option<Vec<Message>> {
    let data = json_value(Some(raw), issues, "malformed_messages")?;
    let Value::List(items) = data else {
        issues.add("malformed_messages");
        return None;
    };
    let mut messages = Vec::with_capacity(items.len());
    for item in &items {
        let Some(item) = map_of(item) else {
            issues.add("malformed_messages");
            continue;
        };
        let mut message = Message { role: str_or(item, "role", ""), ..Default::default() };
        let mut texts: Vec<String> = Vec::new();
        match get(item, "parts") {
            Some(Value::List(parts)) => {
                for part in parts.iter().filter_map(map_of) {
                    match get(part, "type").and_then(Value::as_str) {
                        Some("text") => {
                            if let Some(content) = get(part, "content") {
                                texts.push(py_str(content));
                            }
                        }
                        Some("tool_call") => {
                            if let Some(call) = tool_call(part, issues) {
                                message.tool_calls.push(call);
                            }
                        }
                        Some("tool_call_response") => {
                            message.tool_call_id = string(get(part, "id"), issues, "tool_call_id");
                            let response = get_or(part, "response", get(part, "result"));
                            texts.push(text(response).unwrap_or_default());
                        }
                        _ => {}
                    }
                }
            }
            _ if has(item, "content") => {
                // the pre-parts shape: {"role", "content"}
                if let Some(t) = text(get(item, "content")).filter(|t| !t.is_empty()) {
                    texts.push(t);
                }
            }
            _ => {}
        }
        message.content = (!texts.is_empty()).then(|| texts.join("\n"));
        messages.push(message);
    }
    Some(messages)
}

fn retrieved_documents(raw: &Value, issues: &mut Issues) -> Vec<Document> {
    let data = json_value(Some(raw), issues, "malformed_documents");
    let Some(Value::List(items)) = data else {
        if data.is_some() {
            issues.add("malformed_documents");
        }
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| match item {
            Value::Map(item) => {
                let content = get_or(item, "content", get_or(item, "text", get(item, "page_content")));
                Some(Document {
                    id: get(item, "id").map(py_str),
                    content: text(content),
                    score: float(get(item, "score")),
                })
            }
            Value::Str(s) => Some(Document { content: Some(s.to_string()), ..Default::default() }),
            _ => None,
        })
        .collect()
}

pub fn map(attrs: &Attrs, _span_name: &str, facts: &mut Facts, issues: &mut Issues) -> bool {
    let op = get(attrs, "gen_ai.operation.name");
    let inputs = get(attrs, "gen_ai.input.messages");
    let outputs = get(attrs, "gen_ai.output.messages");
    let tool_name = get(attrs, "gen_ai.tool.name");
    let documents = get(attrs, "gen_ai.retrieval.documents");
    let model = or(get(attrs, "gen_ai.response.model"), get(attrs, "gen_ai.request.model"));
    // The conversation alone is the convention too: an app's root span often says nothing else.
    let conversation = get(attrs, "gen_ai.conversation.id");
    if op.is_none()
        && conversation.is_none()
        && inputs.is_none()
        && outputs.is_none()
        && tool_name.is_none()
        && documents.is_none()
        && model.is_none()
    {
        return false;
    }
    if let Some(op) = op {
        facts.set_role(role(&py_str(op)));
    }
    if let Some(inputs) = inputs {
        let messages = messages(inputs, issues);
        first(&mut facts.input_messages, messages);
    }
    if let Some(outputs) = outputs {
        let messages = messages(outputs, issues);
        first(&mut facts.output_messages, messages);
    }
    if facts.role == "other" && (inputs.is_some() || outputs.is_some()) {
        facts.role = "llm";
    }
    let model = string(model, issues, "model");
    first(&mut facts.model, model);
    if facts.input_tokens == 0 {
        let raw = get_or(attrs, "gen_ai.usage.input_tokens", get(attrs, "gen_ai.usage.prompt_tokens"));
        facts.input_tokens = int(raw, issues);
    }
    if facts.output_tokens == 0 {
        let raw = get_or(attrs, "gen_ai.usage.output_tokens", get(attrs, "gen_ai.usage.completion_tokens"));
        facts.output_tokens = int(raw, issues);
    }
    first(&mut facts.conversation_id, string(conversation, issues, "conversation_id"));
    if documents.is_some() || op == Some(&str_value("retrieval")) {
        facts.set_role("retrieval");
        if facts.documents.is_empty() {
            facts.documents = documents.map(|d| retrieved_documents(d, issues)).unwrap_or_default();
        }
        first(&mut facts.input_text, text(get(attrs, "gen_ai.retrieval.query.text")));
    }
    if let Some(tool_name) = tool_name {
        facts.set_role("tool");
        let result = maybe_json(get(attrs, "gen_ai.tool.call.result"), issues).unwrap_or(Value::Null);
        let arguments = maybe_json(get(attrs, "gen_ai.tool.call.arguments"), issues);
        let call_id = string(get(attrs, "gen_ai.tool.call.id"), issues, "tool_call_id");
        // A framework's serialised tool message: its content, and its error.
        let (result, error) = match tool_message(Some(&result)) {
            Some((content, error)) => (owned(content), error),
            None => (result.into_owned(), None),
        };
        first(
            &mut facts.tool,
            Some(ToolCall { name: py_str(tool_name), arguments: owned(arguments), result, error, call_id }),
        );
    }
    true
}

fn event_role(name: &str) -> Option<&'static str> {
    match name {
        "gen_ai.system.message" => Some("system"),
        "gen_ai.user.message" => Some("user"),
        "gen_ai.assistant.message" => Some("assistant"),
        "gen_ai.tool.message" => Some("tool"),
        _ => None,
    }
}

fn event_message(role: &str, body: &Attrs, issues: &mut Issues) -> Message {
    let role_value = get(body, "role").filter(|r| r.truthy());
    let mut message = Message {
        role: role_value.map_or_else(|| role.to_string(), py_str),
        content: text(get(body, "content")),
        ..Default::default()
    };
    if let Some(Value::List(calls)) = get(body, "tool_calls") {
        message.tool_calls = calls.iter().filter_map(map_of).filter_map(|c| tool_call(c, issues)).collect();
    }
    if role == "tool" {
        let id = or(get(body, "id"), get(body, "tool_call_id"));
        message.tool_call_id = string(id, issues, "tool_call_id");
    }
    message
}

fn legacy_json_messages(raw: Option<&Value>, issues: &mut Issues) -> Vec<Message> {
    let Some(Value::List(items)) = raw.and_then(|r| json_value(Some(r), issues, "malformed_messages")) else {
        return Vec::new();
    };
    items.iter().filter_map(map_of).map(|m| event_message(&str_or(m, "role", ""), m, issues)).collect()
}

/// GenAI content events into the facts' event_inputs / event_outputs.
pub fn events(events: &[Event], facts: &mut Facts, issues: &mut Issues) -> bool {
    let mut found = false;
    for (name, body) in events {
        if let Some(role) = event_role(name) {
            let message = event_message(role, body, issues);
            facts.event_inputs.push(message);
        } else if name == "gen_ai.choice" {
            let message = get(body, "message").and_then(map_of).unwrap_or(body);
            let message = event_message("assistant", message, issues);
            facts.event_outputs.push(message);
        } else if name == "gen_ai.content.prompt" {
            // older SDKs: the whole prompt as one JSON attribute
            let messages = legacy_json_messages(get(body, "gen_ai.prompt"), issues);
            facts.event_inputs.extend(messages);
        } else if name == "gen_ai.content.completion" {
            let messages = legacy_json_messages(get(body, "gen_ai.completion"), issues);
            facts.event_outputs.extend(messages);
        } else if name == "gen_ai.client.inference.operation.details" {
            map(body, "", facts, issues);
        } else {
            continue;
        }
        found = true;
    }
    if found {
        facts.set_role("llm");
    }
    found
}
