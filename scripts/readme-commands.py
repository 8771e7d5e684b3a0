#!/usr/bin/env python3
"""Runs the commands of README.md and docs/*.md as written, against the bundled test server.

Each file runs on its own, in order (README.md, then docs/ by name), its servers stopped at
its end: a file that uses the test server starts it itself, as its reader would. Every ```sh
block runs as one bash script (``set -e``: each command must
succeed), and every ``$ COMMAND`` line of a ```text block runs on its own, its output
compared with the lines the README shows under it (each shown line must be printed, on
stdout or stderr, and every line printed on stdout must be shown; the order of lines is not
compared, as `resolve` prints in completion order). What makes that possible, and nothing
else, is changed on the way:

- the commands run in a scratch folder where ``fixtures`` is the repository's and
  ``target/debug/examples`` holds the built examples, which are also first on ``PATH`` under
  the names the README gives them once installed (``resolve``, ``admin``, ``testserver``,
  ``inspect``): the debug builds of the same programs ``cargo install`` makes;
- ``cargo run [-q] [--release] [--features F] --example NAME --`` runs the built ``NAME``,
  and ``cargo build ... --examples`` is already done (run ``cargo build --all-features
  --examples`` first: a missing binary fails the run);
- a ``testserver`` command (which a reader starts "in one terminal") starts in the
  background; the next command waits until it prints ``serving``; one started later on the
  same port replaces it; all are stopped at the end. A ``handle-gateway`` command (also
  ``cargo run -p handle-gateway -- ...``) is started the same way, waited for until it prints
  ``listening on`` (the gateway binary is ``handle-gateway`` beside the examples' folder,
  built by ``cargo test -p handle-gateway``).

A block the README marks with ``<!-- readme-commands: skip: REASON -->`` on the line before
its fence is not run, and the reason is printed: commands that need the global Handle System
(never contacted from here) and commands that are not about the bundled server (installing,
the test suite itself, fuzzing).

    python3 scripts/readme-commands.py [FILE...] [--bin DIR]

Exit status 0 when every command ran as the README says, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ("resolve", "admin", "testserver", "inspect")
SKIP = re.compile(r"<!--\s*readme-commands:\s*skip:\s*(.*?)\s*-->")
CARGO_RUN = re.compile(
    r"cargo run(?:\s+(?:-q|--quiet|--release|--locked|--all-features|--features\s+\S+))*"
    r"\s+--example\s+(\S+)(?:\s+--(?=\s|$))?"
)
CARGO_BUILD = re.compile(r"^\s*cargo build\b.*--examples\b")
TESTSERVER = re.compile(
    r"^(\s*)(?:target/debug/examples/)?testserver\b(.*?)\s*(?:&\s*(?:sleep\s+[\d.]+)?)?\s*(#.*)?$"
)
GATEWAY = re.compile(
    r"^(\s*)(?:cargo run(?:\s+-q)?\s+-p\s+handle-gateway\s+--(?=\s|$)"
    r"|(?:target/debug/)?handle-gateway\b)(.*?)\s*(?:&\s*(?:sleep\s+[\d.]+)?)?\s*(#.*)?$"
)
BLOCK_TIMEOUT = 120.0

# Sourced before every block: the scratch folder's programs first, and `start_server`.
PROLOGUE = r"""
start_server() {
    local port="" prev=""
    for a in "$@"; do [ "$prev" = "--port" ] && port=$a; prev=$a; done
    if [ -z "$port" ]; then
        echo "readme-commands: a testserver command without --port: $*" >&2
        return 1
    fi
    if [ -f "$RC_SERVERS/$port.pid" ]; then
        local old
        old=$(cat "$RC_SERVERS/$port.pid")
        kill "$old" 2>/dev/null || true
        for _ in $(seq 100); do kill -0 "$old" 2>/dev/null || break; sleep 0.05; done
    fi
    testserver "$@" >"$RC_SERVERS/$port.log" 2>&1 &
    local pid=$!
    echo "$pid" >"$RC_SERVERS/$port.pid"
    for _ in $(seq 200); do
        grep -q '^serving' "$RC_SERVERS/$port.log" && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    echo "readme-commands: testserver $* did not start:" >&2
    cat "$RC_SERVERS/$port.log" >&2
    return 1
}
start_gateway() {
    local listen="" prev=""
    for a in "$@"; do [ "$prev" = "--listen" ] && listen=$a; prev=$a; done
    if [ -z "$listen" ]; then
        echo "readme-commands: a handle-gateway command without --listen: $*" >&2
        return 1
    fi
    local log="$RC_SERVERS/gateway-${listen//[:.]/-}.log"
    "$RC_GATEWAY" "$@" >"$log" 2>&1 &
    local pid=$!
    echo "$pid" >"$RC_SERVERS/gateway-$pid.pid"
    for _ in $(seq 400); do
        grep -q '^listening on' "$log" && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    echo "readme-commands: handle-gateway $* did not start:" >&2
    cat "$log" >&2
    return 1
}
"""


@dataclass
class Block:
    """A fenced block of the README: its first line number, language and lines."""

    line: int
    lang: str
    lines: list[str]
    skip: str | None = None


@dataclass
class Outcome:
    failures: list[str] = field(default_factory=list)
    ran: int = 0
    skipped: list[str] = field(default_factory=list)


def blocks(text: str) -> list[Block]:
    """The fenced blocks of a Markdown text, each with the skip reason marked before it."""
    found: list[Block] = []
    current: Block | None = None
    last_marker: tuple[int, str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if current is not None:
            if line.startswith("```"):
                found.append(current)
                current = None
            else:
                current.lines.append(line)
            continue
        marker = SKIP.search(line)
        if marker:
            last_marker = (number, marker.group(1))
            continue
        if line.startswith("```"):
            skip = None
            if last_marker is not None and last_marker[0] == number - 1:
                skip = last_marker[1]
            current = Block(number, line[3:].strip(), [], skip)
        last_marker = None if line.strip() else last_marker
    return found


def logical_lines(lines: list[str]) -> list[str]:
    """Lines with their backslash continuations joined."""
    joined: list[str] = []
    pending = ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        joined.append(pending + line)
        pending = ""
    if pending:
        joined.append(pending)
    return joined


def rewrite(line: str) -> str:
    """One README command line as the scratch folder runs it (see the module's text)."""
    if CARGO_BUILD.match(line):
        return f": built already: {line.strip()}"
    line = CARGO_RUN.sub(lambda m: m.group(1), line)
    server = TESTSERVER.match(line)
    if server:
        return f"{server.group(1)}start_server{server.group(2)}"
    gateway = GATEWAY.match(line)
    if gateway:
        return f"{gateway.group(1)}start_gateway{gateway.group(2)}"
    return line


def run_shell(script: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", PROLOGUE + "set -e\n" + script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT,
        check=False,
    )


def expected_runs(block: Block) -> list[tuple[str, list[str]]]:
    """The `$ COMMAND` lines of a text block, each with the lines shown under it."""
    runs: list[tuple[str, list[str]]] = []
    for line in logical_lines(block.lines):
        if line.startswith("$ "):
            runs.append((line[2:], []))
        elif runs:
            runs[-1][1].append(line)
    return runs


def compare(shown: list[str], stdout: str, stderr: str) -> str | None:
    """Why the output differs from the shown lines, or None."""
    out = [line for line in stdout.splitlines() if line.strip()]
    err = [line for line in stderr.splitlines() if line.strip()]
    wanted = [line for line in shown if line.strip()]
    missing = [line for line in wanted if line not in out and line not in err]
    extra = [line for line in out if line not in wanted]
    if not missing and not extra:
        return None
    parts = []
    if missing:
        parts.append("shown but not printed:\n  " + "\n  ".join(missing))
    if extra:
        parts.append("printed but not shown:\n  " + "\n  ".join(extra))
    return "\n".join(parts)


def stop_servers(servers: Path) -> None:
    """Stops the servers a file's commands started, and waits until each has exited, so that
    the next file may start its own on the same ports."""
    pids = []
    for pid_file in servers.glob("*.pid"):
        try:
            pid = int(pid_file.read_text().strip())
            os.kill(pid, signal.SIGTERM)
            pids.append(pid)
        except (ProcessLookupError, ValueError):
            pass
        pid_file.unlink()
    for pid in pids:
        for _ in range(200):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)


def documents() -> list[Path]:
    """README.md, then every file of docs/ in name order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "files",
        nargs="*",
        type=Path,
        help="the Markdown files to run, each on its own (default: README.md, then docs/*.md)",
    )
    parser.add_argument(
        "--bin",
        type=Path,
        default=Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug" / "examples",
        help="the folder of the built examples (default: the target folder's debug/examples)",
    )
    args = parser.parse_args()
    bin_dir = args.bin.resolve()
    missing = [p for p in PROGRAMS if not (bin_dir / p).is_file()]
    if missing:
        print(
            f"readme-commands: {', '.join(missing)} not built in {bin_dir}: "
            "run `cargo build --all-features --examples` first",
            file=sys.stderr,
        )
        return 1
    gateway = bin_dir.parent / "handle-gateway"
    if not gateway.is_file():
        print(
            f"readme-commands: {gateway} is not built: run `cargo build -p handle-gateway` first",
            file=sys.stderr,
        )
        return 1
    outcome = Outcome()
    with tempfile.TemporaryDirectory(prefix="readme-commands-") as scratch_name:
        scratch = Path(scratch_name)
        (scratch / "fixtures").symlink_to(ROOT / "fixtures")
        (scratch / "target" / "debug").mkdir(parents=True)
        (scratch / "target" / "debug" / "examples").symlink_to(bin_dir)
        servers = scratch / ".servers"
        servers.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("HANDLE_RESOLVER_")}
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        env["RC_SERVERS"] = str(servers)
        env["RC_GATEWAY"] = str(gateway)
        env["HOME"] = str(scratch)
        try:
            for path in args.files or documents():
                full = path.resolve()
                name = str(full.relative_to(ROOT)) if full.is_relative_to(ROOT) else str(path)
                for block in blocks(path.read_text(encoding="utf-8")):
                    run_block(name, block, env, scratch, outcome)
                stop_servers(servers)
        finally:
            stop_servers(servers)
            shutil.rmtree(servers, ignore_errors=True)
    for reason in outcome.skipped:
        print(f"skipped: {reason}")
    if outcome.failures:
        print(
            f"\nreadme-commands: {len(outcome.failures)} of {outcome.ran} failed:", file=sys.stderr
        )
        for failure in outcome.failures:
            print(f"\n{failure}", file=sys.stderr)
        return 1
    print(f"readme-commands: all {outcome.ran} ran as README.md and docs/ say")
    return 0


def run_block(
    name: str, block: Block, env: dict[str, str], scratch: Path, outcome: Outcome
) -> None:
    where = f"{name}:{block.line}"
    if block.lang not in ("sh", "text"):
        return
    if block.skip is not None:
        if block.lang == "sh" or expected_runs(block):
            outcome.skipped.append(f"{where}: {block.skip}")
        return
    if block.lang == "sh":
        script = "\n".join(rewrite(line) for line in logical_lines(block.lines))
        outcome.ran += 1
        try:
            done = run_shell(script, env, scratch)
        except subprocess.TimeoutExpired:
            outcome.failures.append(f"{where}: the block ran over {BLOCK_TIMEOUT:.0f} s")
            return
        status = "ok" if done.returncode == 0 else f"exit {done.returncode}"
        print(f"{where}: sh block ({len(block.lines)} lines): {status}")
        if done.returncode != 0:
            outcome.failures.append(
                f"{where}: exit status {done.returncode}\n--- script\n{script}\n"
                f"--- stdout\n{done.stdout}--- stderr\n{done.stderr}"
            )
        return
    for command, shown in expected_runs(block):
        outcome.ran += 1
        try:
            done = run_shell(rewrite(command), env, scratch)
        except subprocess.TimeoutExpired:
            outcome.failures.append(f"{where}: `{command}` ran over {BLOCK_TIMEOUT:.0f} s")
            continue
        why = compare(shown, done.stdout, done.stderr)
        print(f"{where}: $ {command}: {'as shown' if why is None else 'differs'}")
        if why is not None:
            outcome.failures.append(
                f"{where}: `{command}` (exit {done.returncode}) {why}\n--- stderr\n{done.stderr}"
            )


if __name__ == "__main__":
    sys.exit(main())
