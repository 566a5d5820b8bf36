"""The set-up every benchmark starts with: imported first, before any module that needs Django.

    import bootstrap  # noqa: F401
    # isort: split
    from django.conf import settings
    ...

A benchmark runs as a script (`python bench/NAME.py`), so bench/ is on sys.path and this module
is `bootstrap`. It puts the project on sys.path, sets Django up on the project's settings and
keeps httpx's line per request out of the output.
"""

import logging
import os
import sys
from pathlib import Path

import django

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "neuromem_site.settings")
django.setup()
logging.getLogger("httpx").setLevel(logging.WARNING)
