"""The test paste: about 200 lines of log-like junk text, 9216 bytes, always the same.

seed 001 pasted "about 200 lines of junk text from a log file totaling approximately
9kB"; this makes such a text deterministically (no randomness between runs or machines).
"""
SIZE = 9216
PASTE_ID = "a8137a"  # the id in the article's ab command line

_LEVELS = ["INFO", "DEBUG", "WARN", "INFO", "ERROR", "INFO"]
_SOURCES = ["web", "db", "cache", "auth", "cron", "mail"]
_EVENTS = [
    "GET /content/{n:06x} {ms}ms",
    "conn {n} back to pool",
    "miss paste:{n:06x}",
    "session {n:06x} renewed",
    "cleanup: {ms} removed",
    "queued mail {n}",
]


def text() -> str:
    lines = []
    n = 0
    while sum(len(l) for l in lines) < SIZE:
        lvl = _LEVELS[n % len(_LEVELS)]
        src = _SOURCES[(n * 7) % len(_SOURCES)]
        ev = _EVENTS[(n * 5) % len(_EVENTS)].format(n=n * 7919 % 1000003, ms=(n * 37) % 997)
        stamp = f"{10 + n // 3600:02d}:{(n // 60) % 60:02d}:{n % 60:02d}.{n * 13 % 1000:03d}"
        lines.append(f"{stamp} {lvl:<5} [{src}] {ev}\n")
        n += 1
    out = "".join(lines)[:SIZE]
    return out[:-1] + "\n"


if __name__ == "__main__":
    t = text()
    print(len(t.encode()), t.count("\n"), "lines")
