"""Personal data never reaches an LLM judge: Presidio with spaCy's NER model, consistent
placeholders per turn, and what redaction does with hostile input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest
from prometheus_client import CollectorRegistry
from pydantic import ValidationError

from monitor.config import (
    LLMEndpointSettings,
    LLMJudgingSettings,
    PiiEntity,
    RedactionSettings,
)
from monitor.errors import ConfigError
from monitor.judges.llm import LLMJudge
from monitor.judges.redact import (
    TAGS,
    PiiAnalyzer,
    Redactor,
    redact_turn,
    shared_analyzer,
)
from monitor.model import AssistantTurn, RetrievedDocument, ToolCall
from monitor.store import Store
from monitor.telemetry import Metrics
from tests import traffic
from tests.fakes.judge_model import judge_model
from tests.fakes.openai_server import ScriptedOpenAIServer
from tests.test_pipeline import provider_for
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]

def planted(n: int, question: str, document_id: str, document: str, answer: str,
            tool_calls: list[ToolCall] | None = None) -> AssistantTurn:
    return AssistantTurn(trace_id=str(n) * 32, question=question, answer=answer,
                         documents=[RetrievedDocument(id=document_id, content=document)],
                         tool_calls=tool_calls or [])


# Four support turns carrying people's names of several origins, street addresses in three
# countries, e-mail addresses and phone numbers (a UK mobile among them).
PLANTED_TURNS = [
    planted(1, "Hi, I'm Chidi Okafor. Can the replacement charger go to 221B Baker Street, "
               "London NW1 6XE instead of my office?",
            "crm-1", "Customer Chidi Okafor, mobile +44 7700 900123, e-mail "
                     "chidi.okafor@example.com. Replacement chargers ship within 2 business "
                     "days to the address on the ticket.",
            "Yes, Mr Okafor: the replacement charger will ship within 2 business days to "
            "221B Baker Street, London NW1 6XE."),
    planted(2, "My colleague Siobhán O'Sullivan ordered the standing desk; where is it?",
            "order-7", "Order 7781 for Siobhán O'Sullivan, delivery to 1600 Pennsylvania Ave "
                       "NW, Washington, DC 20500. Contact (555) 010-4477. Standing desks are "
                       "delivered by freight within 10 days.",
            "Siobhán's standing desk is with the freight carrier and arrives within 10 days."),
    planted(3, "Wei Zhang here - can Priya Raghunathan sign for my parcel at Hauptstraße 5, "
               "10115 Berlin?",
            "policy-3", "A parcel may be signed for by a neighbour named in the order notes. "
                        "Notes for wei.zhang@example.de: neighbour Priya Raghunathan, "
                        "+49 30 901820.",
            "Yes, Priya Raghunathan may sign for the parcel; she is named in your order notes."),
    planted(4, "Please call Fatima Al-Sayed on +1 (212) 555-0147 about the warranty claim.",
            "kb-9", "Warranty claims are answered by phone within one business day.",
            "We will call Fatima Al-Sayed within one business day about the warranty claim.",
            [ToolCall(name="schedule_call", result="scheduled", arguments={
                "person": "Fatima Al-Sayed", "phone": "+1 (212) 555-0147"})]),
]
PLANTED = ["Chidi", "Okafor", "221B Baker Street", "NW1 6XE", "7700 900123", "chidi.okafor",
           "Siobhán", "O'Sullivan", "Pennsylvania Ave", "20500", "010-4477", "Wei Zhang",
           "Priya", "Raghunathan", "Hauptstraße", "10115", "wei.zhang", "901820", "Fatima",
           "Al-Sayed", "555-0147"]
KEPT = ["replacement charger", "standing desk", "freight", "parcel", "neighbour",
        "warranty claim", "business day", "schedule_call"]


def make_judge(server: ScriptedOpenAIServer, **settings: object) -> LLMJudge:
    llm = LLMJudgingSettings(endpoints=[LLMEndpointSettings(
        name="judge", base_url=server.base_url, model="judge-model", max_retries=0)], **settings)
    return LLMJudge(llm.endpoints[0], llm, Metrics(CollectorRegistry()))


@pytest.mark.integration
async def test_planted_personal_data_never_reaches_the_judge() -> None:
    with ScriptedOpenAIServer(judge_model) as server:
        judge = make_judge(server)
        for turn in PLANTED_TURNS:
            result = await judge.judge(turn)
            assert result.verdicts
        await judge.aclose()
        sent = json.dumps(server.requests, ensure_ascii=False)
    leaked = [value for value in PLANTED if value in sent]
    assert not leaked, f"reached the judge: {leaked}"
    assert all(words in sent for words in KEPT), [w for w in KEPT if w not in sent]
    assert "<PERSON_1>" in sent and "<ADDRESS_1>" in sent and "<PHONE_1>" in sent


@pytest.mark.integration
async def test_without_redaction_the_judge_would_see_them() -> None:
    """The recording endpoint sees what it is sent: the check above can fail."""
    with ScriptedOpenAIServer(judge_model) as server:
        judge = make_judge(server, redact=False)
        await judge.judge(PLANTED_TURNS[0])
        await judge.aclose()
        assert "Chidi Okafor" in json.dumps(server.requests)


@pytest.mark.unit
def test_one_person_is_one_placeholder_in_the_whole_turn() -> None:
    redacted = redact_turn(PLANTED_TURNS[0], Redactor(shared_analyzer(RedactionSettings())))
    assert redacted.question.startswith("Hi, I'm <PERSON_1>.")
    assert "<PERSON_1>" in redacted.documents[0].content
    assert redacted.answer.startswith("Yes, Mr <PERSON_1>:")  # the surname alone: the same person
    # The address, the same placeholder in the question and the answer.
    address = redacted.question.split("go to ")[1].split(" instead")[0]
    assert address.startswith("<ADDRESS_") and address in redacted.answer
    assert "2 business days" in redacted.answer


@pytest.mark.unit
def test_a_placeholder_never_cuts_a_word() -> None:
    # bench/judge_cost.py's turns: the NER model took the product "Aurora X2" for a person, and
    # its name, cut at the digit, became "<PERSON_1>2 router" in the question and "<PERSON_1> X2
    # router" in the document (a scripted judge then matched "2" with "2 points" elsewhere).
    texts = ["Can I return my Aurora X2 router if I'm not happy with it?",
             "Opened products can be returned within 30 days, including the Aurora X2 router."]
    redacted = Redactor(shared_analyzer(RedactionSettings())).many(texts)
    assert [t for t in redacted if re.search(r"\w<[A-Z]+_\d+>|<[A-Z]+_\d+>\w", t)] == []
    question, document = (re.search(r"(\S+) router", t).group(1) for t in redacted)
    assert question == document


@pytest.mark.integration
@pytest.mark.parametrize("turn", [
    AssistantTurn(trace_id="5" * 32, question="Who approved Marta Kowalczyk's refund?",
                  documents=[RetrievedDocument(id="t-1", content=(
                      "Ticket 4410: the refund for Marta Kowalczyk was requested by Marta "
                      "Kowalczyk and approved by Daniel Mensah on 3 May."))],
                  answer="Daniel Mensah approved the refund."),
    AssistantTurn(trace_id="6" * 32, question="Who approved Marta Kowalczyk's refund?",
                  documents=[RetrievedDocument(id="t-1", content=(
                      "Ticket 4410: the refund for Marta Kowalczyk was requested by Marta "
                      "Kowalczyk and approved by Daniel Mensah on 3 May."))],
                  answer="Marta Kowalczyk approved the refund herself."),
    AssistantTurn(trace_id="7" * 32, question="Where does the parcel for Kenji Watanabe go?",
                  documents=[RetrievedDocument(id="o-2", content=(
                      "Parcel for Kenji Watanabe: deliver to 12 Elm Road, Leeds LS6 2AB, "
                      "leave with the neighbour at number 14."))],
                  answer="It goes to 12 Elm Road, Leeds LS6 2AB, Kenji Watanabe's address."),
])
async def test_claim_verdicts_do_not_change_with_redaction(turn: AssistantTurn) -> None:
    """Consistent placeholders keep a claim checkable against its evidence: the scripted LLM
    judge gives each claim the same label on the turn as it came and as it is redacted (the
    distractor, Marta for Daniel, stays a distractor). Only what an LLM judge reads is redacted:
    the local judge reads the turn as it came, and its model was not trained on placeholders."""
    redacted = redact_turn(turn, Redactor(shared_analyzer(RedactionSettings())))
    assert "Kowalczyk" not in redacted.model_dump_json() and "Watanabe" not in \
        redacted.model_dump_json()

    def claim_labels(result):  # noqa: ANN001, ANN202
        grounded = result.get("groundedness")
        return [c.label for c in grounded.claims]

    with ScriptedOpenAIServer(judge_model) as server:
        plain, redacting = make_judge(server, redact=False), make_judge(server)
        assert claim_labels(await redacting.judge(turn)) == claim_labels(await plain.judge(turn))
        await plain.aclose()
        await redacting.aclose()


@pytest.mark.unit
def test_hostile_text_is_redacted_or_left_as_it_is_never_a_crash() -> None:
    redact = Redactor(shared_analyzer(RedactionSettings()))
    assert redact.many(["", None, "   "]) == ["", None, "   "]
    # A lone surrogate (broken UTF-16 in a span attribute) becomes U+FFFD; the rest is redacted.
    broken = redact("Mail jane.doe@example.com \ud800 now")
    assert broken == "Mail <EMAIL_1> \ufffd now"
    json.dumps(broken).encode("utf-8")
    # Other scripts: the English model finds no names there, the patterns still apply.
    other = redact("客户 王伟 的邮箱是 wang.wei@example.cn，电话 +86 138 0013 8000。"
                   " Ответ: Иван Петров, ivan@example.ru. عنوان البريد ahmed@example.eg")
    assert "wang.wei@example.cn" not in other and "ivan@example.ru" not in other
    assert "+86 138 0013 8000" not in other and "ahmed@example.eg" not in other
    assert "客户" in other and "Ответ" in other and "عنوان" in other
    # A megabyte: cut to MAX_CHARS before NER (the judge input limits cut well before).
    huge = redact("Contact grace.liu@example.com. " + "lorem ipsum " * 90_000)
    assert huge.startswith("Contact <EMAIL_") and len(huge) <= 100_000


@pytest.mark.integration
def test_redaction_never_touches_the_network() -> None:
    """The NER model loads from site-packages and Presidio's e-mail check (a public suffix
    list fetched from the internet) is not used: with every connection refused it works."""
    program = (
        "import socket\n"
        "def refuse(*a, **k): raise OSError('network used')\n"
        "socket.socket.connect = refuse\nsocket.create_connection = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "from monitor.config import RedactionSettings\n"
        "from monitor.judges.redact import PiiAnalyzer, Redactor\n"
        "out = Redactor(PiiAnalyzer(RedactionSettings()))("
        "'Grace Liu, grace.liu@example.co.uk, +44 7700 900123')\n"
        "print(out)\n")
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "<PERSON_1>, <EMAIL_1>, <PHONE_1>", done.stdout


@pytest.mark.unit
def test_a_missing_model_or_entity_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="xx_no_such_model.*never downloaded"):
        PiiAnalyzer(RedactionSettings(spacy_model="xx_no_such_model"))
    with pytest.raises(ValidationError, match="entities"):
        RedactionSettings(entities=["PERSON", "SHOE_SIZE"])


@pytest.mark.unit
def test_entity_types_and_threshold_are_configuration() -> None:
    text = "Grace Liu, grace.liu@example.com, lives at 12 Elm Road, Leeds LS6 2AB."
    only_mail = Redactor(PiiAnalyzer(RedactionSettings(entities=["EMAIL_ADDRESS"])))(text)
    assert only_mail == "Grace Liu, <EMAIL_1>, lives at 12 Elm Road, Leeds LS6 2AB."
    nothing = Redactor(PiiAnalyzer(RedactionSettings(score_threshold=1.0,
                                                     entities=["PERSON", "STREET_ADDRESS"])))(text)
    assert nothing == text  # every finding scored below 1.0


@pytest.mark.integration
def test_the_store_keeps_judged_turns_redacted_when_configured(start_sidecar) -> None:  # noqa: ANN001
    sidecar = start_sidecar(store={"redact": True})
    provider = provider_for(sidecar.grpc_endpoint)
    trace_id = traffic.send(provider, traffic.PERSONAL)
    provider.shutdown()
    store = Store(sidecar.sidecar.settings.store.path)
    wait_until(lambda: store.state(trace_id) == "judged", 60, "the turn judged")
    kept = json.dumps(store.show(trace_id), ensure_ascii=False)
    store.close()
    for value in ("Amara", "Nwosu", "Oberkampf", "75011", "4111 1111", "Jonas", "Lindqvist"):
        assert value not in kept, value
    assert "<PERSON_1>" in kept and "<ADDRESS_1>" in kept and "<CARD_1>" in kept
    assert "5 business days" in kept and '"groundedness"' in kept
    # The invented approver is an unsupported claim, quoted by placeholder.
    assert "<PERSON_2> approved it." in kept


@pytest.mark.unit
def test_every_entity_the_configuration_accepts_is_one_the_redactor_knows() -> None:
    assert set(get_args(PiiEntity)) == set(TAGS)
    for entity in get_args(PiiEntity):  # each loads: its recogniser exists
        assert PiiAnalyzer(RedactionSettings(entities=[entity])).find("x") == []


# Texts like the ones a blind labelled set (bench/data/pii_fresh.jsonl, dev split) showed
# reaching the judge, and words around them that must stay.
@pytest.mark.unit
@pytest.mark.parametrize(("texts", "hidden", "kept"), [
    # a name in lower case in the chat, the same person as the document's
    (["Interview loop: Candidate Kiprono Cheruiyot, 09:30 intro call with June Hallett.",
      "who's interviewing kiprono on friday and can june move the intro to 10?"],
     ["kiprono", "june move"], ["interviewing", "friday"]),
    # introduced in lower case, or signing a lower-case message
    (["hi can i get a repeat of my sertraline 50mg. name's sam ochieng, dob 14/11/1993"],
     ["sam", "ochieng"], ["sertraline"]),
    (["parcel 2245871930214 says delivery failed but i was home all day?? anne-sophie"],
     ["anne-sophie"], ["delivery failed"]),
    # an address in lower case; "2 dogs in the park" is none
    (["this is frank from flat 3, 9 belmont street, aberdeen ab10 1jr. i walk 2 dogs in the park"],
     ["frank", "belmont", "ab10"], ["2 dogs in the park"]),
    (["Once you've moved into Apartment 12, The Maltings, Bow Street, Dublin 7, we can add you."],
     ["Maltings", "Bow Street", "Dublin 7"], ["moved into"]),
    # a French mobile: one digit after the country code
    (["Tel. consignee: +33 6 39 98 12 47"], ["39 98 12 47"], ["consignee"]),
    # businesses, stations, towns, months and field labels are not people
    (["A charge from Skyview Travel; trains from Amsterdam Centraal to Paris Nord; "
      "references from Lumen Analytics. Only work with Samsung phones.",
      "Subject: Damaged pallets, Felixstowe, 30 April\nReason: switched banks.\n"
      "05 Mar  Transfer from savings  £200.00"],
     [], ["Skyview Travel", "Amsterdam Centraal", "Paris Nord", "Lumen Analytics", "Samsung",
          "Felixstowe", "Reason:", "05 Mar"]),
    # references, prices and a date with its hour are no phone numbers; a contact's number is
    (["Policy number 923 456 781, ref 2025-001874, paid 1380.00 on 22.05.2024 15:40. "
      "Contact number: 0161 496 0733."], ["0161 496 0733"],
     ["923 456 781", "2025-001874", "1380.00", "22.05.2024 15:40"]),
    # a town the NER model sees as one is no person, even where it is also a given name
    (["Flights from Leeds to Paris on Friday: Ms Grace Adeyemi and Mr Tom Ward."],
     ["Adeyemi", "Tom Ward"], ["from Leeds to Paris on Friday"]),
    # a date with its hour is no phone number; greetings in other languages are no people
    (["Olá! Kia ora! Logged 2025-04-02 17:05 by Ngaio Whaanga."], ["Whaanga"],
     ["Olá", "Kia ora", "2025-04-02 17:05"]),
    # a verb opening a sentence is no person; a name opening one is
    (["Bill me monthly instead. Mark left the company in March."], ["Mark"], ["Bill me"]),
    # text in another language: its nouns are no people, its people are
    (["Ein Abholcode wurde per E-Mail geschickt; du hast 7 Tage Zeit. Die Kaution wurde "
      "heute an Frau Schmitt überwiesen."], ["Schmitt"], ["Ein Abholcode wurde"]),
    # a chat log's speaker by handle
    (["[09:12] yui.takahashi: rolled checkout to 2.18.0\nzhang.wei: seeing 401s from the API"],
     ["zhang.wei", "yui.takahashi"], ["seeing 401s"]),
    # a French CEDEX, a Montréal address over two lines
    (["Service Clients, TSA 20012, 41975 Blois Cedex 9. Vous pouvez aussi nous joindre.",
      "Adresse : 2190, rue Sainte-Catherine Ouest, app. 705\nMontréal (Québec) H3H 1M6\nTél."],
     ["20012", "Blois", "Cedex 9", "Sainte-Catherine", "705", "H3H"], ["Vous pouvez"]),
])
def test_what_a_blind_labelled_set_found_missing(texts: list[str], hidden: list[str],
                                                 kept: list[str]) -> None:
    redacted = " | ".join(Redactor(shared_analyzer(RedactionSettings())).many(texts))
    assert [value for value in hidden if value in redacted] == []
    assert [words for words in kept if words not in redacted] == []
