"""The PII tagger (monitor/judges/pii_tagger.py): the shipped model is the one its card names, and
it finds people and addresses the rules and the NER model are weak on, by character."""

from __future__ import annotations

import json

import pytest

from monitor.judges.embeddings import MODELS, file_sha256
from monitor.judges.pii_tagger import PiiTagger

pytestmark = pytest.mark.unit


def test_the_card_names_the_shipped_model() -> None:
    card = json.loads((MODELS / "pii_tagger.json").read_text())
    model = MODELS / card["file"]
    assert file_sha256(model) == card["sha256"]
    assert model.stat().st_size <= 30 * 1024 * 1024
    assert card["labels"] == ["O", "B-PERSON", "I-PERSON", "B-ADDRESS", "I-ADDRESS"]


@pytest.mark.parametrize(("text", "expected"), [
    # lower-case chat: a name, and an address no rule's format
    ("hey its valentina again, the parcel still hasnt arrived at 22 maple crescent, leeds ls6 2ab",
     [("valentina", "PERSON"), ("22 maple crescent, leeds ls6 2ab", "ADDRESS")]),
    # whole words ("Consignee" holds no name), without the punctuation around them
    ("Consignee: Oluwaseun Adebayo-Okafor, Plot 14, Admiralty Way, Lekki Phase 1, Lagos 106104.",
     [("Oluwaseun Adebayo-Okafor", "PERSON"),
      ("Plot 14, Admiralty Way, Lekki Phase 1, Lagos 106104", "ADDRESS")]),
    # products, towns and a street without a house are none
    ("The Galaxy S24 ships from our Leeds warehouse on 3 May; the roadworks on Mill Lane slow "
     "the vans.", []),
])
def test_people_and_addresses_by_character(text: str, expected: list[tuple[str, str]]) -> None:
    assert [(text[a:b], kind) for a, b, kind in PiiTagger().spans(text)] == expected


def test_a_long_text_is_read_in_overlapping_windows() -> None:
    # ~700 tokens: the name stands where two windows overlap, and at the end
    filler = "The order was packed and sent from the warehouse this morning. " * 8
    text = filler + "Please call Siobhan Murphy about it. " + filler * 2 + "Thanks, Tomasz Nowak"
    people = [text[a:b] for a, b, kind in PiiTagger().spans(text) if kind == "PERSON"]
    assert people == ["Siobhan Murphy", "Tomasz Nowak"]
