"""Write the word lists the redactor uses (monitor/judges/data/).

    pip install 'faker==40.63.0' && python training/word_lists.py

- given_names.txt: the given names of every Faker locale written in Latin script (Faker's
  person providers, MIT licence): about 21,000 names of many origins. The redactor takes a word
  for a person's name when it is on this list and the tagger calls it a proper noun, or when a
  capitalised word follows it (a surname): the NER model alone misses names that are also words
  ("Summer", "Will", "Penny").
- place_names.txt: the English names of the towns, cities and regions that phonenumbers'
  geocoder gives telephone area codes (libphonenumber's data, Apache-2.0 licence): some 34,600
  places of many countries. The NER model takes a lone place name for a person now and then
  ("Felixstowe", "Chandigarh"); the redactor drops such a finding where no given name, title or
  rule of its own backs it.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import faker.providers.person as person
from phonenumbers.geodata import GEOCODE_DATA

DATA = Path(__file__).resolve().parents[1] / "monitor/judges/data"
LATIN = re.compile(r"^[A-Za-zÀ-ÖØ-öø-ÿĀ-žḀ-ỿ'’-]+$")
PLACE = re.compile(r"^[A-ZÀ-ÖØ-Þ][A-Za-zÀ-ÖØ-öø-ÿĀ-žḀ-ỿ'’. -]+$")
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


def place_names() -> set[str]:
    names = set()
    for languages in GEOCODE_DATA.values():
        for part in re.split(r",\s*|\s+/\s+", languages.get("en", "")):
            part = part.strip()
            if len(part) > 2 and PLACE.match(part):
                names.add(part)
    return names


def main() -> None:
    for name, words in (("given_names", given_names()), ("place_names", place_names())):
        target = DATA / f"{name}.txt"
        target.write_text("".join(f"{w}\n" for w in sorted(words)), encoding="utf-8")
        print(f"{len(words)} {name.replace('_', ' ')} -> {target}")


if __name__ == "__main__":
    main()
