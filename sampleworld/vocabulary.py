"""The invented names and wordings the sample world is written with. Countries pair an invented
name with a real ISO 3166-1 alpha-3 code, used only as a neutral identifier (relation questions and
structured events must carry valid codes)."""

from __future__ import annotations

import random
from collections.abc import Callable

# Invented names. Countries pair an invented name with a real alpha-3 code (a neutral identifier).
COUNTRIES = (
    ("Arvenia", "ISL"),
    ("Belmora", "URY"),
    ("Castrel", "FJI"),
    ("Dovania", "NZL"),
    ("Elsmark", "MLT"),
    ("Ferrona", "LUX"),
    ("Galdria", "EST"),
    ("Hespera", "BWA"),
)
COMPANY_STEMS = [
    "Halvard",
    "Corvane",
    "Lumora",
    "Tessaly",
    "Quillon",
    "Vantor",
    "Orrin",
    "Kestrel",
    "Maribel",
    "Dunmore",
    "Pellucid",
    "Ardent",
    "Solenne",
    "Grayhaven",
    "Wrenfield",
    "Osmara",
    "Calloway",
    "Brisk",
    "Tamsin",
    "Everin",
]
COMPANY_TRADES = ("Motors", "Foods", "Aerospace", "Energy", "Rail", "Pharma", "Mining", "Telecom", "Steel", "Systems")
FIRST_NAMES = [
    "Mara",
    "Tomas",
    "Ilse",
    "Joren",
    "Anika",
    "Dario",
    "Lena",
    "Piet",
    "Sefa",
    "Rhea",
    "Oskar",
    "Nadia",
    "Kaito",
    "Yelena",
    "Bram",
    "Ottilie",
]
LAST_NAMES = [
    "Reyvik",
    "Varga",
    "Pell",
    "Solberg",
    "Menz",
    "Haruki",
    "Castellan",
    "Wendt",
    "Ferro",
    "Idowu",
    "Lindqvist",
    "Marsh",
    "Okafor",
    "Brandt",
]
CITIES = [
    "Port Calder",
    "Velmont",
    "Ashby Cross",
    "Saltmere",
    "Orvale",
    "Kilbride",
    "Norrhaven",
    "Tarrow",
    "Emberly",
    "Quayside",
]
OUTLETS = (
    ("meridian-ledger", "The Meridian Ledger (fictional)", "rss"),
    ("harbor-wire", "Harbor Wire (fictional)", "atom"),
    ("northgate-courier", "Northgate Courier (fictional)", "rss"),
    ("orbis-daily", "Orbis Daily (fictional)", "atom"),
    ("tidewater-times", "Tidewater Times (fictional)", "rss"),
)
HEADLINE_STYLES: tuple[Callable[[str], str], ...] = (
    lambda h: h,
    lambda h: f"{h}, sources say",
    lambda h: f"Update: {h}",
    lambda h: f"{h} - analysis",
    lambda h: f"Breaking: {h}",
)
COOPERATIVE_CODES = ("036", "042", "043", "046", "051", "057", "061", "071")
CONFLICT_CODES = ("111", "112", "128", "130", "138", "163", "173")
CAMEO_PHRASES = {
    "036": "{s} says it is ready to negotiate with {o}",
    "042": "{s} foreign minister visits {o}",
    "043": "{s} hosts delegation from {o}",
    "046": "{s} and {o} hold talks on river water sharing",
    "051": "{s} praises {o} cooperation on border crossings",
    "057": "{s} signs water-sharing accord with {o}",
    "061": "{s} and {o} launch joint port investment",
    "071": "{s} provides drought aid to {o}",
    "111": "{s} denounces {o} dam plans",
    "112": "{s} accuses {o} of diverting river water",
    "128": "{s} defies {o} demand to halt dam works",
    "130": "{s} threatens {o} over river dispute",
    "138": "{s} threatens military response to {o} dam",
    "163": "{s} imposes trade sanctions on {o}",
    "173": "{s} detains {o} engineers near border",
}


class Names:
    """Draws invented names without repeating them within one world."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.companies = [f"{s} {t}" for s in COMPANY_STEMS for t in COMPANY_TRADES]
        rng.shuffle(self.companies)
        self.people = [f"{f} {last}" for f in FIRST_NAMES for last in LAST_NAMES]
        rng.shuffle(self.people)
        self.countries = list(COUNTRIES)
        rng.shuffle(self.countries)
        self.country_pairs = [(a, b) for a in COUNTRIES for b in COUNTRIES if a != b]
        rng.shuffle(self.country_pairs)
        self.cities = list(CITIES)
        self.used_stems: set[str] = set()

    def company(self) -> str:
        # One company per stem, so two storylines never share a distinctive word.
        while True:
            name = self.companies.pop()
            stem = name.split()[0]
            if stem not in self.used_stems or not self.companies:
                self.used_stems.add(stem)
                return name

    def person(self) -> str:
        return self.people.pop()

    def country(self) -> tuple[str, str]:
        if not self.countries:
            self.countries = list(COUNTRIES)
            self.rng.shuffle(self.countries)
        return self.countries.pop()

    def country_pair(self) -> tuple[tuple[str, str], tuple[str, str]]:
        return self.country_pairs.pop()

    def city(self) -> str:
        return self.rng.choice(self.cities)
