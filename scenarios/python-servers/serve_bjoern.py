"""bjoern has no command line: serve app.wsgi_app on 127.0.0.1 and the port given."""
import sys

import bjoern

from app import wsgi_app

bjoern.run(wsgi_app, "127.0.0.1", int(sys.argv[1]))
