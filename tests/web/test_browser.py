"""The pages in a real browser (Debian's chromium, headless, driven by selenium) from a
real server over stores filled by real runs: click from the runs to a run to a sample to a
comparison, watch a running run update itself, and check that HTML and script inside
samples and labels are shown, never run. Screenshots land in the test's tmp dir;
VIBES_WEB_SCREENSHOTS=DIR copies those of the SQLite store there (docs/img)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("selenium")  # the dev extra
pytest.importorskip("fastapi")

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.components import need
from tests.web import fakebench
from tests.web.conftest import CHROMEDRIVER, CHROMIUM, Filled, Server
from vibes_eval.store.events import RunCompleted
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import resolve
from vibes_eval.web import data as data_module

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _uses_chromium() -> None:
    missing = [b for b in (CHROMIUM, CHROMEDRIVER) if not Path(b).exists()]
    why = f"{', '.join(missing)} missing: apt-get install chromium chromium-driver"
    need("chromium", why if missing else None)


WAIT_S = 30


def shot(driver: Any, folder: Path, name: str, filled: Filled) -> Path:
    """A screenshot of the whole page (up to 2400 px high)."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1280, min(max(int(height) + 20, 600), 2400))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{filled.backend}.png"
    assert driver.save_screenshot(str(path))
    target = os.environ.get("VIBES_WEB_SCREENSHOTS")
    if target and filled.backend == "sqlite":
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(target) / f"{name}.png")
    driver.set_window_size(1280, 900)
    return path


def wait_for(driver: Any, what: Any, message: str) -> Any:
    return WebDriverWait(driver, WAIT_S).until(what, message)


def no_injection(driver: Any) -> None:
    assert driver.execute_script("return window.__pwned === undefined")
    assert not driver.find_elements(By.ID, "pwned")


def test_click_through_runs_run_sample_compare(
    browser: Any, server: Server, filled: Filled, tmp_path: Path
) -> None:
    art = tmp_path / "artifacts"
    browser.get(server.base + "/")
    assert browser.title.startswith("Runs")
    listed = [e.get_attribute("data-run") for e in browser.find_elements(By.CSS_SELECTOR, "tr.run")]
    assert {filled.alpha, filled.beta, "kernels-a", "kernels-b", "swe-1"} <= set(listed)
    shot(browser, art, "runs", filled)

    # Runs -> run.
    browser.find_element(By.LINK_TEXT, filled.alpha).click()
    wait_for(browser, lambda d: filled.alpha in d.title, "the run page")
    cards = {
        e.find_element(By.CLASS_NAME, "name").text: e.find_element(By.CLASS_NAME, "value").text
        for e in browser.find_elements(By.CSS_SELECTOR, "#metrics .metric")
    }
    assert set(cards) == {"pass@1", "pass@2"} and all(v.startswith("0.") for v in cards.values())
    assert browser.find_elements(By.CSS_SELECTOR, "figure.curve svg polyline")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#tasks tbody tr")) == 10
    assert browser.find_element(By.ID, "progress").get_attribute("value") == "50"
    shot(browser, art, "run", filled)

    # A bar of the failures chart -> the samples of that reason.
    bar = browser.find_element(By.CSS_SELECTOR, "#failures svg a")
    reason = bar.find_element(By.TAG_NAME, "text").text
    bar.find_element(By.TAG_NAME, "rect").click()
    wait_for(browser, lambda d: d.title.startswith("samples"), "the samples page")
    statuses = {e.text for e in browser.find_elements(By.CSS_SELECTOR, "#samples td .status")}
    assert statuses == {reason}

    # Samples -> sample.
    browser.find_elements(By.CSS_SELECTOR, "a.samplelink")[0].click()
    wait_for(browser, lambda d: d.find_elements(By.ID, "verdict"), "the sample page")
    assert browser.find_element(By.ID, "verdict").text == "failed"
    assert browser.find_element(By.CSS_SELECTOR, "#reason b").text == reason
    assert browser.find_elements(By.CSS_SELECTOR, "#code .hl")
    shot(browser, art, "sample", filled)

    # Back to the runs: tick two, compare.
    browser.find_element(By.LINK_TEXT, "Runs").click()
    wait_for(browser, lambda d: d.title.startswith("Runs"), "the runs page")
    for run_id in (filled.alpha, filled.beta):
        browser.find_element(By.CSS_SELECTOR, f'input[value="{run_id}"]').click()
    browser.find_element(By.ID, "compare-button").click()
    wait_for(browser, lambda d: d.title.startswith("compare"), "the compare page")
    text = browser.find_element(By.TAG_NAME, "main").text
    assert "McNemar's exact test" in text and "10 tasks in common" in text
    dots = browser.find_elements(By.CSS_SELECTOR, "#pair-1 svg circle.pt")
    tips = " ".join(d.get_attribute("textContent") for d in dots)
    assert all(f"Sanity/{i}:" in tips for i in range(10))  # every task, on some dot
    assert browser.find_elements(By.CSS_SELECTOR, "#pair-1 table.diff tbody tr")
    shot(browser, art, "compare", filled)
    assert sorted(p.name for p in art.iterdir()) == sorted(
        f"{n}-{filled.backend}.png" for n in ("runs", "run", "sample", "compare")
    )


def test_kernel_and_swe_pages(browser: Any, server: Server, filled: Filled, tmp_path: Path) -> None:
    browser.get(f"{server.base}/runs/kernels-a")
    names = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#metrics .metric .name")]
    assert names == ["compiled", "correct", "speedup", "fast_1.0", "fast_1.5"]
    labels = {e.text for e in browser.find_elements(By.CSS_SELECTOR, "svg text.marklabel")}
    assert labels == {"fast_1.0", "fast_1.5"}
    browser.get(f"{server.base}/compare?runs=kernels-a,kernels-b")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#pair-1 svg.chart")) == 2
    shot(browser, tmp_path, "kernels-compare", filled)
    browser.get(f"{server.base}/runs/swe-1/sample?task=org__repo-1&index=0")
    rows = browser.find_elements(By.CSS_SELECTOR, "table.tests tbody tr")
    assert len(rows) == 3
    assert [r.text for r in rows if "failure" in r.text] == [
        "PASS_TO_PASS tests/test_b.py::test_x failure"
    ]
    messages = browser.find_elements(By.CSS_SELECTOR, "#trajectory .message")
    assert len(messages) == 5
    assert "open_file" in browser.find_element(By.CSS_SELECTOR, "#trajectory .toolcall").text
    no_injection(browser)
    shot(browser, tmp_path, "swe-sample", filled)


def test_html_and_script_in_samples_are_shown_not_run(
    browser: Any, server: Server, filled: Filled
) -> None:
    browser.get(server.base + "/")
    chip = browser.find_element(By.CSS_SELECTOR, f'tr[data-run="{filled.beta}"] .chip')
    assert chip.text == "model=<b>beta</b><script>x()</script>"
    no_injection(browser)
    browser.get(f"{server.base}/runs/{filled.beta}/samples?passed=false")
    no_injection(browser)
    links = [
        e.get_attribute("href") for e in browser.find_elements(By.CSS_SELECTOR, "a.samplelink")
    ]
    shown = in_detail = 0
    for href in links:
        browser.get(href)
        no_injection(browser)
        code = browser.find_element(By.ID, "code").text
        if "window.__pwned" in code:
            assert '<script>window.__pwned=1</script><img id="pwned"' in code
            shown += 1
        detail = browser.find_elements(By.ID, "detail")
        # A panic message made of HTML: the detail shows it as text too.
        in_detail += bool(detail) and '<img id="pwned"' in detail[0].text
    assert shown >= 5 and in_detail >= 1
    browser.get(f"{server.base}/runs/swe-1/sample?task=org__repo-1&index=0")
    assert "<script>window.__pwned=1</script>" in browser.find_element(By.ID, "trajectory").text
    no_injection(browser)


def test_a_running_run_updates_live(
    browser: Any, server: Server, filled: Filled, tmp_path: Path
) -> None:
    run_id = "live-ui"
    with open_store(resolve(filled.url)) as st:
        fakebench.running_run(st, run_id, total=40, done=5)
    browser.get(f"{server.base}/runs/{run_id}")
    assert browser.find_element(By.ID, "status").text == "running"
    assert browser.find_element(By.ID, "done").text == "5"
    with open_store(resolve(filled.url)) as st:
        fakebench.add_verdicts(st, run_id, 5, 25)
    wait_for(browser, lambda d: d.find_element(By.ID, "done").text == "25", "live progress")
    assert browser.find_element(By.ID, "progress").get_attribute("value") == "25"
    with open_store(resolve(filled.url)) as st:
        fakebench.add_verdicts(st, run_id, 25, 40)
        st.append([RunCompleted(run_id=run_id, metrics={}, n_samples=40, n_passed=26)])
    wait_for(browser, lambda d: d.find_element(By.ID, "status").text == "completed", "the end")
    # The metrics were swapped in for the final state: over all 40 verdicts.
    wait_for(
        browser,
        lambda d: "as of" not in d.find_element(By.ID, "live-body").text,
        "final metrics",
    )
    assert browser.find_element(By.ID, "done").text == "40"
    shot(browser, tmp_path, "live", filled)


def test_a_big_run_fills_in_when_its_figures_are_ready(
    browser: Any, filled: Filled, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Past SYNC_LIMIT a run is scored in the worker process: its page comes at once,
    says it is computing, and reloads itself when the figures are ready."""
    monkeypatch.setattr(data_module, "SYNC_LIMIT", 10)
    srv = Server(filled.url, warm=False)
    try:
        browser.get(f"{srv.base}/runs/{filled.alpha}")
        wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#metrics .metric"), "metrics")
        assert not browser.find_elements(By.ID, "pending")
        assert len(browser.find_elements(By.CSS_SELECTOR, "#tasks tbody tr")) == 10
        browser.get(f"{srv.base}/compare?runs={filled.alpha},{filled.beta}")
        wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "p.mcnemar"), "comparison")
        shot(browser, tmp_path, "compare-worker", filled)
    finally:
        srv.stop()
