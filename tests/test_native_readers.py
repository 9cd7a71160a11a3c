"""How the convention rules read values (native/src/json.rs, readers.rs).

The JSON reader against Python's json.loads, the reading the rules were written against: the same
values (types, key order, repeated keys, big integers, NaN), the same refusals, over seeded
generated texts and their mutations. Then each reader on the wrongly typed values it exists for:
what it coerces, what it drops, what it counts."""

from __future__ import annotations

import json
import math
import random
import re

import pytest

from monitor import _native
from monitor.model import utf8_value

pytestmark = pytest.mark.unit

_CHARS = ["a", "é", "😀", "\n", "\u0001", '"', "\\", "/", "\ud83d", "\ude00", " ", "\u2028",
          "'", "\xa0", "\u200b", "\x85", "\U000e0041"]


def _value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(9 if depth < 6 else 6)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.choice([0, -1, 7, 2**63, -(2**63) - 1, 10**40, rng.randrange(-10**6, 10**6)])
    if kind == 2:
        return rng.choice([0.0, -0.0, 0.1, 1e16, 1e-5, 2.5e300, math.inf, -math.inf, math.nan,
                           rng.uniform(-1e6, 1e6)])
    if kind in (3, 4, 5):
        return "".join(rng.choice(_CHARS) for _ in range(rng.randrange(6)))
    if kind in (6, 7):
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(["a", "b", "é", "", "\ud83d"]): _value(rng, depth + 1)
            for _ in range(rng.randrange(4))}


_NOISE = list(' ,:[]{}"\\-0123456789.eE+ntfNIa\u0001u') + ["\\u", "\\ud83d", "Infinity"]


def _texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        text = json.dumps(_value(rng), ensure_ascii=rng.random() < 0.5,
                          separators=rng.choice([(",", ":"), (", ", ": "), (" ,", " : ")]))
        if rng.random() < 0.5:  # damage it: the refusals must match too
            for _ in range(rng.randrange(1, 4)):
                at = rng.randrange(len(text) + 1)
                cut = rng.randrange(3)
                text = text[:at] + rng.choice(_NOISE) * (rng.random() < 0.7) + text[at + cut:]
        # The reader takes UTF-8 (a protobuf string): a raw surrogate is written as its escape.
        texts.append(re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text))
    texts += ['{"a": 1, "b": 2, "a": 3}', "01", "1.", "1e5", "-0", "[1,]", " [] ", "\t\n1\r",
              '"\\ud83d\\ude00"', '"\\ud83d\\u0041"', '"\\ude00\\ud83d"', "123456789012345678901",
              "1E400", "-Infinity", "-Inf", "[" * 50 + "]" * 50, '{"x": [1, {"y": NaN}]}',
              "9" * 4300, "-" + "9" * 4300, "9" * 4301, '{"n": -' + "9" * 5000 + "}",
              "9" * 5000 + ".5", "1" + "0" * 5000 + "e-5000",  # Python's int digits limit
              # an escape cut by a character of several bytes; runs of them between escapes
              '"\\u00\u00e9"', '"\\u\u20ac12"', '"\u00e9\\u0041\u20ac\\n\U0001f600"']
    return texts


def _python(text: str) -> tuple[str, bool] | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    value, mended = utf8_value(value)
    return json.dumps(value, ensure_ascii=False), mended


@pytest.mark.parametrize("seed", range(4))
def test_the_compiled_reader_reads_what_python_reads(seed: int) -> None:
    differ = []
    for text in _texts(seed, 2500):
        expected = _python(text)
        try:
            value, mended = _native.testing.json_loads(text)
            got: tuple[str, bool] | None = (json.dumps(value, ensure_ascii=False), mended)
        except ValueError:
            got = None
        if got != expected:
            differ.append((text, expected, got))
    assert not differ, differ[:5]


def test_the_compiled_writer_writes_what_python_dumps() -> None:
    differ = []
    for text in _texts(9, 3000):
        expected = _python(text)
        if expected is None or expected[1]:
            continue
        if _native.testing.json_redump(text) != expected[0]:
            differ.append((text, expected[0], _native.testing.json_redump(text)))
    assert not differ, differ[:5]


def test_the_compiled_writer_escapes_strings_as_python_dumps() -> None:
    """Strings of every length up to 40, each character needing an escape, or of several
    bytes, at every offset: the writer skips eight bytes at a time where none needs one."""
    rng = random.Random(7)
    alphabet = list('"\\\n\t\r\b\f\x00\x1f\x7f/é€\U0001f600')
    differ = []
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) if rng.random() < 0.2 else "x"
                       for _ in range(rng.randrange(41)))
        if _native.testing.json_redump(json.dumps(text)) != json.dumps(text, ensure_ascii=False):
            differ.append(text)
    assert not differ, differ[:5]


def test_an_integer_longer_than_python_reads_is_refused_as_json() -> None:
    """json.loads refuses integers of more than 4,300 digits; so must the reader, or the value
    reaches a Python that cannot build it (the differential test cannot tell: converting it to
    Python raises ValueError too)."""
    value, _ = _native.testing.json_loads("-" + "9" * 4300)
    assert value == -int("9" * 4300)
    for text in ("9" * 4301, '{"n": [' + "1" * 5000 + "]}"):
        with pytest.raises(ValueError, match="^not JSON$"):
            _native.testing.json_loads(text)


def test_nesting_beyond_the_limit_is_refused_not_a_crash() -> None:
    with pytest.raises(ValueError):
        _native.testing.json_loads("[" * 100_000 + "]" * 100_000)
    value, _ = _native.testing.json_loads("[" * 900 + "]" * 900)
    assert isinstance(value, list)


# -- the readers (native/src/readers.rs): how the rules read a wrongly typed value ------------

READS = [  # (reader, value, its issue name or prefix, answer, issues)
    ("int", 12, "", 12, {}),
    ("int", " 7 ", "", 7, {}),
    ("int", "1_000", "", 1000, {}),
    ("int", 1.9, "", 1, {}),
    ("int", -1, "", 0, {"invalid_token_count": 1}),
    ("int", 2**31, "", 0, {"invalid_token_count": 1}),
    ("int", math.inf, "", 0, {"invalid_token_count": 1}),
    ("int", True, "", 1, {}),
    ("int", [1], "", 0, {"invalid_token_count": 1}),
    ("float", "0.5", "", 0.5, {}),
    ("float", math.nan, "", None, {}),
    ("float", True, "", None, {}),
    ("float", 10**400, "", None, {}),
    ("str", "m", "model", "m", {}),
    ("str", 42, "model", "42", {"model_coerced": 1}),
    ("str", 1.5, "model", "1.5", {"model_coerced": 1}),
    ("str", 10**64, "model", None, {"model_wrong_type": 1}),
    ("str", [1], "model", None, {"model_wrong_type": 1}),
    ("str", True, "model", None, {"model_wrong_type": 1}),
    ("text", [{"content": "a"}, {"text": "b"}, "c", 5, None], "", "a\nb\nc\n5", {}),
    ("text", {"k": [1.0, None]}, "", '{"k": [1.0, null]}', {}),
    ("text", True, "", "true", {}),
    ("maybe_json", '{"a": 1}', "", {"a": 1}, {}),
    ("maybe_json", "not json", "", "not json", {}),
    ("maybe_json", "[" * 40 + "]" * 40, "", "[" * 40 + "]" * 40, {"value_too_deep": 1}),
    ("maybe_json", math.nan, "", None, {}),
    ("maybe_json", '"\\ud83d"', "", "\ufffd", {"lone_surrogate": 1}),
    ("json", "{bad", "malformed", None, {"malformed": 1}),
    ("json", "null", "malformed", None, {}),
    ("json", [[[1]]], "malformed", [[[1]]], {}),
    ("metadata_id", {"doc_id": 7}, "", "7", {}),
    ("metadata_id", {"id": [1], "document_id": "d"}, "", "d", {}),
    ("tool_message", {"type": "tool", "data": {"content": "boom", "status": "error"}}, "",
     ["boom", "boom"], {}),
    ("tool_message", {"output": {"lc": 1, "id": ["langchain", "ToolMessage"],
                                 "kwargs": {"content": "ok"}}}, "", ["ok", None], {}),
    ("tool_message", {"type": "tool", "data": "x"}, "", None, {}),
    ("py_str", {"a": [1.0, None, True, "it's"]}, "", """{'a': [1.0, None, True, "it's"]}""", {}),
    ("py_str", 1e16, "", "1e+16", {}),
]


@pytest.mark.parametrize("reader,value,name,answer,issues", READS)
def test_a_reader_coerces_or_drops_a_wrongly_typed_value_and_counts_it(
        reader: str, value: object, name: str, answer: object, issues: dict[str, int]) -> None:
    got, found = _native.testing.read(reader, value, name)
    assert (got, dict(found)) == (answer, issues)
