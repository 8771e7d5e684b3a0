"""examples/python/dask_bulk.py on a distributed.LocalCluster of 2 worker processes against
the loopback test network: every input appears exactly once in the output."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

from distributed import Client, LocalCluster

from handle_resolver.testing import TestNetwork

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "python" / "dask_bulk.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dask_bulk", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["dask_bulk"] = module
    spec.loader.exec_module(module)
    return module


def test_dask_bulk(tmp_path: Path) -> None:
    dask_bulk = load_example()
    ids = [f"20.500.1/{i}" for i in range(3000)] + [f"20.500.1/missing-{i}" for i in range(50)]
    ids += ["not an identifier", "20.500.1/demo"]
    ids_file = tmp_path / "ids.txt"
    ids_file.write_text("# identifiers\n\n" + "\n".join(ids) + "\n")
    with TestNetwork(sites=1) as net:
        net.populate(3000)
        with (
            LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            Client(cluster) as client,
        ):
            assert len(client.scheduler_info()["workers"]) == 2
            # The workers import the example as the test does (it is not an installed module).
            client.upload_file(str(EXAMPLE))
            files = dask_bulk.run(
                str(ids_file),
                str(tmp_path / "out"),
                {"root": net.root, "timeout": 10.0},
                blocksize=8000,
            )
    assert len(files) > 2  # several partitions
    docs = [json.loads(line) for f in files for line in Path(f).read_text().splitlines()]
    inputs = [d["input"] for d in docs]
    assert sorted(inputs) == sorted(ids)  # each exactly once
    by_input = {d["input"]: d for d in docs}
    for i in (0, 1234, 2999):
        doc = by_input[f"20.500.1/{i}"]
        assert doc["responseCode"] == 1
        assert doc["values"][0]["data"]["value"] == f"https://example.org/{i}"
    assert by_input["20.500.1/missing-7"]["responseCode"] == 100
    assert by_input["not an identifier"]["responseCode"] == 2
