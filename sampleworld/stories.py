"""The storylines of the sample world, one method per kind (the outcome rule of each is in
``sampleworld.generator``'s docstring), and the build of a whole world from them."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

from sampleworld.beats import (
    bridge_beats,
    election_beats,
    launch_beats,
    merger_beats,
    production_beats,
    summit_beats,
)
from sampleworld.builder import WorldBuilder
from sampleworld.vocabulary import CAMEO_PHRASES, CONFLICT_CODES, COOPERATIVE_CODES
from sampleworld.world import (
    EXTRA_LIVE_KINDS,
    LIVE_MARKET_KINDS,
    REPLAY_KINDS,
    Actor,
    Direction,
    HiddenEvent,
    Storyline,
    World,
    midnight,
    noon,
)


class StorylineBuilder(WorldBuilder):
    """Adds storylines of each kind to the world being built, then builds it."""

    def add(self, kind: str, track: str, platform: str, index: int) -> None:
        self.counter += 1
        key = f"{kind}-{track}-{self.counter:02d}"
        first, span = self._window(track, index)
        getattr(self, f"_story_{kind}")(key, track, platform, first, span)

    def _finish_binary(
        self,
        key: str,
        track: str,
        platform: str,
        events: list[HiddenEvent],
        outcome_titles: tuple[str, str],
        title: str,
        criteria: str,
        background: str,
        domain: str,
        actors: dict[str, Actor],
        outcome_day: date,
        market_title: str,
    ) -> None:
        pressure = sum(e.sign * e.magnitude * e.confidence for e in events)
        outcome = pressure > 0
        o_title = outcome_titles[0] if outcome else outcome_titles[1]
        events.append(
            HiddenEvent(
                key=f"{key}-outcome",
                title=o_title,
                description=f"{o_title}.",
                day=outcome_day,
                event_type="Outcome",
                direction="Positive" if outcome else "Negative",
                magnitude=1.0,
                confidence=1.0,
                is_outcome=True,
            )
        )
        resolved_at = noon(outcome_day) + timedelta(hours=2)
        open_at = midnight(events[0].day)
        q = self._common(key, track, title, "binary", domain, criteria, background, open_at, resolved_at)
        kind = key.split("-")[0]
        story = Storyline(key, kind, track, platform, actors, events, self._links(events), outcome, q, resolved_at)
        story.explanation = f"Causal pressure {pressure:+.2f}: " + ("yes." if outcome else "no.")
        if platform:
            story.market = self._market(story, market_title, ["Yes", "No"])
        self.storylines.append(story)

    def _story_merger(self, key: str, track: str, platform: str, first: date, span: int) -> None:
        a, b, rival = self.names.company(), self.names.company(), self.names.company()
        country, _ = self.names.country()
        reg = f"{country} Competition Bureau"
        ceo = self.names.person()
        beats = merger_beats(a, b, reg, rival, ceo)
        days = self._days(first, len(beats) + 1, span)
        bias = self.rng.choice((0.3, 0.7))
        events = self._binary_events(key, beats, days[:-1], bias)
        actors = {
            "acquirer": Actor("acquirer", a, "company"),
            "target": Actor("target", b, "company"),
            "regulator": Actor("regulator", reg, "organisation"),
            "rival": Actor("rival", rival, "company"),
            "ceo": Actor("ceo", ceo, "person"),
        }
        deadline = days[-1] + timedelta(days=3)
        self._finish_binary(
            key,
            track,
            platform,
            events,
            (f"{reg} approves {a} takeover of {b}", f"{reg} blocks {a} takeover of {b}"),
            f"Will the {reg} approve {a}'s takeover of {b} by {deadline:%d %B %Y}?",
            f"Yes if the {reg} clears the takeover of {b} by {a} (with or without remedies) by "
            f"{deadline:%d %B %Y}; no if it blocks it or has not decided by then.",
            f"{a} agreed to buy {b}. Competition authorities in {country} must clear the deal.",
            "business",
            actors,
            days[-1],
            f"{reg} approves {a}-{b} merger?",
        )

    def _story_launch(self, key: str, track: str, platform: str, first: date, span: int) -> None:
        a = self.names.company()
        craft = self.rng.choice(("Skylark", "Heron", "Aurora", "Kite", "Meridian", "Lyra")) + f"-{self.counter}"
        site = self.names.city()
        engineer = self.names.person()
        beats = launch_beats(a, craft, site, engineer)
        days = self._days(first, len(beats) + 1, span)
        events = self._binary_events(key, beats, days[:-1], self.rng.choice((0.3, 0.7)))
        actors = {"company": Actor("company", a, "company"), "engineer": Actor("engineer", engineer, "person")}
        deadline = days[-1] + timedelta(days=3)
        self._finish_binary(
            key,
            track,
            platform,
            events,
            (f"{a} launches {craft} satellite from {site}", f"{a} scrubs {craft} launch from {site}"),
            f"Will {a} launch the {craft} satellite from {site} by {deadline:%d %B %Y}?",
            f"Yes if {craft} lifts off from {site} by {deadline:%d %B %Y}; no otherwise.",
            f"{a} is preparing its {craft} satellite for launch from {site}.",
            "science",
            actors,
            days[-1],
            f"{a} launches {craft} by {deadline:%d %b %Y}?",
        )

    def _story_election(self, key: str, track: str, platform: str, first: date, span: int) -> None:
        country, code = self.names.country()
        cands = [self.names.person() for _ in range(3)]
        party = self.rng.choice(("the Green Alliance", "the Civic Union", "the Farmers' League", "the Liberal Front"))
        city = self.names.city()
        templates = election_beats(country, cands, party, city)
        days = self._days(first, len(templates) + 1, span)
        favourite = self.rng.randrange(3)
        support = dict.fromkeys(cands, 0.0)
        events: list[HiddenEvent] = []
        for i, ((tpl, desc, etype, sign), day) in enumerate(zip(templates, days[:-1], strict=False)):
            weights = [3.0 if j == favourite else 1.0 for j in range(3)]
            if sign < 0:
                weights = [1.0 if j == favourite else 2.0 for j in range(3)]
            cand = self.rng.choices(cands, weights=weights)[0]
            m, c = self._mag(), self._conf()
            support[cand] += sign * m * c
            title = tpl.format(c=cand)
            events.append(
                HiddenEvent(
                    f"{key}-e{i + 1:02d}",
                    title,
                    f"{title}. {desc}",
                    day,
                    etype,
                    "Neutral",
                    m,
                    c,
                    target=f"{cand}:{sign}",
                )
            )
        winner = max(cands, key=lambda c: (support[c], -cands.index(c)))
        # Direction toward the resolved outcome: helping the winner or hurting a rival is Positive.
        resolved: list[HiddenEvent] = []
        for e in events:
            name, direction_sign = e.target.rsplit(":", 1)
            helps = (name == winner) == (int(direction_sign) > 0)
            resolved.append(_replace_direction(e, "Positive" if helps else "Negative"))
        o_title = f"{winner} wins {country} presidential election"
        resolved.append(
            HiddenEvent(
                f"{key}-outcome", o_title, f"{o_title}.", days[-1], "Outcome", "Positive", 1.0, 1.0, is_outcome=True
            )
        )
        resolved_at = noon(days[-1]) + timedelta(hours=6)
        q = self._common(
            key,
            track,
            f"Who will win the {country} presidential election on {days[-1]:%d %B %Y}?",
            "multiple_choice",
            "politics",
            f"Resolves to the candidate declared winner of the {country} presidential election.",
            f"Three candidates run for president of {country}: {', '.join(cands)}.",
            midnight(days[0]),
            resolved_at,
        )
        q["options"] = list(cands)
        actors = {
            "country": Actor("country", country, "country", code),
            **{f"c{i}": Actor(f"c{i}", c, "person") for i, c in enumerate(cands)},
        }
        story = Storyline(
            key, "election", track, platform, actors, resolved, self._links(resolved), winner, q, resolved_at
        )
        story.explanation = "Support: " + ", ".join(f"{c} {support[c]:+.2f}" for c in cands)
        if platform:
            story.market = self._market(
                story, f"{country} presidential election winner", list(cands), support_events=events
            )
        self.storylines.append(story)

    def _story_production(self, key: str, track: str, platform: str, first: date, span: int) -> None:
        a = self.names.company()
        city = self.names.city()
        model = self.rng.choice(("Vela", "Orca", "Tern", "Pike", "Wren", "Ibis")) + f" {self.counter}"
        beats = production_beats(a, city, model)
        days = self._days(first, len(beats) + 1, span)
        events = self._binary_events(key, beats, days[:-1], self.rng.choice((0.35, 0.65)))
        base = self.rng.randrange(20, 60) * 1000
        value = float(base)
        for e in events:
            value *= 1 + 0.12 * e.sign * e.magnitude
        value = float(round(value))
        o_title = f"{a} reports {int(value):,} {model} deliveries".replace(",", " ")
        events.append(
            HiddenEvent(
                f"{key}-outcome", o_title, f"{o_title}.", days[-1], "Outcome", "Positive", 1.0, 1.0, is_outcome=True
            )
        )
        resolved_at = noon(days[-1]) + timedelta(hours=3)
        q = self._common(
            key,
            track,
            f"How many {model} vehicles will {a} report delivering this quarter?",
            "quantity",
            "business",
            f"The number of {model} deliveries {a} reports for the quarter, in vehicles.",
            f"{a} planned about {base:,} {model} deliveries this quarter.".replace(",", " "),
            midnight(days[0]),
            resolved_at,
        )
        q["unit"] = "vehicles"
        q["lower_bound"] = 0.0
        actors = {"company": Actor("company", a, "company")}
        story = Storyline(key, "production", track, "", actors, events, self._links(events), value, q, resolved_at)
        story.params["base"] = base
        story.explanation = f"Plan {base}, effects of {len(events) - 1} events give {int(value)}."
        self.storylines.append(story)

    def _story_bridge(self, key: str, track: str, platform: str, first: date, span: int) -> None:
        city = self.names.city()
        bridge = f"{self.rng.choice(('North', 'Harbour', 'River', 'Old Mill', 'Crown'))} Bridge {self.counter}"
        builder = self.names.company()
        beats = bridge_beats(bridge, city, builder)
        days = self._days(first, len(beats) + 1, span)
        events = self._binary_events(key, beats, days[:-1], self.rng.choice((0.35, 0.65)))
        shift_weeks = sum(-e.sign * round(4 * e.magnitude) for e in events)
        opening = days[-1]
        planned = opening - timedelta(weeks=shift_weeks)
        outcome = f"{opening:%Y-%m}"
        o_title = f"{bridge} opens to traffic in {city}"
        events.append(
            HiddenEvent(
                f"{key}-outcome", o_title, f"{o_title}.", opening, "Outcome", "Positive", 1.0, 1.0, is_outcome=True
            )
        )
        resolved_at = noon(opening)
        q = self._common(
            key,
            track,
            f"In which month will {bridge} in {city} open to traffic?",
            "timeframe",
            "infrastructure",
            f"The calendar month (UTC) in which {bridge} first opens to general traffic.",
            f"{city} planned to open {bridge}, built by {builder}, in {planned:%B %Y}.",
            midnight(days[0]),
            resolved_at,
        )
        q["granularity"] = "month"
        actors = {"builder": Actor("builder", builder, "company")}
        story = Storyline(key, "bridge", track, "", actors, events, self._links(events), outcome, q, resolved_at)
        story.explanation = f"Planned {planned:%Y-%m-%d}, shifted {shift_weeks:+d} weeks: opened {opening:%Y-%m-%d}."
        self.storylines.append(story)

    def _story_relations(self, key: str, track: str, platform: str, first: date, span: int) -> None:
        (x, xc), (y, yc) = self.names.country_pair()
        days = self._days(first, 12, span)
        lean = self.rng.choice((0.3, 0.7))
        events: list[HiddenEvent] = []
        tension = 0.0
        used: set[tuple[date, str]] = set()
        for i, day in enumerate(days[:-1]):
            cooperative = self.rng.random() < lean
            code = self.rng.choice(COOPERATIVE_CODES if cooperative else CONFLICT_CODES)
            if (day, code) in used:
                code = (
                    COOPERATIVE_CODES[i % len(COOPERATIVE_CODES)]
                    if cooperative
                    else CONFLICT_CODES[i % len(CONFLICT_CODES)]
                )
            used.add((day, code))
            m, c = self._mag(), self._conf()
            tension += (1 if cooperative else -1) * m * c
            subject, obj = ((x, xc), (y, yc)) if i % 2 == 0 else ((y, yc), (x, xc))
            title = CAMEO_PHRASES[code].format(s=subject[0], o=obj[0])
            events.append(
                HiddenEvent(
                    f"{key}-e{i + 1:02d}",
                    title,
                    f"{title}.",
                    day,
                    "Decision",
                    "Positive" if cooperative else "Negative",
                    m,
                    c,
                    cameo=(subject[1], obj[1], code),
                )
            )
        target = days[-1]
        pool = COOPERATIVE_CODES if tension > 0 else CONFLICT_CODES
        codes = sorted(self.rng.sample(pool, 2))
        gold: dict[str, list[str]] = {}
        for j, code in enumerate(codes):
            title = CAMEO_PHRASES[code].format(s=x, o=y)
            events.append(
                HiddenEvent(
                    f"{key}-t{j + 1}",
                    title,
                    f"{title}.",
                    target,
                    "Decision",
                    "Positive" if tension > 0 else "Negative",
                    0.9,
                    0.9,
                    cameo=(xc, yc, code),
                )
            )
            gold.setdefault(code[:2], []).append(code)
        o_title = f"{x} and {y} relations on {target:%d %B %Y}"
        events.append(
            HiddenEvent(
                f"{key}-outcome",
                o_title,
                f"{o_title}.",
                target,
                "Outcome",
                "Positive" if tension > 0 else "Negative",
                1.0,
                1.0,
                is_outcome=True,
            )
        )
        resolved_at = midnight(target) + timedelta(days=1)
        q = self._common(
            key,
            track,
            f"Which relations will {x} (coded {xc}) take towards {y} (coded {yc}) on {target:%d %B %Y}?",
            "relation",
            "international-relations",
            f"The CAMEO relations of the structured events with subject {xc} and object {yc} dated "
            f"{target.isoformat()} in Hindsight's event archive.",
            f"{x} and {y} share the Tamber river; a dam project strains relations. The alpha-3 codes "
            f"{xc} and {yc} are neutral identifiers for these invented countries.",
            midnight(days[0]),
            resolved_at,
        )
        q.update(
            subject=xc,
            object=yc,
            target_date=target.isoformat(),
            horizon_days=1,
            simulated_date_policy="near_resolution",
        )
        if track == "replay":
            # A live question keeps the live deadline (after the world's end, as every live
            # question's), so that a new agent can still forecast it at the world's present.
            q["close_at"] = midnight(target).isoformat()
        actors = {"x": Actor("x", x, "country", xc), "y": Actor("y", y, "country", yc)}
        outcome = {"relations": {root: sorted(c) for root, c in sorted(gold.items())}}
        story = Storyline(key, "relations", track, "", actors, events, self._links(events), outcome, q, resolved_at)
        story.explanation = f"Tension {tension:+.2f}: {'cooperative' if tension > 0 else 'conflictual'} relations."
        self.storylines.append(story)

    def _story_summit(self, key: str, track: str, platform: str, first: date, span: int) -> None:
        (x, xc), (y, yc) = self.names.country_pair()
        river = self.rng.choice(("Tamber", "Oslow", "Verrin", "Calder", "Mirren")) + " river"
        beats = summit_beats(x, y, river)
        days = self._days(first, len(beats), span)
        events = self._binary_events(key, beats, days, self.rng.choice((0.3, 0.75)))
        cutoff_index = 5
        cutoff = midnight(days[cutoff_index])
        gold = [e.title for e in events[cutoff_index:]]
        last = events[-1]
        events.append(
            HiddenEvent(
                f"{key}-outcome",
                f"Aftermath of the {river} summit",
                "The summit's aftermath.",
                last.day,
                "Outcome",
                "Positive",
                1.0,
                1.0,
                is_outcome=True,
            )
        )
        resolved_at = noon(last.day) + timedelta(hours=8)
        q = self._common(
            key,
            track,
            f"What will happen after the {x}-{y} {river} summit?",
            "open_ended",
            "international-relations",
            f"The notable events between {x} and {y} over the {river} after the summit opened, "
            f"up to {last.day:%d %B %Y}.",
            f"{x} and {y} met over water sharing on the {river}.",
            cutoff,
            resolved_at,
        )
        q["background_events"] = [e.title for e in events[:cutoff_index]]
        actors = {"x": Actor("x", x, "country", xc), "y": Actor("y", y, "country", yc)}
        story = Storyline(key, "summit", track, "", actors, events, self._links(events), gold, q, resolved_at)
        story.explanation = f"{len(gold)} events followed the cut-off."
        self.storylines.append(story)

    def build(self) -> World:
        for r in range(self.params["replay_rounds"]):
            for kind in REPLAY_KINDS:
                self.add(kind, "replay", "", r)
        for r in range(self.params["live_rounds"]):
            for kind, platform in LIVE_MARKET_KINDS:
                self.add(kind, "live", platform, r)
            for kind in EXTRA_LIVE_KINDS[: self.params["extra_live"] * len(EXTRA_LIVE_KINDS) if r == 0 else 0]:
                self.add(kind, "live", "", r)
        self._filler_markets()
        for story in self.storylines:
            for event in story.events:
                self._report(story, event)
        self._noise()
        self._duplicates()
        for story in self.storylines:
            self._structured(story)
        self.articles.sort(key=lambda a: (a.released_at, a.url))
        present = midnight(self.present_day) + timedelta(hours=23)
        stops = {
            midnight(self.start_day) + timedelta(days=d) for d in range(0, (self.present_day - self.start_day).days, 15)
        }
        stops |= {midnight(s.events[0].day) for s in self.storylines if s.track == "live"}
        checkpoints = [*sorted(t for t in stops if t < present), present]
        return World(
            seed=self.seed,
            size=self.size,
            start=midnight(self.start_day),
            present=present,
            end=self.end,
            outlets=self.outlets,
            storylines=self.storylines,
            articles=self.articles,
            structured_events=sorted(self.structured, key=lambda r: (r.day, r.subject, r.object, r.relation)),
            markets=self.markets,
            checkpoints=checkpoints,
        )


def _replace_direction(event: HiddenEvent, direction: Direction) -> HiddenEvent:
    return replace(event, direction=direction)
