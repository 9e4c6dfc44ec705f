"""The WSGI app, the same for mod_python's WSGI handler, uWSGI and mod_wsgi."""


def application(environ, start_response):
    output = b"Hello World!"
    start_response("200 OK", [("Content-Type", "text/plain"),
                              ("Content-Length", str(len(output)))])
    return [output]
