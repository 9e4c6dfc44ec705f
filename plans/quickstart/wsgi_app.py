"""A WSGI app serving one file, under the standard library's wsgiref server (threaded).

Usage: wsgi_app.py PORT FILE
"""
import socketserver
import sys
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

PORT, PATH = int(sys.argv[1]), sys.argv[2]


def app(environ, start_response):
    if environ["PATH_INFO"] != "/index.html":
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found\n"]
    with open(PATH, "rb") as f:
        data = f.read()
    start_response("200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(data)))])
    return [data]


class ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


make_server("127.0.0.1", PORT, app, ThreadingWSGIServer, QuietHandler).serve_forever()
