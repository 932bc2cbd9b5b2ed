"""Full-text search over articles for the temporal evidence gateway.

PostgreSQL: a stored generated tsvector column (title A, summary B, body C) with a GIN index.
SQLite: an external-content FTS5 table over ingestion_article kept in sync by triggers.
The model does not declare either, so the same model works on both databases.
"""

from django.db import migrations

from ingestion.selectors.evidence import FTS_TABLE, FTS_TRIGGERS, PG_SEARCH_VECTOR_SQL, sqlite_fts_schema


def create_search(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(
            f"ALTER TABLE ingestion_article ADD COLUMN search_vector tsvector "
            f"GENERATED ALWAYS AS ({PG_SEARCH_VECTOR_SQL}) STORED"
        )
        schema_editor.execute(
            "CREATE INDEX ingestion_article_search_gin ON ingestion_article USING gin (search_vector)"
        )
    elif vendor == "sqlite":
        for statement in sqlite_fts_schema():
            schema_editor.execute(statement)
        schema_editor.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')")


def drop_search(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS ingestion_article_search_gin")
        schema_editor.execute("ALTER TABLE ingestion_article DROP COLUMN IF EXISTS search_vector")
    elif vendor == "sqlite":
        for trigger in FTS_TRIGGERS:
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        schema_editor.execute(f"DROP TABLE IF EXISTS {FTS_TABLE}")


class Migration(migrations.Migration):
    dependencies = [("ingestion", "0001_initial")]

    operations = [migrations.RunPython(create_search, drop_search, elidable=False)]
