"""Staff add a source in the admin (a misspelt option is refused on its field, naming the option
it probably meant) and ask for a poll now, which a real worker on the ingest queue carries out."""

from __future__ import annotations

from typing import Any

import pytest

from ingestion.models import Article, Source
from tests.browser import login, screenshot
from tests.celery_worker import running_worker, wait_until
from tests.factories import SourceFactory, UserFactory


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_misspelt_option_is_refused_and_nothing_is_saved(browser_page: Any) -> None:
    UserFactory(username="curator", is_staff=True, is_superuser=True)
    page = browser_page
    login(page, "curator")
    page.goto("/admin/ingestion/source/add/")
    page.fill("input[name=name]", "Gamma markets")
    page.select_option("select[name=kind]", "polymarket")
    page.fill("input[name=url]", "https://gamma-api.polymarket.com")
    page.fill("textarea[name=options]", '{"min_liquidty": 500, "open_questions": true}')
    page.fill("input[name=poll_interval]", "00:15:00")
    page.click("input[name=_save]")
    error = page.locator(".field-options .errorlist").inner_text()
    screenshot(page, "source-admin-unknown-option")
    assert "unknown source option 'min_liquidty' for a polymarket source (did you mean 'min_liquidity'?)" in error
    assert Source.objects.count() == 0

    page.fill("textarea[name=options]", '{"min_liquidity": 500, "open_questions": true}')
    page.click("input[name=_save]")
    page.wait_for_url("**/admin/ingestion/source/")
    source = Source.objects.get()
    assert (source.name, source.kind, source.options) == (
        "Gamma markets",
        Source.Kind.POLYMARKET,
        {"min_liquidity": 500, "open_questions": True},
    )


@pytest.mark.browser
@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_poll_now_is_carried_out_by_a_worker(browser_page: Any, fake_server: Any) -> None:
    from datetime import timedelta

    from django.utils import timezone

    fake_server.add_fixture("/world.xml", "feeds/rss2sample.xml", content_type="application/rss+xml")
    # Paused and not due for a day: only an explicit "poll now" reaches it.
    source = SourceFactory(
        name="World desk",
        kind=Source.Kind.RSS,
        url=fake_server.url("/world.xml"),
        enabled=False,
        next_attempt_at=timezone.now() + timedelta(days=1),
    )
    UserFactory(username="curator", is_staff=True, is_superuser=True)
    page = browser_page
    login(page, "curator")
    with running_worker(queues="ingest"):
        page.goto("/admin/ingestion/source/")
        page.check(f"input[name=_selected_action][value='{source.pk}']")
        page.select_option("select[name=action]", "poll_now")
        page.click("button[name=index]")
        message = page.locator(".messagelist").inner_text()
        assert "Poll queued for World desk" in message
        assert wait_until(lambda: Article.objects.filter(source=source).count() == 4, timeout=60)
    source.refresh_from_db()
    assert source.last_success_at is not None and source.claimed_at is None and not source.enabled
    page.goto(f"/admin/ingestion/source/{source.pk}/change/")
    screenshot(page, "source-admin-polled")
    assert page.locator(".field-consecutive_failures .readonly").inner_text() == "0"
