//! `shootout init --wsgi/--asgi`: the HTTP routes the app lists, and a journey over them.
//! One `python3` run imports the app and reads its routing table where the framework
//! keeps one: Flask's `url_map`, Starlette's and FastAPI's `routes` (mounts included),
//! Bottle's `routes`, Django's URL resolver. Each GET route without a parameter is then
//! asked once, in-process (a WSGI call or an ASGI `http` scope, no socket opened, two
//! seconds at most each), for its status. The journey written from them reads every page
//! that answered; the routes that need a value or a body are in it as commented steps.

use std::process::Command;

/// The inspection, run as `python3 -c SCRIPT MODULE:APP wsgi|asgi`. Each route is printed
/// as `shootout-route<TAB>METHODS<TAB>STATUS<TAB>PATH<TAB>SOURCE` (`STATUS` `-` when it was
/// not asked or did not answer), a marker the app's own output does not make. Path
/// parameters are written `{name}` whatever the framework's syntax.
const SCRIPT: &str = r#"
import asyncio, importlib, io, re, sys
mod, _, name = sys.argv[1].partition(":")
app = getattr(importlib.import_module(mod), name)
asgi = sys.argv[2] == "asgi"
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
ASKED_MAX = 32
found = []

def add(methods, path, source):
    given = {str(m).upper() for m in methods}
    methods = [m for m in METHODS if m in given]
    key = (tuple(methods), path)
    if methods and isinstance(path, str) and path.startswith("/") and key not in {(tuple(f[0]), f[1]) for f in found}:
        found.append((methods, path, source))

def flask(rules):
    for r in rules:
        if getattr(r, "endpoint", None) == "static":
            continue
        add(r.methods or (), re.sub(r"<(?:[^:<>]+:)?([^<>:]+)>", r"{\1}", r.rule), "Flask's url_map")

def starlette(routes, prefix=""):
    for r in routes:
        path = getattr(r, "path", None)
        if not isinstance(path, str) or "websocket" in type(r).__name__.lower():
            continue
        path = re.sub(r"\{(\w+)(?::[^}]*)?\}", r"{\1}", prefix + path)
        inner = getattr(r, "routes", None)
        if inner and not hasattr(r, "endpoint"):
            starlette(inner, path.rstrip("/"))
        else:
            add(getattr(r, "methods", None) or ("GET",), path, "the app's routes")

def bottle(routes):
    for r in routes:
        add((r.method,), re.sub(r"<([^:<>]+)(?::[^<>]*)?>", r"{\1}", r.rule), "Bottle's routes")

def django(patterns, prefix):
    for p in patterns:
        text = str(p.pattern).lstrip("^").rstrip("$")
        text = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", text)
        text = re.sub(r"<(?:[^:<>]+:)?([^<>:]+)>", r"{\1}", text)
        if re.search(r"[\\()\[\]*+?|^$]", text):
            continue
        if hasattr(p, "url_patterns"):
            django(p.url_patterns, prefix + text)
        else:
            add(("GET",), prefix + text, "Django's URL resolver")

if hasattr(getattr(app, "url_map", None), "iter_rules"):
    flask(app.url_map.iter_rules())
elif type(app).__name__ in ("WSGIHandler", "ASGIHandler"):
    from django.urls import get_resolver
    django(get_resolver().url_patterns, "/")
elif isinstance(getattr(app, "routes", None), list) and all(hasattr(r, "rule") and hasattr(r, "method") for r in app.routes):
    bottle(app.routes)
elif getattr(app, "routes", None):
    starlette(app.routes)

def wsgi_get(path):
    environ = {"REQUEST_METHOD": "GET", "SCRIPT_NAME": "", "PATH_INFO": path, "QUERY_STRING": "",
               "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1",
               "HTTP_HOST": "127.0.0.1", "REMOTE_ADDR": "127.0.0.1", "wsgi.version": (1, 0),
               "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(b""), "wsgi.errors": io.StringIO(),
               "wsgi.multithread": False, "wsgi.multiprocess": False, "wsgi.run_once": False}
    seen = []
    def start_response(status, headers, exc_info=None):
        seen.append(int(str(status).split()[0]))
        return lambda data: None
    body = app(environ, start_response)
    try:
        for i, _ in enumerate(body):
            if i >= 64:
                break
    finally:
        close = getattr(body, "close", None)
        if close:
            close()
    return seen[-1] if seen else None

async def asgi_get(path):
    scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
             "method": "GET", "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "headers": [(b"host", b"127.0.0.1")],
             "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 80), "state": {}}
    seen = []
    asked = []
    done = asyncio.Event()
    async def receive():
        if not asked:
            asked.append(True)
            return {"type": "http.request", "body": b"", "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}
    async def send(m):
        if m.get("type") == "http.response.start":
            seen.append(m.get("status"))
        elif m.get("type") == "http.response.body" and not m.get("more_body"):
            done.set()
    try:
        await asyncio.wait_for(app(scope, receive, send), 2)
    except BaseException:
        pass
    return seen[0] if seen else None

asked = 0
for methods, path, source in found:
    status = None
    if "GET" in methods and "{" not in path and asked < ASKED_MAX:
        asked += 1
        try:
            status = asyncio.run(asgi_get(path)) if asgi else wsgi_get(path)
        except BaseException:
            status = None
    print("shootout-route\t%s\t%s\t%s\t%s" % (",".join(methods), status if isinstance(status, int) else "-", path, source), flush=True)
"#;

/// The most routes read from the inspection; an app's further routes are left out of
/// the journey (its comment says how many).
pub const ROUTES_MAX: usize = 64;

/// A route the app lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRoute {
    /// The methods it takes, of GET, POST, PUT, PATCH and DELETE, in that order.
    pub methods: Vec<String>,
    /// Its path, a parameter written `{name}`.
    pub path: String,
    /// The status it answered to a GET asked in-process, when it was asked and answered.
    pub status: Option<u16>,
}

/// The routes an app lists, and where they were read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Routes {
    /// The first [`ROUTES_MAX`], in the app's order.
    pub routes: Vec<HttpRoute>,
    /// How many it lists in all.
    pub listed: usize,
    /// Where they were read ("Flask's url_map").
    pub source: String,
}

/// The HTTP routes of the app `app` (`MODULE:APP`, imported from the current directory),
/// an ASGI app when `asgi`; none when its framework keeps no table this knows. An app
/// that cannot be imported, or takes too long, is an error.
pub fn http_routes(python: &str, app: &str, asgi: bool) -> anyhow::Result<Routes> {
    inspect(Command::new(python), app, asgi)
}

fn inspect(python: Command, app: &str, asgi: bool) -> anyhow::Result<Routes> {
    let kind = if asgi { "asgi" } else { "wsgi" };
    let out = super::python::run(python, SCRIPT, app, &[kind])?;
    Ok(parse_routes(&out))
}

/// The routes the inspection printed (its marked lines with a path a request can carry;
/// the app's own output is skipped).
fn parse_routes(out: &str) -> Routes {
    let mut r = Routes::default();
    for l in out.lines() {
        let mut parts = l.splitn(5, '\t');
        if parts.next() != Some("shootout-route") {
            continue;
        }
        let (Some(methods), Some(status), Some(path), Some(source)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        // Written into the journey as it is sent: printable ASCII, from the root; a
        // parameter stands for a value the journey will give it.
        let plain = path.starts_with('/') && path.bytes().all(|b| b.is_ascii_graphic());
        if !plain || path.contains("{{") || path.contains("}}") {
            continue;
        }
        let methods: Vec<String> = methods
            .split(',')
            .filter(|m| ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(m))
            .map(str::to_owned)
            .collect();
        if methods.is_empty() {
            continue;
        }
        r.listed += 1;
        if r.routes.len() < ROUTES_MAX {
            r.source = source.to_owned();
            r.routes.push(HttpRoute {
                methods,
                path: path.to_owned(),
                status: status.parse().ok().filter(|s| (100..600).contains(s)),
            });
        }
    }
    r
}

/// Whether a GET of `r` goes into the journey as a step that runs: it needs no value,
/// and it answered below 500 when asked.
fn runs(r: &HttpRoute) -> bool {
    !r.path.contains('{') && r.status.is_some_and(|s| s < 500)
}

/// How many steps of the journey [`journey_text`] writes run (the others are commented).
pub fn steps_that_run(routes: &Routes) -> usize {
    routes
        .routes
        .iter()
        .filter(|r| r.methods.iter().any(|m| m == "GET") && runs(r))
        .count()
}

/// The journey file over `routes` of the app `app`: one journey that GETs, in the app's
/// order, every page that answered, each expected to answer as it did; every other
/// route a commented step saying what it needs. `None` when no step would run.
pub fn journey_text(app: &str, routes: &Routes) -> Option<String> {
    let running = steps_that_run(routes);
    if running == 0 {
        return None;
    }
    let more = routes.listed - routes.routes.len();
    let mut o = format!(
        "# Written by `shootout init`: a journey over the routes {app} lists ({}{}).\n\
         # Each user GETs the {running} page(s) that answered when init asked them, one after\n\
         # the other, each expected to answer as it did. The routes that need a value or a\n\
         # body are commented steps: give them a value (a capture from an earlier step, or a\n\
         # data file's column) and a body, then uncomment them. `shootout journey check`\n\
         # reads the file; docs/journeys.md has every key.\n\n\
         [[journey]]\nname = \"browse\"\n\
         # think = \"uniform(1s,3s)\"   # a real user's pause between steps\n",
        routes.source,
        if more > 0 {
            format!("; the first {} of {}", routes.routes.len(), routes.listed)
        } else {
            String::new()
        }
    );
    for r in &routes.routes {
        for m in &r.methods {
            o.push('\n');
            o.push_str(&step_text(r, m));
        }
    }
    Some(o)
}

/// One route's step for method `m`: a step that runs, or a commented one saying what it
/// lacks.
fn step_text(r: &HttpRoute, m: &str) -> String {
    let verb = m.to_ascii_lowercase();
    let path = super::q(&r.path);
    if m == "GET" && runs(r) {
        let status = r.status.unwrap_or(200);
        return format!("[[journey.step]]\nget = {path}\nexpect = {{ status = {status} }}\n");
    }
    let mut why = Vec::new();
    let params: Vec<&str> = r
        .path
        .split('{')
        .skip(1)
        .filter_map(|p| p.split_once('}').map(|(name, _)| name))
        .collect();
    if !params.is_empty() {
        let names: Vec<String> = params.iter().map(|p| format!("{{{p}}}")).collect();
        why.push(format!("{} needs a value", names.join(", ")));
    }
    if m == "GET" && params.is_empty() {
        why.push(match r.status {
            Some(s) => format!("it answered {s} when init asked it"),
            None => "init could not ask it".into(),
        });
    }
    let body = match m {
        "GET" | "DELETE" => "",
        _ => "# form = { field = \"value\" }   # what the app's form or API takes\n",
    };
    if m != "GET" && m != "DELETE" {
        why.push("give it the body the app takes".into());
    }
    format!(
        "# {m} {}: {}.\n# [[journey.step]]\n# {verb} = {path}\n{body}",
        r.path,
        why.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inspection of `app` (`MODULE:APP`) from a directory holding `module.py`.
    fn inspect_in(source: &str, app: &str, asgi: bool) -> anyhow::Result<Routes> {
        let dir = tempfile::tempdir().unwrap();
        let module = app.split(':').next().unwrap();
        std::fs::write(dir.path().join(format!("{module}.py")), source).unwrap();
        let mut python = Command::new("python3");
        python.current_dir(dir.path());
        inspect(python, app, asgi)
    }

    /// A WSGI app that keeps its rules as Flask does (`url_map.iter_rules()`, each rule
    /// with `rule`, `methods` and `endpoint`): a page, one that needs a login (302), a
    /// form, a parameter, a page that fails, and the static files' rule (left out).
    const FLASKLIKE: &str = r#"
class Rule:
    def __init__(self, rule, methods, endpoint="view"):
        self.rule, self.methods, self.endpoint = rule, set(methods) | {"HEAD", "OPTIONS"}, endpoint
class Map:
    def iter_rules(self):
        return [Rule("/static/<path:filename>", {"GET"}, "static"), Rule("/", {"GET"}),
                Rule("/home", {"GET"}), Rule("/login", {"GET", "POST"}),
                Rule("/content/<int:paste_id>", {"GET"}), Rule("/boom", {"GET"})]
class App:
    url_map = Map()
    def __call__(self, environ, start_response):
        path = environ["PATH_INFO"]
        status = {"/": "200 OK", "/home": "302 FOUND", "/login": "200 OK"}.get(path, "500 ERROR")
        start_response(status, [("Content-Length", "0")])
        return [b""]
app = App()
print("imported")
"#;

    #[test]
    fn a_flask_like_app_gets_a_journey_over_the_pages_that_answered() {
        let routes = inspect_in(FLASKLIKE, "flasky:app", false).unwrap();
        assert_eq!(routes.source, "Flask's url_map");
        assert_eq!(routes.listed, 5, "{routes:?}");
        let by_path = |p: &str| routes.routes.iter().find(|r| r.path == p).cloned();
        assert_eq!(by_path("/home").unwrap().status, Some(302));
        assert_eq!(by_path("/login").unwrap().methods, ["GET", "POST"]);
        // A parameter is not asked for.
        assert_eq!(by_path("/content/{paste_id}").unwrap().status, None);
        assert_eq!(by_path("/boom").unwrap().status, Some(500));
        assert_eq!(steps_that_run(&routes), 3);
        let text = journey_text("flasky:app", &routes).unwrap();
        let file = shootout_model::journey::parse(&text, "j.toml", &mut |_| Err("no files".into()))
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let steps: Vec<(&str, &str)> = file.journeys[0]
            .steps
            .iter()
            .map(|s| (s.method.as_str(), s.name.as_str()))
            .collect();
        assert_eq!(
            steps,
            [
                ("GET", "GET /"),
                ("GET", "GET /home"),
                ("GET", "GET /login")
            ],
            "{text}"
        );
        assert!(
            text.contains("get = \"/home\"\nexpect = { status = 302 }"),
            "{text}"
        );
        assert!(text.contains("# POST /login: give it the body"), "{text}");
        assert!(
            text.contains("# GET /content/{paste_id}: {paste_id} needs a value"),
            "{text}"
        );
        assert!(
            text.contains("# GET /boom: it answered 500 when init asked it"),
            "{text}"
        );
    }

    /// Starlette's table: a route with methods and a typed parameter, a mount with its
    /// own routes, a WebSocket route (left out); asked as ASGI.
    const STARLETTELIKE: &str = r#"
class Route:
    def __init__(self, path, methods=None):
        self.path, self.methods, self.endpoint = path, methods, object()
class WebSocketRoute(Route): pass
class Mount:
    def __init__(self, path, routes):
        self.path, self.routes = path, routes
class App:
    routes = [Route("/", {"GET", "HEAD"}), Route("/items/{item_id:int}", {"GET"}),
              WebSocketRoute("/ws"), Mount("/api", [Route("/status", {"GET"}), Route("/notes", {"POST"})])]
    async def __call__(self, scope, receive, send):
        assert scope["type"] == "http"
        await receive()
        status = 200 if scope["path"] in ("/", "/api/status") else 404
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})
app = App()
"#;

    /// Each route as `METHODS PATH` with the status it answered.
    fn listed(routes: &Routes) -> Vec<(String, Option<u16>)> {
        routes
            .routes
            .iter()
            .map(|r| (format!("{} {}", r.methods.join(","), r.path), r.status))
            .collect()
    }

    #[test]
    fn a_starlette_like_app_is_read_through_its_mounts_and_asked_as_asgi() {
        let routes = inspect_in(STARLETTELIKE, "star:app", true).unwrap();
        let got = listed(&routes);
        assert_eq!(
            got,
            [
                ("GET /".to_string(), Some(200)),
                ("GET /items/{item_id}".to_string(), None),
                ("GET /api/status".to_string(), Some(200)),
                ("POST /api/notes".to_string(), None),
            ]
        );
        assert_eq!(steps_that_run(&routes), 2);
    }

    /// Bottle's table: each route with its `rule` (`<name>` or `<name:filter>`) and its
    /// one `method`.
    const BOTTLELIKE: &str = r#"
class Route:
    def __init__(self, rule, method):
        self.rule, self.method = rule, method
class App:
    routes = [Route("/", "GET"), Route("/hello/<name>", "GET"), Route("/item/<id:int>", "DELETE"),
              Route("/submit", "POST")]
    def __call__(self, environ, start_response):
        start_response("200 OK", [])
        return [b"hi"]
app = App()
"#;

    #[test]
    fn a_bottle_like_app_is_read_rule_by_rule() {
        let routes = inspect_in(BOTTLELIKE, "bot:app", false).unwrap();
        assert_eq!(routes.source, "Bottle's routes");
        let got = listed(&routes);
        assert_eq!(
            got,
            [
                ("GET /".to_string(), Some(200)),
                ("GET /hello/{name}".to_string(), None),
                ("DELETE /item/{id}".to_string(), None),
                ("POST /submit".to_string(), None),
            ]
        );
        let text = journey_text("bot:app", &routes).unwrap();
        assert!(text.contains("# DELETE /item/{id}: {id} needs a value.\n# [[journey.step]]\n# delete = \"/item/{id}\"\n"), "{text}");
    }

    #[test]
    fn an_app_without_a_table_has_no_journey_and_one_that_fails_to_import_is_an_error() {
        let bare = "def app(environ, start_response):\n    start_response('200 OK', [])\n    return [b'']\n";
        let routes = inspect_in(bare, "bare:app", false).unwrap();
        assert_eq!(routes, Routes::default());
        assert_eq!(journey_text("bare:app", &routes), None);
        let e = inspect_in("raise SystemExit(3)", "broken:app", false).unwrap_err();
        assert!(e.to_string().contains("importing it"), "{e}");
    }

    #[test]
    fn only_marked_lines_with_a_path_a_request_can_carry_are_routes() {
        let mut out = String::from("hello\nshootout-route\tGET\t200\t/a\tX\n");
        out.push_str("shootout-route\tGET\t200\tno-slash\tX\n");
        out.push_str("shootout-route\tHEAD\t200\t/head-only\tX\n");
        out.push_str("shootout-route\tGET\t999\t/odd\tX\n");
        out.push_str("shootout-route\tGET\t200\t/bad path\tX\n");
        out.push_str("shootout-route\tGET\n");
        for i in 0..ROUTES_MAX + 3 {
            out.push_str(&format!("shootout-route\tPOST\t-\t/p{i}\tX\n"));
        }
        let r = parse_routes(&out);
        assert_eq!(r.listed, 2 + ROUTES_MAX + 3);
        assert_eq!(r.routes.len(), ROUTES_MAX);
        assert_eq!(r.routes[0].status, Some(200));
        assert_eq!(r.routes[1].path, "/odd");
        assert_eq!(r.routes[1].status, None);
        let text = journey_text("m:app", &r).unwrap();
        assert!(
            text.contains(&format!("the first {ROUTES_MAX} of {}", r.listed)),
            "{text}"
        );
    }
}
