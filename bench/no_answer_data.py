"""The no-answer detector's data: refusals and real answers of a support assistant, written here.

    python bench/no_answer_data.py      # writes bench/data/no_answer.jsonl

Each template is a way an assistant words a refusal or a real answer; slots are filled from small
pools of support-desk nouns. The split is by template AND by slot value (`split` in each row):
a test row's wording and its nouns were never seen in training, so the test measures whether the
model learnt what a refusal is, not these sentences. At least a third of the real answers are
negative or apologetic ("No, the plan does not include…", "Unfortunately, yes, the fee applies"),
and partial answers that decline one part are real answers (the completeness judge calls them
incomplete, not no_answer).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

OUT = Path(__file__).parent / "data" / "no_answer.jsonl"
SEED = 13
PER_TEMPLATE = 7

# Slot pools; the first two thirds of each pool fill training rows, the rest test rows.
POOLS: dict[str, list[str]] = {
    "feature": ["single sign-on", "two-factor login", "bulk export", "audit logs", "custom domains",
                "priority support", "offline mode", "API access", "shared inboxes", "data residency",
                "role-based permissions", "usage alerts", "webhooks", "dark mode", "calendar sync"],
    "plan": ["Starter", "Basic", "Team", "Pro", "Business", "Enterprise"],
    "item": ["international orders", "late returns", "gift cards", "extra seats", "archived projects",
             "express shipping", "refurbished devices", "student accounts", "paper invoices",
             "trial extensions", "currency conversion", "replacement cards"],
    "fee": ["cancellation fee", "setup fee", "restocking fee", "overage charge", "service charge",
            "late payment fee"],
    "place": ["Settings > Security", "the Billing page", "Account > Preferences",
              "the admin console", "Profile > Devices", "the Integrations tab"],
    "action": ["reset your password", "download your invoices", "change the account owner",
               "turn on notifications", "connect Slack", "close your account"],
    "region": ["Canada", "Brazil", "Japan", "the EU", "India", "Australia"],
    "team": ["the billing team", "your account manager", "the security desk", "customer care",
             "the logistics team", "your workspace admin"],
    "number": ["14", "30", "45", "60", "90", "7"],
    "amount": ["$5", "$12", "$25", "$49", "€10", "£8"],
}

REFUSALS: dict[str, list[str]] = {
    "blames_sources": [
        "The knowledge base has nothing on {item}.",
        "None of the retrieved pages cover {feature}.",
        "I searched the help center but found nothing about {item}.",
        "Our documentation doesn't mention {feature} at all.",
        "The documents I was given say nothing about {fee}s.",
        "There is no article about {item} in the sources available to me.",
        "The provided context contains no information on {feature} for the {plan} plan.",
        "None of the search results mention {item}, so I can't tell you.",
        "The retrieved passages are about other topics; {feature} isn't covered.",
        "I looked through the manuals and nothing in them addresses {item}.",
        "As far as the help articles go, {item} aren't mentioned anywhere.",
        "My sources only cover the {plan} plan's pricing, not {feature}.",
        "The FAQ and the policy pages are silent on {item}.",
        "I checked every document returned for {feature} and none of them has the answer.",
        "Nothing in the retrieved content answers this.",
        "The articles I found are about {item}, not {feature}, so they don't answer your question.",
    ],
    "insufficient_context": [
        "The context is not sufficient to answer whether {feature} is in the {plan} plan.",
        "I don't have enough information to say how {item} are handled.",
        "The passages don't give enough detail to determine the {fee}.",
        "Based on what I have, I can't determine if {item} qualify.",
        "That isn't something the available information lets me answer.",
        "The sources are incomplete on this point, so I can't give you an answer.",
        "Without more details in the documents, I'm unable to answer about {feature}.",
        "There isn't enough in the provided material to answer this question.",
        "I can't tell from the information provided whether {item} are included.",
        "The available data doesn't let me confirm the {fee} for {region}.",
    ],
    "declines": [
        "I can't help with {item}.",
        "That's outside what I'm able to answer.",
        "I'm not able to answer questions about {feature}.",
        "Questions about {fee}s need to go to {team}; I can't answer them here.",
        "I won't be able to answer that one.",
        "This is not a question I can answer.",
        "I'm unable to provide details on {item}.",
        "You'll have to ask {team} about that, as I can't answer it.",
        "I cannot answer questions about the {plan} plan's {feature}.",
        "As for {item}, that's beyond what I can tell you.",
        "I'd rather not guess about the {fee}; I don't have it.",
        "Answering that is outside my scope.",
    ],
    "short": [
        "Nothing came up.",
        "No results.",
        "No matching information found.",
        "I couldn't find that.",
        "Not sure.",
        "No idea, sorry.",
        "Nothing found for {item}.",
        "I have no answer for that.",
        "Can't say.",
        "Unknown.",
        "No information available.",
        "Couldn't find anything.",
        "No data on {feature}.",
        "Nothing on that, I'm afraid.",
        "No luck finding {item}.",
        "Zero results for {feature}.",
    ],
    "apologetic": [
        "Sorry, I don't know.",
        "I'm afraid I couldn't find an answer about {feature}.",
        "Unfortunately I have no information on {item}.",
        "Apologies, but I wasn't able to find anything on the {fee}.",
        "I'm sorry, I don't have details about {feature} in {region}.",
        "Regrettably, I can't find what the {plan} plan includes.",
        "Sorry, but I have no record of {item}.",
        "I'm sorry, that's not something I know.",
        "Sorry! I searched but came up empty on {item}.",
        "My apologies, there's no information about {feature} for {region}.",
    ],
    "redirects": [
        "I don't have details on {item}. Please reach out to {team}.",
        "I couldn't find anything about {feature}. {Team} can help you with it.",
        "That's not covered in what I can see; please contact {team} for an answer.",
        "I'm not sure about the {fee}. Try asking {team}.",
        "There's nothing on {item} here. You may want to open a support ticket.",
        "I can't find the {fee} in my sources. {Team} will know.",
        "No information about {feature} on my side; your best bet is {team}.",
    ],
}

ANSWERS: dict[str, list[str]] = {
    "positive": [
        "{Feature} is included in the {plan} plan.",
        "You can {action} from {place}.",
        "Yes, {item} are eligible for a refund within {number} days.",
        "The {fee} is {amount}, charged once.",
        "{Feature} is available in {region} since last month.",
        "To {action}, open {place} and follow the prompts.",
        "Refunds for {item} take about {number} days to appear on your statement.",
        "{Team} handles {item}; they reply within {number} hours.",
        "The {plan} plan costs {amount} per seat per month and includes {feature}.",
        "Yes. {Feature} can be turned on by an admin in {place}.",
        "According to the documents, {item} ship within {number} days.",
        "The knowledge base says {feature} is supported on every plan above {plan}.",
        "Based on the policy, {item} are accepted for {number} days after delivery.",
        "Go to {place}, choose {feature}, and save.",
        "It is {amount} per month.",
        "{Number} days.",
        "Yes, it is included.",
        "{Amount}, billed yearly.",
        "Good news: {item} qualify for free returns.",
        "Both the {plan} plan and the plan above it include {feature}.",
        "{Team} approves {item} within {number} hours of the request.",
        "Your {fee} is refunded automatically when you cancel within {number} days.",
        "In {region}, {item} are delivered by courier in {number} days.",
        "Sure! {Feature} lives under {place}.",
        "It takes {number} days, and you'll get an email when it's done.",
        "The limit is {number} per account; {team} can raise it.",
    ],
    "negative_real": [
        "No, the {plan} plan does not include {feature}.",
        "Unfortunately, yes, the {fee} applies to {item}.",
        "Sorry, but {feature} isn't available in {region} yet.",
        "{Feature} cannot be turned off for {plan} accounts.",
        "There is no {fee} for {item}.",
        "No. According to the policy, {item} cannot be transferred.",
        "I'm sorry to say the deadline for {item} passed after {number} days.",
        "Unfortunately, {item} are not refundable.",
        "No, you can't {action} yourself; only {team} can.",
        "Regrettably, the {plan} plan has no {feature}, but the next plan up does.",
        "Sadly, {item} are excluded from the warranty.",
        "No, {feature} is not supported in {region}.",
        "Sorry, the {fee} of {amount} is not waived for {item}.",
        "Not on the {plan} plan: {feature} starts with Business.",
        "No. The documents state that {item} are final sale.",
        "Unfortunately there is a {number}-day waiting period before {item} are processed.",
        "No, it isn't.",
        "Sorry, no: {item} are not covered.",
        "I'm afraid {feature} was discontinued for {plan} customers.",
        "Unfortunately, {region} is not on the list of supported countries for {item}.",
        "No, the {fee} still applies even if you cancel early.",
        "Sorry, {item} can't be combined with other offers.",
        "That isn't possible: {feature} requires the Enterprise plan.",
        "Not yet. {Feature} is planned for {region} but has no date.",
        "Unfortunately the {plan} plan caps {item} at {number} per month.",
        "No refunds are given for {item} after {number} days, sorry.",
        "Apologies, but {feature} does not work with {item}.",
    ],
    "partial": [
        "{Feature} is included in the {plan} plan; I couldn't find whether it covers {item}.",
        "The {fee} is {amount}. I don't have information on whether it applies in {region}.",
        "You can {action} from {place}, but the documents don't say how long it takes.",
        "{Item} ship within {number} days; I found nothing about costs to {region}.",
        "Yes, {feature} is supported. I'm not sure about the {plan} plan's limits, though.",
        "The refund window is {number} days. The sources don't mention {item}.",
        "{Team} handles it; I couldn't find their hours.",
        "The {plan} plan includes {feature}, though I have nothing on its price in {region}.",
        "Yes, {item} are accepted. Whether the {fee} applies isn't stated anywhere I can see.",
        "It costs {amount}; I'm not able to confirm if taxes are included.",
    ],
}


def _fill(template: str, pools: dict[str, list[str]], rng: random.Random) -> str:
    values = {name: rng.choice(pool) for name, pool in pools.items()}
    values.update({name.capitalize(): value[0].upper() + value[1:] for name, value in values.items()})
    return template.format(**values)


def build() -> list[dict]:
    rng = random.Random(SEED)
    train_pools = {k: v[: len(v) * 2 // 3] for k, v in POOLS.items()}
    test_pools = {k: v[len(v) * 2 // 3:] for k, v in POOLS.items()}
    rows = []
    for label, families in (("no_answer", REFUSALS), ("answer", ANSWERS)):
        for family, templates in families.items():
            for index, template in enumerate(templates):
                split = "test" if index % 3 == 2 else "train"  # every third template is held out
                pools = test_pools if split == "test" else train_pools
                seen = set()
                for _ in range(PER_TEMPLATE * 4):
                    text = _fill(template, pools, rng)
                    if text not in seen:
                        seen.add(text)
                        rows.append({"text": text, "label": label, "family": family,
                                     "template": f"{family}/{index}", "split": split})
                    if len(seen) == PER_TEMPLATE:
                        break
    return rows


def main() -> None:
    rows = build()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    for split in ("train", "test"):
        part = [r for r in rows if r["split"] == split]
        negative = sum(r["family"] in ("negative_real", "partial") for r in part)
        print(f"{split}: {sum(r['label'] == 'no_answer' for r in part)} refusals, "
              f"{sum(r['label'] == 'answer' for r in part)} answers "
              f"({negative} negative, apologetic or partial)")


if __name__ == "__main__":
    main()
