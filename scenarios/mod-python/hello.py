"""The mod_python handler: the same 12-byte answer as every other contender."""
from mod_python import apache


def handler(req):
    req.content_type = "text/plain"
    req.write("Hello World!")
    return apache.OK
