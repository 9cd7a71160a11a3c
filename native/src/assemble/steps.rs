//! A turn's trajectory: its steps in order, with nesting and timing (LLM calls, tool calls,
//! retrievals, agents and hand-offs), and the signals read from them. Computed for every turn,
//! sampled or not: the agent metrics count all traffic.

use super::compose::{inputs, outputs, Span};
use super::tool_calls::CallOrigin;
use crate::conventions::HANDOFF_TO;
use crate::facts::{truthy, SpanFacts, ToolCall};
use crate::{HashMap, HashSet};

pub struct Step<'a> {
    pub(super) kind: &'static str,     // llm, tool, retrieval, agent, handoff
    pub(super) span: Option<Span<'a>>, // None: a call the model asked for that no span recorded
    pub(super) parent: Option<usize>,  // the step it ran inside (an earlier one)
    pub(super) start_ns: u64,
    pub(super) end_ns: u64,
    pub(super) tool_call: Option<usize>, // its place in the turn's tool calls
}

impl Step<'_> {
    /// A tool call's name, else the span's.
    pub(super) fn name<'c>(&'c self, calls: &'c [ToolCall]) -> &'c str {
        match (self.tool_call, self.span) {
            (Some(n), _) => &calls[n].name,
            // a hand-off: the agent handed to
            (None, Some(span)) if self.kind == "handoff" => {
                span.name.strip_prefix(HANDOFF_TO).unwrap_or(&span.name)
            }
            (None, Some(span)) => &span.name,
            (None, None) => "",
        }
    }

    /// A tool call's error (its span's among them), else the span's.
    pub(super) fn error<'c>(&'c self, calls: &'c [ToolCall]) -> Option<&'c str> {
        let error = match self.tool_call {
            Some(n) => calls[n].error.as_deref(),
            None => self.span.and_then(|s| s.error.as_deref()),
        };
        error.filter(|e| !e.is_empty())
    }
}

/// What the trajectory says without a judge.
#[derive(Default, Clone, Copy)]
pub struct Signals {
    pub steps: u64, // LLM calls, tool calls, retrievals and hand-offs (agents hold steps); once each
    pub tool_errors: u64, // tool calls that failed
    pub loops: u64, // tool calls repeating an earlier one: same tool, same arguments
    pub recoveries: u64, // failed tool calls after which a call succeeded
    pub tool_ns: u64, // time in tool spans
}

fn kind(span: &SpanFacts) -> Option<&'static str> {
    match span.facts.role {
        // A call that said something, used tokens or failed: not a framework's preparation of
        // one (LlamaIndex's `_prepare_chat_with_tools` is an LLM span too).
        "llm"
            if !inputs(span).is_empty()
                || !outputs(span).is_empty()
                || span.facts.input_tokens + span.facts.output_tokens > 0
                || truthy(&span.error) =>
        {
            Some("llm")
        }
        "llm" => None,
        "retrieval" => Some("retrieval"),
        "agent" => Some("agent"),
        // The OpenAI Agents SDK's hand-off: a tool span without a tool, "handoff to <agent>".
        "tool" if span.facts.tool.is_none() && span.name.starts_with(HANDOFF_TO) => Some("handoff"),
        "tool" => Some("tool"),
        _ => None,
    }
}

/// The steps of a turn's spans and of its tool calls (`origins`: where each came from).
pub(super) fn steps<'a>(spans: &[Span<'a>], origins: &[CallOrigin<'a>]) -> Vec<Step<'a>> {
    // Each span's executed call, and the calls it asked for that no span ran, by its place in
    // `spans`. tool_calls() made both in span order, so a cursor finds each in one walk (a
    // hash map a turn was a tenth of assembly's instructions).
    let mut executed: Vec<Option<usize>> = vec![None; spans.len()];
    let mut requested: Vec<(usize, usize)> = Vec::new(); // (the asking span's place, the call)
    let (mut ran, mut asked) = (0, 0);
    for (n, origin) in origins.iter().enumerate() {
        match *origin {
            CallOrigin::Executed(span) => {
                ran = place(spans, ran, span);
                executed[ran] = Some(n);
            }
            CallOrigin::Requested(span) => {
                asked = place(spans, asked, span);
                requested.push((asked, n));
            }
        }
    }
    requested.sort_by_key(|(at, _)| *at); // stable: in order already, unless hostile
                                          // A parent before its children: by start, the longer first where two start together.
    let mut timed: Vec<usize> =
        (0..spans.len()).filter(|&n| spans[n].start_ns != 0 && kind(spans[n]).is_some()).collect();
    timed.sort_by_key(|&n| (spans[n].start_ns, std::cmp::Reverse(spans[n].end_ns)));
    let mut out: Vec<Step> = Vec::with_capacity(timed.len());
    let mut step_of: Vec<Option<usize>> = vec![None; spans.len()];
    for at in timed {
        let span = spans[at];
        step_of[at] = Some(out.len());
        out.push(Step {
            kind: kind(span).expect("filtered"),
            span: Some(span),
            parent: None,
            start_ns: span.start_ns,
            end_ns: span.end_ns,
            tool_call: executed[at],
        });
        let first = requested.partition_point(|(asking, _)| *asking < at);
        for &(_, n) in requested[first..].iter().take_while(|(asking, _)| *asking == at) {
            // Asked for by this LLM call, run where no span saw: beside the call, after it.
            out.push(Step {
                kind: "tool",
                span: None,
                parent: None,
                start_ns: span.end_ns,
                end_ns: span.end_ns,
                tool_call: Some(n),
            });
        }
    }
    let mut parents = Parents::new(spans, step_of);
    let mut enclosing: Option<usize> = None; // the LLM call's parent, for the calls it asked for
    for (n, step) in out.iter_mut().enumerate() {
        if let Some(span) = step.span {
            enclosing = parents.enclosing_step(span);
        }
        // Only an earlier step: a hostile trace's cycle of parents cannot make one.
        step.parent = enclosing.filter(|p| *p < n);
    }
    out
}

/// The place of `span` in `spans`, looked for from `from` on (then from the start).
fn place(spans: &[Span], from: usize, span: Span) -> usize {
    let found = |range: std::ops::Range<usize>| range.into_iter().find(|&n| std::ptr::eq(spans[n], span));
    found(from.min(spans.len())..spans.len())
        .or_else(|| found(0..from.min(spans.len())))
        .expect("a call's span is one of the turn's")
}

#[derive(Clone, Copy)]
enum Walk {
    Unknown,
    Walking, // on the path being walked: met again, a cycle
    Known(Option<usize>),
}

/// The nearest enclosing step of a span, through parents that are not steps (a LangChain
/// chain, an app's own span), each span's answer remembered: a deep trace costs one walk.
struct Parents<'s, 'a> {
    spans: &'s [Span<'a>],
    by_id: Option<HashMap<&'a [u8], usize>>, // a large turn's; a small one's spans are scanned
    step_of: Vec<Option<usize>>,
    walked: Vec<Walk>,
}

impl<'s, 'a> Parents<'s, 'a> {
    const SCANNED: usize = 32;

    fn new(spans: &'s [Span<'a>], step_of: Vec<Option<usize>>) -> Self {
        let by_id = (spans.len() > Self::SCANNED)
            .then(|| spans.iter().enumerate().map(|(n, s)| (s.span_id.as_slice(), n)).collect());
        Parents { spans, by_id, step_of, walked: vec![Walk::Unknown; spans.len()] }
    }

    fn place_of(&self, span_id: &[u8]) -> Option<usize> {
        match &self.by_id {
            Some(by_id) => by_id.get(span_id).copied(),
            None => self.spans.iter().position(|s| s.span_id == span_id),
        }
    }

    fn enclosing_step(&mut self, span: Span<'a>) -> Option<usize> {
        let mut path: Vec<usize> = Vec::new();
        let mut parent = span.parent_span_id.as_slice();
        let found = loop {
            let Some(at) = (!parent.is_empty()).then(|| self.place_of(parent)).flatten() else {
                break None; // the root, or a parent that never arrived
            };
            match self.walked[at] {
                Walk::Known(answer) => break answer,
                Walk::Walking => break None, // a cycle
                Walk::Unknown => {}
            }
            if let Some(step) = self.step_of[at] {
                break Some(step);
            }
            self.walked[at] = Walk::Walking;
            path.push(at);
            parent = self.spans[at].parent_span_id.as_slice();
        };
        for at in path {
            self.walked[at] = Walk::Known(found);
        }
        found
    }
}

/// The signals of a turn's steps and tool calls.
pub(super) fn signals(steps: &[Step], calls: &[ToolCall]) -> Signals {
    let mut signals = Signals::default();
    let mut failed_before = 0u64; // failed calls not yet followed by one that succeeded
    for step in steps {
        // An LLM call or retrieval inside one of its kind is the same step seen by a framework
        // and by what it calls (LlamaIndex's `retrieve` around `_retrieve`).
        let wrapped = step.parent.is_some_and(|p| steps[p].kind == step.kind);
        if step.kind != "agent" && !(wrapped && matches!(step.kind, "llm" | "retrieval")) {
            signals.steps += 1;
        }
        if step.kind == "tool" && step.span.is_some() {
            signals.tool_ns += step.end_ns.saturating_sub(step.start_ns);
        }
        let Some(call) = step.tool_call.map(|n| &calls[n]) else { continue };
        if truthy(&call.error) {
            failed_before += 1;
        } else {
            signals.recoveries += failed_before;
            failed_before = 0;
        }
    }
    for call in calls {
        signals.tool_errors += u64::from(truthy(&call.error));
    }
    signals.loops = repeated_calls(calls);
    signals
}

/// Calls repeating an earlier one alike: same tool, same arguments.
fn repeated_calls(calls: &[ToolCall]) -> u64 {
    let alike = |a: &ToolCall, b: &ToolCall| a.name == b.name && a.arguments == b.arguments;
    if calls.len() <= 16 {
        return (1..calls.len()).filter(|&n| calls[..n].iter().any(|c| alike(c, &calls[n]))).count() as u64;
    }
    let mut seen: HashSet<(&str, String)> = HashSet::default();
    let mut repeated = 0;
    for call in calls {
        let mut arguments = String::new();
        call.arguments.write_pydantic_json(&mut arguments);
        repeated += u64::from(!seen.insert((call.name.as_str(), arguments)));
    }
    repeated
}
