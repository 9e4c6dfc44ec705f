"""A WebSocket echo server of the standard library only, for the tests: a plain GET is
answered 426 Upgrade Required (as Python's websockets does), an upgrade with 101, then
every text or binary frame is echoed and every ping ponged. Frames of up to 64 KiB."""
import base64
import hashlib
import socketserver
import struct
import sys

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        s = self.request
        buf = b""
        while b"\r\n\r\n" not in buf:
            data = s.recv(4096)
            if not data:
                return
            buf += data
        head, _, buf = buf.partition(b"\r\n\r\n")
        headers = {}
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip()
        key = headers.get(b"sec-websocket-key")
        if not key:
            s.sendall(b"HTTP/1.1 426 Upgrade Required\r\nUpgrade: websocket\r\n"
                      b"Content-Length: 0\r\nConnection: close\r\n\r\n")
            return
        accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
        s.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                  b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n")

        def take(n):
            nonlocal buf
            while len(buf) < n:
                data = s.recv(65536)
                if not data:
                    raise EOFError
                buf += data
            out, buf = buf[:n], buf[n:]
            return out

        try:
            while True:
                b0, b1 = take(2)
                op, n = b0 & 15, b1 & 127
                if n == 126:
                    n = struct.unpack(">H", take(2))[0]
                elif n == 127:
                    n = struct.unpack(">Q", take(8))[0]
                mask = take(4)
                data = bytes(c ^ mask[i % 4] for i, c in enumerate(take(n)))
                if op == 8:
                    s.sendall(b"\x88\x02" + data[:2])
                    return
                if op == 9:
                    op = 10
                elif op not in (1, 2):
                    continue
                size = bytes([n]) if n < 126 else b"\x7e" + struct.pack(">H", n)
                s.sendall(bytes([0x80 | op]) + size + data)
        except (EOFError, OSError):
            return


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


Server(("127.0.0.1", int(sys.argv[1])), Echo).serve_forever()
