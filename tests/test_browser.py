"""End-to-end test of ``shardplan serve`` in Debian's headless Chromium (Playwright for Python).

Starts the Dash app on a free localhost port in a background thread, changes tp from 1 to 2 in the
page, and checks that the step time, MFU and memory total shown equal ``estimate(...).to_dict()``
(what ``shardplan estimate --json`` prints) for the same inputs; then enters an invalid tp and
checks the alert. Saves a screenshot to the test's tmp path, and to ``docs/img/guide.png`` when
``SHARDPLAN_SAVE_SCREENSHOT=1``.

Needs ``/usr/bin/chromium`` (Debian package ``chromium``); skipped with a reason if it is absent.
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server_url():
    pytest.importorskip("dash")
    from werkzeug.serving import make_server

    from shardplan.web.app import create_app
    port = _free_port()
    srv = make_server("127.0.0.1", port, create_app().server, threaded=True)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        srv.shutdown()
        th.join(timeout=10)


@pytest.fixture(scope="module")
def page(server_url):
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            pg = browser.new_page(viewport={"width": 1500, "height": 1000})
            pg.set_default_timeout(30_000)
            pg.goto(server_url)
            yield pg
        finally:
            browser.close()


def _expected(**layout) -> dict:
    """``shardplan estimate --json`` for the app's default inputs with ``layout`` overrides."""
    from shardplan.cost.step import estimate
    from shardplan.inputs import build_inputs
    from shardplan.web.app import DEFAULTS, LAYOUT_CONTROLS
    d = {**DEFAULTS, **layout}
    # an unchecked sp / tp_overlap box is the flag not given (the framework's default), as the app reads it
    given = {k: (None if k in ("sp", "tp_overlap") and d[k] is False else d[k]) for k in LAYOUT_CONTROLS}
    m, hw, tr, pc = build_inputs(model=d["model"], hardware=d["hardware"], devices=d["devices"], seq_len=d["seq_len"],
                                 global_batch=d["global_batch"], global_batch_tokens=None, precision=d["precision"],
                                 **given)
    return estimate(m, hw, tr, pc, d["devices"]).to_dict()


def _wait_step(page, value: float) -> None:
    # the value attribute and the text are set by one render, but under load the attribute can be read first
    # (CI once saw the new data-value beside an empty text): wait for both
    page.wait_for_function("v => { const el = document.querySelector('#headline-step');"
                           " return el && el.getAttribute('data-value') === v && el.innerText.trim().length > 0; }",
                           arg=repr(value))


def _shown(page, key: str) -> tuple[float, str]:
    el = page.locator(f"#headline-{key}")
    return float(el.get_attribute("data-value")), el.inner_text()


def _set_number(page, control: str, value: str) -> None:
    box = page.locator(f"input#{control}")
    box.fill(value)
    box.press("Enter")  # debounce=True: Dash sends the value on Enter / blur


def test_change_tp_updates_numbers(page, tmp_path):
    from shardplan.web.charts import fmt_gib, fmt_seconds
    base = _expected()
    _wait_step(page, base["time_s"]["step"])
    assert _shown(page, "mfu")[0] == base["mfu"]

    _set_number(page, "tp", "2")
    exp = _expected(tp=2)
    assert exp["time_s"]["step"] != base["time_s"]["step"]
    _wait_step(page, exp["time_s"]["step"])
    step, step_text = _shown(page, "step")
    mfu, mfu_text = _shown(page, "mfu")
    mem, mem_text = _shown(page, "memory")
    assert step == exp["time_s"]["step"] and step_text == fmt_seconds(exp["time_s"]["step"])
    assert mfu == exp["mfu"] and mfu_text == f"{exp['mfu']:.2%}"
    assert mem == exp["memory_bytes"]["total"] and mem_text.startswith(fmt_gib(exp["memory_bytes"]["total"]))
    assert float(page.locator("#headline-tokens").get_attribute("data-value")) == exp["tokens_per_s"]
    assert page.locator("#headline-bound").inner_text() == exp["bound"]
    # the four live charts and the ranked plans are drawn
    for chart in ("time-chart", "memory-chart", "roofline-chart", "pipeline-chart", "plans-chart"):
        page.locator(f"#{chart} .main-svg").first.wait_for()
    page.locator("#plans-chart .bars .point").first.wait_for()
    shot = tmp_path / "guide.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    if os.environ.get("SHARDPLAN_SAVE_SCREENSHOT") == "1":  # the docs' picture: add pp=2 for a pipeline
        _set_number(page, "pp", "2")
        _wait_step(page, _expected(tp=2, pp=2)["time_s"]["step"])
        page.locator("#plans-chart .bars .point").first.wait_for()
        out = ROOT / "docs" / "img" / "guide.png"
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out), full_page=True)


def test_invalid_tp_shows_alert(page):
    _set_number(page, "pp", "1")
    _set_number(page, "tp", "16")
    alert = page.locator("#alert")
    alert.wait_for(state="visible")
    page.wait_for_function("() => document.querySelector('#alert').innerText.includes('tp=16')")
    assert "n_kv_heads=8" in alert.inner_text()
    _set_number(page, "tp", "2")
    _wait_step(page, _expected(tp=2)["time_s"]["step"])
    assert not page.locator("#alert").is_visible()
