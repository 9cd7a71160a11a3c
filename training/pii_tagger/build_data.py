"""Training data for the PII tagger: people's names and street addresses, marked by character.

    python training/pii_tagger/build_data.py [--synthetic 16000]   # needs the `train` group (faker)

Two sources, written as JSON lines {"text", "spans": [[start, end, "PERSON" | "ADDRESS"]]} to
training/pii_tagger/data/ (git-ignored):
- synthetic texts: support questions, records, chats, letters and answers from templates, their
  people and addresses drawn from Faker's locales (MIT licence; names and address formats of
  some fifty countries; lower-case chat, one-line and partial addresses, names after titles),
  with companies, towns, streets without a house, products and dates left unmarked;
- the hand-written labelled sets of bench/data: pii.jsonl's dev split and both splits of
  pii_fresh.jsonl, cut into windows of whole lines or sentences. pii.jsonl's test split is the
  dev set here (model selection, the threshold); pii_blind.jsonl is never read.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path
from typing import Any

from faker import Faker

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "data"
LOCALES = {  # locale: weight
    "en_GB": 6, "en_US": 6, "en_IE": 2, "en_AU": 2, "en_CA": 2, "en_IN": 3, "en_NZ": 1,
    "en_PH": 1, "de_DE": 3, "de_AT": 1, "de_CH": 1, "fr_FR": 3, "fr_CA": 1, "fr_CH": 1,
    "es_ES": 2, "es_MX": 2, "es_AR": 1, "es_CO": 1, "it_IT": 2, "pt_PT": 1, "pt_BR": 2,
    "nl_NL": 2, "nl_BE": 1, "sv_SE": 1, "no_NO": 1, "da_DK": 1, "fi_FI": 1, "pl_PL": 2,
    "cs_CZ": 1, "sk_SK": 1, "hu_HU": 1, "ro_RO": 1, "hr_HR": 1, "sl_SI": 1, "tr_TR": 1,
    "el_GR": 1, "uk_UA": 1, "id_ID": 1, "vi_VN": 1, "th_TH": 1, "fil_PH": 1, "zu_ZA": 1,
    "yo_NG": 1, "tw_GH": 1, "sw": 1, "ar_AE": 1, "fa_IR": 1, "he_IL": 1, "ja_JP": 1,
    "zh_CN": 1, "ko_KR": 1, "ne_NP": 1, "bn_BD": 1, "hi_IN": 1, "ka_GE": 1, "hy_AM": 1,
    "lv_LV": 1, "lt_LT": 1, "et_EE": 1,
}
PRODUCTS = ["Dyson V11", "iPhone 15", "Galaxy S24", "ThinkPad X1 Carbon", "Kindle Paperwhite",
            "Nespresso Vertuo", "PlayStation 5", "Bosch Serie 4", "Roomba j7", "Pixel 8",
            "Instant Pot Duo", "AirPods Pro", "Le Creuset casserole", "Brompton C Line"]
ROLES = ["my wife", "my husband", "my daughter", "my son", "my colleague", "our tenant",
         "the customer", "my manager", "my neighbour", "my partner", "the patient", "my mum"]

# {name} a full name, {first} a given name, {last} a surname after a title, {addr} a one-line
# address, {addr_lines} one on several lines, {street} a street with its house number; the rest
# are not personal data: {company} {city} {street_name} {product} {date} {order}.
TEMPLATES = [
    "Hi, I'm {name}. Can you send the replacement to {addr} instead?",
    "Customer: {name}\nAddress:\n{addr_lines}\nOrder: {order}\nItem: {product}",
    "Name: {name}\nDelivery address: {addr}\nPreferred courier: {company}",
    "Dear {title} {last},\n\nYour appointment on {date} at our {city} clinic is confirmed. "
    "We will write to you at {addr}.\n\nKind regards,\n{name}\n{company}",
    "{first} called about order {order}; the parcel went to {street} by mistake.",
    "hey its {first_lower} again, the {product} still hasnt arrived at {addr_lower}",
    "can {first_lower} pick it up instead? she lives at {street_lower} now",
    "Thanks {first}. I've updated the address on order {order} to {addr}.",
    "The tenancy of {addr} is in the names of {name} and {name2}.",
    "{title} {last} moved from {street} to {addr} on {date}.",
    "Please ship to:\n{name}\n{addr_lines}",
    "Is the {company} store in {city} open on Sunday? I want to return the {product}.",
    "There are roadworks on {street_name}, so {company} deliveries to {city} are late.",
    "{name} ({company}) asked for the invoice to go to {addr}.",
    "Booked by {name} for {role} {first2}. Billing address: {addr}.",
    "Visitor log, {city} office: {name} from {company}, host {name2}.",
    "Ticket {order}: {first} says the engineer never came to {street}.",
    "I spoke to {first} at your {city} branch and she said {company} would refund the "
    "{product}.",
    "From: {name} <{email}>\nTo: support\nSubject: change of address\n\nPlease use {addr} from "
    "now on. Thanks, {first}",
    "[10:{minute}] {first_lower}: is my order at {street_lower} yet?\n[10:{minute2}] agent: "
    "checking now",
    "{role} {first2} will collect it from {addr}; her name is {name2}.",
    "Account holder {name}, {addr}. Joint holder: {name2}.",
    "The {product} was delivered on {date} to the {company} depot on {street_name}, not to "
    "{street}.",
    "Our records show {title} {last} at {addr_lines}",
    "Send the forms to {name2}, {addr}, and copy {first}.",
    "{name}, {street}, {city} — {date}",
    "Patient {name} (born {date}) lives at {addr} with {role} {first2}.",
    "Please ask {first} to call {name2} about the {product} before {date}.",
    "i moved!! new address is {addr_lower}, old one was {street_lower}",
    "The courier left it with {name2} at {street}, next door to {name}.",
    "Refund approved for {name}: the {product} from {company} in {city}.",
    "Employee: {name}\nHome address: {addr}\nManager: {name2}\nOffice: {company}, {city}",
    "{first}, your {product} ships from our {city} warehouse on {date}.",
]


def one_line(address: str) -> str:
    return ", ".join(part.strip() for part in address.splitlines() if part.strip())


def fill(template: str, fake: Faker, rng: random.Random) -> tuple[str, list[list[Any]]]:
    """The template with its slots filled, and where the people and addresses stand."""
    first, last = fake.first_name(), fake.last_name()
    street = fake.street_address()
    address = fake.address()
    if rng.random() < 0.25:  # without its last line (no postcode or region)
        lines = address.splitlines()
        address = "\n".join(lines[:-1]) if len(lines) > 1 else address
    values: dict[str, tuple[str, str | None]] = {
        "name": (f"{first} {last}", "PERSON"),
        "name2": (fake.name(), "PERSON"),
        "first": (first, "PERSON"),
        "first2": (fake.first_name(), "PERSON"),
        "first_lower": (first.lower(), "PERSON"),
        "last": (last, "PERSON"),
        "title": (rng.choice(["Mr", "Mrs", "Ms", "Dr", "Mr.", "Ms."]), None),
        "addr": (one_line(address), "ADDRESS"),
        "addr_lines": (address, "ADDRESS"),
        "addr_lower": (one_line(address).lower(), "ADDRESS"),
        "street": (street, "ADDRESS"),
        "street_lower": (street.lower(), "ADDRESS"),
        "company": (fake.company(), None),
        "city": (fake.city(), None),
        "street_name": (fake.street_name(), None),
        "product": (rng.choice(PRODUCTS), None),
        "date": (fake.date(pattern=rng.choice(["%d %B %Y", "%Y-%m-%d", "%B %d, %Y"])), None),
        "order": (f"#{rng.randint(100000, 9999999)}", None),
        "email": (fake.email(), None),  # an e-mail address: the rules find those
        "role": (rng.choice(ROLES), None),
        "minute": (f"{rng.randint(10, 29)}", None),
        "minute2": (f"{rng.randint(30, 59)}", None),
    }
    text, spans, done = [], [], 0
    for slot in re.finditer(r"\{(\w+)\}", template):
        text.append(template[done:slot.start()])
        value, kind = values[slot.group(1)]
        start = sum(map(len, text))
        text.append(value)
        if kind is not None:
            spans.append([start, start + len(value), kind])
        done = slot.end()
    text.append(template[done:])
    return "".join(text), spans


def synthetic(count: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    fakers = {}
    for locale in LOCALES:
        fakers[locale] = Faker(locale)
        fakers[locale].seed_instance(seed)
    locales, weights = list(LOCALES), list(LOCALES.values())
    rows = []
    for _ in range(count):
        fake = fakers[rng.choices(locales, weights)[0]]
        text, spans = fill(rng.choice(TEMPLATES), fake, rng)
        rows.append({"text": text, "spans": spans})
    return rows


def windows(record: dict[str, Any], max_words: int = 80) -> list[dict[str, Any]]:
    """A labelled record cut at line or sentence ends into windows of at most `max_words`
    words, never inside a marked value."""
    text = record["text"]
    marked = [(e["start"], e["end"], "ADDRESS" if e["type"] == "ADDRESS" else "PERSON")
              for e in record["entities"] if e["type"] in ("PERSON", "ADDRESS")]
    cuts = [m.end() for m in re.finditer(r"\n+|(?<=[.!?])\s+", text)
            if not any(a < m.end() < b for a, b, _ in marked)]
    out, start = [], 0
    for end in [*cuts, len(text)]:
        if len(text[start:end].split()) >= max_words or end == len(text):
            if text[start:end].strip():
                spans = [[a - start, b - start, kind] for a, b, kind in marked
                         if start <= a and b <= end]
                out.append({"text": text[start:end], "spans": spans})
            start = end
    return out


def hand_written(path: Path, splits: set[str]) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if record["split"] in splits:
                rows += windows(record)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic", type=int, default=16_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    data = ROOT / "bench/data"
    train = synthetic(args.synthetic, args.seed)
    # the hand-written records count more than their number: repeated three times
    train += 3 * (hand_written(data / "pii.jsonl", {"dev"})
                  + hand_written(data / "pii_fresh.jsonl", {"dev", "test"}))
    random.Random(args.seed).shuffle(train)
    dev = hand_written(data / "pii.jsonl", {"test"})
    OUT.mkdir(exist_ok=True)
    for name, rows in (("train", train), ("dev", dev)):
        with (OUT / f"{name}.jsonl").open("w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{name}: {len(rows)} texts, "
              f"{sum(len(r['spans']) for r in rows)} marked values -> {OUT / name}.jsonl")


if __name__ == "__main__":
    main()
