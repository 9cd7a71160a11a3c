"""Plain-text helpers of the local evaluators: claims, generic sentences, content words.

(Refusals: monitor/judges/no_answer.py, a trained model.)"""

from __future__ import annotations

import functools
import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|\n+\s*(?:[-*•]|\d+[.)])?\s*")
_WORD = re.compile(r"[\w][\w'-]*", re.UNICODE)

STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me more most
my myself no nor not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves also may might must shall yes ok okay please thanks
""".split())

_GREETING = re.compile(r"^(?:sure|certainly|of course|absolutely|great question|good question|hello"
                       r"|hi|hey|thanks|thank you)\b[\s,!.:;-]*", re.IGNORECASE)
_PLEASANTRY = re.compile(r"^(?:(?:i )?hope (?:this|that) helps|(?:please )?(?:let me know|feel free)"
                         r"|is there anything else|i'?m (?:happy|glad|here) to help|as an ai\b)",
                         re.IGNORECASE)

# A sentence does not end after an initial ("Grace B. Hopper") or a common abbreviation.
_NOT_AN_END = re.compile(r"(?:^|[\s(])(?:[A-Z]|Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|Mt|vs|etc|approx|"
                         r"e\.g|i\.e|a\.m|p\.m|U\.S|Inc|Ltd|Co|Corp|Jan|Feb|Mar|Apr|Jun|Jul|Aug|"
                         r"Sep|Sept|Oct|Nov|Dec)\.$")

# Words that frame a claim without adding to it: "According to the documents, the answer is X."
# says X. Only at the start (or end) of a claim, so "the documents" inside a claim still count.
_SOURCES = (r"(?:the |our |my |these |those )?(?:provided |retrieved |available |given |above )?"
            r"(?:documents?|docs|context|sources?|knowledge base|information|articles?|passages?|"
            r"search results|results|help center|manual|policy|polic(?:y|ies))")
_FRAMING_START = re.compile(
    r"^(?:(?:according to|based on|per|from|as (?:stated|described|mentioned|shown) in|"
    rf"going by) {_SOURCES}|{_SOURCES} (?:says?|states?|shows?|indicates?|mentions?|notes?)"
    r"(?: that)?)\s*[,:]?\s*", re.IGNORECASE)
_ANSWER_IS = re.compile(r"^the (?:short )?answer(?: to (?:your|the) question)? is\s*[,:]?\s+",
                        re.IGNORECASE)
_FRAMING_END = re.compile(rf"[,;]?\s*(?:as|according to|per) {_SOURCES}(?: (?:says?|states?|"
                          r"shows?|indicates?))?(?=[.!?]*$)", re.IGNORECASE)


_QUESTION_OPENERS = frozenset("""
what which who whom whose when where why how is are was were am do does did can could should
would will shall may might must has have had
""".split())


def is_question(text: str) -> bool:
    """Asked as a question: ends with a question mark or opens with a question word ("how do i
    reset it"), not a statement or a request ("Refund policy", "Tell me about refunds")."""
    words = _WORD.findall(text.lower())
    return text.rstrip().endswith("?") or bool(words) and words[0] in _QUESTION_OPENERS


def split_claims(answer: str) -> list[str]:
    """Sentences and list items of an answer, each one claim."""
    claims: list[str] = []
    for part in _SENTENCE_END.split(answer.strip()):
        part = part.strip(" \t-*•")
        if not part:
            continue
        if claims and (_NOT_AN_END.search(claims[-1]) or (claims[-1].endswith(" No.")
                                                          and part[:1].isdigit())):
            claims[-1] = f"{claims[-1]} {part}"  # the split fell after an initial
        else:
            claims.append(part)
    return claims


def strip_framing(claim: str) -> str:
    """The claim without the words that attribute it to the sources or announce it."""
    text = _FRAMING_START.sub("", claim.strip(), count=1)
    text = _ANSWER_IS.sub("", text, count=1)
    text = _FRAMING_END.sub("", text, count=1).strip()
    return text[:1].upper() + text[1:] if text != claim.strip() else text


@functools.lru_cache(maxsize=4096)  # a turn's windows are read for each claim and question
def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if w not in STOPWORDS)


def is_generic(claim: str) -> bool:
    """Pleasantries and hedges that assert nothing checkable."""
    claim = claim.strip()
    if _PLEASANTRY.match(claim):
        return True
    return len(content_words(_GREETING.sub("", claim, count=1))) < 2


def lexical_support(claim: str, source: str, keep_stopwords: bool = False) -> float:
    """Share of the claim's content words found in the source (0..1). With `keep_stopwords`, a
    claim made only of stopwords ("The May.") is checked word by word instead of scoring 0."""
    words = content_words(claim)
    if not words and keep_stopwords:
        every = {m.group(0).lower() for m in _WORD.finditer(claim)} - {"a", "an", "the"}
        return len(every & {m.group(0).lower() for m in _WORD.finditer(source)}) / len(every) \
            if every else 0.0
    if not words:
        return 0.0
    return len(words & content_words(source)) / len(words)
