"""Tornado "Hello World", one process, as in the article (Tornado 2.3 there, Debian's 6.2 here).

    /usr/bin/python3 tornado_hello.py PORT
"""
import sys

import tornado.ioloop
import tornado.web


class Hello(tornado.web.RequestHandler):
    def get(self):
        self.set_header("Content-Type", "text/plain")
        self.write("Hello World")


def main():
    port = int(sys.argv[1])
    app = tornado.web.Application([(r"/.*", Hello)])
    # Tornado's default listen backlog is 128 (the same as Mongrel2's); Apache and nginx use 511.
    app.listen(port, address="127.0.0.1")
    tornado.ioloop.IOLoop.current().start()


if __name__ == "__main__":
    main()
