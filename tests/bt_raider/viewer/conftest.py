"""Fixtures of the viewer tests: one recorded run of the medicine-delivery demo (real planner,
reasoner, recovery and SimWorld), and a headless Chromium (skipped when it is absent)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

#: Chromium's flags: headless, and nothing that reaches the network.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1600,1000",
)


@pytest.fixture(scope="session")
def demo_run():
    """(result, trace JSON) of one guarded run of the medicine delivery."""
    from bt_raider.examples.medicine_delivery import demo

    result = demo.run_scenario(echo=lambda _line: None)
    return result, result.recorder.to_json()


def _chromium() -> tuple[str | None, str | None, str]:
    browser = next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p),
        None,
    )
    driver = shutil.which("chromedriver")
    missing = []
    if browser is None:
        missing.append("chromium (apt-get install chromium)")
    if driver is None:
        missing.append("chromedriver (apt-get install chromium-driver)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium (pip install selenium)")
    return browser, driver, ", ".join(missing)


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium driven by selenium, with a fresh profile; skips when absent."""
    binary, driver_path, missing = _chromium()
    if missing:
        pytest.skip(f"no browser test: missing {missing}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="bt_raider-chromium-")
    options = webdriver.ChromeOptions()
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.binary_location = binary
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def screenshots(tmp_path) -> Path:
    """Where screenshots go: $BT_RAIDER_SCREENSHOTS when set, else a tmp folder."""
    wanted = os.environ.get("BT_RAIDER_SCREENSHOTS")
    folder = Path(wanted) if wanted else tmp_path / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
