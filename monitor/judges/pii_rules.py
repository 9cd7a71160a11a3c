"""What counts as personal data, found: the redactor's own rules beside Presidio's recognisers
and spaCy's NER (monitor/judges/redact.py applies them).

Each finder takes a text and its spaCy doc and yields (start, end) spans:

    addresses(text, doc), phone_numbers(text, doc), cards(text, doc), emails(text, doc),
    dates_of_birth(text, doc), secrets(text, doc), people(english)(text, doc)

Street addresses start from an anchor only an address has and extend over the parts around it;
people are found from a given-name list, cues in the text and the shape of names; the rest are
patterns with checks (Luhn, phone-number context). bench/pii_redaction.py measures them on a
labelled set (bench/data/pii.jsonl).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

Spans = Callable[[str, Any], Iterable[tuple[int, int]]]  # (text, spaCy doc) -> (start, end)


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
# Phone numbers in international and national formats: 9 to 15 digits in groups (a lone digit
# after the country code: +33 6 39 98 12 47), not a date,
# a card or an amount (those have their own recognisers or are not personal).
_PHONE = re.compile(
    r"(?<![\w+/.-])(?:\+|00)?(?:\d{1,3}[ .-]?){0,2}(?:\(\d{1,5}\)[ .-]?)?\d{2,5}(?:[ .-]?\d{2,5}){1,4}"
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
          rf"(?:[ -](?:{_WORD}|of|de|la|le|on|upon|am|an|der|del|na|do|da|dos|das|du|unter|ob|"
          rf"bei|im|sur|sous|en)){{0,4}}(?:[ \t]Cedex(?:[ \t]\d{{1,2}})?)?"
          r"(?:[ \t]\([A-ZÀ-Þ][^\W\d_]+(?:[ -][^\W\d_]+)?\))?"  # Montréal (Québec)
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
    rf"{_STREET_WORDS}(?!\w)\.?(?:[ \t]+(?:NW|NE|SW|SE|N|S|E|W|North|South|East|West)\b)?",
    # Bağdat Caddesi No: 145 · Sukhumvit Soi 39
    rf"\b{_WORD}(?:[ \t]{_WORD}){{0,2}}[ \t]{_STREET_WORDS}(?:[ \t]+No[ \t]?:?)?[ \t]+{_NUMBER}\b"
    r"(?:[ \t]+(?:D|Daire|Kat)[ \t]?:?[ \t]?\d{1,4}\b)?",
    # Hauptstraße 5 · Keizersgracht 123 · Drottninggatan 12 · Teheran-ro 8-gil
    r"\b[A-ZÄÖÜ][\wäöüß-]*(?:straße|strasse|str\.|weg|gasse|platz|allee|ring|damm|ufer|gracht|"
    r"laan|straat|vej|gade|gatan|gata|veien|-ro|-gil|-daero)[ \t]+\d{1,5}[a-z-]*\b",
    r"\b\d{1,5}[ \t]+[A-Z][a-z]+-(?:ro|gil|daero)(?:[ \t]+\d{1,3}-gil)?\b",  # 45 Teheran-ro 8-gil
    r"\b\d{1,4}(?:/\d{1,4})?[ \t]+Moo[ \t]+\d{1,3}\b",  # 99/12 Moo 4 (Thailand)
    r"(?<=,[ \t])Dublin[ \t]\d{1,2}[wW]?\b",  # Dublin's postal districts, after a comma
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
    r"Rural Route|RR|Sector|TSA|CS)[ \t]+\d{1,6}(?:[ \t-]\d{2,5})*\b",
    # A town with its full postcode: Leeds LS6 2AB · Austin, TX 78701 · Hyderabad 500034
    rf"{_PLACE},?[ \t]+(?:[A-Z]{{1,2}}\d[A-Z\d]?[ \t]?\d[A-Z]{{2}}|[A-Z]\d[A-Z][ \t]?\d[A-Z]\d|"
    rf"[AC-FHKNPRTV-Y]\d[\dW][ \t]?[AC-FHKNPRTV-Y\d]{{4}}|"
    rf"[A-Z]{{2}}[ \t]+\d{{5}}(?:-\d{{4}})?|\d{{6}}|\d{{3}}-\d{{4}})(?![\w-])",
    # 10115 Berlin · 80-831 Gdańsk · 1016 GV Amsterdam · 111 21 Stockholm, after a comma
    rf"(?<=,[ \t])(?:\d{{4}}[ \t]?[A-Z]{{2}}(?=[ \t])|\d{{4,5}}|\d{{2}}-\d{{3}}|\d{{3}}[ \t]\d{{2}}|"
    rf"\d{{4}}-\d{{3}})[ \t]+{_WORD}(?:[ \t]Cedex(?:[ \t]\d{{1,2}})?)?",
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
    rf"{_POSTCODE}(?:[ \t]+{_PLACE}(?:[ \t]\d{{1,2}}(?![\w-]))?)?|"  # 0184 Oslo · 41975 Blois Cedex 9
    r"(?=[^,\n]{1,16}(?:[,\n]|$))[^,\n]*\d[^,\n]*|"  # a flat, floor or unit: 3. OG · apto 52
    r"(?:Flat|Apartment|Apt|Suite|Unit|House|Plot|Lot|Bloco|Bloque|Block|Blk|Building|casa|apto|"
    r"piso|Piso|kv\.|Door|app\.|App\.)[ \t]?[\w.-]+|"
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
    found = _PART.fullmatch(text, start, part_end) or _PART.match(text, start, part_end)
    if found is None or found.end() - start > 48 or not text[start:found.end()].strip():
        return end, False
    return found.end(), _locality(found.group(0))


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


def addresses(text: str, doc: Any = None) -> list[tuple[int, int]]:
    """Street addresses, as (start, end) spans; in chat written in lower case ("flat 3, 9
    belmont street, aberdeen ab10 1jr") too, found as if its words were capitalised, where no
    English function word stands in the address ("2 dogs in the park" is none)."""
    spans = [(a, b) for a, b in _addresses(text)  # not a date: "April 8, 2024"
             if not re.fullmatch(_DATE, text[a:b].rstrip(" ."))]
    if _LOWER_STREET.search(text):
        for start, end in _addresses(_capitalised(text)):
            # "from flat 3, ...": the sentence's words before its number or unit are not the
            # address's; "..., not 14": nor the parts from the first with a function word on
            opening = re.compile(rf"\d|{_UNIT_FIRST.pattern}|(?:calle|avenida|rue|rua)\b")
            comma = text.find(",", start, end)
            first = opening.search(text, start, end if comma == -1 else comma)
            if first is not None:
                start = first.start()
            kept = 0
            for part in text[start:end].split(","):
                if any(w in _FUNCTION_WORDS for w in re.findall(r"[^\W\d_]+", part)):
                    break
                kept += len(part) + 1
            end = start + max(kept - 1, 0)
            address = text[start:end]
            if address != address.lower() or not re.search(r"[^\W\d_]{2}", address):
                continue
            if not any(a < end and start < b for a, b in spans):
                spans.append((start, end))
        spans.sort()
    return spans


_LOWER_STREET = re.compile(
    r"\b\d{1,5}[a-z]?,?[ \t]+(?:[a-zß-ÿ'’-]+[ \t]+){1,3}(?:street|st|road|rd|avenue|ave|lane|"
    r"ln|drive|dr|close|way|park|place|crescent|terrace|grove|gardens|court|square|hill)\b|"
    r",[ \t]*[a-z]+[ \t]+(?:[a-z]{1,2}\d[a-z\d]?[ \t]?\d[a-z]{2}|\d{6})\b|"  # town, postcode
    r"\b(?:calle|avenida|rue|rua)[ \t]+[a-zß-ÿ]")
_FUNCTION_WORDS = frozenset("a all an and any are at be but by each every few for from has have "
                            "i if in is it me more my of on one or our per so some the their to "
                            "two was we with you your".split())


def _capitalised(text: str) -> str:
    """`text` with each word's first letter capitalised, and words of letters and digits (a
    postcode's "ab10 1jr") upper-cased; of the same length, so positions carry over."""
    chars = list(text)
    for match in re.finditer(r"[^\W_]+", text):
        word = match.group(0)
        if any(c.isdigit() for c in word):
            if re.fullmatch(r"\d+(?:st|nd|rd|th)", word):
                continue
            new = word.upper()
        else:
            new = word[0].upper() + word[1:]
        if len(new) == len(word):
            chars[match.start():match.end()] = new
    return "".join(chars)


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


# ... but "policy number 923 456 781", "account no. 50981277364" are none (not "the number on
# the account is ...").
NOT_PHONE_CONTEXT = re.compile(
    r"(?i:policy|account|acct|order|reference|ref|invoice|customer|member|membership|tracking|"
    r"case|ticket|claim|booking|serial|id|iban|sort code|licen[cs]e|passport|reg)\b"
    r"(?:[ \t]+(?:number|no\.?|num|id))?[ \t]*[:#.]?[ \t]*$")


def phone_numbers(text: str, doc: Any) -> Iterable[tuple[int, int]]:
    """9 to 15 digits in groups: written as international (+44, 0044) or with an area code in
    brackets, or after a word that says phone ("Tel:", "call me on"); bare digit groups are
    more often order, account and tracking numbers."""
    for match in _PHONE.finditer(text):
        value = match.group(0)
        if not 9 <= sum(c.isdigit() for c in value) <= 15:
            continue
        before = text[max(0, match.start() - 40):match.start()]
        if value[0] in "+(" or value.startswith("00") or "(" in value or (
                _PHONE_CONTEXT.search(before) and not NOT_PHONE_CONTEXT.search(before)):
            yield match.span()
    yield from _matches([_LOCAL_PHONE])(text, doc)


def _plain(word: str) -> str:
    """`word` without accents: "Siobhán" is on the list as "Siobhan"."""
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


_GIVEN_NAMES = frozenset(_plain(name) for name in (
    Path(__file__).parent / "data/given_names.txt").read_text(encoding="utf-8").split())
# Towns, cities and regions (data/place_names.txt, from phonenumbers' geocoder), and the words
# that make more of them.
PLACE_NAMES = frozenset((Path(__file__).parent / "data/place_names.txt").read_text(
    encoding="utf-8").splitlines())
_PLACE_WORDS = frozenset("North South East West Upper Lower Greater Great Little New Old Royal "
                         "Saint St Port Mount Lake Central Africa Europe Asia America Oceania "
                         "Middle".split())


def place(name: str) -> bool:
    """A place's name: "Felixstowe", "North Yorkshire", "London St Pancras", "West Africa"."""
    return name in PLACE_NAMES or name in _COUNTRIES or all(
        w in PLACE_NAMES or w in _PLACE_WORDS or w in _COUNTRIES for w in name.split())


def not_a_surname(word: str, english: frozenset[str]) -> bool:
    """A business's word, a month or a day, or an English plural ("Vets", "Lettings"): the
    end of a company's or an event's name, not of a person's."""
    lower = word.lower()
    return word in ORGANISATION or word in CALENDAR or (
        lower.endswith("s") and lower not in english and english_word(lower, english))


CALENDAR = frozenset("January February March April May June July August September October "
                     "November December Monday Tuesday Wednesday Thursday Friday Saturday "
                     "Sunday Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Mon Tue Tues Wed "
                     "Thu Thur Thurs Fri Sat Sun Januar Februar März Mai Juni Juli Oktober Dezember "
                     "janvier février mars avril juin juillet août enero febrero marzo abril mayo "
                     "junio julio agosto".split())


def _name_word(token: Any) -> bool:
    return bool(token.is_title or token.is_upper) and token.is_alpha and len(token) > 1


# Words after which a given name is a person's: greetings and titles, whatever the NER model
# thinks; relations, roles and some prepositions, unless it sees a place or an organisation.
_OTHER_GREETINGS = frozenset("hola hallo bonjour bonsoir salut ciao buongiorno buonasera hej hei "
                             "moi olá ola oi merci gracias danke grazie obrigado obrigada bedankt "
                             "tack hoi moin servus merhaba salam namaste ahoj disculpe".split())
_GREETINGS = frozenset("hi hello hey dear thanks thank cheers regards sincerely bye mr mrs ms mx "
                       "dr prof sir madam".split()) | _OTHER_GREETINGS
_BEFORE_NAMES = _GREETINGS | frozenset(
    "daughter son wife husband partner mother father mum mom dad sister brother friend "
    "colleague manager customer client agent cardholder claimant tenant patient employee "
    "engineer nurse doctor technician driver courier adjuster contact recipient by to cc with "
    "for ask call tell its it's".split())
_PREPOSITIONS = frozenset("by to cc with for".split())
_PLACES = frozenset(["GPE", "LOC", "FAC"])
_THINGS = _PLACES | {"ORG", "PRODUCT"}
NOT_NAMES = frozenset("I The A An And Or Of In On At To For From With By My Our Your Their His Her "
                       "This That These Those It We You They He She Tel Tél Fax Mob Ref Attn Re "
                       "Fwd Cc Bcc".split())
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
        while end > i + 1 and not_a_surname(doc[end - 1].text, english):
            end -= 1  # "Sage Payroll", "Summer Sale": the given name alone, if anything
        if end == i + 1 or not listed:
            before = doc[i - 1].lower_.rstrip(".") if i else ""
            after = doc[i + 1].text if i + 1 < len(doc) else "."
            sentence_start = i == 0 or doc[i - 1].text in ".!?:\"-" or "\n" in doc[i - 1].text
            addressed = before in _GREETINGS or (listed and sentence_start and after == ",") or (
                before == "," and after in ".!?;,") or (
                (sentence_start or before == ",") and after.lower() == "here") or (
                sentence_start and (after == "." or "\n" in after) and end == i + 1)
            if sentence_start and after == ":" and token.lower_ in english:
                continue  # a field's label: "Reason: switched banks"
            if end > i + 1:
                continue  # a sequence without a listed given name: _NAME_SEQUENCE decides
            # after a preposition, what the NER model sees as a business, a product or a place
            # is none: "work with Samsung phones", "for Barclays"
            if before in _PREPOSITIONS and not listed and token.ent_type_ != "PERSON":
                continue
            if not (addressed or before in _BEFORE_NAMES and token.ent_type_ not in _PLACES
                    or listed and token.tag_ in ("NNP", "NNPS") and token.ent_type_ not in _THINGS
                    and token.text not in CALENDAR):
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
NAME_WORD = re.compile(rf"{_NAME_WORD}(?:-{_NAME_WORD}|-[a-z]+)*")
_PARTICLE = (r"(?:de|da|do|dos|das|du|van|von|der|den|ter|bin|binti|bint|al|el|la|le|di|del|"
             r"della|mac|ni|nic|ap|ben|y|an|t-)")
_NAME_SEQUENCE = re.compile(
    rf"(?<![\w-])(?:{NAME_WORD.pattern})(?:[ \t](?:{_PARTICLE}[ \t])*(?:{NAME_WORD.pattern})|"
    rf"[ \t]{_PARTICLE}[ \t]?(?:{NAME_WORD.pattern})){{1,3}}(?![\w-])")
# Words that make capitalised words a business or a place, not a person ("Lumen Analytics",
# "Harlow Science Park", "Amsterdam Centraal").
ORGANISATION = frozenset(
    "Ltd Inc Co Corp LLC LLP GmbH AG SA SAS SARL SRL BV NV AS AB Oy ApS Pty Pvt plc PLC Bank "
    "Group Security Logistics Labs Lab Foundation University College School Academy Institute "
    "Hospital Clinic Surgery Practice Dental Physio Physiotherapy Pharmacy Hotel Hostel Inn "
    "Airlines Airways Airport Station Terminal Centraal Hauptbahnhof Gare Nord Gateway "
    "Insurance Solutions Systems Technologies Tech Softech Software Services Store Shop Stores "
    "Cafe Coffee Roasters Bakery Restaurant Kitchen Motors Garage Holdings Partners Associates "
    "Capital Finance Energy Media Health Healthcare Industries Consulting Analytics Staffing "
    "Recruitment Travel Tours Legal Biotech Pharma Nurseries Nursery Gardens Farms Foods "
    "Freight Shipping Express Couriers Design Studio Studios Agency Network Networks Digital "
    "Cloud Council Society Association Club Sale Actions Centre Center Groupe Beheer Meubles "
    "Plumbing Electrical Maschinenbau Street Road Avenue Boulevard Crescent Terrace Clinics "
    "Centres Centers Hospitals Hotels".split())
_INTRODUCED = re.compile(
    r"(?i:\b(?:my name is|name is|i am|i'm|this is|signed|regards|sincerely|cheers|thanks|"
    r"daughter|son|wife|husband|partner|mother|father|sister|brother|colleague|customer|"
    r"cardholder|claimant|tenant|patient|recipient|guest|passenger|applicant)[,:]?[ \t]+|"
    r"^[ \t]*(?:name|full name|customer|client|patient|passenger|guest|tenant|employee|"
    r"cardholder|account holder|contact|requester|requested by|assignee|reporter|agent|from|"
    r"to|cc|member|student|applicant|claimant|insured|policyholder|beneficiary|recipient|"
    r"sender|emergency contact|caller|driver|attendee|donor|landlord|witness|spouse|"
    r"children|child|dependants?)[ \t]*:[ \t]*)"
    rf"(?P<name>{NAME_WORD.pattern}(?:[ \t](?:{_PARTICLE}[ \t])*{NAME_WORD.pattern}){{0,3}})",
    re.MULTILINE)


# Names in lower case, as people chat, where the words say a person is named: "name's sam
# ochieng", "this is frank from flat 3", "mr mehrotra", or a signature ending the text ("... but
# i was home all day?? anne-sophie"). The words taken: a given name or no English word, then up
# to two more of those.
_LOWER_WORD = r"[a-zß-öø-ÿā-ž][a-zß-öø-ÿā-ž'’-]*"
_LOWER_INTRODUCED = re.compile(
    r"(?:(?i:\b(?:my name is|name is|name's|names|name|i'm|im|i am|this is|soy|me llamo|ich bin|"
    r"je suis|mr|mrs|ms|miss|dr))[.:,]?[ \t]+|(?:[?!.]|[ \t][—–-])[ \t]*"
    rf"(?={_LOWER_WORD}(?:[ \t]{_LOWER_WORD}){{0,2}}[ \t]*\Z))"
    rf"(?P<name>{_LOWER_WORD}(?:[ \t]{_LOWER_WORD}){{0,2}})(?![\w'’])")


def _stop_words(*languages: str) -> frozenset[str]:
    import importlib

    return frozenset().union(*(importlib.import_module(f"spacy.lang.{code}.stop_words").STOP_WORDS
                               for code in languages))


_ENGLISH_STOP_WORDS = _stop_words("en")
_OTHER_STOP_WORDS = _stop_words("de", "fr", "es", "nl", "it", "pt", "sv", "da", "nb", "fi", "pl",
                                "cs", "sk", "hu", "ro", "hr", "tr", "id", "vi") - _ENGLISH_STOP_WORDS


def foreign(text: str, english: frozenset[str]) -> bool:
    """Text mostly in another language than English (German, French, Spanish, Dutch, Italian,
    Portuguese, Nordic, Central European, Turkish, Indonesian, Vietnamese), by their function
    words that are no English words ("und", not "die" or "stop"): the English NER model takes
    its capitalised nouns for people ("Gewünschter Termin", "Je kunt")."""
    words = re.findall(r"[^\W\d_]+", text.lower())
    other = sum(w in _OTHER_STOP_WORDS and w not in english for w in words)
    return other > 3 and other > 2 * sum(w in _ENGLISH_STOP_WORDS for w in words)


# A chat log's speaker by handle: "zhang.wei: seeing 401s", "[09:12] li_mei: done".
_HANDLE = re.compile(r"(?m)^[ \t]*(?:\[[^\]\n]{1,20}\][ \t]*)?(?P<name>[a-z]{2,}[._][a-z]{2,})(?=:)")


def lower_case_people(text: str, english: frozenset[str]) -> Iterable[tuple[int, int]]:
    for handle in _HANDLE.finditer(text):
        if all(lower_name_word(part, english) for part in re.split(r"[._]", handle["name"])):
            yield handle.span("name")
    for match in _LOWER_INTRODUCED.finditer(text):
        start = end = match.start("name")
        for word in re.finditer(r"\S+", match.group("name")):
            if not lower_name_word(word.group(0), english):
                break
            end = match.start("name") + word.end()
        if end > start:
            yield start, end


_LETTERS = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")  # a word: "anne-sophie", "o'neill"


def lower_name_word(word: str, english: frozenset[str]) -> bool:
    """A word that may be part of a name written in lower case: a given name, or no English
    word (nor a greeting in another language: "hola", "bonjour")."""
    return len(word) > 2 and _LETTERS.fullmatch(word) is not None and word not in _OTHER_GREETINGS and (
        not english_word(word, english) or _plain(word.capitalize()) in _GIVEN_NAMES)


def english_word(word: str, english: frozenset[str]) -> bool:
    """`word` (lower case) or the word it inflects is in the model's word list, which holds
    lemmas: "matches", "parcels", "booked"."""
    return word in english or any(
        word.endswith(suffix) and (word[:-len(suffix)] + stem in english or stem == "" and len(
            word) > len(suffix) + 2 and word[-len(suffix) - 1] == word[-len(suffix) - 2]
            and word[:-len(suffix) - 1] in english)  # "skipped", "running"
        for suffix, stem in (("s", ""), ("es", ""), ("ies", "y"), ("ed", ""), ("ed", "e"),
                             ("ing", ""), ("ing", "e")))


def people(english: frozenset[str]) -> Spans:
    def find(text: str, doc: Any) -> Iterable[tuple[int, int]]:
        yield from _first_names(doc, english)
        for match in _INTRODUCED.finditer(text):
            yield match.span("name")
        if english:
            yield from lower_case_people(text, english)
        if not english:  # a model without a word list (another language): no shape rule
            return
        places = [(e.start_char, e.end_char) for e in doc.ents if e.label_ in _PLACES]
        for match in _NAME_SEQUENCE.finditer(text):
            words = list(NAME_WORD.finditer(match.group(0)))
            # Leading English words are the sentence's, not the name's: "Call Debasish Mukherjee"
            while words and words[0].group(0).lower() in english \
                    and _plain(words[0].group(0)) not in _GIVEN_NAMES:
                words.pop(0)
            if len(words) < 2 or words[-1].group(0).lower() in english \
                    or not_a_surname(words[-1].group(0), english) \
                    or any(w.group(0) in ORGANISATION for w in words):
                continue
            start, end = match.start() + words[0].start(), match.start() + words[-1].end()
            after = text[end:end + 12].split()
            if after and after[0].strip(".,") in ORGANISATION or any(
                    a < end and start < b for a, b in places):
                continue
            yield start, end
    return find


_NAME_BEFORE = re.compile(rf"(?<![\w.'’])({NAME_WORD.pattern}) $")
_NAME_AFTER = re.compile(rf" ({NAME_WORD.pattern})(?![\w'’])")


def listed_given_name(word: str) -> bool:
    return _plain(word) in _GIVEN_NAMES and word not in CALENDAR


def greeting(words: list[str]) -> bool:
    """Words that greet in another language: "Olá", "Kia ora", "Grüß Gott"."""
    return " ".join(words).lower() in _GREETING_PHRASES \
        or bool(words) and all(w.lower() in _OTHER_GREETINGS for w in words)


_GREETING_PHRASES = frozenset(["kia ora", "grüß gott", "dzień dobry"])


def name_like(word: str, english: frozenset[str]) -> bool:
    """A given name, or no English word (the model's word list); "The", "Our", "Email" are not."""
    return word not in NOT_NAMES and (listed_given_name(word) or word.lower() not in english)


def whole_name(text: str, start: int, end: int, english: frozenset[str]) -> tuple[int, int]:
    """A person's name with the name-like capitalised words beside it: the NER model often
    marks only a part ("Hock [Seng Tan]", "[Paulina] Jankowska")."""
    for _ in range(2):
        before = _NAME_BEFORE.search(text, max(0, start - 30), start)
        if before is None or not name_like(before.group(1), english):
            break
        start = before.start()
    lower = text[start:end].islower()  # "cian o'sullivan": the rest of a name in lower case
    for _ in range(2):
        after = (_LOWER_AFTER if lower else _NAME_AFTER).match(text, end)
        if after is None or not (not english_word(after.group(1), english) if lower else
                                 name_like(after.group(1), english)):
            break
        end = after.end()
    return start, end


_LOWER_AFTER = re.compile(rf" ({_LOWER_WORD})(?![\w'’])")


emails = _matches([_EMAIL])
cards = _matches([_CARD], _card)
dates_of_birth = _matches([_BIRTH])
secrets = _matches(_SECRETS)
