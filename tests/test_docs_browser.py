"""The built docs site in a real headless browser (issue 40): Debian's ``chromium``, driven through its
DevTools protocol (a WebSocket, spoken here with the standard library), loads the site from Python's
``http.server`` on 127.0.0.1. The home page and a key's reference page render (their stylesheet and
scripts loaded, their picture and entry there) with no console error, every internal link on them
resolves (HTTP 200, and its anchor exists), the search finds a key by name, and each page is saved as
a screenshot under the test's tmp_path.

CI installs chromium (``.ci/run``: ``apt-get install -y chromium``); without it this test fails and
says so: it never skips. Its waits are generous (a loaded 2-core machine) and it asserts no timing.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import http.server
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

WAIT_S = 180  # for anything the browser does: generous, never asserted
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
# A key's reference entry: its page and anchor, as the docs link them (reference/scenario/SECTION/#KEY).
KEYS = [("tcp.sack", "reference/scenario/tcp/", "tcp.sack"),
        ("flows.*.bytes", "reference/scenario/flows/", "flows.bytes")]
PNG = b"\x89PNG\r\n\x1a\n"


class DevTools:
    """A client of one page's DevTools protocol endpoint: calls, and the events that come meanwhile."""

    def __init__(self, ws_url: str) -> None:
        u = urllib.parse.urlparse(ws_url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=WAIT_S)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {u.path} HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
                          .encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self._exact(1)
        assert b" 101 " in head.split(b"\r\n")[0], head  # RFC 6455 4.2.2: switching protocols
        self.next_id = 0
        self.events: list[dict] = []

    def _exact(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("the browser closed its DevTools connection")
            buf += chunk
        return buf

    def _receive(self) -> dict:
        data = b""
        while True:  # RFC 6455 5.2: a frame's header, its length, its payload (unmasked from a server)
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            payload = self._exact(n)
            if b0 & 0x0F == 8:
                raise ConnectionError("the browser closed the WebSocket")
            if b0 & 0x0F in (0, 1, 2):
                data += payload
                if b0 & 0x80:
                    return json.loads(data)

    def _send(self, obj: dict) -> None:
        payload = json.dumps(obj).encode()
        n, mask = len(payload), os.urandom(4)  # a client masks every frame (RFC 6455 5.3)
        length = bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 \
            else bytes([0x80 | 127]) + struct.pack(">Q", n)
        self.sock.sendall(b"\x81" + length + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def call(self, method: str, **params) -> dict:
        self.next_id += 1
        self._send({"id": self.next_id, "method": method, "params": params})
        while True:
            msg = self._receive()
            if msg.get("id") == self.next_id:
                assert "error" not in msg, f"{method}: {msg['error']}"
                return msg.get("result", {})
            self.events.append(msg)

    def until_event(self, method: str) -> None:
        if any(e.get("method") == method for e in self.events):
            return
        while True:
            msg = self._receive()
            self.events.append(msg)
            if msg.get("method") == method:
                return

    def evaluate(self, expression: str):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in r, f"{expression}: {r['exceptionDetails']}"
        return r["result"].get("value")

    def until(self, expression: str):
        """Poll ``expression`` until it is truthy (WAIT_S at most, then fail saying which)."""
        end = time.monotonic() + WAIT_S
        while time.monotonic() < end:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.25)
        pytest.fail(f"the page never satisfied {expression} within {WAIT_S} s")


def console_errors(events: list[dict]) -> list[str]:
    """The page's console errors, uncaught exceptions and failed loads among DevTools events."""
    out = []
    for e in events:
        method, p = e.get("method"), e.get("params", {})
        if method == "Runtime.exceptionThrown":
            out.append(json.dumps(p.get("exceptionDetails", {}))[:500])
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            out.append(f"{p['entry'].get('text')} ({p['entry'].get('url', '')})")
    return out


@pytest.fixture(scope="module")
def server(docs_site):
    handler = functools.partial(_QuietHandler, directory=str(docs_site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, name="docs-http", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    exe = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
    if exe is None:
        pytest.fail("no chromium: `apt-get install -y chromium` (Debian; .ci/run installs it)")
    profile = tmp_path_factory.mktemp("chromium-profile")
    argv = [exe, "--headless=new", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
            "--disable-extensions", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
            f"--user-data-dir={profile}", "--window-size=1280,1400", "about:blank"]
    if os.geteuid() == 0:
        argv.insert(1, "--no-sandbox")  # chromium refuses to run as root with its sandbox
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    lines: list[str] = []
    port = None
    drain = dt = None
    try:
        deadline = time.monotonic() + WAIT_S
        while port is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                break
            lines.append(line)
            m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            port = int(m.group(1)) if m else None
        assert port, f"chromium did not start its DevTools endpoint:\n{''.join(lines)[-3000:]}"
        drain = threading.Thread(target=lambda: [lines.append(x) for x in proc.stderr], daemon=True)
        drain.start()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=WAIT_S) as r:
            target = next(t for t in json.load(r) if t["type"] == "page")
        dt = DevTools(target["webSocketDebuggerUrl"])
        for domain in ("Runtime", "Log", "Page"):
            dt.call(f"{domain}.enable")
        yield dt
    finally:
        if dt is not None:
            dt.sock.close()
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if drain is not None:
            drain.join(timeout=WAIT_S)
        proc.stderr.close()


def load(dt: DevTools, url: str) -> None:
    """Open ``url`` and wait until it and the theme's scripts are loaded."""
    dt.events.clear()
    dt.call("Page.navigate", url=url)
    dt.until_event("Page.loadEventFired")
    dt.until("document.readyState === 'complete' && !!document.querySelector('.md-search__input')")


def screenshot(dt: DevTools, path: Path) -> None:
    data = base64.b64decode(dt.call("Page.captureScreenshot", format="png")["data"])
    path.write_bytes(data)
    assert data[:8] == PNG and path.stat().st_size > 0
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk (PNG spec 11.2.2)
    assert width > 0 and height > 0


def check_links(dt: DevTools, server: str) -> int:
    """Every link on the page to the site itself answers 200, and its anchor is on the target page."""
    hrefs = dt.evaluate("[...document.querySelectorAll('a[href]')].map(a => a.href)")
    pages: dict[str, str] = {}
    checked = 0
    for href in sorted(set(hrefs)):
        if not href.startswith(server):
            continue
        url, _, fragment = href.partition("#")
        url = url.split("?", 1)[0]
        if url not in pages:
            with urllib.request.urlopen(url, timeout=WAIT_S) as r:
                assert r.status == 200, f"{href}: HTTP {r.status}"
                pages[url] = r.read().decode("utf-8", "replace")
        if fragment:
            assert f'id="{urllib.parse.unquote(fragment)}"' in pages[url], f"{href}: no such anchor on its page"
        checked += 1
    return checked


def test_the_home_page_renders(browser, server, tmp_path):
    load(browser, server)
    assert "hfcsim" in browser.evaluate("document.title")
    assert browser.evaluate("document.querySelector('article h1').textContent").strip().startswith("hfcsim")
    # The theme's stylesheet applied, the picture loaded, the navigation and the tutorials there.
    assert browser.evaluate("getComputedStyle(document.querySelector('.md-header')).backgroundColor") \
        not in ("", "rgba(0, 0, 0, 0)")
    assert browser.until("[...document.querySelectorAll('article img')].every(i => i.complete && i.naturalWidth > 0)")
    assert browser.evaluate("!!document.querySelector('a[href$=\"tutorials/operator/\"]')")
    assert check_links(browser, server) > 20
    screenshot(browser, tmp_path / "home.png")
    assert console_errors(browser.events) == []


@pytest.mark.parametrize(("key", "path", "anchor"), KEYS, ids=[k for k, _, _ in KEYS])
def test_a_keys_reference_page_renders(browser, server, tmp_path, key, path, anchor):
    load(browser, f"{server}{path}#{anchor}")
    heading = browser.until(f"document.getElementById({json.dumps(anchor)})?.textContent")
    assert key in heading
    # Its entry's table: the type, the default, what is allowed.
    rows = browser.evaluate(f"""(() => {{
        let e = document.getElementById({json.dumps(anchor)}).nextElementSibling;
        while (e && e.tagName !== 'TABLE' && !e.querySelector('table')) e = e.nextElementSibling;
        const t = e.tagName === 'TABLE' ? e : e.querySelector('table');
        return [...t.querySelectorAll('tr')].map(r => r.textContent.trim());
    }})()""")
    assert any(r.startswith("type") for r in rows) and any(r.startswith("default") for r in rows)
    assert any(r.startswith("allowed") for r in rows)
    assert check_links(browser, server) > 20
    screenshot(browser, tmp_path / f"{anchor}.png")
    assert console_errors(browser.events) == []


@pytest.mark.parametrize(("key", "path", "anchor"), KEYS, ids=[k for k, _, _ in KEYS])
def test_the_search_finds_a_key_by_name(browser, server, key, path, anchor):
    # The index the search reads has the key's entry ...
    with urllib.request.urlopen(f"{server}search/search_index.json", timeout=WAIT_S) as r:
        index = json.load(r)
    assert f"{path}#{anchor}" in {doc["location"] for doc in index["docs"]}
    # ... and typing the key's name into the search box lists it.
    load(browser, server)
    browser.evaluate("document.querySelector('.md-search__input').focus()")
    browser.call("Input.insertText", text=key)
    hits = browser.until(f"""(() => {{
        const hrefs = [...document.querySelectorAll('.md-search-result__item a')].map(a => a.href);
        return hrefs.some(h => h.includes({json.dumps(path)}) && h.endsWith({json.dumps('#' + anchor)})) && hrefs;
    }})()""")
    assert hits
    assert console_errors(browser.events) == []
