"""Writes the page the scenario serves: DIR/code/README.mkd.html, exactly 7348 bytes.

Usage: make_page.py DIR

DXR (the article's app) served source files that an offline build had turned into
syntax-highlighted HTML, one file per source file. This writes one such page, of the
size the article measured (7348 bytes), with a marker the plan checks for.
"""
import os
import sys

SIZE = 7348
MARKER = "dxr-static-file-page"

SOURCE = """\
# Static file shootout
Serve the generated HTML with RewriteRules, or from Python:
def browse(tree, path=''):
    return send_from_directory(generated_dir(tree), path + '.html')
class Handler(object):
    \"\"\"One request, one file.\"\"\"
    def __init__(self, root):
        self.root = root
    def open(self, name):
        return open(os.path.join(self.root, name), 'rb')
for n in range(10):
    print('line %d of the README' % n)
""".splitlines()

KEYWORDS = {"def", "return", "class", "for", "in", "print", "self", "open", "range"}


def highlight(line):
    out = []
    for word in line.replace("<", "&lt;").replace(">", "&gt;").split(" "):
        if word in KEYWORDS:
            out.append('<span class="k">%s</span>' % word)
        elif word.startswith(("'", '"')):
            out.append('<span class="str">%s</span>' % word)
        elif word.startswith("#"):
            out.append('<span class="c">%s</span>' % word)
        else:
            out.append(word)
    return " ".join(out)


def page():
    head = (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
        "<title>README.mkd - DXR</title>\n<!-- %s -->\n"
        '<link rel="stylesheet" href="/static/dxr.css">\n</head>\n'
        '<body><div id="file"><table class="file"><tr><td class="lines">\n' % MARKER
    )
    tail = "</td></tr></table></div></body></html>\n"
    lines, n = [], 0
    while True:
        n += 1
        text = highlight(SOURCE[(n - 1) % len(SOURCE)])
        line = '<div class="line" id="l%d"><a href="#l%d">%d</a> %s</div>\n' % (n, n, n, text)
        if len(head) + sum(map(len, lines)) + len(line) + len(tail) > SIZE - 16:
            break
        lines.append(line)
    body = head + "".join(lines)
    # Pad to the exact size with an HTML comment.
    pad = SIZE - len(body) - len(tail)
    body += "<!--" + " " * (pad - 8) + "-->\n" + tail
    body = body.encode("ascii")
    assert len(body) == SIZE, len(body)
    return body


def main():
    out = os.path.join(sys.argv[1], "code")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "README.mkd.html"), "wb") as f:
        f.write(page())


if __name__ == "__main__":
    main()
