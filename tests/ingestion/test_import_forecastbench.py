"""import_forecastbench on the real ForecastBench sample round shipped in ingestion/data/forecastbench/."""

from __future__ import annotations

import importlib
import json
from datetime import UTC, datetime
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import time_machine
from django.core.management import call_command
from django.core.management.base import CommandError

import ingestion
from ingestion.models import Market, PricePoint, Question, Resolution

DATA = Path(ingestion.__file__).resolve().parent / "data" / "forecastbench"
QUESTIONS = DATA / "2026-05-10-llm.json"
RESOLUTIONS = DATA / "2026-05-10_resolution_set.json"
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]


def run(*paths: Path) -> str:
    out = StringIO()
    with time_machine.travel(NOW, tick=False):
        call_command("import_forecastbench", *[str(p) for p in paths], stdout=out)
    return out.getvalue()


def write(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_attribution_readme_ships_with_the_data() -> None:
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    assert "CC BY-SA 4.0" in readme
    assert "forecastbench-datasets" in readme


def test_real_round_counts_split_placeholders_and_prices() -> None:
    output = run(QUESTIONS, RESOLUTIONS)
    raw = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    markets = [q for q in raw if q["source"] in ("polymarket", "manifold", "infer")]
    datasets = [q for q in raw if q["source"] not in ("polymarket", "manifold", "infer")]
    expected = len(markets) + sum(len(q["resolution_dates"]) for q in datasets)
    assert Question.objects.count() == expected == 2174
    assert f"{expected} created" in output

    # Replay = every resolved row that matches a question (85 markets + 671 dataset horizons).
    resolutions = json.loads(RESOLUTIONS.read_text(encoding="utf-8"))["resolutions"]
    assert (
        Question.objects.filter(track=Question.Track.REPLAY).count() == sum(r["resolved"] for r in resolutions) == 756
    )
    assert not Question.objects.filter(track=Question.Track.REPLAY).exclude(status=Question.Status.RESOLVED).exists()
    assert Question.objects.filter(track=Question.Track.LIVE).count() == 1418
    assert Resolution.objects.count() == 756
    assert set(Question.objects.values_list("type", flat=True)) == {Question.Type.BINARY}
    assert set(Question.objects.values_list("origin", flat=True)) == {Question.Origin.IMPORTED}

    # Placeholders are filled everywhere.
    for text in Question.objects.values_list("title", "resolution_criteria"):
        assert "{forecast_due_date}" not in "".join(text) and "{resolution_date}" not in "".join(text)
    nikkei = Question.objects.get(external_id="forecastbench:fred:NIKKEI225:2026-05-17")
    assert nikkei.title.endswith("have increased by 2026-05-17 as compared to its value on 2026-05-10?")
    assert nikkei.track == Question.Track.REPLAY
    nikkei_res = next(r for r in resolutions if r["id"] == "NIKKEI225" and r["resolution_date"] == "2026-05-17")
    assert nikkei.current_resolution is not None
    assert nikkei.current_resolution.outcome is (nikkei_res["resolved_to"] == 1.0)
    assert nikkei.current_resolution.resolved_at == datetime(2026, 5, 17, tzinfo=UTC)
    assert nikkei.open_at == datetime(2026, 4, 30, tzinfo=UTC)
    assert nikkei.attribution["licence"] == "CC BY-SA 4.0"
    assert nikkei.attribution["dataset"] == "fred"
    assert nikkei.attribution["url"] == "https://fred.stlouisfed.org/series/NIKKEI225"
    assert nikkei.market is None
    # A horizon the resolution set does not cover stays live until its resolution date.
    far = Question.objects.get(external_id="forecastbench:fred:NIKKEI225:2036-05-07")
    assert (far.track, far.status, far.close_at) == ("live", "open", datetime(2036, 5, 7, tzinfo=UTC))
    passed = Question.objects.get(external_id="forecastbench:fred:NIKKEI225:2026-11-06")
    assert (passed.track, passed.status) == ("live", "closed")

    # Market question: binary, freeze value stored as a price point at the freeze time.
    shkreli_id = "0xe243748396163f096042bb0c7ea137a864f5259b9b906ce1656ec8d4bd3c64d0"
    shkreli = Question.objects.get(external_id=f"forecastbench:polymarket:{shkreli_id}")
    assert shkreli.title == "Will Trump pardon Martin Shkreli before 2027?"
    assert shkreli.market is not None
    assert shkreli.market.platform == Market.Platform.FORECASTBENCH
    freeze = PricePoint.objects.get(market=shkreli.market, time=datetime(2026, 4, 30, tzinfo=UTC))
    assert freeze.probability == pytest.approx(0.08)
    assert Market.objects.filter(platform=Market.Platform.FORECASTBENCH).count() == len(markets)
    assert PricePoint.objects.filter(time=datetime(2026, 4, 30, tzinfo=UTC)).count() == len(markets)

    # A resolved market goes to replay with its outcome; an unresolved one stays live to its close.
    resolved_market = next(
        r for r in resolutions if r["source"] in ("polymarket", "manifold", "infer") and r["resolved"]
    )
    q = Question.objects.get(external_id=f"forecastbench:{resolved_market['source']}:{resolved_market['id']}")
    assert q.track == Question.Track.REPLAY
    assert q.current_resolution is not None and q.current_resolution.outcome is (resolved_market["resolved_to"] == 1.0)
    unresolved_market = next(
        r for r in resolutions if r["source"] in ("polymarket", "manifold", "infer") and not r["resolved"]
    )
    q = Question.objects.get(external_id=f"forecastbench:{unresolved_market['source']}:{unresolved_market['id']}")
    assert q.track == Question.Track.LIVE
    raw_q = next(x for x in raw if x["id"] == unresolved_market["id"])
    assert q.close_at == datetime.fromisoformat(raw_q["market_info_close_datetime"])
    # ...and its value on the resolution date extends the price path.
    assert q.market is not None
    assert q.market.prices.count() == 2


def test_second_run_changes_nothing_and_says_so() -> None:
    run(QUESTIONS, RESOLUTIONS)
    counts = (Question.objects.count(), Resolution.objects.count(), Market.objects.count(), PricePoint.objects.count())
    stamps = dict(Question.objects.values_list("id", "updated_at"))
    output = run(QUESTIONS, RESOLUTIONS)
    assert "0 created, 0 updated, 2174 unchanged" in output
    assert "Nothing changed" in output
    assert (
        Question.objects.count(),
        Resolution.objects.count(),
        Market.objects.count(),
        PricePoint.objects.count(),
    ) == counts
    assert dict(Question.objects.values_list("id", "updated_at")) == stamps


def test_without_resolution_set_everything_is_live() -> None:
    run(QUESTIONS)
    assert Question.objects.count() == 2174
    assert not Question.objects.filter(track=Question.Track.REPLAY).exists()
    assert not Resolution.objects.exists()


@pytest.fixture
def small_set() -> dict[str, Any]:
    data = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    sources_seen: set[str] = set()
    picked = []
    for q in data["questions"]:
        if q["source"] not in sources_seen:
            sources_seen.add(q["source"])
            picked.append(q)
    data["questions"] = picked
    return data


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["questions"][-1].update(freeze_datetime="last Tuesday"), "field 'freeze_datetime'"),
        (lambda d: d["questions"][-1].pop("question"), "field 'question': missing"),
        (lambda d: d["questions"][-1].update(source="gjopen"), "field 'source'"),
        (lambda d: d["questions"][0].update(freeze_datetime_value="1.7"), "not a market probability"),
        (lambda d: d["questions"][-1].update(resolution_dates="soon"), "field 'resolution_dates'"),
        (lambda d: d.pop("forecast_due_date"), "field 'forecast_due_date'"),
        (lambda d: d["questions"].append(dict(d["questions"][0])), "appears twice"),
    ],
)
def test_bad_question_set_is_rejected_whole(
    tmp_path: Path, small_set: dict[str, Any], mutate: Any, message: str
) -> None:
    mutate(small_set)
    path = write(tmp_path, "bad.json", small_set)
    with pytest.raises(CommandError) as exc:
        run(path)
    assert "nothing imported" in str(exc.value)
    assert message in str(exc.value)
    assert not Question.objects.exists()
    assert not Market.objects.exists()
    assert not PricePoint.objects.exists()


def test_not_json_or_wrong_shape(tmp_path: Path) -> None:
    text = tmp_path / "notes.json"
    text.write_text("this is not json", encoding="utf-8")
    with pytest.raises(CommandError, match="not valid JSON"):
        run(text)
    with pytest.raises(CommandError, match="not a ForecastBench question set"):
        run(write(tmp_path, "list.json", [{"id": "x"}]))
    # The two files swapped: a resolution set is not a question set.
    with pytest.raises(CommandError, match="not a ForecastBench question set"):
        run(RESOLUTIONS, QUESTIONS)
    with pytest.raises(CommandError, match="no such file"):
        run(tmp_path / "missing.json")
    assert not Question.objects.exists()


def test_bad_resolution_set_is_rejected_whole(tmp_path: Path, small_set: dict[str, Any]) -> None:
    questions = write(tmp_path, "q.json", small_set)
    resolutions = json.loads(RESOLUTIONS.read_text(encoding="utf-8"))
    other_round = dict(resolutions, forecast_due_date="2026-05-24")
    with pytest.raises(CommandError, match="does not match the question set's forecast due date"):
        run(questions, write(tmp_path, "r1.json", other_round))
    broken = json.loads(json.dumps(resolutions))
    broken["resolutions"][5]["resolved_to"] = 0.4
    with pytest.raises(CommandError, match=r"resolutions\[5\].*'resolved_to'"):
        run(questions, write(tmp_path, "r2.json", broken))
    broken = json.loads(json.dumps(resolutions))
    broken["resolutions"][7]["resolution_date"] = "17/05/2026"
    with pytest.raises(CommandError, match=r"resolutions\[7\].*'resolution_date'"):
        run(questions, write(tmp_path, "r3.json", broken))
    assert not Question.objects.exists()
    assert not Resolution.objects.exists()


def test_combination_and_orphan_rows_are_counted_not_dropped(tmp_path: Path, small_set: dict[str, Any]) -> None:
    # ForecastBench pairs two questions of a set under a list id ("combination" questions).
    pair = [small_set["questions"][3]["id"], small_set["questions"][4]["id"]]
    small_set["questions"].append(dict(small_set["questions"][3], id=pair))
    resolutions = json.loads(RESOLUTIONS.read_text(encoding="utf-8"))
    combined = dict(resolutions["resolutions"][0], id=pair)
    resolutions["resolutions"].append(combined)
    output = run(write(tmp_path, "q.json", small_set), write(tmp_path, "r.json", resolutions))
    assert "2 combination questions (not imported)" in output
    picked = {(q["source"], q["id"]) for q in small_set["questions"] if isinstance(q["id"], str)}
    orphans = sum((r["source"], r["id"]) not in picked for r in resolutions["resolutions"] if isinstance(r["id"], str))
    assert f"{orphans} resolutions without a question" in output


def test_domains_are_topics_not_source_names(tmp_path: Path, small_set: dict[str, Any]) -> None:
    """The Domain filter lists topics: a dataset about one topic gives it (ACLED: conflict), a
    source spanning many (the markets, Wikipedia) none; the source stays in the attribution."""
    run(write(tmp_path, "one-of-each.json", small_set))
    by_dataset = {q.attribution["dataset"]: q.domain for q in Question.objects.all()}
    assert by_dataset == {
        "acled": "conflict",
        "dbnomics": "weather",
        "fred": "economics",
        "yfinance": "finance",
        "wikipedia": "",
        "infer": "",
        "manifold": "",
        "polymarket": "",
    }


def test_the_migration_turns_earlier_imports_source_names_into_topics() -> None:
    from django.apps import apps

    migration = importlib.import_module("ingestion.migrations.0014_forecastbench_domains_are_topics")
    rows = {
        source: Question.objects.create(
            title=f"From {source}", type="binary", origin=Question.Origin.IMPORTED, domain=source,
            attribution={"dataset": source}, open_at=NOW, close_at=NOW,
        )
        for source in ("acled", "fred", "manifold", "wikipedia")
    }  # fmt: skip
    other = Question.objects.create(title="Staff's", type="binary", domain="fred", open_at=NOW, close_at=NOW)
    migration.forwards(apps, None)
    assert {s: Question.objects.get(pk=q.pk).domain for s, q in rows.items()} == {
        "acled": "conflict",
        "fred": "economics",
        "manifold": "",
        "wikipedia": "",
    }
    assert Question.objects.get(pk=other.pk).domain == "fred"  # only imported questions change
    migration.backwards(apps, None)
    assert {s: Question.objects.get(pk=q.pk).domain for s, q in rows.items()} == {s: s for s in rows}
