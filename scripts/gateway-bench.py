#!/usr/bin/env python3
"""The gateway's benchmarks (BENCHMARKS.md §18), in one sitting, on loopback only.

    python3 scripts/gateway-bench.py [--duration 10] [--rounds 3] [--only warm,cold,redis,callgrind]

Needs ``wrk`` (Debian package wrk), ``redis-server`` and ``valgrind`` for their parts. Builds
the release gateway (feature ``redis``), its ``bench_peer`` example and the release
``testserver``, then:

- **warm** (``--versus BIN``: a second gateway binary in the same rounds, e.g. the one
  before a change): the gateway (``--demo``, access log to a file, ``/metrics`` on, a CORS
  ``Origin`` on every request) answering its warm 302 for ``/20.500.1/demo``, against the
  *floor*: ``bench_peer floor``, an axum handler on the same runtime answering a copy of that
  same 302 (headers and body) from memory. ``wrk`` with one thread, the same settings on both
  sides, at 1, 64 and 256 connections, the two alternated round by round; medians of the
  rounds' requests/s, p50 and p99.
- **cold**: the gateway with ``--cache-size-mb 0`` and ``--server`` the release test server
  (every request a resolution) under ``wrk -c64``, against ``bench_peer resolve-many``, the
  library's ``Resolver::resolve_many`` with the gateway's resolver settings at concurrency 64
  against the same server, alternated; once with the server answering at once (all on this
  machine's CPU) and once with it answering after ``--delay-ms`` 5 (a server some way off,
  as every real one is; ``--cold-delays`` changes the list).
- **redis**: a gateway fills Redis with the records of 150,000 handles (``--server`` a test
  server holding them); then each round a fresh gateway on the same Redis (its own cache
  empty) is asked each handle once, in order, by ``wrk -c64`` for 2 s: every answer is a
  Redis hit
  (Redis's ``keyspace_hits`` is read to check it).
- **callgrind**: instructions per warm request of the gateway (logging, metrics, CORS on)
  under ``valgrind --tool=callgrind``: two runs of 200 and 2,200 requests on one connection
  (``bench_peer get``), the difference of their totals over 2,000.

The load average is printed at the start and the end of each part.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
RELEASE = TARGET / "release"
GATEWAY = [RELEASE / "handle-gateway"]  # the binary measured (`--gateway` replaces it)
PEER = RELEASE / "examples" / "bench_peer"
TESTSERVER = RELEASE / "examples" / "testserver"
ORIGIN = "http://example.org"


def say(text: str) -> None:
    print(text, flush=True)


def say_rounds(a: str, a_rates: list[float], b: str, b_rates: list[float]) -> None:
    """Each round's requests/s of the two sides, under their medians."""
    say(
        f"   rounds: {a} "
        + " ".join(f"{x:.0f}" for x in a_rates)
        + f" | {b} "
        + " ".join(f"{x:.0f}" for x in b_rates)
    )


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def build() -> None:
    say("building (release): handle-gateway + bench_peer (feature redis), testserver")
    subprocess.run(
        [
            "cargo",
            "build",
            "--release",
            "-q",
            "-p",
            "handle-gateway",
            "--features",
            "redis",
            "--bin",
            "handle-gateway",
            "--example",
            "bench_peer",
        ],
        cwd=ROOT,
        check=True,
    )
    subprocess.run(
        ["cargo", "build", "--release", "-q", "--example", "testserver"], cwd=ROOT, check=True
    )


class Service:
    """A program started in the background, waited for until `ready` appears on stdout."""

    def __init__(self, argv: list[str], ready: str, prefix: list[str] | None = None):
        self.proc = subprocess.Popen(
            (prefix or []) + argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{argv[0]} ended before it was ready")
            if ready in line:
                return
        raise RuntimeError(f"{argv[0]}: not ready after 120 s")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def gateway(
    args: list[str], prefix: list[str] | None = None, binary: Path | None = None
) -> tuple[Service, int]:
    port = free_port()
    return Service(
        [str(binary or GATEWAY[0]), "--listen", f"127.0.0.1:{port}", *args],
        "listening on",
        prefix,
    ), port


def curl(url: str, origin: bool = True) -> str:
    argv = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", url]
    if origin:
        argv[1:1] = ["-H", f"Origin: {ORIGIN}"]
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0}


def wrk(url: str, conns: int, duration: int, script: str | None = None) -> dict[str, float]:
    argv = ["wrk", "-t1", f"-c{conns}", f"-d{duration}s", "--latency", "-H", f"Origin: {ORIGIN}"]
    if script:
        argv += ["-s", script]
    out = subprocess.run(argv + [url], check=True, capture_output=True, text=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    res = {"rps": rate}
    for pct in ("50", "99"):
        m = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        assert m, out
        res[f"p{pct}"] = float(m.group(1)) * UNITS[m.group(2)]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)|Socket errors: .*", out)
    if errors:
        raise RuntimeError(f"wrk {url}: {errors.group(0)}\n{out}")
    return res


def med(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def part_warm(a: argparse.Namespace, tmp: Path) -> None:
    say(f"\n## warm redirect vs the floor (load average {load()})")
    args = [
        "--demo",
        "--access-log",
        str(tmp / "access.log"),
        "--metrics-listen",
        f"127.0.0.1:{free_port()}",
    ]
    gw, port = gateway(args)
    url = f"http://127.0.0.1:{port}/20.500.1/demo"
    # `--versus BIN`: that gateway too, in the same rounds (alternated with the two others).
    other = None
    if a.versus:
        args[2] = str(tmp / "access-versus.log")
        args[4] = f"127.0.0.1:{free_port()}"
        other = gateway(args, binary=a.versus)
    urls = {"gateway": url}
    if other:
        urls["versus"] = f"http://127.0.0.1:{other[1]}/20.500.1/demo"
    try:
        assert all(curl(u) == "302" for u in urls.values())
        fport = free_port()
        floor = Service(
            [
                str(PEER),
                "floor",
                "--listen",
                f"127.0.0.1:{fport}",
                "--copy",
                url,
                "--origin",
                ORIGIN,
            ],
            "listening on",
        )
        furl = f"http://127.0.0.1:{fport}/20.500.1/demo"
        try:
            for conns in (1, 64, 256):
                runs: dict[str, list[dict[str, float]]] = {"floor": []}
                runs.update({name: [] for name in urls})
                for _ in range(a.rounds):
                    runs["floor"].append(wrk(furl, conns, a.duration))
                    for name, u in urls.items():
                        runs[name].append(wrk(u, conns, a.duration))
                f, g = runs["floor"], runs["gateway"]
                say(
                    f"c={conns:<3} floor {med(f, 'rps'):>8.0f}/s p50 {med(f, 'p50'):.3f} ms "
                    f"p99 {med(f, 'p99'):.3f} ms | gateway {med(g, 'rps'):>8.0f}/s "
                    f"p50 {med(g, 'p50'):.3f} ms p99 {med(g, 'p99'):.3f} ms | "
                    f"ratio {med(g, 'rps') / med(f, 'rps'):.2f}, "
                    f"p99 ratio {med(g, 'p99') / med(f, 'p99'):.2f}"
                )
                say_rounds("floor", [r["rps"] for r in f], "gateway", [r["rps"] for r in g])
                if "versus" in runs:
                    v = runs["versus"]
                    say(
                        f"      versus {a.versus}: {med(v, 'rps'):>8.0f}/s p99 "
                        f"{med(v, 'p99'):.3f} ms | ratio {med(v, 'rps') / med(f, 'rps'):.2f}; "
                        "per round, gateway / versus ÷ floor: "
                        + " ".join(
                            f"{gr['rps'] / fr['rps']:.2f}/{vr['rps'] / fr['rps']:.2f}"
                            for fr, gr, vr in zip(f, g, v)
                        )
                    )
        finally:
            floor.stop()
    finally:
        gw.stop()
        if other:
            other[0].stop()
    say(f"(load average {load()})")


def part_cold(a: argparse.Namespace, delay_ms: int) -> None:
    say(
        f"\n## cold path (cache off) vs resolve_many, 64 at once, the server answering after "
        f"{delay_ms} ms (load average {load()})"
    )
    sport = free_port()
    server = Service(
        [str(TESTSERVER), "--port", str(sport), "--delay-ms", str(delay_ms)], "serving"
    )
    try:
        gw, port = gateway(["--server", f"127.0.0.1:{sport}", "--cache-size-mb", "0"])
        try:
            url = f"http://127.0.0.1:{port}/20.500.1/1"
            assert curl(url) == "302", curl(url)
            g, r = [], []
            for _ in range(a.rounds):
                g.append(wrk(url, 64, a.duration)["rps"])
                out = subprocess.run(
                    [
                        str(PEER),
                        "resolve-many",
                        "--server",
                        f"127.0.0.1:{sport}",
                        "--handle",
                        "20.500.1/1",
                        "--concurrency",
                        "64",
                        "--seconds",
                        str(a.duration),
                    ],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                r.append(float(re.search(r"= (\d+)/s", out).group(1)))  # type: ignore[union-attr]
            say(
                f"gateway (cache off) {statistics.median(g):.0f}/s | resolve_many "
                f"{statistics.median(r):.0f}/s | ratio "
                f"{statistics.median(g) / statistics.median(r):.2f}"
            )
            say_rounds("gateway", g, "resolve_many", r)
        finally:
            gw.stop()
    finally:
        server.stop()
    say(f"(load average {load()})")


def redis_stat(port: int, name: str) -> int:
    out = subprocess.run(
        ["redis-cli", "-p", str(port), "info", "stats"], check=True, capture_output=True, text=True
    ).stdout
    return int(re.search(rf"^{name}:(\d+)", out, re.M).group(1))  # type: ignore[union-attr]


def part_redis(a: argparse.Namespace, tmp: Path) -> None:
    n = 150_000
    say(f"\n## the Redis tier's hit, 64 at once ({n} handles; load average {load()})")
    handles = {
        f"20.500.1/b{i}": [{"index": 1, "type": "URL", "data": f"https://example.org/b/{i}"}]
        for i in range(n)
    }
    store = tmp / "store.json"
    store.write_text(json.dumps({"homed_prefixes": ["20.500.1"], "handles": handles}))
    rport = free_port()
    redis = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(rport),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    sport = free_port()
    server = None
    try:
        time.sleep(0.5)
        server = Service([str(TESTSERVER), "--port", str(sport), str(store)], "serving")
        common = ["--server", f"127.0.0.1:{sport}", "--redis", f"redis://127.0.0.1:{rport}/0"]
        lua = tmp / "each.lua"
        lua.write_text(
            "i = 0\nrequest = function()\n  i = i + 1\n"
            f"  if i > {n} then i = 1 end\n"
            '  return wrk.format(nil, "/20.500.1/b" .. (i - 1))\nend\n'
        )
        filler, fport = gateway(common)
        try:  # the filler's own cache misses: each record fetched and written to Redis
            wrk(f"http://127.0.0.1:{fport}/", 64, max(a.duration, 20), str(lua))
        finally:
            filler.stop()
        keys = subprocess.run(
            ["redis-cli", "-p", str(rport), "dbsize"], check=True, capture_output=True, text=True
        ).stdout.strip()
        say(f"Redis holds {keys} keys")
        rates = []
        for _ in range(a.rounds):
            fresh, gport = gateway(common)
            try:
                hits = redis_stat(rport, "keyspace_hits")
                res = wrk(f"http://127.0.0.1:{gport}/", 64, 2, str(lua))
                hits = redis_stat(rport, "keyspace_hits") - hits
                served = res["rps"] * 2
                if served > n:
                    raise RuntimeError(f"{served:.0f} requests > {n} handles: some were local hits")
                rates.append(res)
                say(
                    f"   round: {res['rps']:.0f}/s p50 {res['p50']:.3f} ms p99 "
                    f"{res['p99']:.3f} ms, {hits} Redis hits for ~{served:.0f} requests"
                )
            finally:
                fresh.stop()
        say(
            f"Redis hit: {med(rates, 'rps'):.0f}/s p50 {med(rates, 'p50'):.3f} ms "
            f"p99 {med(rates, 'p99'):.3f} ms"
        )
    finally:
        if server:
            server.stop()
        redis.terminate()
        redis.wait()
    say(f"(load average {load()})")


def callgrind_total(n: int, tmp: Path) -> int:
    out = tmp / f"callgrind.{n}"
    gw, port = gateway(
        [
            "--demo",
            "--access-log",
            str(tmp / "cg-access.log"),
            "--metrics-listen",
            f"127.0.0.1:{free_port()}",
        ],
        prefix=["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"],
    )
    try:
        subprocess.run(
            [
                str(PEER),
                "get",
                "--url",
                f"http://127.0.0.1:{port}/20.500.1/demo",
                "--n",
                str(n),
                "--origin",
                ORIGIN,
            ],
            check=True,
            capture_output=True,
        )
    finally:
        gw.stop()
    text = out.read_text(errors="replace")
    return int(re.search(r"^summary:\s+(\d+)", text, re.M).group(1))  # type: ignore[union-attr]


def part_callgrind(tmp: Path) -> None:
    say("\n## instructions per warm request (callgrind; access log, metrics, CORS on)")
    small, big = callgrind_total(200, tmp), callgrind_total(2200, tmp)
    say(
        f"200 requests: {small:,} instructions; 2,200: {big:,}; per request "
        f"{(big - small) / 2000:,.0f}"
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--duration", type=int, default=10, help="seconds of each wrk run")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--only", default="warm,cold,redis,callgrind")
    p.add_argument(
        "--cold-delays",
        default="0,5",
        help="the test server's answer delays (ms) the cold part runs with, comma-separated",
    )
    p.add_argument("--no-build", action="store_true")
    p.add_argument("--gateway", type=Path, help="another handle-gateway binary to measure")
    p.add_argument(
        "--versus",
        type=Path,
        help="a second handle-gateway binary measured in the warm part's same rounds",
    )
    a = p.parse_args()
    parts = set(a.only.split(","))
    if a.gateway:
        GATEWAY[0] = a.gateway
    if not a.no_build:
        build()
    say(f"gateway: {GATEWAY[0]}")
    say(
        f"start {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, load average {load()}, "
        f"{os.cpu_count()} CPUs; wrk -t1 -d{a.duration}s, {a.rounds} rounds"
    )
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if "warm" in parts:
            part_warm(a, tmp)
        if "cold" in parts:
            for delay in a.cold_delays.split(","):
                part_cold(a, int(delay))
        if "redis" in parts:
            part_redis(a, tmp)
        if "callgrind" in parts:
            part_callgrind(tmp)
    say(f"\nend {time.strftime('%H:%M:%S UTC', time.gmtime())}, load average {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
