"""The admin in a real browser: a live Django server (pytest-django's `live_server`, which
serves the admin's static files itself) and headless Chromium driven by Playwright's sync API.

The browser is Debian's `chromium` package (NEUROMEM_CHROMIUM: another executable); Playwright
never downloads one. Without it, every test marked `browser` is skipped, with the reason.
Screenshots go to NEUROMEM_SCREENSHOTS when set (docs/img/admin to refresh the docs' pictures),
else to a pytest temporary directory.
"""

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("NEUROMEM_CHROMIUM", "/usr/bin/chromium")
# As root in a container, on a machine without network: no sandbox, no GPU, and nothing that
# calls home at start (its connections would be refused, many at a time).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 800}
PASSWORD = "a-browser-test-password"


def chromium_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    path = shutil.which(CHROMIUM)
    if path is None:
        return (
            f"no Chromium at {CHROMIUM} (apt-get install chromium; NEUROMEM_CHROMIUM names "
            "another executable)"
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    return None


def pytest_collection_modifyitems(config, items):
    reason = chromium_missing()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"browser tests skipped: {reason}")
    for item in items:
        if item.get_closest_marker("browser"):
            item.add_marker(skip)


@pytest.fixture(scope="module")
def browser() -> Iterator:
    """One Chromium per test module. Playwright starts it with a fresh, empty profile (a
    temporary --user-data-dir) and removes it at the end.

    Playwright's sync API keeps an event loop running in this thread while it is started:
    Django refuses ORM calls from such a thread unless told this code is synchronous, and
    `asyncio.run` refuses to start. Both last only until the module's tests are done, so the
    rest of the suite (the MCP tests use asyncio) runs as without it."""
    from playwright.sync_api import sync_playwright

    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = playwright.chromium.launch(
            executable_path=shutil.which(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server) -> Iterator:
    """A page in a new browser context (no cookies); relative URLs are the live server's."""
    context = browser.new_context(
        viewport=VIEWPORT, base_url=live_server.url, accept_downloads=True
    )
    context.set_default_timeout(15_000)
    # The admin's navigation side bar folded (its own toggle, kept in localStorage): the
    # screenshots show the page itself.
    context.add_init_script("localStorage.setItem('django.admin.navSidebarIsOpen', 'false')")
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory) -> Path:
    """Where the journey saves its screenshots."""
    wanted = os.environ.get("NEUROMEM_SCREENSHOTS")
    if wanted:
        path = Path(wanted)
        path.mkdir(parents=True, exist_ok=True)
        return path
    return tmp_path_factory.mktemp("screenshots")
