"""One small app in two shapes, WSGI (`wsgi_app`) and ASGI (`asgi_app`), with three routes
that every server must answer byte for byte alike:

  /hello   a JSON hello (the framework-free floor)
  /page    an HTML page rendered from templates/page.html by Jinja2 on every request
  /file    10k.txt (10 240 bytes) read from disk on every request

Both shapes call the same `respond(path)`, so any difference measured is the server's.
"""
import json
import os

import jinja2

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.join(HERE, "templates")), autoescape=True)
ROWS = [
    {"name": n, "model": m}
    for n, m in [
        ("gunicorn sync", "processes"),
        ("gunicorn gthread", "processes x threads"),
        ("uWSGI", "processes, C parser"),
        ("waitress", "threads"),
        ("bjoern", "one C event loop"),
        ("cheroot", "threads"),
        ("granian", "Rust workers"),
        ("uvicorn", "asyncio event loop"),
        ("hypercorn", "asyncio event loop"),
        ("daphne", "Twisted event loop"),
    ]
]


def respond(path):
    """(status line, content type, body bytes) for a path."""
    if path == "/hello":
        return "200 OK", "application/json", json.dumps({"message": "Hello, World!"}).encode()
    if path == "/page":
        html = ENV.get_template("page.html").render(title="Python servers", rows=ROWS)
        return "200 OK", "text/html; charset=utf-8", html.encode()
    if path == "/file":
        with open(os.path.join(HERE, "10k.txt"), "rb") as f:
            return "200 OK", "text/plain", f.read()
    return "404 Not Found", "text/plain", b"not found\n"


def wsgi_app(environ, start_response):
    status, ctype, body = respond(environ.get("PATH_INFO", "/"))
    start_response(status, [("Content-Type", ctype), ("Content-Length", str(len(body)))])
    return [body]


async def asgi_app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif msg["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    status, ctype, body = respond(scope["path"])
    await send({
        "type": "http.response.start",
        "status": int(status.split()[0]),
        "headers": [(b"content-type", ctype.encode()), (b"content-length", str(len(body)).encode())],
    })
    await send({"type": "http.response.body", "body": body})
