"""ForecastBench questions imported before their domain named a topic had the dataset's name as
their domain (acled, fred, manifold…): the topic now (``ingestion.forecastbench.DATASET_TOPICS``),
or none where the source spans many topics. The dataset stays in the question's attribution."""

from django.db import migrations

# As ingestion.forecastbench.DATASET_TOPICS when this migration was written (a migration keeps its own copy).
TOPICS = {"acled": "conflict", "dbnomics": "weather", "fred": "economics", "yfinance": "finance"}
NO_TOPIC = ("infer", "manifold", "polymarket", "wikipedia", "metaculus")


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    question = apps.get_model("ingestion", "Question")
    imported = question.objects.filter(origin="imported")
    for source, topic in TOPICS.items():
        imported.filter(domain=source).update(domain=topic)
    imported.filter(domain__in=NO_TOPIC).update(domain="")


def backwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    question = apps.get_model("ingestion", "Question")
    for row in question.objects.filter(origin="imported").only("pk", "domain", "attribution"):
        dataset = (row.attribution or {}).get("dataset") if isinstance(row.attribution, dict) else None
        if dataset:
            question.objects.filter(pk=row.pk).update(domain=dataset)


class Migration(migrations.Migration):
    dependencies = [("ingestion", "0013_article_archive")]
    operations = [migrations.RunPython(forwards, backwards)]
