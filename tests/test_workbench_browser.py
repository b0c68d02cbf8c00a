"""The workbench in a real headless Chromium (Debian's ``chromium`` and
``chromium-driver``, driven by selenium): every page of a realistic bundle,
the DOM, console errors, requests outside the origin, keyboard navigation,
landmarks, labels, status-colour contrast, seeded secrets, live updates and
the static site from ``file://``.

Screenshots go to the test output (``$OURO_TEST_OUTPUT`` or a temp folder);
with ``OURO_DOCS_SCREENSHOTS=1`` the four in ``docs/workbench.md`` are
rewritten under ``docs/workbench/``.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ouro.bundle import Bundle
from ouro.workbench.site import build_site
from tests.conftest import REPO
from tests.test_workbench import Served
from tests.workbench_support import SECRETS, ouro, realistic_bundle

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
PAGES = ("now", "timeline", "claims", "recovery", "desk", "record", "habits", "search")
DOC_SHOTS = ("now", "timeline", "recovery", "record")

if not (CHROMIUM and DRIVER):
    pytest.skip(
        "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver;"
        " .ci/run installs them)",
        allow_module_level=True,
    )
webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (the test extra)")


def _driver() -> Any:
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,900", "--hide-scrollbars", "--force-device-scale-factor=1"):  # fmt: skip
        options.add_argument(arg)
    options.binary_location = str(CHROMIUM)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(str(DRIVER)), options=options)


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = os.environ.get("OURO_TEST_OUTPUT")
    folder = Path(out) / "workbench" if out else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    root = tmp_path_factory.mktemp("wbb") / "demo.ouro"
    bundle = realistic_bundle(root)
    ouro(root, "index", "sync")
    return bundle


@pytest.fixture(scope="module")
def served(made: Bundle) -> Iterator[Served]:
    s = Served(made)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    driver = _driver()
    yield driver
    driver.quit()


def _origin(served: Served) -> str:
    return f"http://127.0.0.1:{served.port}"


def _url(served: Served, name: str) -> str:
    return _origin(served) + ("/" if name == "now" else f"/{name}")


def _drain(driver: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """(console entries, request URLs) since the last drain."""
    console = driver.get_log("browser")
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return console, urls


def _shoot(driver: Any, path: Path) -> None:
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1280, min(max(int(height), 700), 2200))
    driver.save_screenshot(str(path))
    driver.set_window_size(1280, 900)


def test_every_page_loads_clean(browser: Any, served: Served, shots: Path) -> None:
    origin = _origin(served)
    docs = os.environ.get("OURO_DOCS_SCREENSHOTS") == "1"
    _drain(browser)
    for name in PAGES:
        browser.get(_url(served, name))
        assert browser.find_element("css selector", "main h1").text
        time.sleep(0.3)  # let live.js make its first poll
        console, urls = _drain(browser)
        assert not [c for c in console if c["level"] in ("SEVERE", "WARNING")], (name, console)
        outside = [u for u in urls if not u.startswith(origin) and not u.startswith("data:")]
        assert not outside, (name, outside)
        html = browser.page_source
        for secret in SECRETS:
            assert secret not in html, (name, secret)
        _shoot(browser, shots / f"{name}.png")
        if docs and name in DOC_SHOTS:
            target = REPO / "docs" / "workbench"
            target.mkdir(exist_ok=True)
            shutil.copyfile(shots / f"{name}.png", target / f"{name}.png")


def test_now_page_dom(browser: Any, served: Served) -> None:
    browser.get(_url(served, "now"))
    find = browser.find_element
    assert "migrate the auth tokens to the new table" in find("id", "ask").text
    nxt = find("id", "next-action").text
    assert "copy the tokens table, then compare row counts" in nxt
    assert "switching production reads" in nxt
    assert "tokens copied, reads not switched" in find("id", "handoff").text
    claim = find("css selector", '#claims li[data-status="evidence_required"]')
    assert "the tokens table copy has the same row count" in claim.text
    check = find("css selector", '#sentinel tr[data-check="stale_guard"]')
    assert "fail" in check.text
    assert "ouro arc query blocked" in check.find_element("css selector", "code.repair").text
    assert "blocked" in find("id", "sentinel-verdict").text


def test_record_page_dom(browser: Any, served: Served) -> None:
    browser.get(_url(served, "record"))
    old = browser.find_element("css selector", "article.fact.superseded")
    assert "tokens live in the auth_tokens table" in old.text
    assert "superseded by" in old.find_element("css selector", ".chain").text
    assert "tokens moved to the tokens_v2 table" in old.text
    # Markdown rendered, raw HTML shown as text, never run
    prose = browser.find_element("css selector", "details.note .prose")
    assert prose.find_element("css selector", "table")
    assert '<script>alert("raw html must not run")</script>' in prose.text
    assert not browser.find_elements("css selector", "main script")
    assert not browser.find_elements("css selector", 'a[href^="javascript:"]')


def test_timeline_filters_and_locator_links(browser: Any, served: Served) -> None:
    from selenium.webdriver.support.ui import Select

    browser.get(_url(served, "timeline"))
    Select(browser.find_element("id", "f-kind")).select_by_value("handoff")
    browser.find_element("css selector", "form.filters button").click()
    _wait(lambda: "kind=handoff" in browser.current_url)
    events = browser.find_elements("css selector", "li.event")
    assert len(events) == 1 and "context boundary" in events[0].text
    events[0].find_element("css selector", "a.loc").click()
    _wait(lambda: "/locator" in browser.current_url)
    assert '"kind": "handoff"' in browser.find_element("css selector", "pre.source").text


def test_keyboard_navigation(browser: Any, served: Served) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    browser.get(_url(served, "now"))
    ActionChains(browser).send_keys(Keys.TAB).perform()
    active = browser.switch_to.active_element
    assert active.text == "Skip to content"
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    assert browser.switch_to.active_element.get_attribute("id") == "main"
    browser.get(_url(served, "now"))
    ActionChains(browser).send_keys(Keys.TAB, Keys.TAB).perform()
    assert browser.switch_to.active_element.text == "Now"  # the first page link
    ActionChains(browser).send_keys("4").perform()  # the fourth page: Recovery
    _wait(lambda: browser.current_url.endswith("/recovery"))
    ActionChains(browser).send_keys("/").perform()
    _wait(lambda: browser.current_url.endswith("/search"))
    assert browser.switch_to.active_element.get_attribute("id") == "q"


def _luminance(rgb: tuple[float, ...]) -> float:
    def chan(c: float) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (chan(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _rgb(text: str) -> tuple[float, ...]:
    return tuple(float(p) for p in text[text.index("(") + 1 : text.index(")")].split(",")[:3])


def test_landmarks_labels_and_status_contrast(browser: Any, served: Served) -> None:
    for name in PAGES:
        browser.get(_url(served, name))
        count = browser.execute_script
        assert count("return document.querySelectorAll('main').length") == 1, name
        assert count("return document.querySelectorAll('header[role=banner]').length") == 1
        assert count("return document.querySelectorAll('nav[aria-label]').length") >= 1
        assert count("return document.querySelectorAll('footer[role=contentinfo]').length") == 1
        assert count("return document.documentElement.lang") == "en"
        unlabelled = count(
            "return [...document.querySelectorAll('input,select,textarea')]"
            ".filter(e => !e.labels.length && !e.getAttribute('aria-label')).length"
        )
        assert unlabelled == 0, name
        assert count("return document.querySelectorAll('h1').length") == 1, name
    seen: set[str] = set()
    for name in PAGES:  # every status badge (ready / watch / blocked / …) on every page
        browser.get(_url(served, name))
        pairs = browser.execute_script(
            "return [...document.querySelectorAll('.badge, .nav a, .repair, .mark')].map(e => {"
            "const s = getComputedStyle(e); let b = e, bg = s.backgroundColor;"
            "while (bg === 'rgba(0, 0, 0, 0)' && b.parentElement) {"
            "b = b.parentElement; bg = getComputedStyle(b).backgroundColor }"
            "return [e.className, s.color, bg]})"
        )
        for cls, fg, bg in pairs:
            lighter, darker = sorted((_luminance(_rgb(fg)), _luminance(_rgb(bg))), reverse=True)
            ratio = (lighter + 0.05) / (darker + 0.05)
            assert ratio >= 4.5, (name, cls, fg, bg, ratio)
            seen.add(cls)
    assert {"badge v-blocked", "badge v-ready", "badge st-fail", "badge st-warn"} <= seen
    browser.get(_url(served, "recovery"))
    assert browser.find_element("css selector", "figure.chart svg[role=img] title").get_attribute(
        "textContent"
    )


def _wait(cond: Any, timeout: float = 15.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.2)
    raise AssertionError("condition not met in time")


def test_now_updates_live_without_a_reload(browser: Any, made: Bundle, tmp_path: Path) -> None:
    root = tmp_path / "live.ouro"
    shutil.copytree(made.root, root, symlinks=True)
    live = Served(Bundle.open(root))
    try:
        browser.get(f"http://127.0.0.1:{live.port}/")
        browser.execute_script("window.__notReloaded = true")
        time.sleep(2)  # the first poll sets the stamp
        ouro(root, "arc", "ask", "switch production reads to tokens_v2")
        _wait(
            lambda: "switch production reads to tokens_v2" in browser.find_element("id", "ask").text
        )
        assert browser.execute_script("return window.__notReloaded === true")
    finally:
        live.stop()


def test_static_site_from_file_url(browser: Any, made: Bundle, tmp_path: Path, shots: Path) -> None:
    out = tmp_path / "site"
    build_site(made, out)
    _drain(browser)
    for page in sorted(out.glob("*.html")):
        browser.get(page.as_uri())
        assert browser.find_element("css selector", "main h1").text
        console, urls = _drain(browser)
        assert not [c for c in console if c["level"] in ("SEVERE", "WARNING")], (page.name, console)
        assert all(u.startswith("file://") or u.startswith("data:") for u in urls), urls
        # the inline stylesheet applied (its hash is in the page's CSP)
        bg = browser.execute_script(
            "return getComputedStyle(document.querySelector('.top')).backgroundColor"
        )
        assert bg == "rgb(17, 24, 39)", page.name
    browser.get((out / "index.html").as_uri())
    _shoot(browser, shots / "static-now.png")
