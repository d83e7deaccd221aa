#!/usr/bin/env python3
"""Where the test suite's CPU goes: read a py-spy profile of a whole run and sum it by process and by kind of work.

    uv tool run py-spy record -r 25 --subprocesses --nonblocking -f raw -o suite.raw -- \\
        .venv/bin/python -m pytest -n 2 -p no:cacheprovider
    python scripts/suite_profile.py suite.raw [--rate 25] [--top 25]

Every sample is one stack of one Python process (the pytest controller, an xdist worker, or a subprocess a
test started: side venvs, the CLI, uv's build hooks), 1/rate seconds of that process's CPU. Each stack is
put in the first kind of work it shows, in this order: ``import`` (a module's first import), ``compile``
(XLA compiling, or reading the persistent compile cache), ``lower`` (jaxpr to StableHLO), ``trace`` (Python
to jaxpr), ``execute`` (running a compiled program), else ``other`` (the tests' own Python, host
environments' steps, pytest). Work outside Python (uv, XLA's threads, the kernel) is not sampled: compare
the total with ``time``'s user + sys.

Three tables: CPU seconds by process, by test function (the worker's frame that pytest called; a kit check's
name for the conformance kit), and by subprocess command. A profile recorded without ``--subprocesses`` (say
of ``pytest -p no:xdist``) has no process frames: all of it is counted as one worker.
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

#: Kinds of work, tried in order; a stack is the first kind any of whose markers is in one of its frames.
KINDS = (
    ("import", ("_find_and_load",)),
    ("compile", ("backend_compile", "compile_or_get_cached", "_cached_compilation")),
    ("lower", ("lower_jaxpr_to_module",)),
    ("trace", ("trace_to_jaxpr", "_create_pjit_jaxpr", "trace_to_subjaxpr")),
    ("execute", ("ExecuteReplicated", "_execute_compiled")),
)
COLUMNS = ("all", *(kind for kind, _ in KINDS), "other")
_COUNT = re.compile(r" (\d+)$")


def samples(lines: Iterable[str]) -> Iterator[tuple[list[str], int]]:
    """``(frames, count)`` of each stack in py-spy's raw (collapsed) output, root first.

    A process's frame is ``process PID:"its command line"``, and a command line may hold newlines
    (``python -c`` scripts): such a record spans several lines, joined back here."""
    record = ""
    for line in lines:
        line = line.rstrip("\n")
        record = record + "\\n" + line if record else line  # the newline kept visible, as two characters
        match = _COUNT.search(record)
        if match and " (" in record.rsplit(";", 1)[-1]:  # ends in a code frame, then the count
            yield record[: match.start()].split(";"), int(match.group(1))
            record = ""


def kind_of(frames: list[str]) -> str:
    """The kind of work a stack shows (``KINDS``), else "other"."""
    for kind, markers in KINDS:
        if any(marker in frame for frame in frames for marker in markers):
            return kind
    return "other"


def where(frames: list[str]) -> tuple[str, str]:
    """``(process, test)``: which process (controller, worker, or the subprocess's command) and which test."""
    processes = [f for f in frames if f.startswith("process ")]
    if len(processes) == 1:
        return "controller", ""
    if len(processes) > 2:  # started by a test in a worker (or by its subprocess)
        command = processes[-1].split('"', 1)[-1].rstrip('"')
        return "subprocess: " + re.sub(r"/tmp/\S+|\.tmp\w+", "<tmp>", command)[:90], ""
    test = ""
    for i, frame in enumerate(frames[:-1]):
        if frame.startswith("pytest_pyfunc_call ("):
            test = frames[i + 1].split(" (", 1)[0]
        elif frame.startswith("run_check (") and test:  # the conformance kit: name the check
            test = f"kit: {frames[i + 1].split(' (', 1)[0]}"
            break
    return "worker", test or "(collection, fixtures, between tests)"


def profile(lines: Iterable[str]) -> dict[str, dict[str, collections.Counter[str]]]:
    """Sample counts by table (``process``, ``test``, ``subprocess``), then row, then column (``COLUMNS``)."""
    tables: dict[str, dict[str, collections.Counter[str]]] = {
        name: collections.defaultdict(collections.Counter) for name in ("process", "test", "subprocess")
    }
    for frames, count in samples(lines):
        process, test = where(frames)
        kind = kind_of(frames)
        rows = [("process", process.split(":", 1)[0])]
        if process == "worker":
            rows.append(("test", test))
        elif process != "controller":
            rows.append(("subprocess", process.split(": ", 1)[1]))
        for table, row in rows:
            tables[table][row][kind] += count
            tables[table][row]["all"] += count
    return tables


def format_table(title: str, rows: dict[str, collections.Counter[str]], rate: float, top: int) -> str:
    """The ``top`` rows by CPU, in seconds (``count / rate``), one column per kind of work."""
    ordered = sorted(rows.items(), key=lambda item: -item[1]["all"])
    head = " ".join(f"{c:>8}" for c in COLUMNS)
    lines = [f"{title} (CPU seconds)", f"{head}  row"]
    for row, counts in ordered[:top]:
        lines.append(" ".join(f"{counts[c] / rate:8.1f}" for c in COLUMNS) + f"  {row}")
    if len(ordered) > top:
        rest: collections.Counter[str] = collections.Counter()
        for _, counts in ordered[top:]:
            rest.update(counts)
        lines.append(" ".join(f"{rest[c] / rate:8.1f}" for c in COLUMNS) + f"  ({len(ordered) - top} more rows)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("raw", type=Path, help="py-spy's output with -f raw")
    parser.add_argument("--rate", type=float, default=25.0, help="py-spy's -r, samples per second (default 25)")
    parser.add_argument("--top", type=int, default=25, help="rows per table (default 25)")
    args = parser.parse_args(argv)
    if args.rate <= 0 or args.top <= 0:
        parser.error(f"--rate and --top must be positive, got --rate {args.rate} --top {args.top}")
    if not args.raw.is_file():
        parser.error(f"{args.raw} is not a file; record one with py-spy (see the usage above)")
    with args.raw.open() as lines:
        tables = profile(lines)
    if not tables["process"]:
        parser.error(f"{args.raw} holds no py-spy stacks (was it recorded with -f raw?)")
    for title, name in (
        ("By process", "process"),
        ("By test, in the workers", "test"),
        ("By subprocess command", "subprocess"),
    ):
        print(format_table(title, tables[name], args.rate, args.top), end="\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
