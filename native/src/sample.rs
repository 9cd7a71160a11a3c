//! Sampling's decision, where the turn is composed (monitor/sample states the policy): the
//! assembler decides on each turn before Python sees it, so a turn decided against never becomes
//! a Python object. `TurnSampler.decide` applies the same rules to a built AssistantTurn (the
//! offline tools', and the tests' way in).

use std::collections::HashMap;

use pyo3::prelude::*;

use crate::assemble::{truthy, Turn};

/// Rules that always keep a turn (suspicious turns are always judged).
#[derive(Clone, Copy)]
enum Rule {
    NegativeFeedback, // the user said it was bad
    NoDocuments,      // a RAG turn that retrieved nothing (a turn with tool calls only is not RAG)
    ErrorStatus,      // a span ended in error
    FailedToolCall,
}

const RULES: [(&str, Rule); 4] = [
    ("negative_feedback", Rule::NegativeFeedback),
    ("no_documents", Rule::NoDocuments),
    ("error_status", Rule::ErrorStatus),
    ("failed_tool_call", Rule::FailedToolCall),
];

/// What the rules read of a turn, composed or built.
pub struct Traits<'a> {
    pub trace_id_low: u64, // the trace id's low 64 bits
    pub service: &'a str,
    pub route: Option<&'a str>,
    pub feedback_score: Option<f64>,
    pub documents: usize,
    pub tool_calls: usize,
    pub error: bool,
    pub failed_tool_call: bool,
}

impl<'a> Traits<'a> {
    pub fn of(turn: &'a Turn<'a>) -> Self {
        Traits {
            trace_id_low: turn.trace_id[turn.trace_id.len().saturating_sub(8)..]
                .iter()
                .fold(0, |n, b| n << 8 | u64::from(*b)),
            service: turn.service,
            route: turn.route,
            feedback_score: turn.feedback.map(|f| f.score),
            documents: turn.documents.len(),
            tool_calls: turn.tool_calls.len(),
            error: turn.error.is_some(),
            failed_tool_call: turn.tool_calls.iter().any(|c| truthy(&c.error)),
        }
    }
}

/// Sampling's rules and rates. The rate decision is OpenTelemetry's TraceIdRatioBased (the
/// trace id's low 64 bits against rate x 2^64), so replicas and the assistant's own head
/// sampler agree on a trace; the rate falls as the judge backlog grows (adaptive).
#[pyclass(module = "assistant_monitor_native", frozen)]
pub struct TurnSampler {
    rules: Vec<(&'static str, Rule)>,
    default_rate: f64,
    service_rates: HashMap<String, f64>,
    route_rates: HashMap<String, f64>, // "service/route" -> rate
    low_watermark: i64,
    high_watermark: i64,
    min_factor: f64,
}

#[pymethods]
impl TurnSampler {
    #[new]
    #[pyo3(signature = (*, always_keep, default_rate, service_rates, route_rates, low_watermark,
                        high_watermark, min_factor))]
    fn new(
        always_keep: Vec<String>,
        default_rate: f64,
        service_rates: HashMap<String, f64>,
        route_rates: HashMap<String, f64>,
        low_watermark: i64,
        high_watermark: i64,
        min_factor: f64,
    ) -> PyResult<Self> {
        let mut rules = Vec::new();
        for name in &always_keep {
            let Some(&(name, rule)) = RULES.iter().find(|(known, _)| known == name) else {
                let known: Vec<&str> = RULES.iter().map(|(n, _)| *n).collect();
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "unknown always-keep rule '{name}': expected one of {}",
                    known.join(", ")
                )));
            };
            rules.push((name, rule));
        }
        Ok(TurnSampler {
            rules,
            default_rate,
            service_rates,
            route_rates,
            low_watermark,
            high_watermark,
            min_factor,
        })
    }

    /// 1 below the low watermark, falling linearly to `min_factor` at the high watermark.
    pub fn backlog_factor(&self, backlog: i64) -> f64 {
        if backlog <= self.low_watermark {
            return 1.0;
        }
        if backlog >= self.high_watermark {
            return self.min_factor;
        }
        let span = (self.high_watermark - self.low_watermark) as f64;
        self.min_factor.max(1.0 - (backlog - self.low_watermark) as f64 / span * (1.0 - self.min_factor))
    }

    /// (keep, reason: an always-keep rule, "rate" or "not_sampled", inclusion probability) for
    /// a monitor.model.AssistantTurn.
    #[pyo3(signature = (turn, backlog = 0))]
    fn decide(&self, turn: &Bound<'_, PyAny>, backlog: i64) -> PyResult<(bool, &'static str, f64)> {
        let trace_id: String = turn.getattr("trace_id")?.extract()?;
        let low = trace_id.get(trace_id.len().saturating_sub(16)..).unwrap_or(&trace_id);
        let trace_id_low = u64::from_str_radix(low, 16).map_err(|_| {
            pyo3::exceptions::PyValueError::new_err(format!("trace_id {trace_id:?} is not hex"))
        })?;
        let service: String = turn.getattr("service")?.extract()?;
        let route: Option<String> = turn.getattr("route")?.extract()?;
        let feedback = turn.getattr("feedback")?;
        let calls = turn.getattr("tool_calls")?;
        let mut failed = false;
        for call in calls.try_iter()? {
            failed |= call?.getattr("error")?.is_truthy()?;
        }
        let traits = Traits {
            trace_id_low,
            service: &service,
            route: route.as_deref(),
            feedback_score: if feedback.is_none() {
                None
            } else {
                Some(feedback.getattr("score")?.extract()?)
            },
            documents: turn.getattr("documents")?.len()?,
            tool_calls: calls.len()?,
            error: !turn.getattr("error")?.is_none(),
            failed_tool_call: failed,
        };
        Ok(self.decide_traits(&traits, backlog))
    }
}

impl TurnSampler {
    pub fn decide_traits(&self, turn: &Traits, backlog: i64) -> (bool, &'static str, f64) {
        for &(name, rule) in &self.rules {
            let keep = match rule {
                Rule::NegativeFeedback => turn.feedback_score.is_some_and(|s| s < 0.0),
                Rule::NoDocuments => turn.documents == 0 && turn.tool_calls == 0,
                Rule::ErrorStatus => turn.error,
                Rule::FailedToolCall => turn.failed_tool_call,
            };
            if keep {
                return (true, name, 1.0);
            }
        }
        let rate = self.rate_for(turn) * self.backlog_factor(backlog);
        if rate > 0.0 && trace_id_ratio_keep(turn.trace_id_low, rate) {
            (true, "rate", rate)
        } else {
            (false, "not_sampled", rate)
        }
    }

    fn rate_for(&self, turn: &Traits) -> f64 {
        if let Some(route) = turn.route {
            if let Some(rate) = self.route_rates.get(&format!("{}/{route}", turn.service)) {
                return *rate;
            }
        }
        self.service_rates.get(turn.service).copied().unwrap_or(self.default_rate)
    }
}

/// OpenTelemetry's TraceIdRatioBased: keep when the low 64 bits < round(rate x 2^64).
fn trace_id_ratio_keep(low: u64, rate: f64) -> bool {
    u128::from(low) < (rate * 18_446_744_073_709_551_616.0).round_ties_even() as u128
}
