//! `openllmetry`: Traceloop's legacy attributes, entities, vector-DB events.

use crate::facts::{Document, Facts, Message, ToolCall};
use crate::readers::{
    float, int, json_value, maybe_json, metadata_id, py_str, string, text, tool_message, Issues,
};
use crate::value::{owned, Value};

use super::{
    first, flattened_messages, get, get_or, has, map_of, or, str_or, Attrs, Convention, Event, MessageKeys,
};

pub const CONVENTION: Convention = Convention {
    name: "openllmetry",
    attributes: &[
        ("role", &["traceloop.span.kind"]),
        ("input_messages", &["gen_ai.prompt.*"]),
        ("output_messages", &["gen_ai.completion.*"]),
        (
            "requested_call",
            &[
                "gen_ai.completion.*.tool_calls.*",
                "gen_ai.completion.*.function_call.*",
                "gen_ai.prompt.*.tool_calls.*",
            ],
        ),
        ("tool_message", &["gen_ai.prompt.*"]),
        ("model", &["gen_ai.response.model", "gen_ai.request.model", "llm.response.model"]),
        ("input_tokens", &["gen_ai.usage.prompt_tokens", "llm.usage.prompt_tokens"]),
        ("output_tokens", &["gen_ai.usage.completion_tokens", "llm.usage.completion_tokens"]),
        // a LangChain retriever's Document objects
        ("documents", &["traceloop.entity.output"]),
        ("input_text", &["traceloop.entity.input"]),
        ("output_text", &["traceloop.entity.output"]),
        (
            "tool",
            &[
                "traceloop.entity.name",
                "traceloop.entity.input",
                "traceloop.entity.output",
                "gen_ai.tool.call.id",
            ],
        ),
    ],
    // one `db.query.result` event per document (its `*.id`, `*.document`, `*.score`)
    events: &[("documents", &["db.query.result"])],
};

fn role(kind: &str) -> &'static str {
    match kind {
        "workflow" | "task" => "chain",
        "agent" => "agent",
        "tool" => "tool",
        _ => "other",
    }
}

const MESSAGE_KEYS: MessageKeys = MessageKeys {
    role: "role",
    content: "content",
    tool_call_id: "tool_call_id",
    tool_calls: "tool_calls.",
    call_name: "name",
    call_id: "id",
    call_arguments: "arguments",
};

fn messages(attrs: &Attrs, prefix: &str, issues: &mut Issues) -> Option<Vec<Message>> {
    flattened_messages(attrs, prefix, &MESSAGE_KEYS, issues, |group, message, issues| {
        if let Some(name) = get(group, "function_call.name").filter(|n| n.truthy()) {
            message.tool_calls.push(ToolCall {
                name: py_str(name),
                arguments: owned(maybe_json(get(group, "function_call.arguments"), issues)),
                ..Default::default()
            });
        }
    })
}

// LangChain callbacks' payloads, as OpenLLMetry's LangChain instrumentation logs them:
// {"inputs" | "outputs" | "query" | "input_str" | "output": ..., "tags", "metadata", "kwargs"}
const LANGCHAIN_PAYLOAD: [&str; 8] =
    ["inputs", "outputs", "query", "input_str", "output", "tags", "metadata", "kwargs"];

/// traceloop.entity.input/output: JSON, often {"args": [...], "kwargs": {...}}, or a LangChain
/// callback's payload (its value: the chain's inputs, the retriever's query, the tool's).
fn entity_payload(raw: Option<&Value>, issues: &mut Issues) -> Value<'static> {
    let Some(data) = raw.and_then(|r| json_value(Some(r), issues, "malformed_entity")) else {
        return Value::Null;
    };
    let Value::Map(items) = &data else { return data.into_owned() };
    let keys_within = |allowed: &[&str]| items.iter().all(|(k, _)| allowed.contains(&k.as_ref()));
    if has(items, "kwargs") && keys_within(&LANGCHAIN_PAYLOAD) {
        let key = ["inputs", "query", "outputs", "output", "input_str"].into_iter().find(|k| has(items, k));
        if let Some(key) = key {
            return owned(data.get(key).cloned());
        }
    }
    if keys_within(&["args", "kwargs"]) {
        let args = or(get(items, "args"), None).cloned().unwrap_or(Value::List(Vec::new()));
        let kwargs = or(get(items, "kwargs"), None).cloned().unwrap_or(Value::Map(Vec::new()));
        let (Value::List(args), Value::Map(kwargs)) = (args, kwargs) else {
            issues.add("malformed_entity");
            return data.into_owned();
        };
        if args.is_empty() {
            return Value::Map(kwargs).into_owned();
        }
        if args.len() == 1 && kwargs.is_empty() {
            return owned(args.into_iter().next());
        }
    }
    data.into_owned()
}

/// `prefix + "0.role"` or `prefix + "0.content"` is a key (no key built: this runs on every span).
fn has_indexed(attrs: &Attrs, prefix: &str) -> bool {
    attrs
        .iter()
        .any(|(k, _)| k.strip_prefix(prefix).is_some_and(|rest| rest == "0.role" || rest == "0.content"))
}

pub fn map(attrs: &Attrs, _span_name: &str, facts: &mut Facts, issues: &mut Issues) -> bool {
    let span_kind = get(attrs, "traceloop.span.kind");
    // Cheap guards first: a full key scan per prefix is the costly part of this mapper.
    let prompts =
        if has_indexed(attrs, "gen_ai.prompt.") { messages(attrs, "gen_ai.prompt.", issues) } else { None };
    let completions = if has_indexed(attrs, "gen_ai.completion.") {
        messages(attrs, "gen_ai.completion.", issues)
    } else {
        None
    };
    if span_kind.is_none() && prompts.is_none() && completions.is_none() {
        return false;
    }
    if prompts.is_some() || completions.is_some() {
        facts.set_role("llm");
        first(&mut facts.input_messages, prompts);
        first(&mut facts.output_messages, completions);
        let model = or(
            or(get(attrs, "gen_ai.response.model"), get(attrs, "gen_ai.request.model")),
            get(attrs, "llm.response.model"),
        );
        let model = string(model, issues, "model");
        first(&mut facts.model, model);
        if facts.input_tokens == 0 {
            let raw = get_or(attrs, "gen_ai.usage.prompt_tokens", get(attrs, "llm.usage.prompt_tokens"));
            facts.input_tokens = int(raw, issues);
        }
        if facts.output_tokens == 0 {
            let raw =
                get_or(attrs, "gen_ai.usage.completion_tokens", get(attrs, "llm.usage.completion_tokens"));
            facts.output_tokens = int(raw, issues);
        }
    }
    if let Some(span_kind) = span_kind {
        let role = role(&py_str(span_kind));
        facts.set_role(role);
        let entity_input = entity_payload(get(attrs, "traceloop.entity.input"), issues);
        let entity_output = entity_payload(get(attrs, "traceloop.entity.output"), issues);
        let input_text = entity_input.as_str().map(str::to_string);
        if role == "tool" {
            let message = tool_message(Some(&entity_output));
            let call_id = string(get(attrs, "gen_ai.tool.call.id"), issues, "tool_call_id");
            let (result, error) = match message {
                Some((content, error)) => (owned(content), error),
                None => (entity_output, None),
            };
            first(
                &mut facts.tool,
                Some(ToolCall {
                    name: str_or(attrs, "traceloop.entity.name", "tool"),
                    arguments: entity_input,
                    result,
                    error,
                    call_id,
                }),
            );
        } else if let Some(Value::List(documents)) = entity_output.get("documents") {
            // a LangChain retriever: Document objects
            facts.role = "retrieval";
            if facts.documents.is_empty() {
                facts.documents = documents
                    .iter()
                    .filter_map(map_of)
                    .map(|d| Document {
                        id: metadata_id(get(d, "metadata")),
                        content: text(get(d, "page_content")),
                        ..Default::default()
                    })
                    .collect();
            }
            first(&mut facts.input_text, input_text);
        } else if input_text.is_some() || entity_output.as_str().is_some() {
            first(&mut facts.input_text, input_text);
            first(&mut facts.output_text, entity_output.as_str().map(str::to_string));
        }
    }
    true
}

/// OpenLLMetry's vector-DB instrumentations: one `db.query.result` event per document.
pub fn vector_db_events(events: &[Event], facts: &mut Facts) -> bool {
    let mut documents = Vec::new();
    for (name, attrs) in events {
        if name != "db.query.result" {
            continue;
        }
        let mut document = Document::default();
        for (key, value) in attrs {
            if key.ends_with(".id") {
                document.id = Some(py_str(value));
            } else if key.ends_with(".document") {
                document.content = text(Some(value));
            } else if key.ends_with(".score") {
                // a distance is not a relevance score: left out
                document.score = float(Some(value));
            }
        }
        documents.push(document);
    }
    let found = !documents.is_empty();
    if found && facts.documents.is_empty() {
        facts.documents = documents;
        facts.set_role("retrieval");
    }
    found
}
