"""The on-call pages in a real browser: Debian's Chromium, headless, driven by Selenium through
Debian's chromedriver. A real AdminServer (the admin token set) reads a real Store of judged
turns, some carrying script payloads; then a real sidecar judges real OTLP traffic with the
local judge and its pages are read the same way.

Logging in, the worst turns and their filters, the ungrounded claim and its evidence, a
correction sent from the form into the store, payloads that do not run (and the CSP the browser
enforces), and a cross-site form that is refused. Screenshots go to the test's tmp dir and are
copied to /tmp/ui-screenshots/. Without Chromium the tests fail, saying how to install it."""

from __future__ import annotations

import asyncio
import shutil
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from monitor.admin import AdminServer, RecentTurns
from monitor.store import Store, ThreadedStore
from tests.ui_turns import XSS, fill
from tests.waiting import wait_until

pytestmark = pytest.mark.e2e

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
TOKEN = "browser-test-token"
SHOTS = Path("/tmp/ui-screenshots")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1400,1000")
WAIT_S = 30.0


class Served:
    """An AdminServer with the admin token, reading a filled Store, on a loop of its own."""

    def __init__(self, directory: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.store = Store(directory / "store.db")
        self.ids = fill(self.store)
        self.threaded = ThreadedStore(self.store)
        self.admin = AdminServer("127.0.0.1:0", CollectorRegistry(), RecentTurns(1, 1 << 20),
                                 ready=lambda: True, bearer_token=TOKEN,
                                 store=lambda: self.threaded)
        self.call(self.admin.start())
        self.url = f"http://127.0.0.1:{self.admin.port}"

    def call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=WAIT_S)

    def corrections(self, trace_id: str) -> list[dict[str, Any]]:
        """Read on the store's thread, as the server's calls are."""
        return self.call(self.threaded._run(self.threaded.sync.corrections, trace_id))  # type: ignore[no-any-return]

    def stop(self) -> None:
        self.call(self.admin.stop())
        self.call(self.threaded.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    running = Served(tmp_path_factory.mktemp("ui-store"))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Where the screenshots go; copied to /tmp/ui-screenshots/ at the end."""
    directory = tmp_path_factory.mktemp("ui-screenshots")
    yield directory
    SHOTS.mkdir(exist_ok=True)
    for shot in directory.glob("*.png"):
        shutil.copy(shot, SHOTS / shot.name)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.fail(f"the browser tests need Debian's chromium and chromium-driver ({', '.join(missing)}"
                    " missing): apt-get install -y chromium chromium-driver (bash .ci/run installs"
                    " them)", pytrace=False)
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("the browser tests need selenium (the `test` extra): "
                    ".venv/bin/pip install -e '.[test]'", pytrace=False)
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # chromedriver by path: Selenium Manager downloads nothing
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
    driver.set_page_load_timeout(WAIT_S)
    yield driver
    driver.quit()


def until(driver: Any, condition: Any, what: str) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_S).until(condition, message=f"waiting for {what}")


def find(driver: Any, css: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, css)


def find_all(driver: Any, css: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, css))


def listed(driver: Any) -> list[str]:
    """The trace ids the worst-turns table links to, in its order."""
    return [a.get_attribute("href").rsplit("/", 1)[1] for a in find_all(driver, "#turns a")]


def screenshot(driver: Any, path: Path) -> None:
    """The whole page (the window stretched to its height, within 6,000 pixels)."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1400, min(max(height, 600), 6000))
    driver.save_screenshot(str(path))
    driver.set_window_size(1400, 1000)


def submit(driver: Any, form: Any) -> None:
    """Submit a form by its button and wait for the page it leads to."""
    follow(driver, form.find_element("css selector", "button[type=submit]"), "the next page")


def follow(driver: Any, element: Any, what: str) -> None:
    """Click a link or button and wait for the page it loads.

    The old page is marked on its window object and the wait is for a loaded document without
    the mark: probing an old element instead races the navigation, and Chromium can then answer
    with an inspector error ("Node with given id does not belong to the document") rather than a
    stale-element one.
    """
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    driver.execute_script("window.__amOldPage = true")
    element.click()
    WebDriverWait(driver, WAIT_S, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script(
            "return window.__amOldPage === undefined && document.readyState === 'complete'"),
        message=f"waiting for {what}")


def log_in(driver: Any, served: Served, target: str) -> None:
    driver.get(served.url + target)
    if driver.title.startswith("Log in"):
        find(driver, "input[name=token]").send_keys(TOKEN)
        submit(driver, find(driver, "form.login"))


def test_log_in_then_read_and_filter_the_worst_turns(browser: Any, served: Served,
                                                     shots: Path) -> None:
    ids = served.ids
    target = "/ui/turns?metric=groundedness&below=0.9"
    browser.get(served.url + target)
    # no token, no cookie: the 401 page is the login form
    assert browser.title == "Log in · assistant-monitor"
    assert "Worst turns" not in find(browser, "main").text
    find(browser, "input[name=token]").send_keys("a guess")
    submit(browser, find(browser, "form.login"))
    assert find(browser, "#login-error").text == "wrong token"
    find(browser, "input[name=token]").send_keys(TOKEN)
    submit(browser, find(browser, "form.login"))
    # back where the link led, with the filters of the link
    assert browser.current_url == served.url + target
    assert listed(browser) == [ids["hostile"], ids["ungrounded"]]
    cookie = next(c for c in browser.get_cookies() if c["name"].startswith("am_ui_session"))
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/ui"
    assert browser.execute_script("return document.cookie") == ""  # HttpOnly: no script reads it
    assert find(browser, "form.logout button").text == "log out"

    # the filter form: completeness labelled no_answer
    from selenium.webdriver.support.ui import Select

    browser.get(served.url + "/ui/turns")
    assert listed(browser) == [ids[n] for n in ("no_answer", "hostile", "tools", "ungrounded",
                                                "grounded")]
    screenshot(browser, shots / "worst-turns.png")
    Select(find(browser, "select[name=metric]")).select_by_value("completeness")
    Select(find(browser, "select[name=label]")).select_by_value("no_answer")
    submit(browser, find(browser, "form.filters"))
    assert "metric=completeness" in browser.current_url and "label=no_answer" in browser.current_url
    assert listed(browser) == [ids["no_answer"]]
    assert find(browser, "#summary").text.startswith("1 turn, newest first")
    find(browser, "input[name=route]").send_keys("shop/support")
    Select(find(browser, "select[name=label]")).select_by_value("")
    Select(find(browser, "select[name=metric]")).select_by_value("")
    submit(browser, find(browser, "form.filters"))
    assert listed(browser) == [ids["hostile"], ids["grounded"]]
    screenshot(browser, shots / "worst-turns-filtered.png")
    # a row leads to its turn
    follow(browser, find(browser, f"#turns a[href='/ui/turns/{ids['grounded']}']"), "the turn page")
    assert browser.current_url == f"{served.url}/ui/turns/{ids['grounded']}"


def test_the_turn_page_marks_the_ungrounded_claim_and_shows_its_evidence(
        browser: Any, served: Served, shots: Path) -> None:
    trace_id = served.ids["ungrounded"]
    log_in(browser, served, f"/ui/turns/{trace_id}")
    assert browser.title == f"Turn {trace_id} · assistant-monitor"
    marks = find_all(browser, "#answer p.answer mark.claim")
    assert [(m.get_attribute("class"), m.text) for m in marks] == [
        ("claim inferable", "The Pro plan costs 12 euros a month.1"),
        ("claim ungrounded", "Students get 50% off every plan.2")]
    # the stylesheet applied (the CSP allows 'self'): the ungrounded claim is shaded red
    assert marks[1].value_of_css_property("background-color") == "rgba(253, 228, 225, 1)"
    claim = find(browser, "#c2")
    assert claim.find_element("css selector", ".label").text == "ungrounded"
    evidence = claim.find_element("css selector", ".evidence")
    assert "document 1 [kb-plans]" in evidence.text and "characters 67–99" in evidence.text
    assert evidence.find_element("css selector", "blockquote mark").text == \
        "Annual billing saves two months."
    # beside each other: the claims list to the right of the answer
    assert claim.location["x"] > marks[0].location["x"] + 300
    # the evidence link leads to the window inside the document, which is open
    evidence.find_element("css selector", "a").click()
    until(browser, lambda d: d.current_url.endswith("#ev-1-2"), "the evidence window")
    assert find(browser, "#doc-1").get_attribute("open") is not None
    assert find(browser, "#doc-1 .doc-content mark.ungrounded").text == \
        "Annual billing saves two months.2"
    assert "relevant" in find(browser, "#doc-1 summary .label").text
    sampling = find(browser, "#sampling").text
    assert sampling == "rule negative_feedback, p = 1.00, weight 1"
    assert find(browser, "#previous").get_attribute("href").endswith(served.ids["grounded"])
    assert find(browser, "#next").get_attribute("href").endswith(served.ids["tools"])
    browser.get(f"{served.url}/ui/turns/{trace_id}")
    screenshot(browser, shots / "turn-page.png")
    browser.get(f"{served.url}/ui/turns/{served.ids['tools']}")
    steps = find_all(browser, "ol.trajectory li.step")
    assert [s.text.split("(")[0] for s in steps] == ["lookup_order", "check_policy",
                                                     "cancel_order"]
    assert "failed: order service timed out" in steps[2].text
    screenshot(browser, shots / "turn-page-tool-calls.png")


def test_a_correction_from_the_form_is_stored(browser: Any, served: Served,
                                              shots: Path) -> None:
    trace_id = served.ids["ungrounded"]
    log_in(browser, served, f"/ui/turns/{trace_id}")
    form = find(browser, "#v-local-groundedness form.correct")
    form.find_element("css selector", "input[name=verdict][value=wrong]").click()
    form.find_element("css selector", "input[name=score]").send_keys("0.2")
    form.find_element("css selector", "input[name=author]").send_keys("on-call <b>ana</b>")
    submit(browser, form)
    assert browser.current_url == f"{served.url}/ui/turns/{trace_id}#corrections"
    row = find(browser, "#corrections tbody tr")
    assert "on-call <b>ana</b>" in row.text and "wrong: it is 0.20" in row.text
    stored = served.corrections(trace_id)
    assert [(c["judge"], c["metric"], c["correct"], c["score"], c["verdict_score"], c["author"])
            for c in stored] == [("local", "groundedness", False, 0.2, 0.5, "on-call <b>ana</b>")]
    # a right verdict, and a wrong label
    form = find(browser, "#v-local-completeness form.correct")
    form.find_element("css selector", "input[name=verdict][value=right]").click()
    form.find_element("css selector", "input[name=author]").send_keys("ana")
    submit(browser, form)
    from selenium.webdriver.support.ui import Select

    form = find(browser, "#v-local-answer_relevance form.correct")
    form.find_element("css selector", "input[name=verdict][value=wrong]").click()
    Select(form.find_element("css selector", "select[name=label]")).select_by_value("irrelevant")
    form.find_element("css selector", "input[name=author]").send_keys("ana")
    submit(browser, form)
    assert [(c["metric"], c["correct"], c["label"]) for c in served.corrections(trace_id)][1:] \
        == [("completeness", True, None), ("answer_relevance", False, "irrelevant")]
    # a wrong verdict without its right label is said, not stored
    form = find(browser, "#v-local-completeness form.correct")
    form.find_element("css selector", "input[name=verdict][value=wrong]").click()
    form.find_element("css selector", "input[name=author]").send_keys("ana")
    submit(browser, form)
    assert "Correction not saved: a wrong completeness verdict needs the right label" in \
        find(browser, "#error").text
    assert len(served.corrections(trace_id)) == 3
    browser.get(f"{served.url}/ui/turns/{trace_id}#corrections")
    screenshot(browser, shots / "turn-page-corrected.png")


def test_payloads_in_turns_and_verdicts_do_not_run(browser: Any, served: Served,
                                                   shots: Path) -> None:
    trace_id = served.ids["hostile"]
    for path in (f"/ui/turns/{trace_id}", "/ui/turns"):
        log_in(browser, served, path)
        title = browser.title
        assert title in (f"Turn {trace_id} · assistant-monitor", "Worst turns · assistant-monitor")
        state = browser.execute_script(
            "return {pwned: document.getElementById('pwned') !== null,"
            " scripts: document.scripts.length,"
            " elements: document.querySelectorAll('img, svg, iframe, style, textarea').length,"
            " body: getComputedStyle(document.body).display,"
            " handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes]"
            "   .some(a => a.name.startsWith('on'))).length}")
        assert state == {"pwned": False, "scripts": 0, "elements": 0, "body": "block",
                         "handlers": 0}, path
    browser.get(f"{served.url}/ui/turns/{trace_id}")
    question = find(browser, "#question p").text
    assert question == "When? " + " ".join(XSS).replace("\n", " ")  # shown as text
    assert "pwned" not in browser.title
    # The browser enforces the policy: an inline script put into the page does not run.
    browser.execute_script("const s = document.createElement('script');"
                           "s.textContent = \"document.title = 'csp-broken'\";"
                           "document.head.appendChild(s);")
    assert browser.title == f"Turn {trace_id} · assistant-monitor"
    until(browser, lambda d: any("Content Security Policy" in e["message"]
                                 for e in d.get_log("browser")), "the CSP violation's report")
    with urllib.request.urlopen(urllib.request.Request(
            f"{served.url}/ui/turns/{trace_id}",
            headers={"Authorization": f"Bearer {TOKEN}"}), timeout=10) as response:
        assert response.headers["Content-Security-Policy"].startswith("default-src 'none';")
    screenshot(browser, shots / "turn-page-hostile.png")


ATTACK = """<!doctype html><title>cheap flights</title>
<body onload="document.forms[0].submit()">
<form method="post" action="{action}">
<input name="csrf" value="{csrf}"><input name="judge" value="local">
<input name="metric" value="groundedness"><input name="verdict" value="right">
<input name="author" value="mallory"></form>"""


def test_a_cross_site_form_is_refused(browser: Any, served: Served, shots: Path) -> None:
    """Another site's page posts a correction with the victim's browser: the session cookie
    goes along (127.0.0.1 on another port is the same site), the CSRF token and the origin do
    not. With the real token (leaked, say), the origin still refuses it."""
    from aiohttp import web

    trace_id = served.ids["grounded"]
    log_in(browser, served, f"/ui/turns/{trace_id}")
    csrf = find(browser, "input[name=csrf]").get_attribute("value")
    action = f"{served.url}/ui/turns/{trace_id}/corrections"

    async def attack(request: web.Request) -> web.Response:
        return web.Response(text=ATTACK.format(action=action, csrf=request.query.get("csrf", "")),
                            content_type="text/html")

    async def start() -> tuple[web.AppRunner, int]:
        app = web.Application()
        app.router.add_get("/", attack)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return runner, site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    runner, port = served.call(start())
    try:
        for leaked in ("", csrf):
            browser.get(f"http://127.0.0.1:{port}/?csrf={leaked}")
            until(browser, lambda d: d.current_url.startswith(action), "the forged post")
            until(browser, lambda d: d.title == "Refused · assistant-monitor", "the refusal")
            assert "Refused a same-site request (Sec-Fetch-Site)" in find(browser, "main").text
        screenshot(browser, shots / "cross-site-refused.png")
    finally:
        served.call(runner.cleanup())
    assert [c for c in served.corrections(trace_id) if c["author"] == "mallory"] == []


def test_a_sidecar_s_judged_turns_in_the_browser(browser: Any, start_sidecar: Any,
                                                 shots: Path) -> None:
    """A real sidecar: turns sent over OTLP, judged by the local judge, read in the browser
    (no token: the pages are open on loopback)."""
    from tests import traffic
    from tests.test_pipeline import provider_for

    sidecar = start_sidecar()
    provider = provider_for(sidecar.grpc_endpoint)
    grounded = traffic.send(provider, traffic.GROUNDED[0])
    invented = traffic.send(provider, traffic.INVENTED[0])
    provider.shutdown()

    def judged() -> bool:
        with urllib.request.urlopen(f"{sidecar.admin_url}/ui/turns?metric=groundedness",
                                    timeout=10) as response:
            page = response.read().decode()
        return grounded in page and invented in page

    wait_until(judged, 120, "both turns judged")
    browser.get(f"{sidecar.admin_url}/ui/turns?metric=groundedness&below=0.5")
    assert listed(browser) == [invented]
    browser.get(f"{sidecar.admin_url}/ui/turns/{invented}")
    mark = find(browser, "#answer p.answer mark.claim")
    assert mark.get_attribute("class") == "claim ungrounded"
    assert mark.text.startswith("The Pro plan is free for veterans")
    evidence = find(browser, "#c1 .evidence")
    assert "document 1 [doc-0]" in evidence.text
    assert evidence.find_element("css selector", "blockquote mark").text == \
        traffic.INVENTED[0].documents[0]
    verdict = find(browser, "#v-local-groundedness").text
    assert "judge local, model claim_support@" in verdict
    screenshot(browser, shots / "sidecar-turn-page.png")
