"""The beats of each kind of storyline: the events that can happen on the way to its outcome, in
order, each with the wording for either direction it can take."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Beat:
    positive: str
    negative: str
    description: str
    event_type: str
    neutral: bool = False


def merger_beats(a: str, b: str, reg: str, rival: str, ceo: str) -> list[Beat]:
    return [
        Beat(f"{a} agrees to buy {b} in all-share deal", "", f"{a} and {b} boards agreed terms.", "Decision"),
        Beat(f"{reg} opens review of {a} takeover of {b}", "", f"{reg} began its merger review.", "Milestone", True),
        Beat(
            f"{b} shareholders approve {a} takeover",
            f"{b} shareholders reject {a} takeover terms",
            f"{b} investors voted on the offer from {a}.",
            "Decision",
        ),
        Beat(
            f"Unions back {a} plan to keep {b} plants open",
            f"Unions oppose {a} plan to close {b} plants",
            f"Workers at {b} reacted to the integration plan of {a}.",
            "Indicator",
        ),
        Beat(
            f"{a} offers to sell overlapping {b} brands to win approval",
            f"{a} refuses to sell overlapping {b} brands",
            f"Remedies for the {a} {b} merger were discussed.",
            "Decision",
        ),
        Beat(
            f"Rival {rival} drops objection to {a} {b} merger",
            f"Rival {rival} files complaint against {a} {b} merger",
            f"{rival} set out its position on the combination.",
            "Decision",
        ),
        Beat(
            f"{reg} economists find limited harm in {a} {b} deal",
            f"{reg} economists warn {a} {b} deal would raise prices",
            f"An economic assessment of the {a} {b} deal was published.",
            "Indicator",
        ),
        Beat(
            f"Consumer groups endorse {a} remedies for {b} deal",
            f"Consumer groups urge {reg} to block {a} {b} deal",
            "Consumer associations weighed in on the merger.",
            "Indicator",
        ),
        Beat(
            f"{ceo} says {a} {b} integration plan is on track",
            f"{ceo} warns {a} {b} deal faces delay",
            f"{ceo}, chief executive of {a}, spoke about the timetable.",
            "Indicator",
        ),
        Beat(
            f"{reg} hearing on {a} {b} merger ends with agreement on remedies",
            f"{reg} hearing on {a} {b} merger ends without agreement",
            f"The final hearing on the {a} {b} case closed.",
            "Milestone",
        ),
        Beat(
            f"Lenders secure financing for {a} {b} combination",
            f"Lenders withdraw financing for {a} {b} combination",
            f"Banks decided on the loans for the {a} {b} deal.",
            "Decision",
        ),
    ]


def launch_beats(a: str, craft: str, site: str, engineer: str) -> list[Beat]:
    return [
        Beat(f"{a} unveils {craft} satellite for orbit", "", f"{a} presented the {craft} mission.", "Decision"),
        Beat(
            f"{a} completes {craft} thermal vacuum test",
            f"{a} {craft} fails thermal vacuum test",
            f"The {craft} spacecraft went through environmental testing.",
            "Milestone",
        ),
        Beat(
            f"Regulator grants {a} launch licence for {craft}",
            f"Regulator delays {a} launch licence for {craft}",
            f"The licence decision for the {craft} mission was issued.",
            "Decision",
        ),
        Beat(
            f"{craft} rocket arrives at {site} pad",
            f"{craft} rocket shipment to {site} stalled by strike",
            f"Transport of the {craft} launcher to {site} was reported.",
            "Milestone",
        ),
        Beat(
            f"{engineer} confirms {craft} software cleared",
            f"{engineer} reports {craft} software fault",
            f"{engineer}, {a}'s mission lead, briefed reporters on {craft}.",
            "Indicator",
        ),
        Beat(
            f"Insurers back {a} {craft} mission",
            f"Insurers withdraw cover for {a} {craft} mission",
            f"Underwriters reviewed the {craft} policy.",
            "Decision",
        ),
        Beat(
            f"{a} {craft} wet dress rehearsal succeeds at {site}",
            f"{a} {craft} wet dress rehearsal halted at {site}",
            f"A fuelling rehearsal of {craft} took place at {site}.",
            "Milestone",
        ),
        Beat(
            f"Weather forecast clears {craft} launch window at {site}",
            f"Storm forecast threatens {craft} launch window at {site}",
            f"Meteorologists issued the outlook for the {craft} window.",
            "ExternalShock",
        ),
        Beat(
            f"{a} secures second ground station for {craft}",
            f"{a} loses ground station contract for {craft}",
            f"Ground segment arrangements for {craft} changed.",
            "Decision",
        ),
        Beat(
            f"{craft} launch readiness review passes",
            f"{craft} launch readiness review postponed",
            f"The readiness board met on {craft}.",
            "Milestone",
        ),
        Beat(
            f"{a} investors approve extra funding for {craft}",
            f"{a} investors reject extra funding for {craft}",
            f"Shareholders of {a} voted on funds for {craft}.",
            "Decision",
        ),
    ]


def production_beats(a: str, city: str, model: str) -> list[Beat]:
    return [
        Beat(f"{a} sets {model} delivery target", "", f"{a} announced its quarterly {model} plan.", "Decision", True),
        Beat(
            f"{a} opens second {model} assembly line in {city}",
            f"{a} postpones second {model} assembly line in {city}",
            f"Capacity plans at the {city} plant of {a} changed.",
            "Milestone",
        ),
        Beat(
            f"{a} secures battery supply deal for {model}",
            f"Battery shortage slows {a} {model} output",
            f"Battery supplies for the {model} were reported.",
            "ExternalShock",
        ),
        Beat(
            f"{a} {city} workers accept pay offer",
            f"Strike halts {a} {city} plant",
            f"Labour talks at the {city} factory of {a} concluded.",
            "Decision",
        ),
        Beat(
            f"{model} orders surge after price cut",
            f"{model} orders drop after price rise",
            f"Demand for the {model} shifted.",
            "Indicator",
        ),
        Beat(
            f"{a} clears {model} software recall quickly",
            f"{a} recall stalls {model} deliveries",
            f"A {model} software recall was handled by {a}.",
            "Decision",
        ),
        Beat(
            f"Port of {city} reopens for {a} shipments",
            f"Port of {city} closure blocks {a} shipments",
            f"Shipping from {city} affected {a} logistics.",
            "ExternalShock",
        ),
        Beat(
            f"{a} adds night shift for {model}",
            f"{a} cuts night shift for {model}",
            f"Shift patterns for {model} production changed.",
            "Decision",
        ),
        Beat(
            f"Suppliers deliver {model} chips ahead of schedule",
            f"Chip supplier delays {model} components",
            f"Semiconductor deliveries for the {model} were reported.",
            "Indicator",
        ),
        Beat(
            f"{a} {model} passes safety certification",
            f"{a} {model} certification delayed",
            f"Safety certification of the {model} was decided.",
            "Milestone",
        ),
        Beat(
            f"Fleet buyer signs large {model} order with {a}",
            f"Fleet buyer cancels {model} order with {a}",
            f"A fleet contract for the {model} changed.",
            "Decision",
        ),
    ]


def bridge_beats(bridge: str, city: str, builder: str) -> list[Beat]:
    return [
        Beat(
            f"{city} confirms {bridge} opening plan", "", f"{city} officials set a date for {bridge}.", "Decision", True
        ),
        Beat(
            f"Crews finish {bridge} deck ahead of schedule",
            f"Cracks delay {bridge} deck pour",
            f"Deck works on {bridge} were reported by {builder}.",
            "Milestone",
        ),
        Beat(
            f"{builder} adds crews to {bridge} works",
            f"{builder} workers strike at {bridge} site",
            f"Staffing at the {bridge} site changed.",
            "Decision",
        ),
        Beat(
            f"Steel cables for {bridge} arrive early",
            f"Steel cable shipment for {bridge} delayed",
            f"Cable supplies for {bridge} were reported.",
            "ExternalShock",
        ),
        Beat(
            f"{bridge} load test passes",
            f"{bridge} load test fails",
            f"Engineers ran a load test on {bridge}.",
            "Milestone",
        ),
        Beat(
            f"{city} council approves extra {bridge} funding",
            f"{city} council rejects extra {bridge} funding",
            f"The council voted on {bridge} finances.",
            "Decision",
        ),
        Beat(
            f"Inspectors clear {bridge} lighting and barriers",
            f"Inspectors halt {bridge} works over barriers",
            f"Safety inspectors visited {bridge}.",
            "Indicator",
        ),
        Beat(
            f"Mild weather speeds {bridge} paving",
            f"Flood halts {bridge} paving",
            f"Weather affected paving on {bridge}.",
            "ExternalShock",
        ),
        Beat(
            f"{builder} completes {bridge} approach roads",
            f"{builder} misses {bridge} approach roads milestone",
            f"Approach roads to {bridge} were reported.",
            "Milestone",
        ),
        Beat(
            f"Court dismisses residents' challenge to {bridge}",
            f"Court suspends {bridge} works after residents' challenge",
            f"A legal challenge to {bridge} was decided.",
            "Decision",
        ),
    ]


def election_beats(country: str, cands: list[str], party: str, city: str) -> list[tuple[str, str, str, int]]:
    """(title template with {c}, description, type, sign): sign +1 helps {c}, -1 hurts."""
    return [
        (
            "{c} wins endorsement of " + country + " farmers union",
            "A union endorsement in the campaign.",
            "Decision",
            1,
        ),
        ("{c} leads new " + country + " opinion poll", "A national poll was published.", "Indicator", 1),
        ("{c} wins televised debate in " + country, "Candidates met in a televised debate.", "Milestone", 1),
        ("{c} campaign hit by funding scandal", "Campaign finance questions emerged.", "ExternalShock", -1),
        ("{c} secures backing of " + party, f"{party} chose whom to support.", "Decision", 1),
        ("{c} draws record crowd in " + city, "A large rally took place.", "Indicator", 1),
        ("Regional governors endorse {c}", "Governors declared support.", "Decision", 1),
        ("{c} slips in final " + country + " poll", "The last poll before the vote was released.", "Indicator", -1),
        ("{c} gaffe on pensions draws criticism", "A remark on pensions caused a row.", "ExternalShock", -1),
        ("{c} gains in " + country + " youth survey", "A survey of young voters was published.", "Indicator", 1),
        ("Trade unions endorse {c} for president", "Unions announced their choice.", "Decision", 1),
    ]


def summit_beats(x: str, y: str, river: str) -> list[Beat]:
    return [
        Beat(f"{x} and {y} agree to hold {river} summit", "", f"{x} and {y} announced a summit.", "Decision"),
        Beat(f"Drought lowers {river} to record low", "", f"The {river} fell sharply.", "ExternalShock", True),
        Beat(f"{x} farmers protest {river} water cuts", "", f"Farmers in {x} protested.", "Indicator", True),
        Beat(f"{y} engineers publish {river} dam study", "", f"A dam study in {y} was published.", "Indicator", True),
        Beat(f"{x} {y} {river} summit opens in border town", "", "The summit opened.", "Milestone"),
        Beat(
            f"{x} and {y} sign {river} water quota deal",
            f"{x} and {y} fail to agree {river} water quotas",
            "Negotiators decided on quotas.",
            "Decision",
        ),
        Beat(
            f"{x} and {y} create joint {river} commission",
            f"{y} walks out of {river} commission talks",
            "A commission was discussed.",
            "Decision",
        ),
        Beat(
            f"{y} opens {river} dam gates for {x} farmers",
            f"{y} keeps {river} dam gates closed",
            "Dam operations were decided.",
            "Decision",
        ),
        Beat(
            f"World bank pledges {river} irrigation loans",
            f"Lenders suspend {river} irrigation loans",
            "International lenders decided on irrigation finance.",
            "Decision",
        ),
        Beat(
            f"{x} lifts tariffs on {y} grain after {river} deal",
            f"{x} raises tariffs on {y} grain in {river} row",
            "Trade measures followed the summit.",
            "Decision",
        ),
        Beat(
            f"{x} {y} border reopens for {river} traders",
            f"{x} {y} border closes to {river} traders",
            "Border crossings were affected.",
            "Milestone",
        ),
    ]
