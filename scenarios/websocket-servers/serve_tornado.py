"""Tornado's own server and tornado.websocket.WebSocketHandler: GET / answers 200 (what
shootout polls until the server is up), /echo echoes every text message as text and every
binary one as binary. One process, one IOLoop (Tornado can fork a process per core, but
as a call in the app, not an option of a server: the other one-process servers here have
none either).

    python serve_tornado.py PORT
"""
import asyncio
import sys

import tornado.web
import tornado.websocket

READY = "websocket echo at /echo\n"


class Index(tornado.web.RequestHandler):
    def get(self):
        self.set_header("Content-Type", "text/plain")
        self.write(READY)


class Echo(tornado.websocket.WebSocketHandler):
    def on_message(self, message):
        # str for a text frame, bytes for a binary one: sent back as the same kind.
        return self.write_message(message, binary=isinstance(message, bytes))


async def main(port):
    app = tornado.web.Application([(r"/", Index), (r"/echo", Echo)])
    app.listen(port, address="127.0.0.1", backlog=1024)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
