//! `assistant`: this project's own attributes (exporters/attributes.py).

use crate::facts::{Facts, Feedback, ToolCall};
use crate::readers::{float, json_value, py_str, text, Issues};
use crate::value::{owned, Value};

use super::{first, get, map_of, Attrs, Convention};

pub const CONVENTION: Convention = Convention {
    name: "assistant",
    attributes: &[
        ("question", &["assistant.question"]),
        ("answer", &["assistant.answer"]),
        ("route", &["assistant.route"]),
        ("scenario_id", &["assistant.scenario.id"]),
        ("session_end", &["assistant.session.end"]),
        ("expected_tool_calls", &["assistant.expected_tool_calls"]),
        ("feedback", &["assistant.feedback.score", "assistant.feedback.comment"]),
    ],
    events: &[],
};

pub fn map(attrs: &Attrs, _span_name: &str, facts: &mut Facts, issues: &mut Issues) -> bool {
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
    if let Some(end) = get(attrs, "assistant.session.end") {
        found = true;
        // true, or its spelling as a string: an attribute set from a config file or a header
        facts.session_end = match end {
            Value::Bool(end) => *end,
            Value::Str(end) => end.eq_ignore_ascii_case("true"),
            _ => false,
        };
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
