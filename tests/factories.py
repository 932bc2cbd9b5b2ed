"""factory_boy factories shared by the test suite."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import factory
from django.contrib.auth import get_user_model

from ingestion.models import Article, Market, Question, Source
from leaderboard.models import Agent, Membership, Team

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.org")
    password = factory.django.Password("correct-horse-battery")


class TeamFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Team

    name = factory.Sequence(lambda n: f"Team {n}")
    slug = factory.Sequence(lambda n: f"team-{n}")


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    team = factory.SubFactory(TeamFactory)
    user = factory.SubFactory(UserFactory)
    role = Membership.Role.OWNER


class AgentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Agent

    team = factory.SubFactory(TeamFactory)
    name = factory.Sequence(lambda n: f"Agent {n}")
    slug = factory.Sequence(lambda n: f"agent-{n}")
    model_name = "test-model"
    provider = "test"
    knowledge_cutoff = datetime(2025, 1, 1).date()


class QuestionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Question

    title = factory.Sequence(lambda n: f"Will event {n} happen?")
    type = Question.Type.BINARY
    status = Question.Status.OPEN
    track = Question.Track.LIVE
    origin = Question.Origin.ADMIN
    domain = "politics"
    open_at = T0
    close_at = factory.LazyFunction(lambda: datetime(2030, 1, 1, tzinfo=UTC))
    resolve_by = factory.LazyFunction(lambda: datetime(2030, 2, 1, tzinfo=UTC))
    resolution_criteria = "Resolves YES if the event happens."


class SourceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Source

    name = factory.Sequence(lambda n: f"Feed {n}")
    kind = Source.Kind.RSS
    url = factory.Sequence(lambda n: f"http://127.0.0.1:9/feed{n}.xml")
    poll_interval = timedelta(minutes=15)


class MarketFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Market

    platform = Market.Platform.POLYMARKET
    external_id = factory.Sequence(lambda n: f"market-{n}")
    title = factory.LazyAttribute(lambda market: f"Market {market.external_id}")


class ArticleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Article

    url = factory.Sequence(lambda n: f"https://news.example.org/story/{n}")
    title = factory.Sequence(lambda n: f"Story number {n}")
    summary = "A short summary."
    body = "The body of the story."
    published_at = T0 + timedelta(days=10)
    fetched_at = T0 + timedelta(days=10, hours=1)
    content_hash = factory.Sequence(lambda n: f"{n:064x}")
