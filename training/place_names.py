"""Write the place-name list the redactor uses (monitor/judges/data/place_names.txt).

    python training/place_names.py      # phonenumbers (a dependency already) holds the data

The English names of the towns, cities and regions that phonenumbers' geocoder gives telephone
area codes (libphonenumber's data, Apache-2.0 licence): some 36,000 places of many countries.
The NER model takes a lone place name for a person now and then ("Felixstowe", "Chandigarh");
the redactor drops such a finding where no given name, title or rule of its own backs it.
"""

from __future__ import annotations

import re
from pathlib import Path

from phonenumbers.geodata import GEOCODE_DATA

OUT = Path(__file__).resolve().parents[1] / "monitor/judges/data/place_names.txt"
LATIN = re.compile(r"^[A-ZÀ-ÖØ-Þ][A-Za-zÀ-ÖØ-öø-ÿĀ-žḀ-ỿ'’. -]+$")


def place_names() -> set[str]:
    names = set()
    for languages in GEOCODE_DATA.values():
        for part in re.split(r",\s*|\s+/\s+", languages.get("en", "")):
            part = part.strip()
            if len(part) > 2 and LATIN.match(part):
                names.add(part)
    return names


def main() -> None:
    names = sorted(place_names())
    OUT.write_text("".join(f"{n}\n" for n in names), encoding="utf-8")
    print(f"{len(names)} place names -> {OUT}")


if __name__ == "__main__":
    main()
