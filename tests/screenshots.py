"""The HTML report in headless Chromium: what a reader sees at a given screen width.

`measure(html, width)` loads the page in an iframe of that width (headless Chromium's window is
at least 500 px wide, an iframe is not) and returns what a script measured after load: the
viewport and page widths, each table box (`.evalkit-table`, with the section it belongs to) and
its scroll width against its visible width, the right edge of every table's last header cell,
and each chart's natural and shown width. `screenshot(html, width, out)` saves what the top of
the page looks like at that width.

`python -m tests.screenshots DIR` renders the built-in report and writes the screenshots the
README and the docs show (DIR/report.png, DIR/report-1366.png, DIR/report-400.png).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
"""Executables tried in order (Debian's `chromium` package provides the first)."""

HEIGHT = 900
"""The screen height of every measurement and screenshot, in CSS px."""

_MEASURE = """<script>
window.addEventListener("load", () => {
  const out = {viewport: window.innerWidth, page: document.documentElement.scrollWidth,
               tables: [], charts: []};
  for (const box of document.querySelectorAll(".evalkit-table")) {
    let node = box, section = "";
    while (node && !section) {
      let sibling = node.previousElementSibling;
      while (sibling && !section) {
        const heading = sibling.matches("h2[id], h3[id]") ? sibling : null;
        if (heading) { section = heading.id; }
        sibling = sibling.previousElementSibling;
      }
      node = node.parentElement;
    }
    const heads = box.querySelectorAll("thead tr:first-child th");
    const last = heads.length ? heads[heads.length - 1].getBoundingClientRect().right : 0;
    out.tables.push({section, scroll: box.scrollWidth, client: box.clientWidth,
                     right: box.getBoundingClientRect().right, last_header_right: last});
  }
  for (const img of document.querySelectorAll(".evalkit-chart img")) {
    out.charts.push({alt: img.alt, natural: img.naturalWidth, shown: img.getBoundingClientRect().width});
  }
  const text = JSON.stringify(out);
  const target = window.parent.document;
  const pre = target.createElement("pre");
  pre.id = "evalkit-measure";
  pre.textContent = text;
  target.body.appendChild(pre);
});
</script>"""


def chromium() -> str | None:
    """The headless browser's executable, None when none is installed."""
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


def _browser(*args: str) -> str:
    executable = chromium()
    if executable is None:
        raise FileNotFoundError("no chromium: install Debian's `chromium` (apt-get install -y chromium)")
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--allow-file-access-from-files",
    ]
    done = subprocess.run(
        [executable, *flags, *args], capture_output=True, text=True, timeout=180, check=True
    )
    return done.stdout


def _framed(html: Path, width: int, work: Path, *, script: str = "") -> Path:
    page = work / "page.html"
    text = html.read_text(encoding="utf-8")
    page.write_text(text.replace("</body>", f"{script}</body>", 1) if script else text, encoding="utf-8")
    frame = work / "frame.html"
    frame.write_text(
        '<!DOCTYPE html><html><body style="margin:0"><iframe src="page.html" '
        f'style="width:{width}px;height:{HEIGHT}px;border:0"></iframe></body></html>',
        encoding="utf-8",
    )
    return frame


def measure(html: Path, width: int) -> dict[str, Any]:
    """What the page measures at `width` CSS px (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="evalkit-shot-") as folder:
        frame = _framed(html, width, Path(folder), script=_MEASURE)
        dom = _browser(f"--window-size={max(width, 500) + 20},{HEIGHT}", "--dump-dom", frame.as_uri())
    found = re.search(r'<pre id="evalkit-measure">(.*?)</pre>', dom, re.S)
    if found is None:
        raise AssertionError(f"the measuring script did not run in {html}")
    measured: dict[str, Any] = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    return measured


def screenshot(html: Path, width: int, out: Path) -> Path:
    """A PNG of the top `HEIGHT` px of the page at `width` CSS px, cropped to that width."""
    from PIL import Image

    with tempfile.TemporaryDirectory(prefix="evalkit-shot-") as folder:
        frame = _framed(html, width, Path(folder))
        raw = Path(folder) / "shot.png"
        _browser(f"--window-size={max(width, 500)},{HEIGHT}", f"--screenshot={raw}", frame.as_uri())
        with Image.open(raw) as image:
            image.crop((0, 0, width, HEIGHT)).save(out)
    return out


def main(argv: list[str]) -> int:
    """Render the built-in report and write its screenshots into argv[0] (default docs/)."""
    from evalkit.cli import main as evalkit

    target = Path(argv[0] if argv else "docs")
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="evalkit-report-") as folder:
        if evalkit(["report", "--out-dir", folder, "--no-progress"]) != 0:
            return 1
        html = Path(folder) / "eval_report.html"
        for width, name in ((1366, "report-1366.png"), (400, "report-400.png"), (1366, "report.png")):
            print(screenshot(html, width, target / name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
