#!/usr/bin/env python3
"""Open the converter's SVGs in a real browser (Debian's chromium, headless,
driven by chromedriver through python3-selenium) and do what a user does.

Usage: svg_in_browser.py flamegraph FILE.svg FRAME SEARCH PNG
       svg_in_browser.py timeline FILE.svg PNG

flamegraph: the page renders (frames drawn, labels fitted by the script, no
script error); a click on the widest frame whose name contains FRAME zooms
(that frame spans the width, frames outside it are hidden, "Reset Zoom"
shows) and "Reset Zoom" undoes it; "Search" with the regular expression
SEARCH (typed into the prompt) colours the matching frames and prints
"Matched: N%". timeline: the chart renders (its lines have a size) with no
script error. PNG: a screenshot.

Prints "ok NAME" or "FAIL NAME: why" lines; exit status 1 if any failed.
Nothing is fetched from the network: the page is a local file and the
browser runs with networking features off.
"""
import atexit
import os
import shutil
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

failed = 0


def check(name, ok, why=""):
    global failed
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + why))
    failed += not ok


def browser():
    profile = tempfile.mkdtemp(prefix="alys-chromium.")
    atexit.register(shutil.rmtree, profile, True)  # chromium leaves it full
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
              "--no-first-run", "--disable-background-networking",
              "--disable-component-update", "--disable-sync",
              "--disable-dev-shm-usage", "--window-size=1300,900",
              "--user-data-dir=" + profile):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)


def script_errors(d):
    return [e["message"] for e in d.get_log("browser") if e["level"] == "SEVERE"]


def flamegraph(d, path, frame, term, png):
    d.get("file://" + os.path.abspath(path))
    js = d.execute_script
    n = js("return document.getElementById('frames').children.length")
    check(f"flamegraph renders: {n} frames", n > 0)
    W = js("return +document.documentElement.getAttribute('width')")
    root_w = js("return document.getElementById('frames').children[0]"
                ".getElementsByTagName('rect')[0].getBoundingClientRect().width")
    check(f"flamegraph: the root frame spans the chart ({root_w:.0f} of {W} px)",
          root_w >= 0.9 * (W - 20), f"{root_w}")
    labels = js("return Array.from(document.querySelectorAll('#frames text'))"
                ".filter(t => t.textContent.length > 0).length")
    check(f"flamegraph: the script fitted labels ({labels})", labels > 0)

    # click to zoom on the widest frame named FRAME
    idx = js("var f = document.getElementById('frames').children, best = -1;"
             "for (var i = 0; i < f.length; i++)"
             "  if (f[i].firstChild.textContent.indexOf(arguments[0]) >= 0 &&"
             "      (best < 0 || +f[i].getAttribute('data-w') > +f[best].getAttribute('data-w'))) best = i;"
             "return best", frame)
    check(f"flamegraph: a frame named {frame}", idx >= 0)
    if idx < 0:
        return
    g = d.find_elements(By.CSS_SELECTOR, "#frames > g")[idx]
    before = g.find_element(By.TAG_NAME, "rect").rect["width"]
    visible_before = js("return Array.from(document.getElementById('frames').children)"
                        ".filter(g => g.style.display != 'none').length")
    g.click()  # on the frame: its rect, or its label over it
    after = g.find_element(By.TAG_NAME, "rect").rect["width"]
    visible_after = js("return Array.from(document.getElementById('frames').children)"
                       ".filter(g => g.style.display != 'none').length")
    unzoom = js("return document.getElementById('unzoom').style.opacity")
    check(f"click on {frame}: it zooms to the full width ({before:.0f} -> {after:.0f} px)",
          after >= 0.95 * (W - 20) and after > before)
    check(f"click on {frame}: frames outside it hidden ({visible_before} -> {visible_after})",
          visible_after < visible_before)
    check("click: Reset Zoom shows", unzoom == "1", repr(unzoom))
    d.find_element(By.ID, "unzoom").click()
    visible_reset = js("return Array.from(document.getElementById('frames').children)"
                       ".filter(g => g.style.display != 'none').length")
    check("Reset Zoom: every frame back", visible_reset == visible_before,
          f"{visible_reset} of {visible_before}")

    # search, typed into the prompt as a user would
    d.find_element(By.ID, "search").click()
    alert = d.switch_to.alert
    alert.send_keys(term)
    alert.accept()
    matched = js("return document.getElementById('matched').textContent")
    pink = js("return Array.from(document.querySelectorAll('#frames rect'))"
              ".filter(r => r.getAttribute('fill') == 'rgb(230,0,230)').length")
    check(f"search {term}: {matched.strip()}", matched.startswith("Matched: ")
          and float(matched.split()[1].rstrip('%')) > 0, repr(matched))
    check(f"search {term}: {pink} matching frames coloured", pink > 0)
    d.save_screenshot(png)
    errors = script_errors(d)
    check("flamegraph: no script error", not errors, "; ".join(errors))


def timeline(d, path, png):
    d.get("file://" + os.path.abspath(path))
    js = d.execute_script
    lines = js("return Array.from(document.querySelectorAll('polyline, path'))"
               ".map(e => e.getBBox()).filter(b => b.width > 0).length")
    check(f"timeline renders: {lines} lines with a size", lines > 0)
    texts = js("return document.querySelectorAll('text').length")
    check(f"timeline: labels ({texts})", texts > 0)
    d.save_screenshot(png)
    errors = script_errors(d)
    check("timeline: no script error", not errors, "; ".join(errors))


def main():
    d = browser()
    try:
        if sys.argv[1] == "flamegraph":
            flamegraph(d, *sys.argv[2:6])
        else:
            timeline(d, *sys.argv[2:4])
    finally:
        d.quit()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
