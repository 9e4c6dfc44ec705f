"""Makes a fresh store for one back end holding the article's test paste under a fixed id,
so that the GET workload's path is known: seed.py fs|sqlite DIR
"""
import os
import shutil
import sys

backend, data = sys.argv[1], sys.argv[2]
os.environ["PASTE_BACKEND"], os.environ["PASTE_DIR"] = backend, data
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app  # noqa: E402  (reads the environment at import)
import junk  # noqa: E402

shutil.rmtree(data, ignore_errors=True)
app.init(backend)
app.store(junk.text(), junk.PASTE_ID)
print(f"{backend}: paste {junk.PASTE_ID} ({len(junk.text().encode())} bytes) in {data}")
