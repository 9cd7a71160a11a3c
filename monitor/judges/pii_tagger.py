"""The PII tagger: which characters of a text are a person's name or a street address.

MiniLM-L6 (sentence-transformers' all-MiniLM-L6-v2, Apache-2.0) fine-tuned to tag each token
(BIO: person, address, neither) by training/pii_tagger/ on texts built from Faker's names and
address formats of some fifty countries and on the hand-written labelled sets' dev records,
exported to int8 ONNX. It runs on onnxruntime with the `tokenizers` tokenizer; nothing is
downloaded: the weights ship in models/. The redactor adds what it finds to the NER model's and
its rules' findings (monitor/judges/redact.py).

    PiiTagger().spans("hi its valentina, new address 22 maple crescent")
    # [(7, 16, 'PERSON'), (30, 48, 'ADDRESS')]
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from monitor.judges.embeddings import MODELS, session

WINDOW = 126  # tokens a run, [CLS] and [SEP] aside: the model was trained on 128
STRIDE = 96  # windows overlap by 30 tokens, so a value cut by one is whole in the next


class PiiTagger:
    def __init__(self, card: Path = MODELS / "pii_tagger.json", threads: int = 1) -> None:
        from tokenizers import Tokenizer

        self.card = json.loads(card.read_text())
        self.labels: list[str] = self.card["labels"]
        self._session = session(card.parent / self.card["file"], threads)
        self._tokenizer = Tokenizer.from_file(str(card.parent / self.card["tokenizer"]))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self._cls = self._tokenizer.token_to_id("[CLS]")
        self._sep = self._tokenizer.token_to_id("[SEP]")

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, "PERSON" | "ADDRESS") of each value, by character."""
        encoding = self._tokenizer.encode(text, add_special_tokens=False)
        ids, offsets = encoding.ids, encoding.offsets
        if not ids:
            return []
        sums = np.zeros((len(ids), len(self.labels)), dtype=np.float32)
        counts = np.zeros(len(ids), dtype=np.float32)
        # One window a run: int8 dynamic quantisation scales activations over the whole batch.
        for start in range(0, max(len(ids) - WINDOW, 0) + STRIDE, STRIDE):
            chunk = ids[start:start + WINDOW]
            window = np.array([[self._cls, *chunk, self._sep]], dtype=np.int64)
            logits = self._session.run(None, {
                "input_ids": window, "attention_mask": np.ones_like(window),
                "token_type_ids": np.zeros_like(window)})[0][0, 1:-1]
            sums[start:start + len(chunk)] += logits
            counts[start:start + len(chunk)] += 1
            if start + WINDOW >= len(ids):
                break
        tags = [self.labels[i] for i in (sums / counts[:, None]).argmax(axis=1)]
        # Words (touching tokens: "Con ##sign ##ee", "Adebayo-Okafor") take their first token's
        # tag, as the model was trained (a value starts and ends with a word).
        words: list[tuple[int, int, str]] = []
        for tag, (a, b) in zip(tags, offsets, strict=True):
            if words and words[-1][1] == a:
                words[-1] = (words[-1][0], b, words[-1][2])
            else:
                words.append((a, b, tag))
        out: list[tuple[int, int, str]] = []
        for a, b, tag in words:
            if tag == "O":
                continue
            kind = tag[2:]
            if tag.startswith("I-") and out and out[-1][2] == kind \
                    and not text[out[-1][1]:a].strip(" ,\n"):
                out[-1] = (out[-1][0], b, kind)
            else:
                out.append((a, b, kind))
        # without the punctuation around it: "12 Elm Road, Leeds LS6 2AB," is the address
        # "12 Elm Road, Leeds LS6 2AB" elsewhere in the turn, one placeholder for both
        trimmed = []
        for a, b, kind in out:
            value = text[a:b]
            a += len(value) - len(value.lstrip(_EDGES))
            b -= len(value) - len(value.rstrip(_EDGES))
            if b > a:
                trimmed.append((a, b, kind))
        return trimmed


_EDGES = " \t\n,;:.-–—()[]\"'"
