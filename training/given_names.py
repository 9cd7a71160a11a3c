"""Write the given-name list the redactor uses (monitor/judges/data/given_names.txt).

    pip install 'faker==40.63.0' && python training/given_names.py

The given names of every Faker locale written in Latin script (Faker's person providers, MIT
licence): about 21,000 names of many origins. The redactor takes a word for a person's name when
it is on this list and the tagger calls it a proper noun, or when a capitalised word follows it
(a surname): the NER model alone misses names that are also words ("Summer", "Will", "Penny").
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import faker.providers.person as person

OUT = Path(__file__).resolve().parents[1] / "monitor/judges/data/given_names.txt"
LATIN = re.compile(r"^[A-Za-zÀ-ÖØ-öø-ÿĀ-žḀ-ỿ'’-]+$")
FIELDS = ("first_names", "first_names_male", "first_names_female", "first_names_nonbinary",
          "first_romanized_names", "first_romanized_names_male", "first_romanized_names_female")


def given_names() -> set[str]:
    names = set()
    for module in pkgutil.iter_modules(person.__path__):
        provider = getattr(importlib.import_module(f"{person.__name__}.{module.name}"),
                           "Provider", None)
        for field in FIELDS if provider else ():
            # Read the class attribute itself: some locales define these as properties.
            values = next((cls.__dict__[field] for cls in provider.__mro__
                           if field in cls.__dict__), None)
            if isinstance(values, (list, tuple, dict)):
                names.update(n.strip() for n in values
                             if len(n.strip()) > 1 and LATIN.match(n.strip()) and n[0].isupper())
    return names


def main() -> None:
    names = sorted(given_names())
    OUT.write_text("".join(f"{n}\n" for n in names), encoding="utf-8")
    print(f"{len(names)} given names -> {OUT}")


if __name__ == "__main__":
    main()
