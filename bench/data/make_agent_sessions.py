# ruff: noqa: E501  (hand-written templates: prose, one per line)
"""Build bench/data/agent_sessions.jsonl: a labelled set of agent trajectories and support sessions.

    python3 bench/data/make_agent_sessions.py     # writes the file, prints counts per kind and label

Format: one JSON object per line,
    {"kind": "trajectory" | "session", "label": {...}, "turns": [turn, ...]}
and each turn is
    {"question": str, "answer": str | null, "error": str | null, "feedback": -1..1 | null,
     "steps": [{"kind": "llm"} | {"kind": "tool", "name", "arguments", "error", "result"}
               | {"kind": "handoff", "name"}], "end": bool}
A trajectory is one turn of a tool-calling agent; a session is 1-8 turns between a user and a
support assistant. `end` is true only on a last turn the app closed explicitly (end chat, ticket closed).

Labels. Every item is written by a builder below that decides first what happens in the
conversation (which tool calls fail, what the user says, whether the problem gets solved) and then
writes the turns to match; the label records that story. Labels come from how each conversation was
written (what happened), never from any rule of the monitoring sidecar, and the sidecar's code was
not consulted when writing this file.
  trajectory: good      tools succeed and the question is answered (same tool with *different*
                        arguments, or a sub-agent handoff, is still good);
              looping   the same tool with the same arguments is called 3-6 times in total, whether
                        or not an answer follows (every repeated call returns a result, no errors);
              failing   a tool call errors and the agent does not recover: a failure message or no
                        answer (a single identical retry that fails again is still failing);
              recovered a tool call errors, the agent retries with other arguments or another tool,
                        that succeeds, and it answers;
              gave_up   no tool errors, but no answer at all or an explicit "I can't do that".
  session:    outcome   resolved (turns_to_resolution = 1-based turn whose answer solved the problem;
                        with thanks, with thumbs-up only, or with the user simply leaving afterwards),
                        unresolved (problem not solved and the last turn has end=true),
                        escalated (the user asked for a person in any wording, or the agent handed
                        off to a human / called an escalation tool; a handoff to another *bot*
                        sub-agent is not an escalation, nor is "agent" meaning a travel agent),
                        abandoned (problem not solved, the user went away without end=true).
                        A problem solved early followed by a second problem left unsolved counts as
                        not resolved (the user left with an open problem).
              closed    "ended" iff the last turn has end=true, else "idle".
All names, ids, amounts and addresses are invented. Standard library only; random.Random(SEED), so
every run writes the identical file.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

SEED = 7311
OUT = Path(__file__).resolve().parent / "agent_sessions.jsonl"

FIRST = ["maria", "dev", "li", "tom", "aisha", "sam", "priya", "jonas", "keiko", "omar", "beth", "raul"]
LAST = ["okafor", "nguyen", "schmidt", "patel", "garcia", "kowalski", "haddad", "larsen", "moreau", "ito"]
MONTHS = ["Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct"]
CITIES = ["Denver", "Lisbon", "Toronto", "Austin", "Dublin", "Osaka", "Chicago", "Madrid", "Seattle"]


def make_slots(rng: random.Random) -> dict:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    user = f"{first[0]}{last}"
    amt = rng.randint(60, 480) + rng.randint(0, 99) / 100
    c0, c1 = rng.sample(CITIES, 2)
    m = rng.randrange(len(MONTHS) - 1)
    up = "ABCDEFGHJKLMNPQRSTUVWXYZ"
    return dict(
        name=first.title(), lastc=last.title(), user=user, email=f"{first}.{last}@example.com",
        emailm=f"{first[0]}***@example.com", oid=f"{rng.choice('ABK')}-{rng.randint(10000, 99999)}",
        oid2=f"{rng.choice('ABK')}-{rng.randint(10000, 99999)}", trk="".join(rng.choices("0123456789ABCDEF", k=10)),
        date0=f"{MONTHS[m]} {rng.randint(1, 27)}", date=f"{MONTHS[m + 1]} {rng.randint(1, 28)}", date2=f"Dec 31 {rng.choice([2025, 2026])}",
        amt=f"{amt:.2f}", amt2=f"{amt * rng.uniform(0.3, 0.6):.2f}", last4=f"{rng.randint(0, 9999):04d}", last4b=f"{rng.randint(0, 9999):04d}",
        acct=str(rng.randint(100000000, 999999999)), ref=str(rng.randint(10000, 99999)), host=f"LT-{rng.randint(1000, 9999)}",
        pnr="".join(rng.choices(up, k=6)), flight=f"{rng.choice(['UA', 'TP', 'AC', 'EI'])} {rng.randint(100, 2999)}",
        city0=c0, city=c1, tag=f"0016 {rng.randint(100000, 999999)}", claim=f"CLM-{rng.randint(100000, 999999)}",
        claim2=f"CLM-{rng.randint(100000, 999999)}", policy=f"HO-{rng.randint(1000000, 9999999)}", emp=f"E{rng.randint(10000, 99999)}",
        pto=rng.choice(["4", "7.5", "11", "12.5", "16"]), year=rng.choice(["2023", "2024"]), zip=f"{rng.randint(10000, 99999)}",
        wait=str(rng.randint(2, 15)), nn=f"{rng.randint(100, 199)}",
    )


def fill(x, s):
    if isinstance(x, str):
        return x.format(**s)
    if isinstance(x, dict):
        return {k: fill(v, s) for k, v in x.items()}
    if isinstance(x, list):
        return [fill(v, s) for v in x]
    return x


# --- problems: asks are near-rephrasings of one another (used in order when a user repeats himself) ---
# The problems users bring, each a template: how they ask (and ask vaguely), what the agent needs,
# the tool calls that solve it and their results, an alternative call, errors, deflections.
PROBLEMS = json.loads((Path(__file__).resolve().parent / "agent_problems.json").read_text())
BY_KEY = {p["key"]: p for p in PROBLEMS}
DOMS = sorted({p["dom"] for p in PROBLEMS})

OUT_OF_SCOPE = {  # requests the assistant must not / cannot do; (question, a harmless tool it may check first)
    "orders": [("can you change the price on order {oid} to match what i saw on another site", ("lookup_order", {"order_id": "{oid}"}, "order {oid}: status=processing total=${amt}")), ("delete all my reviews on the site", None)],
    "banking": [("whats my wife's account balance, shes {name} {lastc}", None), ("can u raise my credit limit to 50k today", ("get_card_status", {"card_last4": "{last4}"}, "card ****{last4}: status=active limit=5000"))],
    "it": [("can you give me local admin rights on {host}", ("get_device", {"hostname": "{host}"}, "{host}: managed=true admin_group=IT-Only")), ("turn off the website filter for me, i need reddit for work", None)],
    "travel": [("book me a dinner table in {city} tonight for 2", None), ("can you get me a visa for {city}", None)],
    "insurance": [("can you backdate policy {policy} to last month, i had a leak before it started", ("get_policy", {"policy_id": "{policy}"}, "{policy}: start={date0} status=active")), ("tell me what my neighbor's policy covers", None)],
    "hr": [("what's my coworker's salary? he sits next to me", None), ("approve my own expense report pls, my boss is out", ("get_pto_balance", {"employee_id": "{emp}"}, "vacation={pto}d"))],
    "telecom": [("unlock my ex's phone for me, i know her account number {acct}", None), ("can you read me the texts from my old number", None)],
}
CRITICAL = {  # situations where the agent itself escalates to a person
    "orders": "the charger i bought from you caught fire last night, order {oid}",
    "banking": "theres 4 charges on my card {last4} from yesterday that i didnt make",
    "it": "i clicked a link in an email and typed my password, i think it was phishing",
    "travel": "flight {flight} got cancelled, im stuck at the airport and i need my insulin from my checked bag",
    "insurance": "i was in a car accident this morning and the other driver was hurt. what do i do",
    "hr": "i need to report harassment from my team lead",
    "telecom": "someone ported my number out without my permission, i have no service",
}

GREET = ["hi", "hello", "hey", "hi there", "good morning"]
GREET_A = ["Hi! How can I help you today?", "Hello! What can I do for you?", "Hey there, how can I help?"]
CLARIFY_A = ["Sure, I can help with that. Could you give me your {need}?", "I'm sorry to hear that. What's your {need}?", "Happy to look into it. Can you share the {need}?"]
THANKS = ["thanks!", "thx that worked", "perfect, thank you", "great thanks so much", "ok got it, ty", "that did it, thanks", "awesome thank you!!", "cool thanks", "works now!! thank you", "ty", "oh nice, thanks a lot"]
THANKS_A = ["You're welcome! Anything else I can help with?", "Glad that worked! Have a great day.", "Happy to help!", "You're welcome!"]
OK_AFTER_SOLVE = ["ok", "k", "got it", "ok cool"]
FOLLOWUP = [("do i need to do anything else?", "No, you're all set."), ("and i dont need to call anyone?", "No need; everything is taken care of."), ("ok so nothing else on my side right", "Right, nothing else needed from you.")]
FAIL_A = ["Sorry, I'm having trouble reaching our {system} right now, so I can't look into that. Please try again in a little while.",
          "Something went wrong on my end while checking the {system}. I wasn't able to complete this.",
          "I ran into an error with the {system} and couldn't finish that request. Sorry about that.",
          "Unfortunately the {system} isn't responding at the moment, so I can't complete this right now."]
REFUSE_A = ["I'm sorry, but I can't help with that.", "That's not something I'm able to do, unfortunately.", "I'm afraid I can't do that from here.", "Sorry, I can't do that request."]
TURN_ERR = ["LLM request timed out after 60s", "openai.APIError: 500 The server had an error while processing your request", "context_length_exceeded: maximum context length is 128000 tokens", "worker crashed: SIGKILL (out of memory)"]
GAVEUP_ERR = ["GraphRecursionError: Recursion limit of 25 reached without hitting a stop condition", "max iterations (12) reached", "run cancelled: step budget exhausted"]
SORRY_A = ["I'm sorry I couldn't help with that.", "I'm sorry for the trouble. Is there anything else I can do?", "Apologies, I understand that's frustrating."]
NEG_END = ["this is useless", "wow thanks for nothing", "thanks for nothing", "great, super helpful. not.", "this bot is pointless", "forget it", "ugh"]
NOT_ASKED = ["thanks, but that's not what I asked", "thanks but thats not what i asked?", "ok but that doesnt answer my question"]
NOT_ASKED_A = ["Sorry about that! Could you tell me a bit more about what you need?", "Apologies, could you rephrase what you're looking for?"]
POLITE_OK = ["ok", "ok thanks anyway", "alright, ill try later", "ok ty", "oh ok"]
NVM = ["ugh nvm", "nvm", "nevermind", "forget it, ill figure it out"]
HUMAN = ["can I speak to someone", "get me a real person", "I want a supervisor", "transfer me to support staff", "is there a human I can talk to",
         "human please", "let me talk to an actual person", "can i talk to a representative pls", "agent", "i need to speak with a manager about this",
         "is anyone real there or is this all bots", "id rather deal with somebody on your team", "put me through to customer service", "connect me with a live agent",
         "operator", "i want to complain to a person, not a bot", "can you escalate this to someone who can actually fix it", "pls get a human on this",
         "is there a number i can call to talk to someone", "can i talk to someone who actually works there", "REPRESENTATIVE"]
CALLBACK = ["can someone from your team call me back? this is taking forever", "just have somebody call me", "can a person phone me about this instead"]
HANDOFF_A = ["Of course, I'm transferring you to a member of our support team now. Someone will be with you in a few minutes.",
             "Sure, connecting you with a live agent. The current wait is about {wait} minutes.",
             "I understand. I've passed this to our support staff with a summary, so you won't have to repeat yourself."]
NO_TRANSFER_A = "I can't transfer chats, but you can reach a person at 1-800-555-0{nn} (Mon-Fri, 8am-8pm)."
CRITICAL_A = "I'm really sorry. This needs a specialist, so I've escalated it to our team right away; someone will contact you shortly. Reference ESC-{ref}."
TWO_IDS = [("can you check orders {oid} and {oid2}", "lookup_order", "order_id", "{oid}", "{oid2}", "order {v}: status=delivered on {date0}", "Both orders, {oid} and {oid2}, were delivered on {date0}."),
           ("status on claims {claim} and {claim2}?", "get_claim", "claim_id", "{claim}", "{claim2}", "{v}: status=in_review adjuster_assigned=yes", "Both claims ({claim} and {claim2}) are in review and have an adjuster assigned."),
           ("are my cards ending {last4} and {last4b} both active?", "get_card_status", "card_last4", "{last4}", "{last4b}", "card ****{v}: status=active", "Yes, both cards (ending {last4} and {last4b}) are active.")]
SUBAGENT = {"orders": "refunds_agent", "banking": "payments_agent", "it": "identity_agent", "travel": "booking_agent", "insurance": "claims_agent", "hr": "payroll_agent", "telecom": "billing_agent"}


class Ctx:
    """One conversation: a random problem, its slot values and the rng."""

    def __init__(self, rng: random.Random, key: str | None = None, dom: str | None = None):
        self.r = rng
        cands = [p for p in PROBLEMS if (key is None or p["key"] == key) and (dom is None or p["dom"] == dom)]
        self.p = rng.choice(cands)
        self.s = make_slots(rng)
        self.order = rng.sample(range(len(self.p["asks"])), len(self.p["asks"]))  # rephrase order
        self.n_ask = 0

    def f(self, x):
        return fill(x, {**self.s, "need": self.p["need"], "system": self.p["system"]})

    def pick(self, xs):
        return self.f(self.r.choice(xs))

    def ask(self):
        q = self.p["asks"][self.order[self.n_ask % len(self.order)]]
        self.n_ask += 1
        return self.f(q)

    def other(self):  # a second problem in the same domain, same customer
        d = Ctx(self.r, key=self.r.choice([p["key"] for p in PROBLEMS if p["dom"] == self.p["dom"] and p["key"] != self.p["key"]]))
        d.s = self.s
        return d

    def tool(self, call, err=None):
        name, args, res = call
        return {"kind": "tool", "name": name, "arguments": self.f(args), "error": self.f(err) if err else None, "result": None if err else self.f(res)}

    def steps(self, tools, final=True):
        if not tools:
            return [{"kind": "llm"}]
        out = [{"kind": "llm"}]
        for i, t in enumerate(tools):
            out.append(t)
            if t["kind"] == "tool" and i < len(tools) - 1 and self.r.random() < 0.5:
                out.append({"kind": "llm"})
        return out + ([{"kind": "llm"}] if final else [])

    def err(self):
        return self.r.choice(self.p["errs"] + ["500 Internal Server Error", "ConnectionResetError: [Errno 104] Connection reset by peer"])

    # ---- turns ----
    def solve(self, q=None, fb=None, pre=()):
        return T(q or self.ask(), self.pick(self.p["answer"]), self.steps(list(pre) + [self.tool(c) for c in self.p["calls"]]), fb=fb)

    def fail(self, q=None, fb=None, null=False):
        calls = self.p["calls"]
        e = self.err()
        tools = [self.tool(c) for c in calls[:-1]] + [self.tool(calls[-1], err=e)]
        if null:
            return T(q or self.ask(), None, self.steps(tools, final=False), error="Agent run failed: ToolException: " + self.f(e), fb=fb)
        return T(q or self.ask(), self.pick(FAIL_A), self.steps(tools), fb=fb)

    def null(self, q=None):
        tools = [self.tool(self.p["calls"][0])] if self.r.random() < 0.5 else []
        return T(q or self.ask(), None, self.steps(tools, final=False), error=self.r.choice(TURN_ERR))

    def deflect(self, q=None, fb=None):
        return T(q or self.ask(), self.pick(self.p["deflect"]), [{"kind": "llm"}], fb=fb)

    def clarify(self):
        return T(self.pick(self.p["vague"]), self.pick(CLARIFY_A), [{"kind": "llm"}])

    def detail(self):
        return self.pick(self.p["detail"])

    def chat(self, q, a):
        return T(self.f(q), self.f(a), [{"kind": "llm"}])

    def escalate(self, q, how=None):
        if "number i can call" in q:  # asks for a person; the answer is a phone line
            return self.chat(q, NO_TRANSFER_A)
        how = how or self.r.choice(["handoff_h", "handoff_l", "esc", "live"])
        reason = self.r.choice(["user_requested_human", "customer_request", "frustrated_customer"])
        step = {"handoff_h": {"kind": "handoff", "name": "handoff to human_support"}, "handoff_l": {"kind": "handoff", "name": "handoff to live_agent"},
                "esc": self.tool(("escalate_to_human", {"reason": reason, "priority": self.r.choice(["normal", "high"])}, "queued ESC-{ref}; position=3")),
                "live": self.tool(("transfer_to_live_agent", {"queue": self.p["dom"] + "_support"}, "transfer initiated; est_wait={wait}m")),
                "callback": self.tool(("request_callback", {"phone": "on_file", "window": "2h"}, "callback CB-{ref} scheduled"))}[how]
        a = "Sure. I've asked someone from our team to call you back at the number on file within 2 hours (ref CB-{ref})." if how == "callback" else self.r.choice(HANDOFF_A)
        return T(self.f(q), self.f(a), [{"kind": "llm"}, step, {"kind": "llm"}] if step["kind"] == "tool" else [{"kind": "llm"}, step])


def T(q, a, steps, error=None, fb=None, end=False):
    return {"question": q, "answer": a, "error": error, "feedback": fb, "steps": steps, "end": end}


def session(outcome, turns, ttr=None, end=False):
    turns[-1]["end"] = end
    return {"kind": "session", "label": {"outcome": outcome, "turns_to_resolution": ttr, "closed": "ended" if end else "idle"}, "turns": turns}


def traj(label, turn):
    return {"kind": "trajectory", "label": {"trajectory": label}, "turns": [turn]}


# ---------------- trajectories ----------------
def tr_good(r, i):
    c = Ctx(r)
    v = i % 4
    if v == 2:  # same tool, different arguments: still good
        q, name, k, a1, a2, res, ans = TWO_IDS[(i // 4) % len(TWO_IDS)]
        tools = [c.tool((name, {k: a}, res.replace("{v}", a))) for a in (a1, a2)]
        return traj("good", T(c.f(q), c.f(ans), c.steps(tools)))
    if v == 3:  # routed to a bot sub-agent first
        return traj("good", c.solve(pre=[{"kind": "handoff", "name": "handoff to " + SUBAGENT[c.p["dom"]]}]))
    return traj("good", c.solve(fb=r.choice([None, None, 1])))


def tr_looping(r, i):
    c = Ctx(r)
    call = c.p["calls"][0]
    n = 3 + i % 4  # 3..6 identical calls
    tools = [c.tool(call) for _ in range(n)]
    steps = [{"kind": "llm"}]
    for t in tools:
        steps += [t, {"kind": "llm"}] if r.random() < 0.6 else [t]
    if i % 3 == 0:
        return traj("looping", T(c.ask(), None, steps[:-1] if steps[-1]["kind"] == "llm" else steps, error=r.choice(GAVEUP_ERR)))
    if steps[-1]["kind"] != "llm":
        steps.append({"kind": "llm"})
    a = c.pick(c.p["answer"]) if i % 3 == 1 else c.pick(FAIL_A + ["I wasn't able to get a final answer; the lookup keeps returning the same thing."])
    return traj("looping", T(c.ask(), a, steps))


def tr_failing(r, i):
    c = Ctx(r)
    v = i % 4
    if v == 0:
        return traj("failing", c.fail())
    if v == 1:
        return traj("failing", c.fail(null=True))
    if v == 2:  # one identical retry, fails again (not looping: only one extra call)
        call, e = c.p["calls"][0], c.err()
        return traj("failing", T(c.ask(), c.pick(FAIL_A), c.steps([c.tool(call, err=e), c.tool(call, err=e)])))
    call, e = c.p["calls"][0], c.err()  # fails, agent answers as if nothing happened but with an apology
    return traj("failing", T(c.ask(), c.f(f"Sorry, I couldn't retrieve that information ({e}). Please try again later."), c.steps([c.tool(call, err=e)])))


def tr_recovered(r, i):
    c = Ctx(r)
    calls = c.p["calls"]
    pre = [c.tool(x) for x in calls[:-1]]
    last = calls[-1]
    if i % 2 == 0:  # other tool
        tools = pre + [c.tool(last, err=c.err()), c.tool(c.p["alt"])]
    else:  # same tool, corrected arguments
        name, args, res = last
        args = dict(args)
        k = list(args)[-1]
        if len(args) > 1:
            bad = {kk: vv for kk, vv in args.items() if kk != k}
            e = f"400 Bad Request: field '{k}' is required"
        else:
            v = c.f(args[k])
            bad = {k: v.replace("-", "").replace(" ", "").lower() if any(ch in v for ch in "- ") or v != v.lower() else "#" + v}
            e = f"404 Not Found: no record for {k}={bad[k]!r}"
        tools = pre + [{"kind": "tool", "name": name, "arguments": c.f(bad), "error": e, "result": None}, c.tool(last)]
    return traj("recovered", T(c.ask(), c.pick(c.p["answer"]), c.steps(tools)))


def tr_gave_up(r, i):
    c = Ctx(r)
    v = i % 5
    if v in (0, 1):  # out-of-scope request, explicit refusal, maybe after a harmless lookup
        q, check = OUT_OF_SCOPE[c.p["dom"]][v]
        tools = [c.tool(check)] if check else []
        return traj("gave_up", T(c.f(q), r.choice(REFUSE_A), c.steps(tools)))
    if v == 2:  # distinct successful lookups, then ran out of steps
        tools = [c.tool(x) for x in c.p["calls"][:1]] + [c.tool(c.p["alt"])]
        return traj("gave_up", T(c.ask(), None, c.steps(tools, final=False) + [{"kind": "llm"}], error=r.choice(GAVEUP_ERR)))
    if v == 3:  # empty output, no error reported
        return traj("gave_up", T(c.ask(), None, [{"kind": "llm"}]))
    return traj("gave_up", T(c.ask(), "I'm sorry, I wasn't able to work this out and I can't complete this request.", c.steps([c.tool(c.p["calls"][0])])))


# ---------------- sessions ----------------
RESOLVED_PLAN = ["thanks", "thanks", "greet_thanks", "clarify_thanks", "fb", "clarify_fb", "fail_thanks", "agent_thanks", "subagent", "ok",
                 "silent0", "silent1", "silent2", "silent3", "silent4",
                 "thanks", "greet_thanks", "clarify_thanks", "fb", "fail_thanks", "agent_silent", "subagent", "ok",
                 "silent0", "silent1", "silent2", "silent3", "silent0", "silent1", "silent2"]


def s_resolved(r, i):
    v = RESOLVED_PLAN[i]
    c = Ctx(r, key="travel_change" if v.startswith("agent") else None)
    end = r.random() < 0.4
    thanks = c.chat(r.choice(THANKS), r.choice(THANKS_A))
    if v == "thanks":
        return session("resolved", [c.solve(), thanks], 1, end)
    if v == "greet_thanks":
        return session("resolved", [c.chat(r.choice(GREET), r.choice(GREET_A)), c.solve(), thanks], 2, end)
    if v == "clarify_thanks":  # clarify, solve (maybe thumbs up), thanks
        return session("resolved", [c.clarify(), c.solve(q=c.detail(), fb=r.choice([None, 1])), thanks], 2, end)
    if v == "fb":  # thumbs up is the only sign
        return session("resolved", [c.solve(fb=r.choice([1, 1, 0.8]))], 1, end)
    if v == "clarify_fb":
        return session("resolved", [c.clarify(), c.solve(q=c.detail(), fb=1)], 2, end)
    if v == "fail_thanks":  # failure, user asks again, solved, thanks
        return session("resolved", [c.fail(), c.solve(), c.chat(r.choice(["perfect thanks", "ok that worked, thank you", "finally. thx"]), r.choice(THANKS_A))], 2, end)
    if v.startswith("agent"):  # "agent" = travel agent, not an escalation
        t = [c.solve(q=c.pick(c.p["agent_asks"]))]
        return session("resolved", t + [thanks] if v == "agent_thanks" else t, 1, end and v == "agent_thanks")
    if v == "subagent":  # routed to a bot sub-agent (not a human), solved, user leaves
        return session("resolved", [c.solve(pre=[{"kind": "handoff", "name": "handoff to " + SUBAGENT[c.p["dom"]]}])], 1)
    if v == "ok":  # solved, then a bare "ok"
        return session("resolved", [c.solve(), c.chat(r.choice(OK_AFTER_SOLVE), "Great. Anything else?")], 1, end)
    # solved, user leaves without thanking or rating (idle)
    if v == "silent0":
        return session("resolved", [c.solve()], 1)
    if v == "silent1":
        return session("resolved", [c.clarify(), c.solve(q=c.detail())], 2)
    if v == "silent2":
        return session("resolved", [c.chat(r.choice(GREET), r.choice(GREET_A)), c.solve()], 2)
    if v == "silent3":
        return session("resolved", [c.fail(null=r.random() < 0.5), c.solve()], 2)
    q, a = r.choice(FOLLOWUP)
    return session("resolved", [c.solve(), c.chat(q, a)], 1)


def s_unresolved(r, i):
    c = Ctx(r)
    v = i % 10
    if v == 0:
        t = ([c.chat(r.choice(GREET), r.choice(GREET_A))] if i >= 10 else []) + [c.fail(fb=-1)]
    elif v == 1:
        t = [c.fail(), c.fail(null=r.random() < 0.3), c.chat(r.choice(NEG_END), r.choice(SORRY_A))]
    elif v == 2:
        t = [c.deflect(), c.chat(r.choice(["wow thanks for nothing", "thanks for nothing", "oh great thanks a lot. really helpful"]), r.choice(SORRY_A))]
    elif v == 3:
        t = [c.deflect(), c.chat(r.choice(NOT_ASKED), r.choice(NOT_ASKED_A))]
    elif v == 4:
        t = [c.fail(), c.chat(r.choice(POLITE_OK), r.choice(SORRY_A))]
    elif v == 5:
        t = [c.null(), c.null(q=r.choice(["hello??", "??", "anyone there"]))]
    elif v == 6:  # solved problem A with thumbs up, then problem B fails
        d = c.other()
        t = [c.solve(fb=1), d.fail(q=d.ask()), c.chat(r.choice(["ugh", "great.", "come on"]), r.choice(SORRY_A))]
    elif v == 7:
        q, check = r.choice(OUT_OF_SCOPE[c.p["dom"]])
        t = [T(c.f(q), r.choice(REFUSE_A), c.steps([c.tool(check)] if check else [])), c.chat(r.choice(["seriously?", "why not", "useless"]), r.choice(SORRY_A))]
    elif v == 8:  # same question three times
        t = [c.deflect(), c.deflect(), c.fail(fb=r.choice([None, -1]))]
    else:
        t = [c.clarify(), c.fail(q=c.detail(), fb=-1)]
    return session("unresolved", t, None, True)


def s_escalated(r, i, phrases):
    v = i % 7
    c = Ctx(r, dom=DOMS[(i // 7) * 3 % len(DOMS)] if v == 4 else None)
    end = r.random() < 0.5
    if v == 0:  # asks for a person right away
        q = phrases.pop() if i % 2 else c.ask().rstrip("?.! ") + ". " + phrases.pop()
        t = [c.escalate(q)]
    elif v == 1:
        t = [c.fail(), c.escalate(phrases.pop(), how="esc")]
    elif v == 2:
        t = [c.deflect(), c.deflect(), c.escalate(phrases.pop())]
    elif v == 3:  # asked for a person, assistant cannot transfer: still an escalation request
        t = [c.fail(), c.chat(phrases.pop(), NO_TRANSFER_A)]
    elif v == 4:  # agent escalates on its own
        dom = c.p["dom"]
        esc = c.tool(("escalate_to_human", {"reason": {"banking": "suspected_fraud", "it": "security_incident", "insurance": "bodily_injury_claim", "hr": "harassment_report"}.get(dom, "safety_issue"), "priority": "urgent"}, "queued ESC-{ref}; position=1"))
        step = esc if i % 2 else {"kind": "handoff", "name": "handoff to human_support"}
        t = [T(c.f(CRITICAL[dom]), c.f(CRITICAL_A), [{"kind": "llm"}, step, {"kind": "llm"}] if step["kind"] == "tool" else [{"kind": "llm"}, step])]
    elif v == 5:
        t = [c.fail(), c.escalate(r.choice(CALLBACK), how="callback")]
    else:
        t = [c.fail(fb=-1), c.escalate(phrases.pop())]
    return session("escalated", t, None, end)


def s_abandoned(r, i):
    c = Ctx(r, key="travel_change" if i % 10 == 8 else None)
    v = i % 10
    if v == 0:
        t = ([c.chat(r.choice(GREET), r.choice(GREET_A))] if i >= 10 else []) + [c.fail()]
    elif v == 1:
        t = [c.null()]
    elif v == 2:  # same question three times, then gone
        t = [c.deflect(), c.fail(), r.choice([c.null, c.deflect])()]
    elif v == 3:
        t = [c.deflect(fb=r.choice([-1, -1, -0.5]))]
    elif v == 4:
        t = [c.fail(), c.chat(r.choice(["thanks for nothing", "wow. thanks for nothing"]), r.choice(SORRY_A))]
    elif v == 5:
        t = [c.fail(), c.chat(r.choice(POLITE_OK), r.choice(SORRY_A))]
    elif v == 6:  # early thumbs up, later a new problem left unsolved
        d = c.other()
        t = [c.solve(fb=1), r.choice([d.fail, d.null])()]
    elif v == 7:
        t = [c.clarify(), c.fail(q=c.detail()), c.chat(r.choice(NVM), r.choice(SORRY_A))]
    elif v == 8:  # "agent" = travel agent; change fails, user leaves
        t = [c.fail(q=c.pick(c.p["agent_asks"])), c.fail()]
    else:
        t = [c.deflect(), c.chat(r.choice(NOT_ASKED), r.choice(NOT_ASKED_A))]
    return session("abandoned", t, None, False)


def build() -> list[dict]:
    r = random.Random(SEED)
    items = []
    for make, n in [(tr_good, 12), (tr_looping, 10), (tr_failing, 11), (tr_recovered, 10),
                    (tr_gave_up, 10)]:
        items += [make(r, i) for i in range(n)]
    items += [s_resolved(r, i) for i in range(len(RESOLVED_PLAN))]
    items += [s_unresolved(r, i) for i in range(20)]
    phrases = HUMAN[:]
    r.shuffle(phrases)
    items += [s_escalated(r, i, phrases) for i in range(21)]
    items += [s_abandoned(r, i) for i in range(21)]
    r.shuffle(items)
    return items


def check(items):
    for it in items:
        assert (it["kind"] == "trajectory") == (len(it["turns"]) == 1 and "trajectory" in it["label"])
        assert 1 <= len(it["turns"]) <= 8
        assert not any(t["end"] for t in it["turns"][:-1])
        if it["kind"] == "session":
            lab = it["label"]
            assert lab["closed"] == ("ended" if it["turns"][-1]["end"] else "idle")
            assert (lab["turns_to_resolution"] is not None) == (lab["outcome"] == "resolved")
            if lab["turns_to_resolution"]:
                assert it["turns"][lab["turns_to_resolution"] - 1]["answer"]
            assert lab["outcome"] != "unresolved" or lab["closed"] == "ended"
            assert lab["outcome"] != "abandoned" or lab["closed"] == "idle"


def main():
    items = build()
    check(items)
    with OUT.open("w", encoding="utf-8") as fh:
        for it in items:
            fh.write(json.dumps(it, ensure_ascii=False) + "\n")
    counts = Counter((it["kind"], it["label"].get("trajectory") or it["label"]["outcome"]) for it in items)
    for k in sorted(counts):
        print(*k, counts[k])
    silent = sum(1 for it in items if it["label"].get("outcome") == "resolved" and it["turns"][-1]["feedback"] is None
                 and it["label"]["turns_to_resolution"] == len(it["turns"]))
    print("resolved, solved on last turn without thanks or feedback:", silent)
    print(f"{len(items)} items -> {OUT}")


if __name__ == "__main__":
    main()
