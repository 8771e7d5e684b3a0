"""Resolve a file of identifiers on a Dask cluster, one JSON document per identifier.

The file is read as a ``dask.bag`` (one identifier a line; blank and ``#`` lines skipped),
each partition is resolved by one ``Resolver`` with ``resolve_many`` (``--concurrency`` in
flight, the partition read lazily), and the results are written as JSON lines, one file per
partition: the handle.net REST API shape that ``resolve --json`` prints, with the ``input``.
With ``--parquet`` (only where pyarrow is installed) the JSON lines are also written as one
Parquet file per partition.

    python examples/python/dask_bulk.py --root 127.0.0.1:2641 ids.txt out/
    python examples/python/dask_bulk.py --scheduler tcp://10.0.0.1:8786 ids.txt out/

Without ``--scheduler`` it starts a ``distributed.LocalCluster`` of ``--workers`` processes.
Without ``--root``/``--server``/``--proxy`` it resolves from the global root.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterable, Iterator
from typing import Any

import dask.bag as db

from handle_resolver import HandleRecord, ResolveError, Resolver


def document(ident: str, outcome: HandleRecord | ResolveError) -> dict[str, Any]:
    """One result as ``resolve --json`` prints it: the REST document plus the input."""
    if isinstance(outcome, HandleRecord):
        doc = outcome.to_dict()
    else:
        doc = outcome.to_dict()
        doc.setdefault("handle", ident)
    doc["input"] = ident
    return doc


def resolve_partition(
    lines: Iterable[str], settings: dict[str, Any], concurrency: int
) -> Iterator[str]:
    """Resolves one partition with one resolver; yields JSON lines as results complete."""
    resolver = Resolver(**settings)
    ids = (line.strip() for line in lines)
    ids = (i for i in ids if i and not i.startswith("#"))
    with resolver.resolve_many(ids, concurrency=concurrency) as results:
        for ident, outcome in results:
            yield json.dumps(document(ident, outcome), sort_keys=True)


def to_parquet(json_files: list[str]) -> list[str]:
    """Each JSON lines file also as Parquet (needs pyarrow)."""
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    written = []
    for path in json_files:
        target = os.path.splitext(path)[0] + ".parquet"
        pq.write_table(pj.read_json(path), target)
        written.append(target)
    return written


def run(
    ids_path: str,
    out_dir: str,
    settings: dict[str, Any],
    *,
    concurrency: int = 64,
    blocksize: str | int = "1MiB",
    parquet: bool = False,
) -> list[str]:
    """Resolves every identifier of `ids_path` on the current Dask client (or scheduler);
    returns the JSON lines files written in `out_dir`."""
    os.makedirs(out_dir, exist_ok=True)
    bag = db.read_text(ids_path, blocksize=blocksize)
    results = bag.map_partitions(resolve_partition, settings, concurrency)
    files: list[str] = results.to_textfiles(os.path.join(out_dir, "part-*.jsonl"))
    if parquet:
        files += to_parquet(files)
    return files


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("ids", help="a file of identifiers, one a line")
    p.add_argument("out", help="the directory of the JSON lines files")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--root", help="root server HOST:PORT, http(s) URL or root file")
    where.add_argument("--server", help="ask this server only")
    where.add_argument("--proxy", help="resolve through this handle proxy's REST API")
    p.add_argument("--timeout", type=float, default=10.0)
    p.add_argument(
        "--concurrency", type=int, default=64, help="resolutions in flight per partition"
    )
    p.add_argument("--blocksize", default="1MiB", help="bytes of the file per partition")
    p.add_argument("--scheduler", help="a running Dask scheduler's address")
    p.add_argument("--workers", type=int, default=2, help="local worker processes (no --scheduler)")
    p.add_argument("--parquet", action="store_true", help="also write Parquet (needs pyarrow)")
    args = p.parse_args()

    from distributed import Client, LocalCluster

    settings = {
        k: v
        for k, v in {"root": args.root, "server": args.server, "proxy": args.proxy}.items()
        if v
    }
    settings["timeout"] = args.timeout
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        client = Client(
            LocalCluster(n_workers=args.workers, threads_per_worker=1, dashboard_address=None)
        )
    with client:
        files = run(
            args.ids,
            args.out,
            settings,
            concurrency=args.concurrency,
            blocksize=args.blocksize,
            parquet=args.parquet,
        )
    print("\n".join(files))


if __name__ == "__main__":
    main()
