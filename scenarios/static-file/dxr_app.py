"""The Flask side of the article: a route that serves DXR's pre-generated HTML.

Three WSGI entry points (module-level names, picked by the Apache config):

  application              Flask's send_from_directory(), as in the article. Under mod_wsgi
                           Flask (Werkzeug) hands the open file to wsgi.file_wrapper.
  xsendfile_application    the same app with use_x_sendfile = True: Python answers with an
                           X-Sendfile header only, and mod_xsendfile sends the file.
  file_wrapper_application no Flask: a bare WSGI function returning
                           environ['wsgi.file_wrapper'](file), the comment thread's other idea.

The generated files live in the directory Apache passes as the DXR_DOCS variable
(SetEnv in the config), which is the contender's {tmp}/docs.
"""
import os

from flask import Flask, request, send_from_directory


def make_app(use_x_sendfile=False):
    app = Flask(__name__)
    app.use_x_sendfile = use_x_sendfile

    @app.route("/code/<path:path>")
    def browse(path):
        # DXR's browse(): the generated file for a source path is path + '.html'.
        docs = os.path.join(request.environ["DXR_DOCS"], "code")
        return send_from_directory(docs, path + ".html")

    return app


application = make_app()
xsendfile_application = make_app(use_x_sendfile=True)


def file_wrapper_application(environ, start_response):
    path = environ.get("PATH_INFO", "")
    if not path.startswith("/code/") or ".." in path:
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found\n"]
    name = os.path.join(environ["DXR_DOCS"], "code", path[len("/code/"):] + ".html")
    try:
        f = open(name, "rb")
    except OSError:
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found\n"]
    size = os.fstat(f.fileno()).st_size
    start_response("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                              ("Content-Length", str(size))])
    return environ["wsgi.file_wrapper"](f, 65536)
