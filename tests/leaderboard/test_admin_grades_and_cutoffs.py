"""Staff read grades in the admin with readable names and rounded scores; a knowledge cutoff in the
future is refused wherever an agent is declared (web form, command), changing nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from leaderboard.models import Agent, Forecast, Grade
from tests.factories import T0, AgentFactory, QuestionFactory

pytestmark = pytest.mark.django_db


def test_admin_grades_show_names_and_rounded_scores(staff: Any) -> None:
    agent = AgentFactory(name="Delphi Oracle")
    question = QuestionFactory(title="Will the bridge open in March?")
    forecast = Forecast.objects.create(agent=agent, question=question, received_at=T0, prediction={"probability": 0.6})
    grade = Grade.objects.create(
        forecast=forecast,
        version=1,
        grader_version="1.0",
        resolution_version=1,
        created_at=T0,
        brier=0.1600000000000001,
    )
    client = Client()
    client.force_login(staff)
    listing = client.get(reverse("admin:leaderboard_grade_changelist")).content.decode()
    assert "Delphi Oracle" in listing and "Will the bridge open in March?" in listing
    assert "0.1600" in listing and "0.1600000000000001" not in listing
    assert "Forecast 1 by agent" not in listing
    change = client.get(reverse("admin:leaderboard_grade_change", args=[grade.pk])).content.decode()
    assert "0.1600" in change and "0.1600000000000001" not in change


def test_a_future_cutoff_is_refused(owner: Any, team: Any) -> None:
    tomorrow = (timezone.now() + timedelta(days=2)).date().isoformat()
    client = Client()
    client.force_login(owner)
    response = client.post(
        reverse("leaderboard:agent_new", args=[team.slug]), {"name": "Seer", "knowledge_cutoff": tomorrow}
    )
    assert response.status_code == 200
    assert f"The knowledge cutoff {tomorrow} is in the future" in response.content.decode()
    assert not Agent.objects.filter(name="Seer").exists()
    with pytest.raises(CommandError, match="is in the future"):
        call_command("create_agent", "--team", "Cli team", "--agent", "cli-seer", "--cutoff", tomorrow)
    assert not Agent.objects.filter(name="cli-seer").exists()
