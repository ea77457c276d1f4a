#!/usr/bin/env python3
"""browser_test.py SITE_DIR SCREENSHOT: open SITE_DIR/index.html in headless
Chromium (Debian's, through Playwright) from file://, click the numeric
"mean C" header of the capability board twice and check the rows come out in
ascending then descending order with aria-sort following; also check a model
page opens and a hostile model name is shown as text. Saves a screenshot.
Prints PASS/FAIL lines for tests/run.sh."""
import pathlib, sys
from playwright.sync_api import sync_playwright

site, shot = pathlib.Path(sys.argv[1]).resolve(), sys.argv[2]
fails = []

def check(name, cond, why=""):
    print(("PASS " if cond else "FAIL ") + name + ("" if cond else ": " + why))
    if not cond:
        fails.append(name)

def column(page, table, col):
    return page.eval_on_selector_all(
        "#%s tbody tr" % table,
        "(rows, col) => rows.map(r => r.cells[col].getAttribute('data-v'))", col)

with sync_playwright() as p:
    browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                args=["--no-sandbox", "--disable-gpu"])
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (errors.append("dialog: " + d.message), d.dismiss()))
    page.goto((site / "index.html").as_uri())
    page.wait_for_load_state("load")

    heads = page.eval_on_selector_all("#t-capability thead th", "hs => hs.map(h => h.textContent)")
    col = heads.index("mean C")
    th = "#t-capability thead th:nth-child(%d)" % (col + 1)
    before = [float(v) for v in column(page, "t-capability", col)]
    check("board_browser_initial_desc", before == sorted(before, reverse=True),
          "server order %s" % before)
    page.click(th + " button")
    asc = [float(v) for v in column(page, "t-capability", col)]
    check("board_browser_sort_ascending", asc == sorted(before), "got %s" % asc)
    check("board_browser_aria_ascending",
          page.get_attribute(th, "aria-sort") == "ascending", page.get_attribute(th, "aria-sort"))
    page.click(th + " button")
    desc = [float(v) for v in column(page, "t-capability", col)]
    check("board_browser_sort_descending", desc == sorted(before, reverse=True), "got %s" % desc)
    check("board_browser_aria_descending",
          page.get_attribute(th, "aria-sort") == "descending", page.get_attribute(th, "aria-sort"))
    others = page.eval_on_selector_all("#t-capability thead th",
                                       "hs => hs.map(h => h.getAttribute('aria-sort'))")
    check("board_browser_aria_others", others.count("none") == len(others) - 1, str(others))

    # Text column: model names sort alphabetically.
    page.click("#t-capability thead th:nth-child(1) button")
    names = page.eval_on_selector_all("#t-capability tbody tr td:first-child",
                                      "tds => tds.map(t => t.getAttribute('data-v').toLowerCase())")
    check("board_browser_sort_text", names == sorted(names), str(names))

    # The hostile model name is text, never markup.
    txt = page.inner_text("#t-capability")
    check("board_browser_escaped", "<script>alert(1)</script>" in txt and not errors,
          "text missing or script ran: %s" % errors)

    page.click("#t-capability thead th:nth-child(%d) button" % (col + 1))
    page.click("#t-capability thead th:nth-child(%d) button" % (col + 1))
    page.screenshot(path=shot, full_page=False)

    # A model page loads and its task table sorts.
    page.click("#t-capability tbody tr:first-child td:first-child a")
    page.wait_for_load_state("load")
    check("board_browser_model_page", page.locator("#t-tasks tbody tr").count() > 0, page.url)
    browser.close()

sys.exit(1 if fails else 0)
