"""The echo app as a raw ASGI callable (`asgi_app`), for uvicorn, hypercorn, daphne and
granian: no framework between the server and the echo, so what is measured is the server's.

  GET /           200 "websocket echo at /echo\n": what shootout polls until the server is up
  WebSocket /echo every text message sent back as text, every binary one as binary, unchanged
  anything else   404 (HTTP), or the handshake refused with 403 (WebSocket)

serve_aiohttp.py, serve_tornado.py and serve_websockets.py are the same app for the servers
that bring their own WebSocket API.
"""

READY = b"websocket echo at /echo\n"


async def lifespan(receive, send):
    while True:
        msg = await receive()
        if msg["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif msg["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def http(scope, send):
    status, body = (200, READY) if scope["path"] == "/" else (404, b"not found\n")
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())],
    })
    await send({"type": "http.response.body", "body": body})


async def echo(scope, receive, send):
    msg = await receive()  # websocket.connect
    if scope["path"] != "/echo":
        await send({"type": "websocket.close", "code": 1008})  # before accept: a 403
        return
    await send({"type": "websocket.accept"})
    while True:
        msg = await receive()
        if msg["type"] == "websocket.disconnect":
            return
        # A text frame arrives as "text", a binary one as "bytes" (the other key absent or None).
        if msg.get("text") is not None:
            await send({"type": "websocket.send", "text": msg["text"]})
        else:
            await send({"type": "websocket.send", "bytes": msg.get("bytes") or b""})


async def asgi_app(scope, receive, send):
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
    elif scope["type"] == "http":
        await http(scope, send)
    elif scope["type"] == "websocket":
        await echo(scope, receive, send)
