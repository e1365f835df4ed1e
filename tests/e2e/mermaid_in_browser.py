#!/usr/bin/env python3
"""Render the converter's heap graph (-f heap-graph, a mermaid flowchart)
with mermaid (the npm package's dist/mermaid.min.js, installed by
scripts/setup-debian.sh) in Debian's chromium, headless, as a reader of a
README or an issue sees it.

Usage: mermaid_in_browser.py MERMAID_JS FILE.mmd PNG

Checks: mermaid parses and draws the chart (no error); every node of the
file is drawn, with its label's text as the file writes it (entities
decoded); a root (a stadium node) on at most three lines, an object
("Array(Leaf) buffer@0x...") on one; the edges are drawn with their
offsets. PNG: a screenshot.

Prints "ok NAME" or "FAIL NAME: why" lines; exit status 1 if any failed.
Nothing is fetched from the network: the page and the script are local
files.
"""
import html
import json
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svg_in_browser  # noqa: E402
from svg_in_browser import check  # noqa: E402

PAGE = """<!doctype html><html><head><meta charset="utf-8">
<script src="file://%s"></script></head><body><div id="out"></div>
<script>
window.result = null;
mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });
mermaid.render("g", %s).then(r => {
  document.getElementById("out").innerHTML = r.svg;
  const labels = [...document.querySelectorAll("#out g.node")].map(n => {
    const lab = n.querySelector(".nodeLabel, .label");
    const range = document.createRange();
    range.selectNodeContents(lab);
    // lines: the text's line boxes (not the blocks holding them)
    const rs = [...range.getClientRects()].filter(r => r.width > 1 && r.height > 1);
    const line = Math.min(...rs.map(r => r.height));
    const tops = rs.filter(r => r.height < 1.5 * line).map(r => r.top).sort((a, b) => a - b);
    const lines = tops.filter((t, i) => i == 0 || t - tops[i - 1] > line / 2).length;
    return { id: n.id, text: lab.textContent, lines,
             stadium: !!n.querySelector("path, rect[rx]") && n.id.includes("-r") };
  });
  const edges = [...document.querySelectorAll("#out g.edgeLabel")].map(e => e.textContent);
  window.result = { labels, edges };
}).catch(e => { window.result = { error: String(e) }; });
</script></body></html>"""


def file_nodes(text):
    """id -> (label, is_root) of each node the file defines."""
    nodes = {}
    for m in re.finditer(r'\b([nr][0-9_]+)(\(\[|\[)"([^"]*)"', text):
        nodes[m.group(1)] = (html.unescape(m.group(3).replace("#quot;", '"')
                                           .replace("#lt;", "<").replace("#gt;", ">")),
                             m.group(2) == "([")
    return nodes


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    js, mmd, png = sys.argv[1:]
    if not os.path.isfile(js):
        sys.exit(f"no mermaid at {js}: run scripts/setup-debian.sh")
    text = open(mmd, encoding="utf-8").read()
    want = file_nodes(text)
    page = tempfile.NamedTemporaryFile("w", suffix=".html", delete=False)
    page.write(PAGE % (os.path.abspath(js), json.dumps(text)))
    page.close()
    d = svg_in_browser.browser()
    try:
        d.get("file://" + page.name)
        res = None
        deadline = time.time() + 30
        while time.time() < deadline and not res:
            res = d.execute_script("return window.result")
            time.sleep(0.2)
        check("mermaid renders the heap graph", bool(res) and "error" not in res,
              (res or {}).get("error", "no result in 30 s"))
        if not res or "error" in res:
            return
        drawn = {}
        for lab in res["labels"]:
            m = re.search(r"-([nr][0-9_]+)-", lab["id"] + "-")
            if m:
                drawn[m.group(1)] = lab
        missing = [k for k in want if k not in drawn]
        check(f"all {len(want)} nodes drawn", not missing, f"missing {missing[:5]}")
        wrong = [(want[k][0], drawn[k]["text"]) for k in want
                 if k in drawn and drawn[k]["text"].strip() != want[k][0]]
        check("each node's label reads as the file writes it", not wrong, f"{wrong[:3]}")
        roots = [k for k in want if want[k][1]]
        tall = [(want[k][0], drawn[k]["lines"]) for k in roots if k in drawn and drawn[k]["lines"] > 3]
        check(f"{len(roots)} root(s) drawn on at most three lines", bool(roots) and not tall,
              f"{tall or 'no root'}")
        wrapped = [(want[k][0], drawn[k]["lines"]) for k in want
                   if not want[k][1] and k in drawn and drawn[k]["lines"] != 1]
        check("every object's label (Type@0x...) on one line", not wrapped, f"{wrapped[:3]}")
        offsets = re.findall(r"-->\|([^|]*)\|", text)
        check(f"the {len(offsets)} edge offsets drawn",
              sorted(e for e in res["edges"] if e) == sorted(offsets),
              f"{sorted(e for e in res['edges'] if e)} vs {sorted(offsets)}")
        for k in roots:
            if k in drawn:
                print(f"     root: {drawn[k]['text']} ({drawn[k]['lines']} lines)")
        d.save_screenshot(png)
    finally:
        d.quit()
        os.unlink(page.name)


if __name__ == "__main__":
    main()
    sys.exit(1 if svg_in_browser.failed else 0)
