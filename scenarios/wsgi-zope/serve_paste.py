"""Serves zpt_app with paste.httpserver (Debian's python3-paste), as Zope 3 did by default:
one process, a pool of threads (paste's default, 10). Run by the scenario's venv python.

    serve_paste.py PORT
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from paste import httpserver  # noqa: E402

from zpt_app import application  # noqa: E402

httpserver.serve(application, host="127.0.0.1", port=int(sys.argv[1]), use_threadpool=True)
