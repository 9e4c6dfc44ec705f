"""Writes the quickstart's page: 7348 bytes of HTML (the size of seed 000's file)."""
import sys

SIZE = 7348
line = "<p>shootout quickstart: the same page on every request.</p>\n"
head, tail = "<!doctype html>\n<html><body>\n", "</body></html>\n"
body = (line * (SIZE // len(line) + 1))[: SIZE - len(head) - len(tail)]
with open(sys.argv[1], "w") as f:
    f.write(head + body + tail)
