"""The `websockets` library's own server (its asyncio implementation), the reference the
ASGI servers' WebSocket layers are measured against (uvicorn's `--ws websockets` runs this
library's protocol code under uvicorn's HTTP layer). GET / answers 200 (what shootout
polls until the server is up; a GET without Upgrade elsewhere gets the library's 426),
/echo echoes every text message as text and every binary one as binary. One process: the
library has no worker option.

    python serve_websockets.py PORT
"""
import asyncio
import http
import sys

from websockets.asyncio.server import serve

READY = b"websocket echo at /echo\n"


def route(connection, request):
    """Answers plain GETs; None lets the handshake go on (on /echo only)."""
    if request.path == "/" and "upgrade" not in request.headers.get("Connection", "").lower():
        response = connection.respond(http.HTTPStatus.OK, READY.decode())
        response.headers["Content-Type"] = "text/plain"
        return response
    if request.path != "/echo":
        return connection.respond(http.HTTPStatus.NOT_FOUND, "not found\n")
    return None


async def echo(ws):
    # str for a text frame, bytes for a binary one: send() sends each back as its kind.
    async for message in ws:
        await ws.send(message)


async def main(port):
    async with serve(echo, "127.0.0.1", port, process_request=route, compression=None, backlog=1024) as server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
