//! `shootout init --asgi`: whether the app takes WebSocket connections, and where. One
//! `python3` run imports the app and calls it in-process, no socket opened: a Starlette or
//! FastAPI app lists its WebSocket routes (`app.routes`, each with a `path`); each route
//! (or, for a bare ASGI callable, each of a few likely paths) is probed with a `websocket`
//! scope whose `receive` yields `websocket.connect` then one text message: the app accepts
//! (`websocket.accept`) or not, and sends the message back (an echo) or not. Each call is
//! bounded (a few seconds), and so is the whole run (it is killed past [`super::python::INSPECT_TIMEOUT`]).

use std::process::Command;

/// The text message the probe sends, and the generated workload sends.
pub const PROBE_MESSAGE: &str = "0123456789abcdef0123456789abcdef";

/// A WebSocket route the app accepted a connection on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WsRoute {
    /// Its path.
    pub path: String,
    /// The app sent the probe's text message back.
    pub echo: bool,
}

/// The inspection, run as `python3 -c SCRIPT MODULE:APP MESSAGE PATH…`: `PATH…` are tried
/// when the app lists no route. Each route accepted is printed as
/// `shootout-ws<TAB>echo|no-echo<TAB>PATH`, a marker the app's own output does not make.
const SCRIPT: &str = r#"
import asyncio, importlib, sys
mod, _, name = sys.argv[1].partition(":")
app = getattr(importlib.import_module(mod), name)
message = sys.argv[2]
routes = [r.path for r in (getattr(app, "routes", None) or [])
          if "websocket" in type(r).__name__.lower() and isinstance(getattr(r, "path", None), str)]
listed = bool(routes)
paths = [p for p in routes if "{" not in p] if listed else sys.argv[3:]

async def probe(path):
    scope = {"type": "websocket", "asgi": {"version": "3.0", "spec_version": "2.3"},
             "http_version": "1.1", "scheme": "ws", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "client": ("127.0.0.1", 50000),
             "server": ("127.0.0.1", 80), "subprotocols": [], "state": {},
             "headers": [(b"host", b"127.0.0.1"), (b"connection", b"Upgrade"),
                         (b"upgrade", b"websocket"), (b"sec-websocket-version", b"13"),
                         (b"sec-websocket-key", b"dGhlIHNhbXBsZSBub25jZQ==")]}
    incoming = [{"type": "websocket.connect"}, {"type": "websocket.receive", "text": message}]
    seen = {"accept": False, "echo": False}
    done = asyncio.Event()
    async def receive():
        if incoming:
            return incoming.pop(0)
        await done.wait()
        return {"type": "websocket.disconnect", "code": 1000}
    async def send(m):
        kind = m.get("type")
        if kind == "websocket.accept":
            seen["accept"] = True
        elif kind == "websocket.send":
            seen["echo"] = m.get("text") == message or m.get("bytes") == message.encode()
            done.set()
        elif kind in ("websocket.close", "websocket.http.response.start"):
            done.set()
    try:
        await asyncio.wait_for(app(scope, receive, send), 3)
    except BaseException:
        pass
    return seen

for path in paths:
    seen = asyncio.run(probe(path))
    if seen["accept"]:
        print("shootout-ws\t%s\t%s" % ("echo" if seen["echo"] else "no-echo", path), flush=True)
        if not listed:
            break
"#;

/// The WebSocket routes of the ASGI app `app` (`MODULE:APP`, imported from the current
/// directory) that accept a connection, in the app's order; for an app that lists no
/// route, the first of `/ws`, `/echo` and `path` that accepts. An app that cannot be
/// imported or takes too long is an error (the plan is written without a WebSocket
/// workload).
pub fn websocket_routes(python: &str, app: &str, path: &str) -> anyhow::Result<Vec<WsRoute>> {
    inspect(Command::new(python), app, path)
}

/// [`websocket_routes`] with `python`, a command that runs python3 (where it runs).
fn inspect(python: Command, app: &str, path: &str) -> anyhow::Result<Vec<WsRoute>> {
    let out = super::python::run(python, SCRIPT, app, &[PROBE_MESSAGE, "/ws", "/echo", path])?;
    Ok(parse_routes(&out))
}

/// The routes the inspection printed (its marked lines; the app's own output is skipped).
fn parse_routes(out: &str) -> Vec<WsRoute> {
    out.lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, '\t');
            if parts.next()? != "shootout-ws" {
                return None;
            }
            let echo = parts.next()? == "echo";
            let path = parts.next()?.to_string();
            shootout_model::spec::check_path(&path).ok()?;
            Some(WsRoute { path, echo })
        })
        .collect()
}

/// The plan's commented WebSocket workload for the first of `routes`: uncommented, it
/// sends a text message to the route and expects it back when the probe saw an echo.
/// Empty without a route.
pub fn workload_text(routes: &[WsRoute]) -> String {
    let Some(r) = routes.first() else {
        return String::new();
    };
    let others: Vec<&str> = routes[1..].iter().map(|r| r.path.as_str()).collect();
    let mut o = format!(
        "\n# The app accepts WebSocket connections at {}{}. To measure them too, uncomment\n\
         # this workload (uvicorn and hypercorn speak WebSocket with the `websockets` or\n\
         # `wsproto` package installed; a server that cannot fails its verification).\n",
        r.path,
        if others.is_empty() {
            String::new()
        } else {
            format!(" (and {})", others.join(", "))
        }
    );
    if r.echo {
        o.push_str("# It sent a text message back as it came: every reply must be the echo.\n");
    } else {
        o.push_str("# It did not send the probe's text message back: no echo is expected (check its\n# replies with an expect of length = BYTES or body_contains = \"…\").\n");
    }
    o.push_str(&format!(
        "# [[workload]]\n# name = {}\n# protocol = \"websocket\"\n# path = {}\n# message = {}\n",
        super::q(&format!("WebSocket {}", r.path)),
        super::q(&r.path),
        super::q(PROBE_MESSAGE)
    ));
    if r.echo {
        o.push_str("# expect = { echo = true }\n");
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inspection of `app` (`MODULE:APP`) from a directory holding `module.py`.
    fn inspect_in(source: &str, app: &str) -> anyhow::Result<Vec<WsRoute>> {
        let dir = tempfile::tempdir().unwrap();
        let module = app.split(':').next().unwrap();
        std::fs::write(dir.path().join(format!("{module}.py")), source).unwrap();
        let mut python = Command::new("python3");
        python.current_dir(dir.path());
        inspect(python, app, "/")
    }

    /// A bare ASGI callable that echoes on `/echo` only: probed at `/ws` (closed), then
    /// `/echo` (accepted, echoed); `/` is not tried once one accepted.
    const BARE_ECHO: &str = r#"
print("importing the app")
async def app(scope, receive, send):
    if scope["type"] != "websocket":
        return
    await receive()
    if scope["path"] != "/echo":
        await send({"type": "websocket.close", "code": 1008})
        return
    await send({"type": "websocket.accept"})
    while True:
        m = await receive()
        if m["type"] != "websocket.receive":
            return
        await send({"type": "websocket.send", "text": m.get("text")})
"#;

    /// An app that lists its routes as Starlette does: a WebSocket route that accepts and
    /// answers something else, one with a path parameter (not probed), an HTTP route.
    const ROUTED: &str = r#"
class Route:
    def __init__(self, path): self.path = path
class WebSocketRoute(Route): pass
class App:
    routes = [Route("/"), WebSocketRoute("/items/{id}"), WebSocketRoute("/chat")]
    async def __call__(self, scope, receive, send):
        assert scope["type"] == "websocket" and scope["path"] == "/chat"
        await receive()
        await send({"type": "websocket.accept"})
        await receive()
        await send({"type": "websocket.send", "text": "welcome"})
        await receive()
app = App()
"#;

    #[test]
    fn a_bare_asgi_echo_app_is_found_at_the_path_it_accepts() {
        let routes = inspect_in(BARE_ECHO, "bare:app").unwrap();
        assert_eq!(
            routes,
            [WsRoute {
                path: "/echo".into(),
                echo: true
            }]
        );
        let plan = workload_text(&routes);
        assert!(plan.contains("# path = \"/echo\"\n"), "{plan}");
        assert!(plan.contains("# expect = { echo = true }\n"), "{plan}");
    }

    #[test]
    fn listed_routes_are_probed_and_one_that_does_not_echo_gets_no_echo() {
        let routes = inspect_in(ROUTED, "routed:app").unwrap();
        assert_eq!(
            routes,
            [WsRoute {
                path: "/chat".into(),
                echo: false
            }]
        );
        assert!(!workload_text(&routes).contains("echo = true"));
    }

    #[test]
    fn an_app_that_does_not_import_is_an_error_and_one_without_websocket_has_no_route() {
        let e = inspect_in("raise SystemExit(3)", "broken:app").unwrap_err();
        assert!(
            e.to_string().contains("importing it with python3 failed"),
            "{e}"
        );
        let http_only =
            "async def app(scope, receive, send):\n    await send({'type': 'websocket.close'})\n";
        assert_eq!(inspect_in(http_only, "plain:app").unwrap(), []);
        assert_eq!(workload_text(&[]), "");
    }

    #[test]
    fn only_marked_lines_with_a_good_path_are_routes() {
        let out = "hello from the app\nshootout-ws\techo\t/ws\nshootout-ws\tno-echo\t/chat\nshootout-ws\techo\tno-slash\nshootout-ws\techo\n";
        assert_eq!(
            parse_routes(out),
            [
                WsRoute {
                    path: "/ws".into(),
                    echo: true
                },
                WsRoute {
                    path: "/chat".into(),
                    echo: false
                }
            ]
        );
    }
}
