"""Writes post-body.txt (committed): the test paste base64-encoded, as the `content` field
of a url-encoded form, as seed 001 made its body for `ab -p` (the article's was ~12.5 kB).
"""
import base64
import os
import urllib.parse

import junk

b64 = base64.b64encode(junk.text().encode()).decode()
body = "content=" + urllib.parse.quote_plus(b64)
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "post-body.txt")
with open(out, "w") as f:
    f.write(body)
print(f"{out}: {len(body)} bytes")
