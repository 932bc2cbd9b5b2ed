"""Staff import an archive's file again from the admin: an item changed in the file is updated in
place, the others are left alone."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from ingestion.models import Article, Source
from tests.browser import login
from tests.factories import UserFactory
from tests.ingestion.test_import_archive import archive_days, write


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_import_again_updates_what_changed_in_the_file(browser_page: Any, tmp_path: Path) -> None:
    lines = archive_days("2025-05-08", "2025-05-08")
    path = write(tmp_path, lines)
    call_command("import_archive", str(path), "--attribution", "Wikipedia contributors", stdout=StringIO())
    source = Source.objects.get(kind=Source.Kind.ARCHIVE)
    untouched = {a.pk: a.fetched_at for a in Article.objects.exclude(external_id=json.loads(lines[0])["id"])}
    edited = json.loads(lines[0])
    edited["title"] = "Cardinals gather in the Sistine Chapel for the second day of the conclave."
    write(tmp_path, [json.dumps(edited), *lines[1:]])

    UserFactory(username="curator", is_staff=True, is_superuser=True)
    page = browser_page
    login(page, "curator")
    page.goto("/admin/ingestion/source/?kind__exact=archive")
    page.check(f"input[name=_selected_action][value='{source.pk}']")
    page.select_option("select[name=action]", "import_again")
    page.click("button[name=index]")
    assert "Re-import queued for Wikipedia Portal:Current events" in page.locator(".messagelist").inner_text()

    assert Article.objects.get(external_id=edited["id"]).title == edited["title"]
    assert {a.pk: a.fetched_at for a in Article.objects.exclude(external_id=edited["id"])} == untouched
    source.refresh_from_db()
    assert source.options["attribution"] == "Wikipedia contributors"
