"""Translates a Locustfile into a shootout journey file (TOML on stdout).

Run by `shootout journey from-locust` as `python3 -I -c <this> LOCUSTFILE`. The Python
is read with its own `ast` module and never run. Every construct that cannot be
translated is named with its line on stderr (`LINE: what`), and then nothing is printed
and the exit status is 3 (any other failure is the translator's own).

Supported: HttpUser/FastHttpUser classes and their `weight`, `wait_time` (between,
constant, constant_pacing, constant_throughput), `@task`/`@task(n)` methods, `tasks` lists
and dicts of functions, `on_start`; in their bodies `<user>.client.get/post/put/delete/
patch/head/options(url, ...)` with literal or f-string arguments (`{self.x}`, `{x}`,
`{random.randint(a, b)}`), `name=`, `data=`, `json=`, `headers=`, `params=`, and
`catch_response=True` blocks checking `status_code`, `"text" in response.text` and
`response.json()[...]` with `response.success()`/`failure()`; `x = response.json()[...]`
captures (also `self.x = ...`).
"""

import ast
import json
import sys

USER_BASES = {"HttpUser", "FastHttpUser"}
METHODS = {"get", "post", "put", "delete", "patch", "head", "options"}
PLAIN = {"Pass"}


class Untranslatable(Exception):
    def __init__(self, node, what):
        super().__init__(what)
        self.node = node
        self.what = what


def toml_str(s):
    return json.dumps(s, ensure_ascii=False)


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return toml_str(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{toml_str(k)} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(v)


def duration(node, what):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        ms = round(node.value * 1000)
        if ms % 1000 == 0:
            return f"{ms // 1000}s"
        return f"{ms}ms"
    raise Untranslatable(node, f"{what} takes a number of seconds written as a literal")


class Translator:
    def __init__(self, source, filename):
        self.source = source
        self.filename = filename
        self.errors = []
        self.functions = {}
        # What the translation leaves to shootout's flags or cannot keep exactly: comments
        # at the top of the journey file, never an error.
        self.notes = []

    def fail(self, node, what):
        seg = ast.get_source_segment(self.source, node) or ""
        seg = seg.splitlines()[0] if seg else ""
        if len(seg) > 60:
            seg = seg[:57] + "..."
        self.errors.append((getattr(node, "lineno", 0), f"`{seg}`: {what}" if seg else what))

    def run(self, tree):
        journeys = []
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                self.functions[node.name] = node
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and any(self.listener(d) for d in node.decorator_list):
                self.notes.append((node.lineno, f"the event listener {node.name} is not part of a journey: left out"))
        classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
        user_names = set()
        for c in classes:
            bases = [self.base_name(b) for b in c.bases]
            if any(b in USER_BASES for b in bases):
                user_names.add(c.name)
        for c in classes:
            bases = [self.base_name(b) for b in c.bases]
            if any(b in USER_BASES for b in bases):
                j = self.user(c)
                if j is not None:
                    journeys.append(j)
            elif "LoadTestShape" in bases:
                self.notes.append((c.lineno, f"the load shape {c.name} is not part of a journey: give shootout load its users or rate (-c, --rate, --stages)"))
            elif any(b in user_names for b in bases):
                self.fail(c, f"class {c.name} inherits from another user class: write its tasks in one HttpUser class")
            elif any(b in ("TaskSet", "SequentialTaskSet", "User") for b in bases):
                self.fail(c, f"class {c.name} is a {bases[0]}: only HttpUser and FastHttpUser classes with @task methods are translated")
        if not journeys and not self.errors:
            self.errors.append((1, "no HttpUser or FastHttpUser class with tasks: nothing to translate"))
        return journeys

    @staticmethod
    def listener(d):
        """`@events.X.add_listener`: an event hook."""
        return isinstance(d, ast.Attribute) and d.attr == "add_listener"

    @staticmethod
    def base_name(b):
        if isinstance(b, ast.Name):
            return b.id
        if isinstance(b, ast.Attribute):
            return b.attr
        return ""

    def user(self, c):
        errors_before = len(self.errors)
        weight = 1
        think = None
        tasks = []
        on_start = None
        for node in c.body:
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                continue  # a docstring
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                key = node.targets[0].id
                v = node.value
                if key == "abstract" and isinstance(v, ast.Constant) and v.value is True:
                    return None
                if key == "weight" and isinstance(v, ast.Constant) and isinstance(v.value, int) and v.value >= 1:
                    weight = v.value
                elif key == "host":
                    if isinstance(v, ast.Constant) and isinstance(v.value, str):
                        self.notes.append((node.lineno, f"{c.name}'s host {v.value} is not part of a journey: give it to shootout as the URL"))
                    continue
                elif key == "wait_time":
                    try:
                        think = self.wait_time(v)
                    except Untranslatable as e:
                        self.fail(e.node, e.what)
                elif key == "tasks":
                    tasks.extend(self.task_list(v))
                elif key in ("network_timeout", "connection_timeout", "insecure", "max_redirects", "max_retries", "concurrency"):
                    continue  # client settings: shootout has its own flags
                else:
                    self.fail(node, f"{key} is not translated (a user class's weight, wait_time, host and tasks are)")
                continue
            if isinstance(node, ast.FunctionDef):
                if node.name == "on_start":
                    on_start = node
                    continue
                weight_of = self.task_weight(node)
                if weight_of is not None:
                    tasks.append((node, weight_of))
                elif node.name == "on_stop":
                    self.fail(node, "on_stop is not translated: a journey has no step after the user's last")
                else:
                    if node.decorator_list:
                        self.fail(node, f"method {node.name}'s decorator is not translated (only @task and @task(n) are)")
                    # a helper method: only an error where it is called
                continue
            self.fail(node, "this statement in a user class is not translated")
        if not tasks:
            if len(self.errors) == errors_before:
                self.fail(c, f"class {c.name} has no task: give it @task methods")
            return None
        steps = []
        names = {}
        if on_start is not None:
            for s in self.body(on_start):
                s["once"] = True
                steps.append(s)
            if steps and think:
                self.notes.append((on_start.lineno, f"on_start: Locust runs the first task right after it, a journey thinks ({think}) after its steps too"))
        for fn, w in tasks:
            before = len(self.errors)
            body = self.body(fn)
            if not body and len(self.errors) == before:
                self.fail(fn, f"task {fn.name} sends no request")
                continue
            if len(body) > 1 and think:
                self.notes.append((fn.lineno, f"task {fn.name} sends {len(body)} requests: Locust waits between tasks only, a journey thinks ({think}) between any two steps"))
            for i, s in enumerate(body):
                s["task"] = fn.name
                if i == 0 and w != 1:
                    s["weight"] = w
                steps.append(s)
        for s in steps:
            base = s["name"]
            n = names.get(base, 0) + 1
            names[base] = n
            if n > 1:
                s["name"] = f"{base} ({n})"
        return {"name": c.name, "weight": weight, "think": think, "steps": steps, "line": c.lineno}

    def wait_time(self, v):
        if isinstance(v, ast.Call):
            f = self.base_name(v.func)
            if f == "between" and len(v.args) == 2:
                return f"uniform({duration(v.args[0], 'between')},{duration(v.args[1], 'between')})"
            if f == "constant" and len(v.args) == 1:
                return duration(v.args[0], "constant")
            if f == "constant_pacing" and len(v.args) == 1:
                return f"pacing({duration(v.args[0], 'constant_pacing')})"
            if f == "constant_throughput" and len(v.args) == 1:
                a = v.args[0]
                if isinstance(a, ast.Constant) and isinstance(a.value, (int, float)) and a.value > 0:
                    return f"pacing({round(1000 / a.value)}ms)"
        self.fail(v, "wait_time is translated from between(a, b), constant(a), constant_pacing(a) and constant_throughput(n)")
        return None

    def task_weight(self, fn):
        for d in fn.decorator_list:
            if isinstance(d, ast.Name) and d.id == "task":
                return 1
            if isinstance(d, ast.Call) and self.base_name(d.func) == "task":
                if len(d.args) == 1 and isinstance(d.args[0], ast.Constant) and isinstance(d.args[0].value, int) and d.args[0].value >= 1:
                    return d.args[0].value
                if not d.args:
                    return 1
                self.fail(d, "@task takes a literal whole weight from 1")
                return 1
        return None

    def task_list(self, v):
        out = []
        items = []
        if isinstance(v, ast.List):
            items = [(e, 1) for e in v.elts]
        elif isinstance(v, ast.Dict):
            for k, w in zip(v.keys, v.values):
                if isinstance(w, ast.Constant) and isinstance(w.value, int) and w.value >= 1:
                    items.append((k, w.value))
                else:
                    self.fail(w, "a tasks dict's weights are literal whole numbers")
        else:
            self.fail(v, "tasks is translated from a list or dict of functions")
        for e, w in items:
            if isinstance(e, ast.Name) and e.id in self.functions:
                out.append((self.functions[e.id], w))
            else:
                self.fail(e, "a task here must be a function of this file (TaskSet classes are not translated)")
        return out

    # A task's body: its requests as steps.
    def body(self, fn):
        self.receiver = fn.args.args[0].arg if fn.args.args else "self"
        steps = []
        for node in fn.body:
            try:
                self.statement(node, steps)
            except Untranslatable as e:
                self.fail(e.node, e.what)
        return steps

    def statement(self, node, steps):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return  # a docstring
        if isinstance(node, ast.Pass):
            return
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            steps.append(self.request(node.value))
            return
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(node.value, ast.Call) and self.is_request(node.value):
                step = self.request(node.value)
                steps.append(step)
                self.response = (self.var_name(target), step)
                return
            if isinstance(node.value, ast.Subscript) and self.capture(node, steps):
                return
        if isinstance(node, ast.With) and len(node.items) == 1:
            item = node.items[0]
            call = item.context_expr
            if isinstance(call, ast.Call) and self.is_request(call):
                step = self.request(call, allow_catch=True)
                steps.append(step)
                name = item.optional_vars.id if isinstance(item.optional_vars, ast.Name) else None
                self.response = (name, step)
                for inner in node.body:
                    self.check(inner, name, step, steps)
                return
        self.fail(node, "not translated: a task's body is requests, checks of their answers and captures of JSON values")

    def var_name(self, target):
        if isinstance(target, ast.Name):
            return target.id
        return None

    def is_request(self, call):
        f = call.func
        return (
            isinstance(f, ast.Attribute)
            and f.attr in METHODS
            and isinstance(f.value, ast.Attribute)
            and f.value.attr == "client"
            and isinstance(f.value.value, ast.Name)
            and f.value.value.id == self.receiver
        )

    def request(self, call, allow_catch=False):
        if not self.is_request(call):
            raise Untranslatable(call, "only calls of self.client.get/post/put/delete/patch/head/options are translated")
        method = call.func.attr
        kwargs = {}
        for k in call.keywords:
            if k.arg is None:
                raise Untranslatable(call, "**kwargs in a request is not translated")
            kwargs[k.arg] = k.value
        args = list(call.args)
        url = args.pop(0) if args else kwargs.pop("url", None) or kwargs.pop("path", None)
        if url is None:
            raise Untranslatable(call, "a request without its URL")
        path = self.text(url)
        if path.startswith("http://") or path.startswith("https://"):
            raise Untranslatable(url, "an absolute URL: a journey's requests go to the host shootout is given; write the path")
        step = {"method": method, "path": path}
        if args and method in ("post", "put", "patch"):
            kwargs.setdefault("data", args.pop(0))
        if args:
            raise Untranslatable(call, "more positional arguments than the URL (and data) are not translated")
        for key, v in kwargs.items():
            if key == "name":
                step["name"] = self.text(v)
            elif key == "data":
                if isinstance(v, ast.Dict):
                    step["form"] = self.mapping(v)
                else:
                    step["body"] = self.text(v)
            elif key == "json":
                step["json"] = self.json_value(v)
            elif key == "headers":
                step["headers"] = self.mapping(v)
            elif key == "params":
                params = self.mapping(v)
                q = "&".join(f"{k}={x}" for k, x in params.items())
                step["path"] += ("&" if "?" in step["path"] else "?") + q
            elif key == "catch_response" and allow_catch:
                pass
            elif key in ("timeout", "allow_redirects", "verify", "stream"):
                pass  # client settings: shootout has its own flags
            else:
                raise Untranslatable(v, f"the argument {key}= is not translated")
        if "name" not in step:
            step["name"] = f"{method.upper()} {step['path']}"
        return step

    def mapping(self, v):
        if not isinstance(v, ast.Dict):
            raise Untranslatable(v, "a dict written out is translated, not a variable")
        out = {}
        for k, x in zip(v.keys, v.values):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                raise Untranslatable(v, "a dict's keys must be literal strings")
            out[k.value] = self.text(x)
        return out

    def json_value(self, v):
        if isinstance(v, ast.Dict):
            out = {}
            for k, x in zip(v.keys, v.values):
                if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                    raise Untranslatable(v, "a JSON object's keys must be literal strings")
                out[k.value] = self.json_value(x)
            return out
        if isinstance(v, ast.List):
            return [self.json_value(x) for x in v.elts]
        if isinstance(v, ast.Constant) and isinstance(v.value, (bool, int, float)) and v.value is not None:
            return v.value
        return self.text(v)

    # A literal or an f-string as a journey template.
    def text(self, v):
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            return v.value.replace("{", "{{").replace("}", "}}")
        if isinstance(v, ast.Constant) and isinstance(v.value, (int, float)) and not isinstance(v.value, bool):
            return str(v.value)
        if isinstance(v, ast.JoinedStr):
            out = []
            for part in v.values:
                if isinstance(part, ast.Constant):
                    out.append(str(part.value).replace("{", "{{").replace("}", "}}"))
                elif isinstance(part, ast.FormattedValue) and part.format_spec is None and part.conversion == -1:
                    out.append(self.placeholder(part.value))
                else:
                    raise Untranslatable(part, "an f-string value with a format or conversion is not translated")
            return "".join(out)
        if isinstance(v, (ast.Name, ast.Attribute)):
            return self.placeholder(v)
        raise Untranslatable(v, "a value here must be a literal, an f-string or a captured variable")

    def placeholder(self, e):
        if isinstance(e, ast.Name):
            return "{" + e.id + "}"
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == self.receiver:
            return "{" + e.attr + "}"
        if (
            isinstance(e, ast.Call)
            and self.base_name(e.func) == "randint"
            and len(e.args) == 2
            and all(isinstance(a, ast.Constant) and isinstance(a.value, int) and a.value >= 0 for a in e.args)
        ):
            return "{rand:%d-%d}" % (e.args[0].value, e.args[1].value)
        raise Untranslatable(e, "only variables, self.attributes and random.randint(a, b) are translated inside an f-string")

    # `x = response.json()["a"][0]` after a request: a capture on that request's step.
    def capture(self, node, steps):
        pointer = self.json_pointer(node.value)
        if pointer is None:
            return False
        resp_name, step = getattr(self, "response", (None, None))
        if step is None or steps[-1:] != [step] or pointer[0] != resp_name:
            raise Untranslatable(node, "a capture reads the answer of the request just before it")
        name = self.capture_name(node.targets[0])
        step.setdefault("capture", {})[name] = {"json": pointer[1]}
        return True

    def capture_name(self, target):
        if isinstance(target, ast.Name):
            return target.id
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == self.receiver:
            return target.attr
        raise Untranslatable(target, "a captured value goes into a variable or self.attribute")

    def json_pointer(self, e):
        """(response variable, JSON pointer) of `r.json()["a"][0]`, or None."""
        keys = []
        while isinstance(e, ast.Subscript):
            k = e.slice
            if isinstance(k, ast.Constant) and isinstance(k.value, (str, int)) and not isinstance(k.value, bool):
                keys.append(str(k.value).replace("~", "~0").replace("/", "~1"))
            else:
                raise Untranslatable(e, "a JSON key must be a literal string or index")
            e = e.value
        if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "json" and not e.args):
            return None
        if not isinstance(e.func.value, ast.Name):
            return None
        if not keys:
            raise Untranslatable(e, "capture a value of the JSON (response.json()[\"key\"]), not the whole document")
        return (e.func.value.id, "/" + "/".join(reversed(keys)))

    # Inside `with ... catch_response=True as response:`.
    def check(self, node, resp, step, steps):
        if isinstance(node, ast.Pass) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            return
        if isinstance(node, ast.Expr) and self.verdict(node.value, resp) == "success":
            return
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Subscript):
            try:
                if self.capture(node, steps):
                    return
            except Untranslatable as e:
                self.fail(e.node, e.what)
                return
        if isinstance(node, ast.If):
            try:
                self.if_check(node, resp, step)
                return
            except Untranslatable as e:
                self.fail(e.node, e.what)
                return
        self.fail(node, "not translated in a catch_response block (status_code, \"text\" in response.text and response.json() checks, success() and failure() are)")

    def verdict(self, e, resp):
        if (
            isinstance(e, ast.Call)
            and isinstance(e.func, ast.Attribute)
            and isinstance(e.func.value, ast.Name)
            and e.func.value.id == resp
            and e.func.attr in ("success", "failure")
        ):
            return e.func.attr
        return None

    def branch(self, body, resp):
        """'success' or 'failure' for a branch of one verdict call (None if empty)."""
        if not body:
            return None
        if len(body) == 1 and isinstance(body[0], ast.Expr):
            v = self.verdict(body[0].value, resp)
            if v:
                return v
        raise Untranslatable(body[0], "a check's branch must be response.success() or response.failure(...) alone")

    def if_check(self, node, resp, step):
        then = self.branch(node.body, resp)
        orelse = None
        if node.orelse:
            if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
                raise Untranslatable(node.orelse[0], "elif chains of checks are not translated: write one if per check")
            orelse = self.branch(node.orelse, resp)
        # Normalise to "fails when <test>".
        if then == "failure" and orelse in (None, "success"):
            fails_when, negated = node.test, False
        elif then == "success" and orelse == "failure":
            fails_when, negated = node.test, True
        elif then == "success" and orelse is None:
            # Accepting a status otherwise refused: `if response.status_code == 404: success()`.
            code = self.status_test(node.test, resp, "==")
            if code is None:
                raise Untranslatable(node, "an if that only calls success() is translated for a status_code == N test")
            if "status" in step.get("expect", {}):
                raise Untranslatable(node, "a second check of status_code on one request is not translated: write one")
            step.setdefault("expect", {})["status"] = f"100-399,{code}"
            return
        else:
            raise Untranslatable(node, "this check is not translated")
        expect = step.setdefault("expect", {})
        # failure when status != N  (or success when status == N, else failure)
        code = self.status_test(fails_when, resp, "==" if negated else "!=")
        if code is not None:
            if "status" in expect:
                raise Untranslatable(node, "a second check of status_code on one request is not translated: write one")
            expect["status"] = code
            return
        text = self.contains_test(fails_when, resp, negated)
        if text is not None:
            if "body_contains" in expect:
                raise Untranslatable(node, "a second check of the text on one request is not translated (a step expects one text)")
            expect["body_contains"] = text
            return
        jv = self.json_test(fails_when, resp, negated)
        if jv is not None:
            expect.setdefault("json", {})[jv[0]] = jv[1]
            return
        raise Untranslatable(fails_when, "this test is not translated (status_code == / != N, \"text\" in / not in response.text, response.json()[...] == / != literal are)")

    def status_test(self, t, resp, op):
        ops = {"==": ast.Eq, "!=": ast.NotEq}
        if (
            isinstance(t, ast.Compare)
            and len(t.ops) == 1
            and isinstance(t.ops[0], ops[op])
            and isinstance(t.left, ast.Attribute)
            and t.left.attr == "status_code"
            and isinstance(t.left.value, ast.Name)
            and t.left.value.id == resp
            and isinstance(t.comparators[0], ast.Constant)
            and isinstance(t.comparators[0].value, int)
        ):
            return t.comparators[0].value
        return None

    def contains_test(self, t, resp, negated):
        want = ast.In if negated else ast.NotIn
        if (
            isinstance(t, ast.Compare)
            and len(t.ops) == 1
            and isinstance(t.ops[0], want)
            and isinstance(t.left, ast.Constant)
            and isinstance(t.left.value, str)
            and isinstance(t.comparators[0], ast.Attribute)
            and t.comparators[0].attr in ("text", "content")
            and isinstance(t.comparators[0].value, ast.Name)
            and t.comparators[0].value.id == resp
        ):
            return t.left.value.replace("{", "{{").replace("}", "}}")
        return None

    def json_test(self, t, resp, negated):
        want = ast.Eq if negated else ast.NotEq
        if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], want):
            p = self.json_pointer(t.left)
            v = t.comparators[0]
            if p and p[0] == resp and isinstance(v, ast.Constant) and v.value is not None:
                return (p[1], v.value)
        return None


def emit(journeys, filename, notes):
    out = [f"# Translated from {filename} by shootout journey from-locust: check it with", "# shootout journey check FILE."]
    for line, what in sorted(set(notes)):
        out.append(f"# line {line}: {what}")
    out.append("")
    for j in journeys:
        out.append("[[journey]]")
        out.append(f"name = {toml_str(j['name'])}")
        out.append(f"weight = {j['weight']}")
        if j["think"]:
            out.append(f"think = {toml_str(j['think'])}")
        for s in j["steps"]:
            out.append("")
            out.append("[[journey.step]]")
            out.append(f"name = {toml_str(s['name'])}")
            out.append(f"{s['method']} = {toml_str(s['path'])}")
            for key in ("headers", "form", "json", "body", "expect", "capture", "task", "weight", "once"):
                if key in s:
                    out.append(f"{key} = {toml_value(s[key])}")
        out.append("")
    return "\n".join(out)


def main():
    sys.stdout.reconfigure(encoding="utf-8")
    sys.stderr.reconfigure(encoding="utf-8", errors="backslashreplace")
    if len(sys.argv) != 2:
        print("usage: from_locust LOCUSTFILE", file=sys.stderr)
        return 2
    path = sys.argv[1]
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except OSError as e:
        print(f"0: cannot read it: {e.strerror}", file=sys.stderr)
        return 3
    except UnicodeDecodeError as e:
        print(f"0: not UTF-8 text: {e.reason} at byte {e.start}", file=sys.stderr)
        return 3
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as e:
        print(f"{e.lineno or 0}: not Python: {e.msg}", file=sys.stderr)
        return 3
    t = Translator(source, path)
    journeys = t.run(tree)
    if t.errors:
        for line, what in sorted(set(t.errors)):
            print(f"{line}: {what}", file=sys.stderr)
        return 3
    sys.stdout.write(emit(journeys, path.rsplit("/", 1)[-1], t.notes))
    return 0


sys.exit(main())
