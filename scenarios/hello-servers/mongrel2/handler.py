"""A Mongrel2 handler in Python 3 that answers every request with "Hello World".

    /usr/bin/python3 handler.py SEND_SPEC RECV_SPEC

Mongrel2 does the HTTP: it parses each request and PUSHes it to its handlers over ZeroMQ,
then sends back to the browser whatever a handler PUBlishes for that connection. So the
handler PULLs from Mongrel2's send_spec and PUBs to its recv_spec. The messages:

  request:  SENDER CONN_ID PATH HEADERS BODY
            (space separated; HEADERS and BODY are tnetstrings, e.g. `5:hello,`; with the
            handler's protocol 'json' HEADERS is a JSON document in a netstring)
  response: SENDER LEN:CONN_IDS, DATA
            (DATA is sent as is to the listed connections: here a whole HTTP response;
            an empty DATA closes them)

When a browser goes away Mongrel2 sends a request whose METHOD is JSON and whose body is
{"type":"disconnect"}: nothing to answer.
"""
import json
import sys
import uuid

import zmq

BODY = b"Hello World"
RESPONSE = (
    b"HTTP/1.1 200 OK\r\n"
    b"Content-Type: text/plain\r\n"
    b"Content-Length: " + str(len(BODY)).encode() + b"\r\n"
    b"\r\n" + BODY
)


def tnetstring(data):
    """Parses one tnetstring (or netstring) at the start of data: (value, rest)."""
    size, _, rest = data.partition(b":")
    n = int(size)
    payload, kind, rest = rest[:n], rest[n:n + 1], rest[n + 1:]
    if kind == b",":
        return payload, rest
    if kind == b"}":
        out = {}
        while payload:
            key, payload = tnetstring(payload)
            value, payload = tnetstring(payload)
            out[key.decode("latin-1")] = value
        return out, rest
    if kind == b"]":
        out = []
        while payload:
            value, payload = tnetstring(payload)
            out.append(value)
        return out, rest
    if kind == b"#":
        return int(payload), rest
    if kind == b"!":
        return payload == b"true", rest
    if kind == b"~":
        return None, rest
    raise ValueError(f"not a tnetstring type: {kind!r}")


def parse(msg):
    sender, conn_id, path, rest = msg.split(b" ", 3)
    headers, rest = tnetstring(rest)
    if isinstance(headers, bytes):  # protocol 'json': a JSON document in a netstring
        headers = json.loads(headers)
    else:
        headers = {k: v.decode("latin-1") if isinstance(v, bytes) else v for k, v in headers.items()}
    body, _ = tnetstring(rest)
    return sender, conn_id, headers, body


def main():
    send_spec, recv_spec = sys.argv[1], sys.argv[2]
    ctx = zmq.Context()
    requests = ctx.socket(zmq.PULL)
    requests.connect(send_spec)
    responses = ctx.socket(zmq.PUB)
    responses.setsockopt(zmq.IDENTITY, uuid.uuid4().hex.encode())
    responses.connect(recv_spec)
    print(f"handler ready: PULL {send_spec}, PUB {recv_spec}", flush=True)
    while True:
        sender, conn_id, headers, body = parse(requests.recv())
        if headers.get("METHOD") == "JSON" and json.loads(body).get("type") == "disconnect":
            continue
        to = b"%d:%s," % (len(conn_id), conn_id)
        responses.send(sender + b" " + to + b" " + RESPONSE)
        connection = headers.get("connection", "").lower()
        if connection == "close" or (headers.get("VERSION") == "HTTP/1.0" and connection != "keep-alive"):
            responses.send(sender + b" " + to + b" ")  # empty: Mongrel2 closes the connection


if __name__ == "__main__":
    main()
