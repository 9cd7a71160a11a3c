//! Composition: the rules of monitor/assemble.py's docstring, on one trace's span facts.

use super::sources::{messages_origin, Field, Sources};
use super::steps::{signals, steps, Signals, Step};
use super::tool_calls::tool_calls;
use crate::facts::{truthy, Document, Feedback, Message, SpanFacts, ToolCall};
use crate::HashSet;

pub(super) type Span<'a> = &'a SpanFacts;

pub(super) fn inputs<'a>(s: Span<'a>) -> &'a [Message] {
    match &s.facts.input_messages {
        Some(m) if !m.is_empty() => m,
        _ => &s.facts.event_inputs,
    }
}

pub(super) fn outputs<'a>(s: Span<'a>) -> &'a [Message] {
    match &s.facts.output_messages {
        Some(m) if !m.is_empty() => m,
        _ => &s.facts.event_outputs,
    }
}

fn last_user_text(messages: &[Message]) -> Option<&str> {
    messages.iter().rev().find(|m| m.role == "user" && truthy(&m.content))?.content.as_deref()
}

fn final_text(messages: &[Message]) -> Option<&str> {
    messages
        .iter()
        .rev()
        .find(|m| (m.role == "assistant" || m.role.is_empty()) && truthy(&m.content))?
        .content
        .as_deref()
}

/// Python's str.isspace for one character.
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Does a user message carry the retrieved documents? Then it is a prompt built around the
/// question, not the question. (A document's first 200 characters, stripped.)
fn quotes_documents(prompt: &str, spans: &[Span]) -> bool {
    spans.iter().flat_map(|s| &s.facts.documents).any(|d| match d.content.as_deref() {
        Some(content) if !content.is_empty() => {
            let stripped = content.trim_matches(py_space);
            // The quote is at least this long in bytes: a shorter prompt (a plain question)
            // cannot hold it, and is answered without counting 200 characters.
            if prompt.len() < stripped.len().min(200) {
                return false;
            }
            let cut = match stripped.as_bytes().get(..200) {
                Some(head) if head.is_ascii() => 200,
                _ => stripped.char_indices().nth(200).map_or(stripped.len(), |(at, _)| at),
            };
            prompt.contains(&stripped[..cut])
        }
        _ => false,
    })
}

type Candidate<'a> = (Option<&'a str>, Span<'a>, &'static str); // a value, its span, which fact

/// The first candidate with a value; where it came from goes into `sources`.
fn pick<'a>(
    field: &'static str,
    candidates: impl Iterator<Item = Candidate<'a>>,
    sources: &mut Sources<'a>,
) -> Option<&'a str> {
    for (value, span, origin) in candidates {
        if let Some(value) = value.filter(|v| !v.is_empty()) {
            sources.set(Field::Named(field), span, origin);
            return Some(value);
        }
    }
    None
}

fn question_candidates<'a>(
    spans: &[Span<'a>],
    entry: &[Span<'a>],
    llm_calls: &[Span<'a>],
) -> Vec<Candidate<'a>> {
    let mut out: Vec<Candidate<'a>> = Vec::new();
    out.extend(spans.iter().map(|s| (s.facts.question.as_deref(), *s, "question")));
    out.extend(entry.iter().map(|s| (s.facts.input_text.as_deref(), *s, "input_text")));
    // the last user message the agent received
    out.extend(entry.iter().rev().map(|s| (last_user_text(inputs(s)), *s, messages_origin(s, false))));
    let retrieval = spans.iter().find(|s| s.facts.role == "retrieval" && truthy(&s.facts.input_text));
    if let Some(&first_call) = llm_calls.first() {
        let prompt = last_user_text(inputs(first_call));
        if let (Some(prompt), Some(r)) = (prompt.filter(|p| !p.is_empty()), retrieval) {
            if quotes_documents(prompt, spans) {
                out.push((r.facts.input_text.as_deref(), r, "input_text"));
            }
        }
        out.push((prompt, first_call, messages_origin(first_call, false)));
    }
    if let Some(r) = retrieval {
        out.push((r.facts.input_text.as_deref(), r, "input_text"));
    }
    out
}

fn by_end_latest_first<'a>(spans: &[Span<'a>]) -> Vec<Span<'a>> {
    let mut sorted = spans.to_vec();
    sorted.sort_by_key(|s| std::cmp::Reverse(s.end_ns)); // stable, as Python's sorted(reverse=True)
    sorted
}

fn answer_candidates<'a>(
    spans: &[Span<'a>],
    entry: &[Span<'a>],
    llm_calls: &[Span<'a>],
) -> Vec<Candidate<'a>> {
    let mut out: Vec<Candidate<'a>> = Vec::new();
    out.extend(spans.iter().rev().map(|s| (s.facts.answer.as_deref(), *s, "answer")));
    out.extend(entry.iter().map(|s| (s.facts.output_text.as_deref(), *s, "output_text")));
    for s in entry.iter().copied().chain(by_end_latest_first(llm_calls)) {
        out.push((final_text(outputs(s)), s, messages_origin(s, true)));
    }
    out
}

fn first_text<'a>(spans: impl Iterator<Item = &'a Option<String>>) -> Option<&'a str> {
    spans.filter_map(|s| s.as_deref()).find(|s| !s.is_empty())
}

/// A turn composed from its spans, still compiled: what sampling and the turn counters read,
/// and what becomes a monitor.model.AssistantTurn (`to_py`) only where Python needs one.
pub struct Turn<'a> {
    pub(super) trace_id: &'a [u8],
    pub(super) root: Option<Span<'a>>,
    pub(super) service: &'a str,
    pub(super) route: Option<&'a str>,
    pub(super) tenant: Option<&'a str>,
    pub(super) question: Option<&'a str>,
    pub(super) documents: Vec<&'a Document>,
    pub(super) answer: Option<&'a str>,
    pub(super) tool_calls: Vec<ToolCall>,
    pub(super) steps: Vec<Step<'a>>,
    pub(super) signals: Signals,
    pub(super) model: Option<&'a str>,
    pub(super) feedback: Option<&'a Feedback>,
    pub(super) error: Option<&'a str>,
    pub(super) scenario_id: Option<&'a str>,
    pub(super) expected_tool_calls: Option<&'a [ToolCall]>,
    pub(super) conversation_id: Option<&'a str>,
    pub(super) session_end: bool,
    pub(super) start: Option<u64>,
    pub(super) end: Option<u64>,
    pub(super) input_tokens: i128,
    pub(super) output_tokens: i128,
    pub(super) span_count: usize,
    pub(super) conventions: Vec<&'a str>,
    pub(super) completion: &'a str,
    pub(super) sources: Sources<'a>,
    pub(super) revision: u32, // 0; a kept turn re-opened by late spans counts up
}

pub fn compose<'a>(trace_id: &'a [u8], mut spans: Vec<Span<'a>>, completion: &'a str) -> Turn<'a> {
    // Log fragments whose span never arrived still carry content: they stay, untimed, first.
    spans.sort_by_key(|s| (s.start_ns, s.end_ns)); // stable
    let root = spans.iter().copied().find(|s| s.is_root);
    let llm_calls: Vec<Span> = spans
        .iter()
        .copied()
        .filter(|s| s.facts.role == "llm" && (!inputs(s).is_empty() || !outputs(s).is_empty()))
        .collect();
    let mut entry: Vec<Span> =
        spans.iter().copied().filter(|s| s.facts.role == "chain" || s.facts.role == "agent").collect();
    if let Some(root) = root {
        if let Some(at) = entry.iter().position(|s| std::ptr::eq(*s, root)) {
            entry.remove(at);
            entry.insert(0, root);
        }
    }

    let mut sources = Sources::default();
    let question =
        pick("question", question_candidates(&spans, &entry, &llm_calls).into_iter(), &mut sources);
    let answer = pick("answer", answer_candidates(&spans, &entry, &llm_calls).into_iter(), &mut sources);

    let mut documents: Vec<&Document> = Vec::new();
    let mut seen: HashSet<(Option<&str>, Option<&str>)> = HashSet::default();
    for &span in &spans {
        for doc in &span.facts.documents {
            if seen.insert((doc.id.as_deref(), doc.content.as_deref())) {
                sources.set(Field::Document(documents.len()), span, "documents");
                documents.push(doc);
            }
        }
    }

    let start = spans.iter().map(|s| s.start_ns).filter(|n| *n != 0).min();
    let end = spans.iter().map(|s| s.end_ns).filter(|n| *n != 0).max();
    let model_span = by_end_latest_first(&llm_calls).into_iter().find(|s| truthy(&s.facts.model));
    if let Some(s) = model_span {
        sources.set(Field::Named("model"), s, "model");
    }
    let first = root.or(spans.first().copied());
    let (tool_calls, origins) = tool_calls(&spans, &llm_calls, &mut sources);
    let steps = steps(&spans, &origins);
    let signals = signals(&steps, &tool_calls);
    let service = first
        .and_then(|f| f.service.as_deref())
        .filter(|s| !s.is_empty())
        .or_else(|| first_text(spans.iter().map(|s| &s.service)))
        .unwrap_or("unknown");
    let model = match model_span {
        Some(s) => s.facts.model.as_deref(),
        None => first_text(spans.iter().map(|s| &s.facts.model)),
    };
    let tokens = |read: fn(Span) -> i64| spans.iter().map(|s| read(s) as i128).sum::<i128>();
    let mut conventions: Vec<&str> =
        spans.iter().flat_map(|s| s.conventions.iter().map(String::as_str)).collect();
    conventions.sort_unstable();
    conventions.dedup();
    Turn {
        trace_id,
        root,
        service,
        route: first_text(spans.iter().map(|s| &s.facts.route)),
        tenant: first_text(spans.iter().map(|s| &s.tenant)),
        question,
        documents,
        answer,
        tool_calls,
        steps,
        signals,
        model,
        feedback: spans.iter().rev().find_map(|s| s.facts.feedback.as_ref()),
        error: first_text(spans.iter().map(|s| &s.error)),
        scenario_id: first_text(spans.iter().map(|s| &s.facts.scenario_id)),
        expected_tool_calls: spans.iter().find_map(|s| s.facts.expected_tool_calls.as_deref()),
        conversation_id: first_text(spans.iter().map(|s| &s.facts.conversation_id)),
        session_end: spans.iter().any(|s| s.facts.session_end),
        start,
        end,
        input_tokens: tokens(|s| s.facts.input_tokens),
        output_tokens: tokens(|s| s.facts.output_tokens),
        span_count: spans.len(),
        conventions,
        completion,
        sources,
        revision: 0,
    }
}
