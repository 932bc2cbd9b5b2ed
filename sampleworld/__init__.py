"""Hindsight's sample world, the demo's fictional data: a seeded, internally consistent world
(generator.py and the modules it builds on), the fictional clock that releases it (clock.py), a
local HTTP server that publishes it as news feeds, prediction-market APIs and an events CSV
(server.py), and its publication through the real ingestion path (publish.py) by the commands
``demo`` and ``sample_world``.

The generator, the clock and the server import no Django. The package sits above every app: it
may import them, and none of them imports it.
"""
