#!/usr/bin/env python
"""Django's command-line utility for Hindsight."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# platform/ is a plain folder holding the config package; it must never shadow stdlib `platform`.
sys.path.insert(1, str(Path(__file__).resolve().parent / "platform"))


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
