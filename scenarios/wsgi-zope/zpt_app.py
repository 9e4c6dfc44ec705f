"""A WSGI app rendering a Zope page template, for seed 002 (paste.httpserver vs mod_wsgi).

GET / renders templates/catalog.pt: a product catalogue of 7 categories x 6 products (one category empty),
filled into the `page` macro of templates/layout.pt, with loops, conditions, a price macro
used 36 times, path, string and python expressions. The data are fixed, so every answer is
the same page, byte for byte (its length is in plan.toml). The templates are compiled once
per process, at import; each request renders them, which is pure-Python CPU work (TAL
interpreter), the kind of work the article's Zope stack did for each request.

Used as a module by serve_paste.py and as mod_wsgi's WSGIScriptFile (`application`).
"""
import os

from zope.pagetemplate.pagetemplatefile import PageTemplateFile

HERE = os.path.dirname(os.path.abspath(__file__))


class Template(PageTemplateFile):
    """Keyword arguments become top-level names (`site/name`, not `options/site/name`)."""

    def pt_getContext(self, args=(), options={}, **kw):  # noqa: B006 (the base's signature)
        namespace = super().pt_getContext(args, options, **kw)
        namespace.update(options)
        return namespace


LAYOUT = Template(os.path.join(HERE, "templates", "layout.pt"))
CATALOG = Template(os.path.join(HERE, "templates", "catalog.pt"))

TAGS = ["new", "eco", "bulk", "gift", "import", "classic", "limited"]
SITE = {
    "name": "Zope shop",
    "year": 2009,
    "stylesheets": ["base.css", "catalog.css"],
    "menu": [
        {"path": "/", "title": "Catalogue"},
        {"path": "/news", "title": "News"},
        {"path": "/about", "title": "About"},
        {"path": "/contact", "title": "Contact"},
    ],
}
CATEGORIES = [
    {
        "id": c,
        "title": f"Category {c + 1}",
        "products": [
            {
                "sku": f"{c:02d}-{p:03d}",
                "name": f"Product {c}.{p}",
                "price": 199 + (c * 37 + p * 113) % 9000,
                "sale": (c + p) % 5 == 0,
                "stock": (c * 7 + p * 3) % 11,
                "tags": TAGS[(c + p) % 4 : (c + p) % 4 + 1 + (p % 3)],
            }
            for p in range(6)
        ]
        if c != 6
        else [],
    }
    for c in range(7)
]
VIEW = {"title": "All products", "path": "/", "notice": "Prices include VAT."}


def render() -> bytes:
    return CATALOG(layout=LAYOUT, site=SITE, categories=CATEGORIES, view=VIEW).encode("utf-8")


def application(environ, start_response):
    if environ.get("PATH_INFO", "/") != "/":
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found\n"]
    body = render()
    start_response(
        "200 OK",
        [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body)))],
    )
    return [body]


if __name__ == "__main__":
    import sys
    import time

    page = render()
    if sys.argv[1:] == ["--time"]:
        n, t = 200, time.perf_counter()
        for _ in range(n):
            render()
        print(f"{len(page)} bytes, {(time.perf_counter() - t) / n * 1000:.2f} ms per render")
    else:
        sys.stdout.write(page.decode())
