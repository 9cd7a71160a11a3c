//! Sampling's decision, where the turn is composed (monitor/sample states the policy): the
//! assembler decides on each turn before Python sees it, so a turn decided against never becomes
//! a Python object. `TurnSampler.decide` applies the same rules to a built AssistantTurn (the
//! offline tools', and the tests' way in). Assembly depends on this module, not the other way:
//! it hands the sampler a turn's `Traits`.

use std::collections::HashMap;

use pyo3::prelude::*;

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

/// What the rules read of a turn, composed (assemble/complete.rs) or built (`decide`).
pub struct Traits<'a> {
    pub trace_id_low: u64, // the trace id's low 64 bits
    pub conversation_id: Option<&'a str>,
    pub service: &'a str,
    pub route: Option<&'a str>,
    pub feedback_score: Option<f64>,
    pub documents: usize,
    pub tool_calls: usize,
    pub error: bool,
    pub failed_tool_call: bool,
}

/// Sampling's rules and rates. The rate decision is OpenTelemetry's TraceIdRatioBased (the
/// trace id's low 64 bits against rate x 2^64), so replicas and the assistant's own head
/// sampler agree on a trace; with `whole_conversations`, a conversation's turn is decided on a
/// hash of its conversation id instead, so its turns are kept or not together (a session is
/// judged whole). The rate falls as the judge backlog grows (adaptive).
#[pyclass(module = "monitor._native", frozen)]
pub struct TurnSampler {
    rules: Vec<(&'static str, Rule)>,
    default_rate: f64,
    service_rates: HashMap<String, f64>,
    route_rates: HashMap<String, f64>, // "service/route" -> rate
    low_watermark: i64,
    high_watermark: i64,
    min_factor: f64,
    whole_conversations: bool,
}

#[pymethods]
impl TurnSampler {
    #[new]
    #[pyo3(signature = (*, always_keep, default_rate, service_rates, route_rates, low_watermark,
                        high_watermark, min_factor, whole_conversations = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        always_keep: Vec<String>,
        default_rate: f64,
        service_rates: HashMap<String, f64>,
        route_rates: HashMap<String, f64>,
        low_watermark: i64,
        high_watermark: i64,
        min_factor: f64,
        whole_conversations: bool,
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
            whole_conversations,
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
        let conversation_id: Option<String> = turn.getattr("conversation_id")?.extract()?;
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
            conversation_id: conversation_id.as_deref(),
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
        let key = match turn.conversation_id {
            Some(id) if self.whole_conversations && !id.is_empty() => conversation_key(id),
            _ => turn.trace_id_low,
        };
        if rate > 0.0 && trace_id_ratio_keep(key, rate) {
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

/// A conversation id as 64 evenly spread bits, the same in every process and release: FNV-1a,
/// then splitmix64's finaliser (FNV's high bits alone follow a short id's last bytes).
fn conversation_key(id: &str) -> u64 {
    let mut h =
        id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// OpenTelemetry's TraceIdRatioBased: keep when the low 64 bits < round(rate x 2^64).
fn trace_id_ratio_keep(low: u64, rate: f64) -> bool {
    u128::from(low) < (rate * 18_446_744_073_709_551_616.0).round_ties_even() as u128
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampler(always_keep: &[&str], default_rate: f64) -> TurnSampler {
        TurnSampler {
            rules: RULES.iter().filter(|(name, _)| always_keep.contains(name)).copied().collect(),
            default_rate,
            service_rates: HashMap::from([("billing-bot".to_string(), 0.0)]),
            route_rates: HashMap::from([("billing-bot/refunds".to_string(), 1.0)]),
            low_watermark: 100,
            high_watermark: 1100,
            min_factor: 0.1,
            whole_conversations: true,
        }
    }

    fn turn(trace_id_low: u64) -> Traits<'static> {
        Traits {
            trace_id_low,
            conversation_id: None,
            service: "bot",
            route: Some("faq"),
            feedback_score: None,
            documents: 2,
            tool_calls: 0,
            error: false,
            failed_tool_call: false,
        }
    }

    #[test]
    fn the_ratio_decision_is_opentelemetrys_trace_id_ratio_based() {
        // Kept when the low 64 bits are below rate x 2^64: at 0.5, exactly the lower half.
        assert!(trace_id_ratio_keep(0, 0.5));
        assert!(trace_id_ratio_keep((1 << 63) - 1, 0.5));
        assert!(!trace_id_ratio_keep(1 << 63, 0.5));
        assert!(trace_id_ratio_keep(u64::MAX, 1.0)); // rate 1 keeps every trace
        assert!(!trace_id_ratio_keep(0, 0.0));
        // A quarter of evenly spread ids.
        let kept = (0..1024u64).filter(|i| trace_id_ratio_keep(i << 54, 0.25)).count();
        assert_eq!(kept, 256);
    }

    #[test]
    fn the_backlog_lowers_the_rate_linearly_to_its_floor() {
        let s = sampler(&[], 1.0);
        assert_eq!(s.backlog_factor(0), 1.0);
        assert_eq!(s.backlog_factor(100), 1.0);
        assert!((s.backlog_factor(600) - 0.55).abs() < 1e-12); // half way: 1 - 0.5 x 0.9
        assert_eq!(s.backlog_factor(1100), 0.1);
        assert_eq!(s.backlog_factor(1_000_000), 0.1);
    }

    #[test]
    fn an_always_keep_rule_wins_over_the_rate_and_is_named() {
        let s = sampler(&["negative_feedback", "no_documents", "error_status", "failed_tool_call"], 0.0);
        assert_eq!(s.decide_traits(&turn(0), 0), (false, "not_sampled", 0.0));
        let disliked = Traits { feedback_score: Some(-1.0), ..turn(0) };
        assert_eq!(s.decide_traits(&disliked, 0), (true, "negative_feedback", 1.0));
        let liked = Traits { feedback_score: Some(1.0), ..turn(0) };
        assert!(!s.decide_traits(&liked, 0).0);
        let empty = Traits { documents: 0, ..turn(0) };
        assert_eq!(s.decide_traits(&empty, 0), (true, "no_documents", 1.0));
        // A turn of tool calls only is not a RAG turn without documents.
        let tools_only = Traits { documents: 0, tool_calls: 1, ..turn(0) };
        assert_eq!(s.decide_traits(&tools_only, 0).1, "not_sampled");
        let failed = Traits { tool_calls: 1, failed_tool_call: true, ..turn(0) };
        assert_eq!(s.decide_traits(&failed, 0), (true, "failed_tool_call", 1.0));
        let errored = Traits { error: true, ..turn(0) };
        assert_eq!(s.decide_traits(&errored, 0), (true, "error_status", 1.0));
        // Rules not asked for keep nothing.
        assert_eq!(sampler(&[], 0.0).decide_traits(&disliked, 0).1, "not_sampled");
    }

    #[test]
    fn a_route_rate_beats_its_services_rate_which_beats_the_default() {
        let s = sampler(&[], 0.5);
        let low = turn(0);
        assert_eq!(s.decide_traits(&low, 0), (true, "rate", 0.5));
        let high = turn(u64::MAX);
        assert_eq!(s.decide_traits(&high, 0), (false, "not_sampled", 0.5));
        let billing = Traits { service: "billing-bot", route: Some("faq"), ..turn(0) };
        assert_eq!(s.decide_traits(&billing, 0), (false, "not_sampled", 0.0));
        let refunds = Traits { service: "billing-bot", route: Some("refunds"), ..turn(u64::MAX) };
        assert_eq!(s.decide_traits(&refunds, 0), (true, "rate", 1.0));
        // The backlog scales whichever rate applies, and the inclusion probability with it.
        assert_eq!(s.decide_traits(&refunds, 1100), (false, "not_sampled", 0.1));
    }

    #[test]
    fn a_conversations_turns_are_kept_or_not_together_at_the_rate() {
        let s = sampler(&[], 0.25);
        let ids: Vec<String> = (0..4000).map(|n| format!("conv-{n}")).collect();
        let kept: Vec<&String> = ids
            .iter()
            .filter(|id| s.decide_traits(&Traits { conversation_id: Some(id), ..turn(0) }, 0).0)
            .collect();
        assert!((900..1100).contains(&kept.len()), "{} of 4000 at 0.25", kept.len());
        for id in &ids[..200] {
            // whatever the trace: the decision is the conversation's
            let first = s.decide_traits(&Traits { conversation_id: Some(id), ..turn(0) }, 0);
            let other = s.decide_traits(&Traits { conversation_id: Some(id), ..turn(u64::MAX) }, 0);
            assert_eq!(first, other);
        }
        let by_trace = TurnSampler { whole_conversations: false, ..sampler(&[], 0.25) };
        let conversation = Traits { conversation_id: Some("conv-1"), ..turn(u64::MAX) };
        assert_eq!(by_trace.decide_traits(&conversation, 0).1, "not_sampled");
    }
}
