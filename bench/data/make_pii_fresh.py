# ruff: noqa: E501  (hand-written records: prose, one per line)
"""Build bench/data/pii_fresh.jsonl and pii_blind.jsonl: labelled PII sets written blind
(bench/data/PII.md).

    python bench/data/make_pii_fresh.py [fresh|blind]   # checks the invariants, prints counts, writes the file

Hand-written texts (threads of questions, retrieved documents and answers about one case, in
pii_fresh_threads.py and pii_blind_threads.py), marked up inline: `[[TYPE|value]]` for personal
data, `{{KIND|value}}` for labelled negatives. TYPE is one of the short names in TYPES. In the
fresh set the split is drawn at random per thread (fixed seed) so that a case's question,
documents and answer share a split and no labelled value crosses splits; the blind sets are
all test, and none of their labelled values is one of the sets written before them.
All data is fake: phones in reserved/fictional ranges where they exist, cards are well-known
Luhn-valid test numbers, IBAN check digits computed, IPs in documentation ranges, secrets random.
Standard library only; rewrites the file identically on every run.
"""

from __future__ import annotations

import importlib
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

# Each thread: the texts a RAG assistant sees for one case, by role.
Q, D, A = "question", "document", "answer"
Thread = list[tuple[str, str]]

HERE = Path(__file__).resolve().parent
SEED = 4040
WRITTEN = ["pii.jsonl", "pii_fresh.jsonl", "pii_blind.jsonl", "pii_blind2.jsonl"]  # in order

TYPES = {"P": "PERSON", "A": "ADDRESS", "E": "EMAIL", "T": "PHONE", "C": "CREDIT_CARD",
         "IBAN": "IBAN", "IP": "IP_ADDRESS", "SSN": "US_SSN", "NINO": "UK_NINO",
         "DOB": "DATE_OF_BIRTH", "S": "SECRET"}
KINDS = {"DATE", "ORG", "ID", "PRODUCT", "PRICE", "LOCATION", "WORD", "NUMBER", "DRUG",
         "VERSION", "TRACKING_NUMBER", "SKU", "JOB_TITLE"}


MARK = re.compile(r"\[\[([A-Z]+)\|(.*?)\]\]|\{\{([A-Z_]+)\|(.*?)\}\}", re.S)


def parse(marked: str) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
    """The plain text, its entities and its negatives, with Python str offsets."""
    text, entities, negatives, pos = [], [], [], 0
    length = 0
    for m in MARK.finditer(marked):
        plain = marked[pos:m.start()]
        text.append(plain)
        length += len(plain)
        if m.group(1):
            short, value = m.group(1), m.group(2)
            if short not in TYPES:
                raise ValueError(f"unknown type {short!r} in {marked[:60]!r}")
            entities.append({"type": TYPES[short], "start": length, "end": length + len(value),
                             "text": value})
        else:
            kind, value = m.group(3), m.group(4)
            if kind not in KINDS:
                raise ValueError(f"unknown negative kind {kind!r} in {marked[:60]!r}")
            negatives.append({"kind": kind, "start": length, "end": length + len(value),
                              "text": value})
        text.append(value)
        length += len(value)
        pos = m.end()
    text.append(marked[pos:])
    plain = "".join(text)
    if "[[" in plain or "]]" in plain or "{{" in plain or "}}" in plain:
        raise ValueError(f"stray markup in {plain[:80]!r}")
    return plain, entities, negatives


def luhn(number: str) -> bool:
    digits = [int(c) for c in number if c.isdigit()][::-1]
    return sum(d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2)
               for i, d in enumerate(digits)) % 10 == 0


def iban_ok(value: str) -> bool:
    s = value.replace(" ", "")
    s = s[4:] + s[:4]
    return int("".join(str(int(c, 36)) for c in s)) % 97 == 1


def check(record: dict[str, Any]) -> None:
    text, entities = record["text"], record["entities"]
    spans = sorted((s["start"], s["end"]) for s in entities + record["negatives"])
    for (_, b), (c, _) in zip(spans, spans[1:], strict=False):
        if c < b:
            raise ValueError(f"{record['id']}: overlapping spans")
    for e in entities:
        if text[e["start"]:e["end"]] != e["text"] or e["text"] != e["text"].strip() or not e["text"]:
            raise ValueError(f"{record['id']}: bad span {e}")
        if e["type"] == "CREDIT_CARD" and not luhn(e["text"]):
            raise ValueError(f"{record['id']}: card fails Luhn: {e['text']}")
        if e["type"] == "IBAN" and not iban_ok(e["text"]):
            raise ValueError(f"{record['id']}: bad IBAN check digits: {e['text']}")
        # every occurrence of a labelled value is labelled (or inside another labelled value)
        for m in re.finditer(re.escape(e["text"]), text):
            a, b = m.start(), m.end()
            if (a and text[a - 1].isalnum()) or (b < len(text) and text[b].isalnum()):
                continue
            if not any(x["start"] <= a and b <= x["end"] for x in entities):
                raise ValueError(f"{record['id']}: unlabelled occurrence of {e['text']!r} at {a}")
    for n in record["negatives"]:
        if text[n["start"]:n["end"]] != n["text"]:
            raise ValueError(f"{record['id']}: bad negative span {n}")
    if record["role"] == "document" and not 60 <= len(text.split()) <= 200:
        raise ValueError(f"{record['id']}: document of {len(text.split())} words")


def build(threads: list[Thread], name: str) -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    records: list[dict[str, Any]] = []
    n = 0
    for number, thread in enumerate(threads, 1):
        split = "dev" if name == "fresh" and rng.random() < 0.5 else "test"
        for role, marked in thread:
            n += 1
            text, entities, negatives = parse(marked)
            record: dict[str, Any] = {"id": f"{name}-{n:03d}", "split": split, "thread": number,
                                      "role": role, "text": text, "entities": entities,
                                      "negatives": negatives}
            check(record)
            records.append(record)
    # no labelled value (case-folded) in both splits, nor in a blind set and an older set: a
    # tuner on dev cannot learn a test value
    seen: dict[str, set[str]] = {"dev": set(), "test": set()}
    for r in records:
        seen[r["split"]].update(e["text"].casefold() for e in r["entities"])
    if name != "fresh":  # a blind set: none of the sets written before it
        for path in WRITTEN[:WRITTEN.index(f"pii_{name}.jsonl")]:
            for line in (HERE / path).open(encoding="utf-8"):
                seen["dev"].update(e["text"].casefold() for e in json.loads(line)["entities"])
    shared = seen["dev"] & seen["test"]
    if shared:
        raise ValueError(f"{len(shared)} labelled values also in the other split or an older "
                         f"set, change them: {sorted(shared)}")
    return records


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "fresh"
    threads = importlib.import_module(f"pii_{name}_threads").THREADS
    records = build(threads, name)
    with (HERE / f"pii_{name}.jsonl").open("w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n")
    ents = Counter((e["type"], r["split"]) for r in records for e in r["entities"])
    negs = Counter((n["kind"], r["split"]) for r in records for n in r["negatives"])
    recs = Counter(r["split"] for r in records)
    print(f"records: dev {recs['dev']}, test {recs['test']}  ({len(threads)} threads)")
    print(f"    {'type':16} {'dev':>5} {'test':>5} {'total':>6}")
    for t in TYPES.values():
        print(f"    {t:16} {ents[t, 'dev']:5} {ents[t, 'test']:5} {ents[t, 'dev'] + ents[t, 'test']:6}")
    total = {s: sum(v for (_, sp), v in ents.items() if sp == s) for s in ("dev", "test")}
    print(f"    {'all entities':16} {total['dev']:5} {total['test']:5} {sum(total.values()):6}")
    for k in sorted(KINDS):
        print(f"    {k:16} {negs[k, 'dev']:5} {negs[k, 'test']:5} {negs[k, 'dev'] + negs[k, 'test']:6}")
    ntotal = {s: sum(v for (_, sp), v in negs.items() if sp == s) for s in ("dev", "test")}
    print(f"    {'all negatives':16} {ntotal['dev']:5} {ntotal['test']:5} {sum(ntotal.values()):6}")


if __name__ == "__main__":
    main()
