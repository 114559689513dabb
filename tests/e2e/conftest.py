"""Headless Chromium (Debian's package) driven by Playwright, against pytest-django's live server."""

import os
import shutil
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in this thread; the test's own ORM calls are still
# synchronous, so Django's guard against ORM use inside an event loop does not apply here.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-dev-shm-usage",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
DOC_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def for_docs(path: Path) -> None:
    """Copy a screenshot into docs/screenshots/ when asked to (`make screenshots`), so that an
    ordinary test run leaves the working tree untouched."""
    if os.environ.get("DOC_SCREENSHOTS") == "1":
        DOC_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, DOC_SCREENSHOTS / path.name)


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"Chromium not found at {CHROMIUM}: `make test` installs Debian's chromium package")
        pytest.skip(
            f"Chromium not found at {CHROMIUM} (install Debian's chromium package, or run `make test`)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15000)
    yield page
    context.close()


@pytest.fixture
def screenshot(page):
    """Save a full-page screenshot under var/screenshots/ for people to look at."""

    def take(name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


def log_in(page, username: str, password: str) -> None:
    page.goto("/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
