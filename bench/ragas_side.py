"""RAGAS side of the judge-cost benchmark: LLM calls and tokens RAGAS spends per judged RAG turn.

RAGAS is NOT a dependency of this project; run this in a separate virtualenv (ragas 0.4.3 does
not import with langchain-community 0.4.2, hence the pin):

    python3 -m venv /tmp/ragas-venv
    /tmp/ragas-venv/bin/pip install ragas aiohttp "langchain-community<0.4.2"
    /tmp/ragas-venv/bin/python bench/ragas_side.py [--turns 50] [--legacy]

Metrics: Faithfulness, AnswerRelevancy (strictness 3, with embeddings) and the reference-free
ContextPrecisionWithoutReference from ragas.metrics.collections (the current API); --legacy runs
ragas.evaluate() with the deprecated Faithfulness, ResponseRelevancy and
LLMContextPrecisionWithoutReference instead. Every LLM and embedding call goes to a local
RecordingLLM (bench/recording_llm.py), which fakes schema-valid JSON and counts calls and tokens
(ceil(len/4)); nothing leaves 127.0.0.1. Imports nothing from monitor/.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # no usage analytics
os.environ["OPENAI_API_KEY"] = "unused"

from recording_llm import RecordingLLM  # noqa: E402

METRICS = ("faithfulness", "answer_relevancy", "context_precision")


def ragas_costs(turns: list[dict], base_url: str, metrics: tuple[str, ...] = METRICS,
                legacy: bool = False, concurrency: int = 8) -> dict[str, list[float]]:
    """Run RAGAS metrics on `turns` ({"question", "contexts", "answer"}) against the
    OpenAI-compatible server at `base_url`; returns each metric's scores, one per turn.
    Calls and tokens are read from the server, not from here."""
    os.environ["OPENAI_BASE_URL"] = base_url  # belt and braces: every client below sets it too
    if legacy:
        return _legacy_costs(turns, base_url, metrics)
    from openai import AsyncOpenAI
    from ragas.embeddings.base import embedding_factory
    from ragas.llms.base import llm_factory
    from ragas.metrics.collections import AnswerRelevancy, ContextPrecisionWithoutReference, Faithfulness

    client = AsyncOpenAI(base_url=base_url, api_key="unused", max_retries=0)
    llm = llm_factory("gpt-4o-mini", client=client)
    embeddings = embedding_factory("openai", model="text-embedding-3-small", client=client)
    scorers = {
        "faithfulness": (Faithfulness(llm=llm), lambda t: dict(
            user_input=t["question"], response=t["answer"], retrieved_contexts=t["contexts"])),
        "answer_relevancy": (AnswerRelevancy(llm=llm, embeddings=embeddings), lambda t: dict(
            user_input=t["question"], response=t["answer"])),
        "context_precision": (ContextPrecisionWithoutReference(llm=llm), lambda t: dict(
            user_input=t["question"], response=t["answer"], retrieved_contexts=t["contexts"])),
    }

    async def run() -> dict[str, list[float]]:
        gate = asyncio.Semaphore(concurrency)

        async def one(metric, args) -> float:
            async with gate:
                return float((await metric.ascore(**args)).value)

        results = {}
        for name in metrics:
            metric, args = scorers[name]
            results[name] = list(await asyncio.gather(*(one(metric, args(t)) for t in turns)))
        await client.close()
        return results

    return asyncio.run(run())


def _legacy_costs(turns: list[dict], base_url: str, metrics: tuple[str, ...]
                  ) -> dict[str, list[float]]:
    """The same through ragas.evaluate() and the deprecated pre-0.4 metric classes
    (LLMContextPrecisionWithoutReference), with LangChain OpenAI clients."""
    import httpx
    from langchain_openai import ChatOpenAI, OpenAIEmbeddings
    from ragas import EvaluationDataset, evaluate
    from ragas.embeddings import LangchainEmbeddingsWrapper
    from ragas.llms import LangchainLLMWrapper
    warnings.filterwarnings("ignore", category=DeprecationWarning)  # this API is deprecated
    from ragas.metrics import Faithfulness, LLMContextPrecisionWithoutReference, ResponseRelevancy
    classes = {"faithfulness": Faithfulness, "answer_relevancy": ResponseRelevancy,
               "context_precision": LLMContextPrecisionWithoutReference}
    # fresh httpx clients: evaluate() runs its own event loop, LangChain's shared one outlives it
    common = lambda: dict(base_url=base_url, api_key="unused", max_retries=0,  # noqa: E731
                          http_async_client=httpx.AsyncClient())
    llm = LangchainLLMWrapper(ChatOpenAI(model="gpt-4o-mini", **common()))
    embeddings = LangchainEmbeddingsWrapper(OpenAIEmbeddings(
        model="text-embedding-3-small", check_embedding_ctx_length=False, **common()))  # no tiktoken
    data = EvaluationDataset.from_list([{"user_input": t["question"], "response": t["answer"],
                                         "retrieved_contexts": t["contexts"]} for t in turns])
    chosen = {name: classes[name]() for name in metrics}
    result = evaluate(data, metrics=list(chosen.values()), llm=llm, embeddings=embeddings,
                      show_progress=False, raise_exceptions=True)
    return {name: [float(v) for v in result[m.name]] for name, m in chosen.items()}


# --------------------------------------------------------------------------- synthetic turns
PRODUCTS = ["Aurora X2 router", "Nimbus 14 laptop", "Pulse smart watch", "Vega soundbar",
            "Orbit robot vacuum"]
TOPICS = [  # (question, relevant passages, answer) -- {p} is the product
    ("How do I reset my {p} to factory settings?",
     ["To factory-reset the {p}, hold the recessed reset button for 10 seconds until the status "
      "light blinks amber, then wait about two minutes for it to restart.",
      "A factory reset erases all custom settings, paired devices and saved networks on the {p}. "
      "Back up your configuration from the companion app first."],
     "Hold the reset button on your {p} for 10 seconds until the light blinks amber, then let it "
     "restart for about two minutes. Note that this erases all custom settings and paired "
     "devices, so back up your configuration in the app first."),
    ("What does the warranty on the {p} cover?",
     ["The {p} comes with a two-year limited warranty covering manufacturing defects in materials "
      "and workmanship under normal use.",
      "The warranty does not cover accidental damage, water damage, or batteries after 12 months. "
      "Proof of purchase is required for all claims."],
     "Your {p} has a two-year limited warranty against manufacturing defects. It does not cover "
     "accidental or water damage, and batteries are covered for 12 months only. You will need "
     "your proof of purchase to file a claim."),
    ("Can I return my {p} if I'm not happy with it?",
     ["Unopened or opened products bought directly from our store can be returned within 30 days "
      "of delivery for a full refund, including the {p}.",
      "Returns must include all original accessories and packaging. Refunds are issued to the "
      "original payment method within 5-7 business days after we receive the item."],
     "Yes, you can return the {p} within 30 days of delivery for a full refund. Please include "
     "all original accessories and packaging. The refund goes back to your original payment "
     "method within 5-7 business days of us receiving it."),
    ("Why won't my {p} connect to Wi-Fi?",
     ["If the {p} cannot join your network, check that it is on the 2.4 GHz band; some older "
      "firmware versions do not support 5 GHz-only networks.",
      "Updating the {p} firmware to version 3.2 or later resolves most Wi-Fi connection drops. "
      "Updates can be installed from Settings > System > Update.",
      "Passwords containing non-ASCII characters are not supported during setup of the {p}."],
     "First make sure your network offers a 2.4 GHz band, since older {p} firmware cannot join "
     "5 GHz-only networks. Then update the firmware to version 3.2 or later from Settings > "
     "System > Update, which fixes most connection drops."),
    ("How long does shipping take for the {p}?",
     ["Standard shipping for the {p} takes 3-5 business days within the continental US and is "
      "free on orders over $50.",
      "Express shipping delivers in 1-2 business days for a flat fee of $14.99. Orders placed "
      "after 2 pm ship the next business day."],
     "Standard shipping takes 3-5 business days and is free on orders over $50. If you need it "
     "sooner, express shipping arrives in 1-2 business days for $14.99."),
]
DISTRACTORS = [
    "Our support team is available 24/7 via live chat and by phone from 8 am to 8 pm ET.",
    "Gift cards cannot be redeemed for cash and do not expire.",
    "Student discounts of 10% are available with a valid .edu email address.",
    "The companion app is available for iOS 15+ and Android 10+.",
    "Trade-in credit is issued as store credit after the device passes inspection.",
    "Loyalty members earn 2 points per dollar spent, redeemable on future orders.",
]


def make_turns(n: int = 50, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    turns = []
    for i in range(n):
        question, passages, answer = TOPICS[i % len(TOPICS)]
        p = PRODUCTS[(i // len(TOPICS)) % len(PRODUCTS)]
        contexts = [c.format(p=p) for c in passages]
        contexts += rng.sample(DISTRACTORS, rng.randint(max(0, 3 - len(contexts)),
                                                         5 - len(contexts)))
        rng.shuffle(contexts)
        turns.append({"question": question.format(p=p), "contexts": contexts,
                      "answer": _variant(i, answer.format(p=p), p)})
    return turns


def _variant(i: int, answer: str, product: str) -> str:
    """Seven answers in ten as written; the others as assistants fail: with a fact the
    documents lack, declining, or answering another question."""
    if i % 10 == 3:
        return f"{answer} The {product} also comes with a free carrying case and lifetime premium membership."
    if i % 10 == 6:
        return "I'm sorry, I could not find information about that in our documentation."
    if i % 10 == 9:
        return "Gift cards can be bought online in amounts from $10 to $500 and are delivered by email."
    return answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--legacy", action="store_true",
                        help="ragas.evaluate() with the deprecated pre-0.4 metric classes")
    args = parser.parse_args()
    import ragas

    turns = make_turns(args.turns)
    n = len(turns)
    variant = ("LLMContextPrecisionWithoutReference (legacy ragas.evaluate)" if args.legacy else
               "ContextPrecisionWithoutReference (ragas.metrics.collections)")
    print(f"ragas {ragas.__version__}; {n} turns; context precision: {variant}")
    header = f"{'metric':<20}{'LLM calls':>10}{'prompt tok':>12}{'compl. tok':>12}" \
             f"{'emb calls':>11}{'emb tok':>9}{'mean score':>12}{'NaN':>5}"
    print("per turn:\n" + header)
    total = {"calls": 0, "prompt": 0, "completion": 0, "emb": 0, "emb_tok": 0}
    with RecordingLLM() as llm:
        for metric in METRICS:
            llm.reset()
            scores = ragas_costs(turns, llm.base_url, (metric,), args.legacy)[metric]
            row = {"calls": llm.calls("chat"), "prompt": llm.tokens("chat")["prompt_tokens"],
                   "completion": llm.tokens("chat")["completion_tokens"],
                   "emb": llm.calls("embeddings"),
                   "emb_tok": llm.tokens("embeddings")["prompt_tokens"]}
            for key in total:
                total[key] += row[key]
            nan = sum(math.isnan(s) for s in scores)
            mean = sum(s for s in scores if not math.isnan(s)) / max(1, n - nan)
            print(f"{metric:<20}{row['calls'] / n:>10.2f}{row['prompt'] / n:>12.1f}"
                  f"{row['completion'] / n:>12.1f}{row['emb'] / n:>11.2f}"
                  f"{row['emb_tok'] / n:>9.1f}{mean:>12.3f}{nan:>5}")
    print(f"{'total':<20}{total['calls'] / n:>10.2f}{total['prompt'] / n:>12.1f}"
          f"{total['completion'] / n:>12.1f}{total['emb'] / n:>11.2f}{total['emb_tok'] / n:>9.1f}")


if __name__ == "__main__":
    main()
