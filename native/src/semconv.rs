//! Semantic conventions: what a span says about a turn, whichever instrumentation wrote it.
//! This module is where the rules live.
//!
//! There is one mapper per convention. Each is a small function over a span's attributes that
//! fills `Facts` and says whether it recognised anything. All mappers run (a span may carry the
//! project's own `assistant.*` attributes next to GenAI ones), and the first value found wins, in
//! the order of `extract`. Nothing here fails on odd input: what cannot be read is counted in
//! `Issues` by reason, and the rest of the span is kept.
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
//! Values are read as Python reads them (`str(x)`, truthiness, `dict.get` with a default): the
//! rules' tests were written against that reading (readers.rs).

use std::borrow::Cow;

use crate::readers::{
    float, indexed, int, json_value, maybe_json, metadata_id, py_str, string, text, tool_message, Entry,
    Issues,
};
use crate::value::{owned, Value};

/// A span's attributes, or an event's, or a JSON object: keys in order, each once.
pub type Attrs<'a> = [(Cow<'a, str>, Value<'a>)];
/// (event name, its attributes or body)
pub type Event<'a> = (String, Vec<(Cow<'a, str>, Value<'a>)>);

/// Span events the rules read (the decoders pass on only these).
pub const EVENT_PREFIXES: [&str; 2] = ["gen_ai.", "db.query.result"];

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
            input_tokens: 0,
            output_tokens: 0,
        }
    }
}

impl Facts {
    fn set_role(&mut self, role: &'static str) {
        if self.role == "other" {
            self.role = role;
        }
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

fn map_of<'a>(value: &'a Value<'a>) -> Option<&'a Attrs<'a>> {
    match value {
        Value::Map(items) => Some(items),
        _ => None,
    }
}

fn str_value(s: &str) -> Value<'static> {
    Value::Str(Cow::Owned(s.to_string()))
}

// -- the rules -------------------------------------------------------------------------------

/// A convention's mapper: fills facts from a span's attributes; whether the span used it.
type Mapper = fn(&Attrs, &mut Facts, &mut Issues) -> bool;

/// Fill facts from a span's attributes and its (already filtered) events.
pub fn extract(attrs: &Attrs, events: &[Event], issues: &mut Issues) -> Facts {
    let mut facts = Facts::default();
    let mappers: [(&'static str, Mapper); 4] = [
        ("assistant", map_assistant),
        ("genai", map_genai),
        ("openinference", map_openinference),
        ("openllmetry", map_openllmetry),
    ];
    for (name, mapper) in mappers {
        if mapper(attrs, &mut facts, issues) {
            add_convention(&mut facts, name);
        }
    }
    if !events.is_empty() {
        if genai_events(events, &mut facts, issues) {
            add_convention(&mut facts, "genai");
        }
        if vector_db_events(events, &mut facts) {
            add_convention(&mut facts, "openllmetry");
        }
    }
    if facts.conventions.is_empty() {
        issues.add("unknown_convention");
    }
    facts
}

/// Log records' GenAI events about one span, read in order into fresh facts.
pub fn extract_events(events: &[Event], issues: &mut Issues) -> Facts {
    let mut facts = Facts::default();
    if genai_events(events, &mut facts, issues) {
        add_convention(&mut facts, "genai");
    }
    facts
}

fn add_convention(facts: &mut Facts, name: &'static str) {
    if !facts.conventions.contains(&name) {
        facts.conventions.push(name);
    }
}

// ---- assistant: this project's own attributes

fn map_assistant(attrs: &Attrs, facts: &mut Facts, issues: &mut Issues) -> bool {
    let mut found = false;
    for (key, slot) in [
        ("assistant.question", &mut facts.question),
        ("assistant.answer", &mut facts.answer),
        ("assistant.route", &mut facts.route),
        ("assistant.scenario.id", &mut facts.scenario_id),
    ] {
        if let Some(value) = get(attrs, key) {
            first(slot, Some(py_str(value)));
            found = true;
        }
    }
    if let Some(expected) = get(attrs, "assistant.expected_tool_calls") {
        found = true;
        let data = json_value(Some(expected), issues, "malformed_expected_tool_calls");
        let calls = match &data {
            Some(Value::List(items)) => Some(
                items
                    .iter()
                    .filter_map(map_of)
                    .filter_map(|c| {
                        let name = get(c, "name").filter(|n| n.truthy())?;
                        Some(ToolCall {
                            name: py_str(name),
                            arguments: owned(get(c, "arguments").cloned()),
                            ..Default::default()
                        })
                    })
                    .collect(),
            ),
            Some(_) => {
                issues.add("malformed_expected_tool_calls");
                None
            }
            None => None,
        };
        first(&mut facts.expected_tool_calls, calls);
    }
    if let Some(score) = get(attrs, "assistant.feedback.score") {
        found = true;
        match float(Some(score)) {
            Some(value) if (-1.0..=1.0).contains(&value) => {
                let comment = text(get(attrs, "assistant.feedback.comment"));
                first(&mut facts.feedback, Some(Feedback { score: value, comment }));
            }
            _ => issues.add("bad_feedback_score"),
        }
    }
    found
}

// ---- genai: OpenTelemetry GenAI attributes, typed message parts, and the GenAI events

fn genai_role(op: &str) -> &'static str {
    match op {
        "chat" | "text_completion" | "generate_content" => "llm",
        "retrieval" => "retrieval",
        "execute_tool" => "tool",
        "invoke_agent" | "create_agent" => "agent",
        "invoke_workflow" => "chain",
        _ => "other",
    }
}

fn genai_tool_call(part: &Attrs, issues: &mut Issues) -> Option<ToolCall> {
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
fn genai_messages(raw: &Value, issues: &mut Issues) -> Option<Vec<Message>> {
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
                            if let Some(call) = genai_tool_call(part, issues) {
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

fn genai_documents(raw: &Value, issues: &mut Issues) -> Vec<Document> {
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

fn map_genai(attrs: &Attrs, facts: &mut Facts, issues: &mut Issues) -> bool {
    let op = get(attrs, "gen_ai.operation.name");
    let inputs = get(attrs, "gen_ai.input.messages");
    let outputs = get(attrs, "gen_ai.output.messages");
    let tool_name = get(attrs, "gen_ai.tool.name");
    let documents = get(attrs, "gen_ai.retrieval.documents");
    let model = or(get(attrs, "gen_ai.response.model"), get(attrs, "gen_ai.request.model"));
    if op.is_none()
        && inputs.is_none()
        && outputs.is_none()
        && tool_name.is_none()
        && documents.is_none()
        && model.is_none()
    {
        return false;
    }
    if let Some(op) = op {
        facts.set_role(genai_role(&py_str(op)));
    }
    if let Some(inputs) = inputs {
        let messages = genai_messages(inputs, issues);
        first(&mut facts.input_messages, messages);
    }
    if let Some(outputs) = outputs {
        let messages = genai_messages(outputs, issues);
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
    let conversation = string(get(attrs, "gen_ai.conversation.id"), issues, "conversation_id");
    first(&mut facts.conversation_id, conversation);
    if documents.is_some() || op == Some(&str_value("retrieval")) {
        facts.set_role("retrieval");
        if facts.documents.is_empty() {
            facts.documents = documents.map(|d| genai_documents(d, issues)).unwrap_or_default();
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
        message.tool_calls =
            calls.iter().filter_map(map_of).filter_map(|c| genai_tool_call(c, issues)).collect();
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
fn genai_events(events: &[Event], facts: &mut Facts, issues: &mut Issues) -> bool {
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
            map_genai(body, facts, issues);
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

// ---- openinference: Arize OpenInference

fn oi_role(kind: &str) -> &'static str {
    match kind.to_uppercase().as_str() {
        "LLM" => "llm",
        "RETRIEVER" | "RERANKER" => "retrieval",
        "TOOL" => "tool",
        "CHAIN" => "chain",
        "AGENT" => "agent",
        _ => "other",
    }
}

fn oi_messages(attrs: &Attrs, prefix: &str, issues: &mut Issues) -> Option<Vec<Message>> {
    let groups = indexed(attrs, prefix);
    if groups.is_empty() {
        return None;
    }
    let mut messages = Vec::with_capacity(groups.len());
    for group in &groups {
        let content = match get(&group[..], "message.content") {
            Some(content) => text(Some(content)),
            None => {
                // multimodal: message.contents.M.message_content.text
                let texts: Vec<String> = indexed(group, "message.contents.")
                    .iter()
                    .filter_map(|g| text(get(g, "message_content.text")))
                    .filter(|t| !t.is_empty())
                    .collect();
                (!texts.is_empty()).then(|| texts.join("\n"))
            }
        };
        let mut message = Message {
            role: str_or(group, "message.role", ""),
            content,
            tool_call_id: string(get(group, "message.tool_call_id"), issues, "tool_call_id"),
            ..Default::default()
        };
        for call in indexed(group, "message.tool_calls.") {
            if let Some(name) = get(&call, "tool_call.function.name").filter(|n| n.truthy()) {
                message.tool_calls.push(ToolCall {
                    name: py_str(name),
                    call_id: string(get(&call, "tool_call.id"), issues, "tool_call_id"),
                    arguments: owned(maybe_json(get(&call, "tool_call.function.arguments"), issues)),
                    ..Default::default()
                });
            }
        }
        messages.push(message);
    }
    Some(messages)
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
    genai_messages(&data, issues).filter(|m| !m.is_empty())
}

fn oi_documents(attrs: &Attrs, prefix: &str) -> Vec<Document> {
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

fn map_openinference(attrs: &Attrs, facts: &mut Facts, issues: &mut Issues) -> bool {
    let Some(kind) = get(attrs, "openinference.span.kind") else { return false };
    let role = oi_role(&py_str(kind));
    facts.set_role(role);
    let is_json = |key: &str| str_or(attrs, key, "").starts_with("application/json");
    let (input_value, output_value) = (get(attrs, "input.value"), get(attrs, "output.value"));
    match role {
        "llm" => {
            let inputs = oi_messages(attrs, "llm.input_messages.", issues);
            first(&mut facts.input_messages, inputs);
            let outputs = match oi_messages(attrs, "llm.output_messages.", issues) {
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
                facts.documents = oi_documents(attrs, "reranker.output_documents.");
                if facts.documents.is_empty() {
                    facts.documents = oi_documents(attrs, "retrieval.documents.");
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

// ---- openllmetry: Traceloop's legacy attributes, entities, vector-DB events

fn traceloop_role(kind: &str) -> &'static str {
    match kind {
        "workflow" | "task" => "chain",
        "agent" => "agent",
        "tool" => "tool",
        _ => "other",
    }
}

fn ll_messages(attrs: &Attrs, prefix: &str, issues: &mut Issues) -> Option<Vec<Message>> {
    let groups = indexed(attrs, prefix);
    if groups.is_empty() {
        return None;
    }
    let mut messages = Vec::with_capacity(groups.len());
    for group in &groups {
        let mut message = Message {
            role: str_or(group, "role", ""),
            content: text(get(group, "content")),
            tool_call_id: string(get(group, "tool_call_id"), issues, "tool_call_id"),
            ..Default::default()
        };
        for call in indexed(group, "tool_calls.") {
            if let Some(name) = get(&call, "name").filter(|n| n.truthy()) {
                message.tool_calls.push(ToolCall {
                    name: py_str(name),
                    call_id: string(get(&call, "id"), issues, "tool_call_id"),
                    arguments: owned(maybe_json(get(&call, "arguments"), issues)),
                    ..Default::default()
                });
            }
        }
        if let Some(name) = get(group, "function_call.name").filter(|n| n.truthy()) {
            message.tool_calls.push(ToolCall {
                name: py_str(name),
                arguments: owned(maybe_json(get(group, "function_call.arguments"), issues)),
                ..Default::default()
            });
        }
        messages.push(message);
    }
    Some(messages)
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

fn map_openllmetry(attrs: &Attrs, facts: &mut Facts, issues: &mut Issues) -> bool {
    let span_kind = get(attrs, "traceloop.span.kind");
    // Cheap guards first: a full key scan per prefix is the costly part of this mapper.
    let prompts = if has_indexed(attrs, "gen_ai.prompt.") {
        ll_messages(attrs, "gen_ai.prompt.", issues)
    } else {
        None
    };
    let completions = if has_indexed(attrs, "gen_ai.completion.") {
        ll_messages(attrs, "gen_ai.completion.", issues)
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
        let role = traceloop_role(&py_str(span_kind));
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
fn vector_db_events(events: &[Event], facts: &mut Facts) -> bool {
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
