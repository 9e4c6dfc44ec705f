"""aiohttp's own server and its web.WebSocketResponse: GET / answers 200 (what shootout
polls until the server is up), /echo echoes every text message as text and every binary
one as binary. One process: aiohttp's server has no worker option.

    python serve_aiohttp.py PORT
"""
import sys

from aiohttp import WSMsgType, web

READY = "websocket echo at /echo\n"


async def index(request):
    return web.Response(text=READY)


async def echo(request):
    ws = web.WebSocketResponse()
    await ws.prepare(request)
    async for msg in ws:
        if msg.type == WSMsgType.TEXT:
            await ws.send_str(msg.data)
        elif msg.type == WSMsgType.BINARY:
            await ws.send_bytes(msg.data)
    return ws


app = web.Application()
app.add_routes([web.get("/", index), web.get("/echo", echo)])

if __name__ == "__main__":
    web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), backlog=1024, access_log=None, print=None)
