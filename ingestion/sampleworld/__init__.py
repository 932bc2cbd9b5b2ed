"""Hindsight's sample world: a seeded, fictional, internally consistent world (generator.py), the
fictional clock that releases it (clock.py) and a local HTTP server that publishes it as news feeds,
prediction-market APIs and an events CSV (server.py), so the real ingestion path can read it.

Nothing here imports Django: the command ``manage.py sample_world`` wires it to the services.
"""
