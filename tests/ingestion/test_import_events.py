"""import_events: MIRAI-style structured events and the relation questions generated from them."""

from __future__ import annotations

from datetime import UTC, date, datetime
from io import StringIO
from pathlib import Path

import pytest
import time_machine
from django.core.management import call_command
from django.core.management.base import CommandError

from ingestion.models import Question, Resolution, StructuredEvent
from ingestion.services.events import relation_question_times
from tests.factories import ArticleFactory

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]
NOW = datetime(2026, 11, 22, tzinfo=UTC)


def urls(prefix: str, n: int) -> str:
    return "|".join(f"https://news.example.org/{prefix}/{i}" for i in range(n))


def run(path: Path, *args: str) -> str:
    out = StringIO()
    with time_machine.travel(NOW, tick=False):
        call_command("import_events", str(path), *args, stdout=out)
    return out.getvalue()


def write(tmp_path: Path, text: str, name: str = "events.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def events_csv(tmp_path: Path) -> Path:
    a1 = ArticleFactory(url="https://news.example.org/aus-chn/visit")
    a2 = ArticleFactory(url="https://news.example.org/aus-chn/talks")
    lines = [
        "date,subject,object,relation,articles,mentions",
        # AUS -> CHN on 2023-11-03: three qualifying relations under two roots.
        f"2023-11-03,AUS,CHN,042,{a1.pk}|{a2.pk}|https://news.example.org/aus-chn/visit?utm_source=x|{urls('a', 3)},150",
        f"2023-11-03,AUS,CHN,036,{urls('b', 5)},120",
        f"2023-11-03,AUS,CHN,046,{urls('c', 5)},101",
        # Same event again (another row of the same day): merged, not duplicated.
        f"2023-11-03,AUS,CHN,042,{urls('a', 4)};https://news.example.org/extra,180",
        # Too few articles, too few mentions: excluded from the gold set.
        f"2023-11-03,AUS,CHN,111,{urls('d', 2)},500",
        f"2023-11-03,AUS,CHN,173,{urls('e', 6)},40",
        # A key whose only event is below the threshold: no question.
        f"2023-11-04,USA,MEX,057,{urls('f', 1)},300",
        # Domestic: stored, never a question.
        f"2023-11-04,FRA,FRA,010,{urls('g', 9)},300",
        # No mention count in the file: only the article threshold applies.
        f"2023-11-05,UKR,RUS,190,{urls('h', 5)},",
    ]
    return write(tmp_path, "\n".join(lines) + "\n")


def test_events_are_stored_deduplicated_and_linked(events_csv: Path) -> None:
    output = run(events_csv, "--no-questions")
    assert "9 rows: events 8 created, 0 updated, 0 unchanged" in output
    assert StructuredEvent.objects.count() == 8
    visit = StructuredEvent.objects.get(date=date(2023, 11, 3), subject="AUS", object="CHN", relation="042")
    assert visit.relation_root == "04"
    assert visit.mentions == 180
    # Linked by id, and the tracking-laden URL canonicalises to an existing article too.
    assert sorted(visit.articles.values_list("url", flat=True)) == [
        "https://news.example.org/aus-chn/talks",
        "https://news.example.org/aus-chn/visit",
    ]
    assert "https://news.example.org/aus-chn/visit" in visit.article_urls
    assert "https://news.example.org/extra" in visit.article_urls
    assert "https://news.example.org/a/3" in visit.article_urls  # from the second row of the same event
    ukr = StructuredEvent.objects.get(subject="UKR")
    assert ukr.mentions is None
    assert not Question.objects.exists()


def test_relation_questions_gold_sets_and_thresholds(events_csv: Path) -> None:
    output = run(events_csv)
    assert "relation questions: 2 created" in output
    assert "1 without a qualifying event" in output and "1 domestic skipped" in output
    q = Question.objects.get(external_id="relation:2023-11-03:AUS:CHN:h1")
    assert (q.type, q.track, q.status) == ("relation", "replay", "resolved")
    assert (q.subject, q.object, q.target_date, q.horizon_days) == ("AUS", "CHN", date(2023, 11, 3), 1)
    resolution = q.current_resolution
    assert resolution is not None
    assert resolution.outcome == {"relations": {"03": ["036"], "04": ["042", "046"]}}
    # The default simulated date (midpoint) is MIRAI's cutoff: everything before the target day.
    assert q.open_at == datetime(2023, 11, 2, tzinfo=UTC)
    assert q.close_at == datetime(2023, 11, 3, tzinfo=UTC)
    assert resolution.resolved_at == datetime(2023, 11, 4, tzinfo=UTC)
    assert q.open_at + (resolution.resolved_at - q.open_at) / 2 == datetime(2023, 11, 3, tzinfo=UTC)
    assert q.attribution["thresholds"] == {"min_mentions": 100, "min_articles": 5, "min_events": 1}
    assert "Australia" in q.title and "China" in q.title

    ukr = Question.objects.get(external_id="relation:2023-11-05:UKR:RUS:h1")
    assert ukr.current_resolution is not None
    assert ukr.current_resolution.outcome == {"relations": {"19": ["190"]}}
    assert not Question.objects.filter(subject="USA").exists()
    assert not Question.objects.filter(subject="FRA").exists()


def test_thresholds_and_horizons_are_options(events_csv: Path) -> None:
    output = run(events_csv, "--min-articles", "1", "--min-mentions", "0", "--horizon-days", "1", "--horizon-days", "7")
    assert "horizon 7 day(s): relation questions: 3 created" in output
    q = Question.objects.get(external_id="relation:2023-11-03:AUS:CHN:h1")
    assert q.current_resolution is not None
    assert q.current_resolution.outcome == {
        "relations": {"03": ["036"], "04": ["042", "046"], "11": ["111"], "17": ["173"]}
    }
    assert Question.objects.filter(subject="USA").count() == 2
    week = Question.objects.get(external_id="relation:2023-11-03:AUS:CHN:h7")
    assert week.horizon_days == 7
    times = relation_question_times(target_date=date(2023, 11, 3), horizon_days=7)
    assert week.open_at == times["open_at"]
    # Cutoff for l = 7: information up to the end of 2023-10-27 (the window's midpoint).
    assert times["open_at"] + (times["resolved_at"] - times["open_at"]) / 2 == datetime(2023, 10, 28, tzinfo=UTC)
    with pytest.raises(CommandError, match="Thresholds"):
        run(events_csv, "--min-events", "0")


def test_reimport_changes_nothing_and_new_events_amend(events_csv: Path, tmp_path: Path) -> None:
    run(events_csv)
    counts = (StructuredEvent.objects.count(), Question.objects.count(), Resolution.objects.count())
    output = run(events_csv)
    assert "events 0 created, 0 updated, 8 unchanged" in output
    assert "relation questions: 0 created, 0 updated, 2 unchanged" in output
    assert (StructuredEvent.objects.count(), Question.objects.count(), Resolution.objects.count()) == counts

    more = write(
        tmp_path,
        f"date,subject,object,relation,articles,mentions\n2023-11-03,AUS,CHN,057,{urls('z', 5)},200\n",
        "more.csv",
    )
    output = run(more)
    assert "relation questions: 0 created, 1 updated" in output
    q = Question.objects.get(external_id="relation:2023-11-03:AUS:CHN:h1")
    versions = list(q.resolutions.order_by("version").values_list("kind", flat=True))
    assert versions == ["resolve", "amend"]
    assert q.current_resolution is not None
    assert q.current_resolution.outcome["relations"]["05"] == ["057"]


def test_headerless_file_uses_positional_columns(tmp_path: Path) -> None:
    path = write(tmp_path, f"2023-11-10,IND,PAK,138,{urls('p', 5)}\n2023-11-10,IND,PAK,112,{urls('q', 5)}\n")
    output = run(path, "--min-mentions", "100")
    assert "events 2 created" in output
    q = Question.objects.get(external_id="relation:2023-11-10:IND:PAK:h1")
    assert q.current_resolution is not None
    assert q.current_resolution.outcome == {"relations": {"11": ["112"], "13": ["138"]}}


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ("2023-13-01,AUS,CHN,042,", "row 3, column 'date'"),
        ("03/11/2023,AUS,CHN,042,", "row 3, column 'date'"),
        ("2023-11-03,AUX,CHN,042,", "row 3, column 'subject'"),
        ("2023-11-03,AUS,chn,042,", "row 3, column 'object'"),
        ("2023-11-03,AUS,CHN,04,", "row 3, column 'relation': '04' is not a second-level CAMEO code (events use"),
        ("2023-11-03,AUS,CHN,205,", "row 3, column 'relation'"),
        ("2023-11-03,AUS,CHN,042,999999", "row 3, column 'articles': article id 999999 does not exist"),
        ("2023-11-03,AUS,CHN,042,ftp://x.org/a", "row 3, column 'articles'"),
        ("2023-11-03,AUS,CHN,042", "row 3: 4 columns, expected 5"),
    ],
)
def test_bad_row_rejects_the_whole_file(tmp_path: Path, bad_line: str, message: str) -> None:
    good = f"2023-11-02,AUS,CHN,036,{urls('ok', 5)}"
    path = write(tmp_path, f"date,subject,object,relation,articles\n{good}\n{bad_line}\n")
    with pytest.raises(CommandError) as exc:
        run(path)
    assert "nothing imported" in str(exc.value)
    assert message in str(exc.value)
    assert not StructuredEvent.objects.exists()
    assert not Question.objects.exists()


def test_not_an_event_file(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="not a structured-event CSV"):
        run(write(tmp_path, "name,age\nbob,4\n"))
    with pytest.raises(CommandError, match="no rows"):
        run(write(tmp_path, "\n\n"))
    with pytest.raises(CommandError, match="no such file"):
        run(tmp_path / "missing.csv")
    with pytest.raises(CommandError, match="unknown column"):
        run(write(tmp_path, "date,subject,object,relation,colour\n"))
