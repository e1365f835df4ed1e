#!/usr/bin/env python3
"""Open the converter's pprof and folded stacks in speedscope (the npm
package's static build, installed by scripts/setup-debian.sh) in Debian's
chromium, headless, as a user would: load the file, open the Sandwich
view, read its table of functions by self value.

Usage: speedscope_in_browser.py SPEEDSCOPE_DIR NAME_RE FILE EXPECT [FILE EXPECT...]

SPEEDSCOPE_DIR holds speedscope's index.html (dist/release). For each FILE:
the profile loads (its name is the page's title, a table of functions
shows), its top 10 functions by self value all match the regular
expression NAME_RE (how the display rule names Crystal methods: no '*',
no argument or return types, no allocator frame), and the first is
EXPECT, with the self value EXPECT gives after a tab when it has one
("String::Builder#resize_to_capacity\t8,638,084").

Prints "ok NAME" or "FAIL NAME: why" lines; exit status 1 if any failed.
The page and the profile are served from 127.0.0.1 (speedscope fetches
#profileURL=); nothing else is fetched.
"""
import atexit
import functools
import http.server
import os
import re
import shutil
import sys
import tempfile
import threading
import time

from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svg_in_browser import browser, check, script_errors  # noqa: E402
import svg_in_browser  # noqa: E402


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(root):
    srv = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=root))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def seen(name):
    """A name as speedscope draws it: the pprof names' look-alikes of '::'
    and '.' (a word joiner between the colons, U+2024) read as those."""
    return name.replace("\u2060", "").replace("\u2024", ".")


def sandwich_rows(d, name):
    """The Sandwich table as (total, self, function) texts, best self first."""
    deadline = time.time() + 30
    while time.time() < deadline:
        tabs = d.find_elements(By.XPATH, "//*[text()='Sandwich']")
        if tabs and name in d.title:
            break
        time.sleep(0.3)
    else:
        return None
    tabs[0].click()
    while time.time() < deadline:
        text = d.find_element(By.TAG_NAME, "body").text
        if "Symbol Name" in text:
            lines = text.split("Symbol Name", 1)[1].strip().split("\n")
            return [tuple(map(seen, lines[i:i + 3])) for i in range(0, len(lines) - 2, 3)]
        time.sleep(0.3)
    return None


def main():
    if len(sys.argv) < 5 or len(sys.argv) % 2 != 1:
        sys.exit(__doc__)
    app, name_re = sys.argv[1], re.compile(sys.argv[2])
    if not os.path.isfile(os.path.join(app, "index.html")):
        sys.exit(f"no speedscope at {app}: run scripts/setup-debian.sh")
    root = tempfile.mkdtemp(prefix="alys-speedscope.")
    atexit.register(shutil.rmtree, root, True)
    os.symlink(os.path.abspath(app), os.path.join(root, "speedscope"))
    srv = serve(root)
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    d = browser()
    try:
        for path, expect in zip(sys.argv[3::2], sys.argv[4::2]):
            name = os.path.basename(path)
            os.symlink(os.path.abspath(path), os.path.join(root, name))
            d.get("about:blank")  # a changed #hash alone loads nothing
            d.get(f"{base}/speedscope/index.html#profileURL={base}/{name}")
            rows = sandwich_rows(d, name)
            check(f"speedscope loads {name}", bool(rows),
                  f"no table of functions (title '{d.title}')")
            if not rows:
                continue
            errors = script_errors(d)
            check(f"speedscope {name}: no script error", not errors, "; ".join(errors))
            top = rows[:10]
            bad = [r[2] for r in top if not name_re.fullmatch(r[2])]
            check(f"speedscope {name}: top {len(top)} self frames are Crystal methods "
                  f"by the display rule", len(top) == 10 and not bad,
                  f"{bad or len(top)}")
            want_name, _, want_self = expect.partition("\t")
            got_self = top[0][1].split(" ")[0]
            check(f"speedscope {name}: top self frame {want_name}"
                  + (f" at {want_self}" if want_self else ""),
                  top[0][2] == want_name and (not want_self or got_self == want_self),
                  f"got {top[0][2]} at {got_self}")
    finally:
        d.quit()
        srv.shutdown()
    sys.exit(1 if svg_in_browser.failed else 0)


if __name__ == "__main__":
    main()
