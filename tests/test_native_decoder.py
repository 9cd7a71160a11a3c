"""The compiled trace decoder (native/) gives the batches the Python decoder gives, byte for byte.

Same facts field by field, same received and rejected counts, same issues, same messages, and the
same PermanentError for what the Python decoder (upb) refuses: over the real-instrumentor corpus,
the hostile bodies of issue 12, hand-made wire damage and a few thousand seeded mutations.
"""

from __future__ import annotations

import json
import random
import struct
from pathlib import Path

import pytest
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.internal.encoder import _VarintBytes
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from monitor import _native
from monitor.errors import PermanentError
from monitor.ingest.otlp import DECODER_ENV, Batch, OtlpDecoder
from tests import hostile

pytestmark = pytest.mark.unit

CORPUS = sorted(Path(__file__).parent.joinpath("fixtures/otlp").glob("*/*.json"))
CORPUS = [p for p in CORPUS  # the exports, not what they must give
          if not p.name.endswith((".expected.json", ".session.json")) and p.name != "versions.json"]
TRACE_ID, SPAN_ID = bytes(range(1, 17)), bytes(range(1, 9))
SETTINGS = [  # (max_attribute_length, max_value_depth, tenant_id)
    (1 << 20, 16, None),
    (7, 1, None),  # cuts most strings, drops any nested value
    (64, 0, "acme"),  # refuses every resource without tenant.id "acme"
]


def outcome(decoder: OtlpDecoder, body: bytes) -> tuple[str, ...]:
    try:
        batch: Batch = decoder.decode("traces", body, "proto")
    except PermanentError as exc:
        return ("error", str(exc))
    # repr: every field of every fact, NaN equal to NaN, set order as built
    return (repr(batch.facts), str(batch.received), repr(sorted(batch.rejected.items())),
            repr(sorted(batch.issues.items())), repr(batch.messages))


def assert_same(body: bytes, settings: list[tuple[int, int, str | None]] = SETTINGS) -> str:
    kinds = set()
    for max_len, max_depth, tenant in settings:
        common = {"max_attribute_length": max_len, "max_value_depth": max_depth,
                  "tenant_id": tenant}
        expected = outcome(OtlpDecoder(**common, native=False), body)
        assert outcome(OtlpDecoder(**common, native=True), body) == expected
        kinds.add(expected[0] if expected[0] == "error" else "batch")
    return "error" if kinds == {"error"} else "batch"


def corpus_body(path: Path) -> bytes:
    export = json.loads(path.read_text())
    decoder = OtlpDecoder(max_attribute_length=1 << 30, max_value_depth=64, native=False)
    return decoder.parse_traces(json.dumps(export["traces"]).encode(), "json").SerializeToString()


def test_the_install_builds_the_compiled_decoder_and_the_env_switch_turns_it_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert OtlpDecoder(max_attribute_length=10, max_value_depth=2).native is not None
    monkeypatch.setenv(DECODER_ENV, "python")
    assert OtlpDecoder(max_attribute_length=10, max_value_depth=2).native is None


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_same_batches_over_the_real_instrumentor_corpus(path: Path) -> None:
    body = corpus_body(path)
    assert assert_same(body) == "batch"
    facts = OtlpDecoder(max_attribute_length=1 << 20, max_value_depth=16).decode(
        "traces", body, "proto").facts
    assert facts and any(f.conventions for f in facts)  # the corpus is mapped, not just read


@pytest.mark.parametrize("name,data", hostile.WRONG_TYPES, ids=[n for n, _ in hostile.WRONG_TYPES])
def test_same_batches_for_wrongly_typed_attributes(name: str, data: dict) -> None:
    assert assert_same(hostile.to_protobuf(data)) == "batch"


def test_same_outcome_for_every_truncation_of_a_real_body() -> None:
    body = corpus_body(CORPUS[0])
    cuts = sorted({*range(0, len(body), max(1, len(body) // 150)), len(body) - 1})
    kinds = [assert_same(body[:cut], SETTINGS[:1]) for cut in cuts]
    assert "error" in kinds and "batch" in kinds


def test_same_outcome_for_seeded_mutations_of_sdk_payloads() -> None:
    fuzz = hostile.Mutator(seed=14)
    kinds = [assert_same(fuzz.protobuf("traces")) for _ in range(600)]
    assert kinds.count("error") > 20 and kinds.count("batch") > 300


# -- hand-made wire format ---------------------------------------------------------------------

def tag(field: int, wire: int) -> bytes:
    return _VarintBytes(field << 3 | wire)


def ld(field: int, payload: bytes) -> bytes:
    return tag(field, 2) + _VarintBytes(len(payload)) + payload


def kv(key: str, any_value: bytes) -> bytes:
    return ld(1, key.encode()) + ld(2, any_value)


def span(*fields: bytes, trace_id: bytes = TRACE_ID, span_id: bytes = SPAN_ID) -> bytes:
    return ld(1, trace_id) + ld(2, span_id) + ld(5, b"chat \xc3\xa9") + b"".join(fields)


def request(*spans: bytes, resource: bytes = kv("service.name", ld(1, b"bot"))) -> bytes:
    return ld(1, ld(1, ld(1, resource)) + ld(2, b"".join(ld(2, s) for s in spans)))


def nested(levels: int, leaf: bytes = b"leaf") -> bytes:
    """An AnyValue holding arrays `levels` deep."""
    value = ld(1, leaf)
    for _ in range(levels):
        value = ld(5, ld(1, value))
    return value


def nested_maps(levels: int, leaf: bytes = b"leaf") -> bytes:
    """An AnyValue holding key-value lists `levels` deep (three messages a level)."""
    value = ld(1, leaf)
    for _ in range(levels):
        value = ld(6, ld(1, kv("k", value)))
    return value


CHAT = ld(9, kv("gen_ai.operation.name", ld(1, b"chat")))
WIRE_CASES = {
    "zero trace id": request(span(CHAT, trace_id=bytes(16))),
    "short span id": request(span(CHAT, span_id=b"\x01")),
    "missing ids": request(ld(5, b"n") + CHAT),
    "ids refused among good spans": request(span(CHAT), span(CHAT, span_id=bytes(8)),
                                            span(CHAT, trace_id=b"")),
    "name with quotes in a refusal": request(ld(2, SPAN_ID) + ld(5, b"it's \"x\"\n")),
    "error status, no message": request(span(CHAT, ld(15, tag(3, 0) + b"\x02"))),
    "error status with message": request(span(CHAT, ld(15, ld(2, b"boom") + tag(3, 0) + b"\x02"))),
    "status given twice (merged)": request(span(CHAT, ld(15, ld(2, b"a")), ld(15, tag(3, 0) + b"\x02"))),
    "remote parent": request(span(CHAT, ld(4, b"\x09" * 8), tag(16, 5) + struct.pack("<I", 0x300))),
    "local parent, times": request(span(CHAT, ld(4, b"\x09" * 8), tag(7, 1) + struct.pack("<Q", 5),
                                        tag(8, 1) + struct.pack("<Q", 2**64 - 1))),
    "every value type": request(span(ld(9, kv("gen_ai.operation.name", ld(1, b"chat"))),
                                     *(ld(9, kv(f"k{i}", v)) for i, v in enumerate([
                                         tag(2, 0) + b"\x05", tag(3, 0) + b"\xff" * 9 + b"\x01",
                                         tag(4, 1) + struct.pack("<d", float("nan")),
                                         ld(7, bytes(range(256))), ld(7, b"ab"), ld(7, b""),
                                         tag(8, 0) + b"\xff" * 9 + b"\x01", b"", ld(1, b""),
                                         ld(6, ld(1, kv("a", ld(1, b"b")) + kv("a", b""))),
                                         ld(5, b""), ld(5, ld(1, b"") + ld(1, tag(2, 0) + b"\x00")),
                                     ])))),
    "oneof: the last member wins, messages merge": request(span(ld(9, kv("k", ld(
        5, ld(1, ld(1, b"a"))) + ld(1, b"s") + ld(5, ld(1, ld(1, b"b"))) + ld(5, ld(1, ld(1, b"c"))))))),
    "key and value given twice": request(span(ld(9, ld(1, b"x") + ld(2, ld(1, b"v")) + ld(1, b"y")
                                                + ld(2, tag(3, 0) + b"\x07")))),
    "value given three times (merged in order)": request(span(ld(9, ld(1, b"assistant.question")
                                                               + ld(2, ld(1, b"v"))
                                                               + ld(2, ld(5, ld(1, ld(1, b"a"))))
                                                               + ld(2, ld(5, ld(1, ld(1, b"b"))))))),
    "duplicate keys: the last wins": request(span(ld(9, kv("k", ld(1, b"1"))), ld(9, kv("k", ld(1, b"2"))))),
    "multibyte strings cut by characters": request(span(ld(9, kv("assistant.question",
                                                               ld(1, "é€😀".encode() * 9))))),
    "nested deeper than max_value_depth": request(span(ld(9, kv("assistant.question", nested(40))))),
    "nested 99 messages deep (upb allows 100)": request(span(ld(9, kv("q", nested(47))))),
    "nested 101 messages deep": request(span(ld(9, kv("q", nested(48))))),
    "events: interesting and not": request(span(CHAT, ld(11, ld(2, b"gen_ai.user.message")
                                                         + ld(3, kv("content", ld(1, b"hi")))),
                                                ld(11, ld(2, b"exception") + ld(3, kv("x", ld(1, b"y")))),
                                                ld(11, ld(2, b"db.query.result")
                                                   + ld(3, kv("db.query.result.id", ld(1, b"d1")))))),
    "tenant present": request(span(CHAT), resource=kv("tenant.id", ld(1, b"acme"))),
    "tenant of another": request(span(CHAT), span(CHAT), resource=kv("tenant.id", ld(1, b"other"))),
    "tenant not a string": request(span(CHAT), resource=kv("tenant.id", tag(3, 0) + b"\x01")),
    "resource given twice (merged)": ld(1, ld(1, ld(1, kv("tenant.id", ld(1, b"acme"))))
                                        + ld(2, ld(2, span(CHAT)))
                                        + ld(1, ld(1, kv("service.name", ld(1, b"s"))))),
    "spans before the resource, in two scopes": ld(1, ld(2, ld(2, span(CHAT))) + ld(2, ld(2, span(CHAT)))
                                                   + ld(1, ld(1, kv("service.name", ld(1, b"s"))))),
    "wrong wire types are unknown fields": request(span(CHAT, tag(5, 0) + b"\x01", tag(9, 5) + b"abcd",
                                                        tag(7, 2) + b"\x00", ld(16, b"xx"))),
    "unknown fields and groups": request(span(CHAT, ld(99, b"\xff\xff"), tag(98, 3) + tag(1, 0)
                                              + b"\x01" + tag(98, 4), tag(97, 1) + bytes(8))),
    "unmatched end group": request(span(CHAT, tag(98, 4))),
    "group ended by another field": request(span(CHAT, tag(98, 3) + tag(97, 4))),
    "wire type 7": request(span(CHAT)) + tag(3, 7),
    "field number 0": request(span(CHAT)) + b"\x00\x01",
    "varint of 11 bytes": request(span(CHAT, tag(6, 0) + b"\xff" * 10 + b"\x01")),
    "tag over 32 bits": request(span(CHAT)) + b"\xf8\xff\xff\xff\x1f\x01",
    "length past the end": request(span(CHAT)) + ld(1, b"")[:-1] + b"\x05",
    "fixed64 cut short": request(span(CHAT, tag(7, 1) + b"\x01\x02")),
    "invalid UTF-8 in a value": request(span(ld(9, kv("k", ld(1, b"\xff\xfe"))))),
    "invalid UTF-8 in a scope name": ld(1, ld(2, ld(1, ld(1, b"\xed\xa0\x80")) + ld(2, span(CHAT)))),
    "invalid UTF-8 in an entity ref": ld(1, ld(1, ld(3, ld(3, b"\xc3")))),
    "invalid UTF-8 in bytes is fine": request(span(ld(9, kv("k", ld(7, b"\xff\xfe"))))),
    # A span's attributes are checked as the decoder reads them, the rest of a body before:
    # what it reads partly, or not at all, must still be checked.
    "invalid UTF-8 in an attribute's key": request(span(ld(9, ld(1, b"\xc3") + ld(2, ld(1, b"v"))))),
    "invalid UTF-8 in a key given before the last": request(span(ld(9, ld(1, b"\xff") + ld(1, b"k")
                                                                  + ld(2, ld(1, b"v"))))),
    "invalid UTF-8 in a string a later member replaced": request(span(ld(9, kv("k", ld(
        1, b"\xff") + tag(3, 0) + b"\x01")))),
    "invalid UTF-8 in an array a later member replaced": request(span(ld(9, kv("assistant.question", ld(
        5, ld(1, ld(1, b"\xff"))) + ld(1, b"s"))))),
    "invalid UTF-8 in a list replaced by an array": request(span(ld(9, kv("k", ld(
        6, ld(1, kv("a", ld(1, b"\xff")))) + ld(5, ld(1, ld(1, b"b"))))))),
    "invalid UTF-8 in a list's key": request(span(ld(9, kv("k", ld(6, ld(1, ld(1, b"\xff")
                                                                        + ld(2, ld(1, b"v")))))))),
    "invalid UTF-8 below max_value_depth": request(span(ld(9, kv("q", nested(20, b"\xed\xa0\x80"))))),
    "invalid UTF-8 in a refused span's attributes": request(span(ld(9, kv("k", ld(1, b"\xff"))),
                                                                 trace_id=bytes(16))),
    "invalid UTF-8 in another tenant's span": request(span(ld(9, kv("k", ld(1, b"\xff")))),
                                                      resource=kv("tenant.id", ld(1, b"other"))),
    "lists nested 99 messages deep": request(span(ld(9, kv("q", nested_maps(31))))),
    "lists nested 102 messages deep": request(span(ld(9, kv("q", nested_maps(32))))),
    "lists nested 102 deep in a refused span": request(span(ld(9, kv("q", nested_maps(32))),
                                                            span_id=bytes(8))),
    "empty body": b"",
}


MALFORMED = {"nested 101 messages deep", "unmatched end group", "group ended by another field",
             "wire type 7", "field number 0", "varint of 11 bytes", "tag over 32 bits",
             "length past the end", "fixed64 cut short", "lists nested 102 messages deep",
             "lists nested 102 deep in a refused span",
             *(name for name in WIRE_CASES if name.startswith("invalid UTF-8") and "bytes" not in name)}


@pytest.mark.parametrize("name", WIRE_CASES)
def test_same_outcome_for_hand_made_wire_input(name: str) -> None:
    assert assert_same(WIRE_CASES[name]) == ("error" if name in MALFORMED else "batch")


@pytest.mark.parametrize("name", [name for name in WIRE_CASES if "nested" in name])
def test_same_outcome_for_values_read_to_upbs_nesting_limit(name: str) -> None:
    # max_value_depth beyond upb's limit: the decoder reads every level, none is left to check.
    read_whole = [(1 << 20, 200, None)]
    assert assert_same(WIRE_CASES[name], read_whole) == ("error" if name in MALFORMED else "batch")


_WIRE = {FieldDescriptor.TYPE_STRING: "string", FieldDescriptor.TYPE_BYTES: "bytes",
         FieldDescriptor.TYPE_DOUBLE: "fixed64", FieldDescriptor.TYPE_FIXED64: "fixed64",
         FieldDescriptor.TYPE_SFIXED64: "fixed64", FieldDescriptor.TYPE_FLOAT: "fixed32",
         FieldDescriptor.TYPE_FIXED32: "fixed32", FieldDescriptor.TYPE_SFIXED32: "fixed32"}


def test_the_compiled_decoder_knows_every_field_of_the_installed_protos() -> None:
    """upb checks fields by their declared type (UTF-8 in strings, nesting in messages): a field
    a newer opentelemetry-proto adds must be added to native/src/wire/ too."""
    declared, stack, seen = set(), [ExportTraceServiceRequest.DESCRIPTOR], set()
    while stack:
        message = stack.pop()
        if message.full_name in seen:
            continue
        seen.add(message.full_name)
        for f in message.fields:
            if f.message_type is not None:
                kind = f.message_type.full_name
                stack.append(f.message_type)
            else:
                kind = _WIRE.get(f.type, "varint")  # ints, bools, enums
            declared.add((message.full_name, f.number, kind))
    assert set(_native.testing.schema()) == declared


def test_indexed_keys_unflatten_by_ascii_index_in_numeric_order() -> None:
    attrs = {"p.1.a": 1, "p.01.b": 2, "p.0.c": None, "p.0.c.d": [1], "p.x.a": 3, "p.2": 4,
             "p.3.": 5, "p..a": 6, "p.1234567890.a": 7, "p.123456789.a": 8, "q.0.a": 9,
             "p.\u00b2.a": 11, "p.\u0663.a": 12, "p.-1.a": 13, "p.+1.a": 14, "p. 1.a": 15,
             "p.1.a.b.c": 16, "p.10.z": 17}
    groups, _ = _native.testing.read("indexed", attrs, "p.")
    assert groups == [{"c": None, "c.d": [1]}, {"a": 1, "b": 2, "a.b.c": 16}, {"z": 17}, {"a": 8}]


def test_indexed_keys_in_any_order_group_by_number() -> None:
    """Out of order, repeated, and past the 16 groups (or a group's 16 fields) from which they are
    found by hash: one by one, a hostile span's 40,000 fields in a group took 2.5 s."""
    numbers = [*range(40), *range(40), *range(99, 39, -1)]
    random.Random(7).shuffle(numbers)
    attrs = {f"p.{n}.{field}": f"{n}{field}" for n in numbers for field in "ab"}
    attrs |= {"p.3.a": "again", "p.77.c": "late"}  # a repeated key: the last value wins
    many = [f"k{i}" for i in range(40)]  # one group's fields, past 16: found by hash
    attrs |= {f"p.5.{key}": key for key in many} | {"p.5.k7": "7 again", "p.5.z": "last"}
    groups, _ = _native.testing.read("indexed", attrs, "p.")
    expected = [{"a": f"{n}a", "b": f"{n}b"} for n in range(100)]
    expected[3]["a"], expected[77]["c"] = "again", "late"
    expected[5] |= {key: key for key in many} | {"k7": "7 again", "z": "last"}
    assert groups == expected
    assert list(groups[5]) == ["a", "b", *many, "z"]  # in the order first given


def test_malformed_bodies_are_named_not_echoed() -> None:
    decoder = OtlpDecoder(max_attribute_length=100, max_value_depth=4, native=True)
    secret = "my card number is 4111"
    body = request(span(ld(9, kv("assistant.question", ld(1, secret.encode()))))) + b"\x0a\x7f"
    with pytest.raises(PermanentError) as caught:
        decoder.decode("traces", body, "proto")
    assert str(caught.value) == "malformed protobuf ExportTraceServiceRequest"


def test_a_bench_size_request_decodes_the_same() -> None:
    rng = random.Random(3)
    message = ExportTraceServiceRequest()
    for body in rng.sample([corpus_body(p) for p in CORPUS], 5):
        message.MergeFromString(body)
    assert assert_same(message.SerializeToString()) == "batch"


def test_stub_declares_the_compiled_modules_names() -> None:
    """monitor/_native.pyi, which mypy checks the core against, names what the module has: each
    public name, and each class's methods and attributes."""
    import ast

    stub = ast.parse((Path(_native.__file__).parent / "_native.pyi").read_text())

    def names(body: list[ast.stmt]) -> dict[str, list[ast.stmt]]:
        found: dict[str, list[ast.stmt]] = {}
        for node in body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef):
                found[node.name] = node.body
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                found[node.target.id] = []
        return {name: inner for name, inner in found.items() if not name.startswith("_")}

    declared = names(stub.body)
    public = {name for name in dir(_native) if not name.startswith("_")} - {"testing"}
    assert set(declared) == public
    for name, body in declared.items():
        if isinstance(getattr(_native, name), type):
            assert set(names(body)) == {
                attr for attr in dir(getattr(_native, name)) if not attr.startswith("_")}, name
