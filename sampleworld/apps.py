from __future__ import annotations

from django.apps import AppConfig


class SampleWorldConfig(AppConfig):
    """The demo's fictional world; an app only for its commands (demo, sample_world). It may
    import every other app; none imports it."""

    name = "sampleworld"
    verbose_name = "Sample world (demo)"
