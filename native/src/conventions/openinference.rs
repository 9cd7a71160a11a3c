//! `openinference`: Arize OpenInference.

use crate::facts::{Document, Facts, Message, ToolCall};
use crate::readers::{
    float, indexed, int, maybe_json, metadata_id, py_str, string, text, tool_message, Issues,
};
use crate::value::{owned, Value};

use super::{
    first, flattened_messages, genai, get, get_or, has, or, str_or, str_value, Attrs, Convention, MessageKeys,
};

pub const CONVENTION: Convention = Convention {
    name: "openinference",
    attributes: &[
        ("role", &["openinference.span.kind"]),
        ("input_messages", &["llm.input_messages.*"]),
        // an LLM span's JSON output, where it logs no flattened messages
        ("output_messages", &["llm.output_messages.*", "output.value", "output.mime_type"]),
        (
            "requested_call",
            &["llm.output_messages.*.message.tool_calls.*", "llm.input_messages.*.message.tool_calls.*"],
        ),
        ("tool_message", &["llm.input_messages.*"]),
        ("model", &["llm.model_name"]),
        ("input_tokens", &["llm.token_count.prompt"]),
        ("output_tokens", &["llm.token_count.completion"]),
        (
            "documents",
            &[
                "reranker.output_documents.*",
                "retrieval.documents.*.document.id",
                "retrieval.documents.*.document.metadata",
                "retrieval.documents.*.document.content",
                "retrieval.documents.*.document.score",
            ],
        ),
        // a RETRIEVER span's query, a CHAIN's or AGENT's plain-text input
        ("input_text", &["reranker.query", "input.value", "input.mime_type"]),
        ("output_text", &["output.value", "output.mime_type"]),
        (
            "tool",
            &[
                "tool.name",
                "tool_call.function.name",
                "tool_call.function.arguments",
                "input.value",
                "output.value",
                "tool_call.id",
            ],
        ),
        ("conversation_id", &["session.id"]),
    ],
    events: &[],
};

fn role(kind: &str) -> &'static str {
    match kind.to_uppercase().as_str() {
        "LLM" => "llm",
        "RETRIEVER" | "RERANKER" => "retrieval",
        "TOOL" => "tool",
        "CHAIN" => "chain",
        "AGENT" => "agent",
        _ => "other",
    }
}

const MESSAGE_KEYS: MessageKeys = MessageKeys {
    role: "message.role",
    content: "message.content",
    tool_call_id: "message.tool_call_id",
    tool_calls: "message.tool_calls.",
    call_name: "tool_call.function.name",
    call_id: "tool_call.id",
    call_arguments: "tool_call.function.arguments",
};

fn messages(attrs: &Attrs, prefix: &str, issues: &mut Issues) -> Option<Vec<Message>> {
    flattened_messages(attrs, prefix, &MESSAGE_KEYS, issues, |group, message, _| {
        if get(group, "message.content").is_none() {
            // multimodal: message.contents.M.message_content.text
            let texts: Vec<String> = indexed(group, "message.contents.")
                .iter()
                .filter_map(|g| text(get(g, "message_content.text")))
                .filter(|t| !t.is_empty())
                .collect();
            message.content = (!texts.is_empty()).then(|| texts.join("\n"));
        }
    })
}

/// An LLM span that logs no flattened messages: its JSON value as chat messages, or as an
/// OpenAI Responses object whose `output` items are the messages (what the OpenAI Agents SDK
/// logs for a streamed Chat Completions call).
fn payload_messages(attrs: &Attrs, key: &str, issues: &mut Issues) -> Option<Vec<Message>> {
    if !str_or(attrs, &format!("{key}.mime_type"), "").starts_with("application/json") {
        return None;
    }
    let is_response = |v: &Value| v.get("object") == Some(&str_value("response"));
    let mut data = maybe_json(get(attrs, &format!("{key}.value")), issues)?;
    if let Value::List(items) = &data {
        if items.len() == 1 && matches!(items[0], Value::Map(_)) && is_response(&items[0]) {
            data = items[0].clone();
        }
    }
    if matches!(data, Value::Map(_)) && is_response(&data) {
        let output = match data.get("output") {
            Some(Value::List(items)) => items
                .iter()
                .filter(|item| {
                    matches!(item, Value::Map(_)) && item.get("type") == Some(&str_value("message"))
                })
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        data = Value::List(output);
    }
    let Value::List(items) = &data else { return None };
    if !items.iter().all(|m| matches!(m, Value::Map(kv) if has(kv, "role"))) {
        return None;
    }
    genai::messages(&data, issues).filter(|m| !m.is_empty())
}

fn documents(attrs: &Attrs, prefix: &str) -> Vec<Document> {
    indexed(attrs, prefix)
        .iter()
        .map(|d| Document {
            id: document_id(d),
            content: text(get(d, "document.content")),
            score: float(get(d, "document.score")),
        })
        .collect()
}

/// `document.id`; else the id LangChain's retrievers keep in the document's metadata.
fn document_id(document: &[(&str, &Value)]) -> Option<String> {
    match get(document, "document.id") {
        Some(value) => Some(py_str(value)),
        None => {
            let mut uncounted = Issues::default();
            metadata_id(maybe_json(get(document, "document.metadata"), &mut uncounted).as_ref())
        }
    }
}

pub fn map(attrs: &Attrs, span_name: &str, facts: &mut Facts, issues: &mut Issues) -> bool {
    let Some(kind) = get(attrs, "openinference.span.kind") else { return false };
    let role = role(&py_str(kind));
    facts.set_role(role);
    let is_json = |key: &str| str_or(attrs, key, "").starts_with("application/json");
    let (input_value, output_value) = (get(attrs, "input.value"), get(attrs, "output.value"));
    match role {
        "llm" => {
            let inputs = messages(attrs, "llm.input_messages.", issues);
            first(&mut facts.input_messages, inputs);
            let outputs = match messages(attrs, "llm.output_messages.", issues) {
                Some(messages) => Some(messages),
                None => payload_messages(attrs, "output", issues),
            };
            first(&mut facts.output_messages, outputs);
            let model = string(get(attrs, "llm.model_name"), issues, "model");
            first(&mut facts.model, model);
            if facts.input_tokens == 0 {
                facts.input_tokens = int(get(attrs, "llm.token_count.prompt"), issues);
            }
            if facts.output_tokens == 0 {
                facts.output_tokens = int(get(attrs, "llm.token_count.completion"), issues);
            }
        }
        "retrieval" => {
            if facts.documents.is_empty() {
                facts.documents = documents(attrs, "reranker.output_documents.");
                if facts.documents.is_empty() {
                    facts.documents = documents(attrs, "retrieval.documents.");
                }
            }
            first(&mut facts.input_text, text(or(get(attrs, "reranker.query"), input_value)));
        }
        "tool" => {
            let name = or(get(attrs, "tool.name"), get(attrs, "tool_call.function.name"));
            match name.filter(|n| n.truthy()) {
                Some(name) => {
                    let arguments = get_or(attrs, "tool_call.function.arguments", input_value);
                    let result = maybe_json(output_value, issues).unwrap_or(Value::Null);
                    let error = tool_message(Some(&result)).and_then(|(_, error)| error);
                    let call = ToolCall {
                        name: py_str(name),
                        arguments: owned(maybe_json(arguments, issues)),
                        result: result.into_owned(),
                        error,
                        call_id: string(get(attrs, "tool_call.id"), issues, "tool_call_id"),
                    };
                    first(&mut facts.tool, Some(call));
                }
                // The OpenAI Agents SDK's hand-off is a TOOL span without a tool: not an issue.
                None if span_name.starts_with(super::HANDOFF_TO) => {}
                None => issues.add("tool_without_name"),
            }
        }
        _ => {
            // chain / agent: plain-text input and output are the turn's question and answer
            if input_value.is_some() && !is_json("input.mime_type") {
                first(&mut facts.input_text, text(input_value));
            }
            if output_value.is_some() && !is_json("output.mime_type") {
                first(&mut facts.output_text, text(output_value));
            }
        }
    }
    let conversation = string(get(attrs, "session.id"), issues, "conversation_id");
    first(&mut facts.conversation_id, conversation);
    true
}
