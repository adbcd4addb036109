"""Reading result documents (schema_version check) and CSV files."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

from hympi_lab import results
from hympi_lab.atomic import write_atomic
from hympi_lab.errors import InputError, OutputError

from conftest import document


def solve(f_comm: float, f_non: float, threads: int = 8, scheme: str = "masteronly") -> dict[str, Any]:
    return {"kind": "solve", "kernel": "jacobi", "scheme": scheme, "threads": threads,
            "reserved": 0, "fractions": {"f_comm": f_comm, "f_comp_non": f_non,
                                         "f_comp_overlap": 1 - f_comm - f_non}}


def overlap(nk: float, eps: float, scheme: str = "funneled", reserved: int = 1,
            threads: int = 8) -> dict[str, Any]:
    return {"kind": "point", "benchmark": "overlap", "scheme": scheme, "reserved": reserved,
            "threads": threads, "nk_loc": nk,
            "epsilon": {"min": eps * 0.99, "median": eps, "max": eps * 1.01}}


def test_schema_version_is_checked(write_json: Callable[..., str]) -> None:
    good = write_json(document([]))
    assert results.load_document(good).results == []
    with pytest.raises(InputError, match="schema_version 2 is not supported"):
        results.load_document(write_json(document([], schema_version=2)))
    with pytest.raises(InputError, match="not a hympi result document"):
        results.load_document(write_json({"results": []}))
    with pytest.raises(InputError, match="not a hympi result document"):
        results.load_document(write_json([1, 2, 3]))
    with pytest.raises(InputError, match="'results' must be a list"):
        results.load_document(write_json({"context": {"schema_version": 1}, "results": {}}))


def test_unreadable_files(write_text: Callable[[str, str], str], tmp_path: Any) -> None:
    with pytest.raises(InputError, match="not valid JSON"):
        results.load_document(write_text("bad.json", "{not json"))
    with pytest.raises(InputError, match="cannot read"):
        results.load_document(str(tmp_path / "missing.json"))
    with pytest.raises(InputError, match="cannot read"):
        results.load_document(str(tmp_path))  # a directory
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(InputError, match="not a text file"):
        results.load_document(str(binary))


def test_masteronly_fractions_only_from_masteronly_solves(write_json: Callable[..., str]) -> None:
    path = write_json(document([solve(0.3, 0.1), solve(0.5, 0.1, scheme="funneled"),
                                solve(0.2, 0.2, threads=4), overlap(8, 1.2)]))
    docs = results.load_documents([path])
    found = results.masteronly_fractions(docs)
    assert [(f.f_comm, f.threads) for f in found] == [(0.3, 8), (0.2, 4)]
    assert [f.f_comm for f in results.masteronly_fractions(docs, n=4)] == [0.2]


def test_temporal_blocking_runs_give_no_fractions(write_json: Callable[..., str]) -> None:
    # hympi solve --halo-depth 4 books its wavefront as non-overlappable
    # computation: not the iteration the model's fractions describe.
    deep = dict(solve(0.01, 0.98), halo_depth=4)
    plain = dict(solve(0.3, 0.1), halo_depth=1)
    docs = results.load_documents([write_json(document([deep, plain, solve(0.2, 0.2)]))])
    assert [f.f_comm for f in results.masteronly_fractions(docs)] == [0.3, 0.2]
    assert not results.is_masteronly_one_sweep(deep) and results.is_masteronly_one_sweep(plain)


def test_masteronly_fraction_errors_name_the_record(write_json: Callable[..., str]) -> None:
    bad = solve(0.3, 0.1)
    bad["fractions"]["f_comm"] = "lots"
    path = write_json(document([solve(0.3, 0.1), bad]))
    with pytest.raises(InputError, match=r"results\[1\] .*fractions.f_comm: expected a number"):
        results.masteronly_fractions(results.load_documents([path]))


def test_eq14_points_from_documents(write_json: Callable[..., str]) -> None:
    path = write_json(document([
        overlap(4, 1.7), overlap(32, 1.0),
        overlap(4, 1.5, scheme="multiple", reserved=2),
        overlap(4, 1.0, scheme="masteronly", reserved=0),   # left out: epsilon 1 by definition
        overlap(4, 1.9, scheme="adaptive", reserved=0),     # left out: no fixed reservation
        overlap(4, 1.6, scheme="funneled", reserved=0),     # funneled counts as m = 1
    ]))
    pts = results.eq14_points([path], None, None)
    assert pts.n == 8
    assert pts.nk_loc.tolist() == [4, 32, 4, 4]
    assert pts.epsilon.tolist() == [1.7, 1.0, 1.5, 1.6]
    assert pts.m.tolist() == [1, 1, 2, 1]
    only_m2 = results.eq14_points([path], None, 2)
    assert only_m2.epsilon.tolist() == [1.5]


def test_eq14_points_refuse_mixed_thread_counts(write_json: Callable[..., str]) -> None:
    path = write_json(document([overlap(4, 1.7), overlap(4, 1.3, threads=4)]))
    with pytest.raises(InputError, match=r"different thread counts \(4, 8\)"):
        results.eq14_points([path], None, None)
    assert results.eq14_points([path], 4, None).epsilon.tolist() == [1.3]
    with pytest.raises(InputError, match="the input has n=4 m=1, n=8 m=1"):
        results.eq14_points([path], 16, None)


def test_eq14_points_from_csv(write_text: Callable[[str, str], str]) -> None:
    plain = write_text("p.csv", "# measured\nnk_loc,epsilon\n4,1.7\n\n32,1.0\n")
    with pytest.raises(InputError, match="give --n"):
        results.eq14_points([plain], None, None)
    pts = results.eq14_points([plain], 8, 1)
    assert pts.nk_loc.tolist() == [4, 32] and pts.m.tolist() == [1, 1] and pts.n == 8
    full = write_text("f.csv", "threads,reserved,nk_loc,epsilon\n8,2,4,1.5\n8,1,4,1.7\n")
    pts = results.eq14_points([full], None, None)
    assert pts.m.tolist() == [2, 1]


@pytest.mark.parametrize("text, message", [
    ("", "empty CSV"),
    ("nk,eps\n1,2\n", "no column nk_loc"),
    ("nk_loc,epsilon\n4,abc\n", "data row 2, column epsilon: expected a number"),
    ("nk_loc,epsilon\n4,inf\n", "finite"),
    ("nk_loc,epsilon\n4\n", "data row 2 has no column epsilon"),
])
def test_bad_csv(write_text: Callable[[str, str], str], text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        results.eq14_points([write_text("bad.csv", text)], 8, 1)


def test_hockney_points_from_csv_and_documents(write_text: Callable[[str, str], str],
                                               write_json: Callable[..., str]) -> None:
    csv_path = write_text("h.csv", "L,t\n8,1.0e-5\n1024,1.5e-5\n")
    doc = write_json(document([
        {"kind": "pingpong", "benchmark": "pingpong", "bytes": 4096,
         "time_s": {"min": 2e-5, "median": 2.1e-5, "max": 3e-5}},
        {"kind": "point", "benchmark": "beff", "bytes": 4096, "time_s": {"median": 1.0}},
    ]))
    lengths, times = results.hockney_points([csv_path, doc])
    assert lengths.tolist() == [8, 1024, 4096]
    assert np.allclose(times, [1.0e-5, 1.5e-5, 2.1e-5])


def test_write_atomic_writes_a_device_in_place() -> None:
    """/dev/full: the full-disk error, and the device node is not replaced."""
    import os
    import stat

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with pytest.raises(OutputError, match="cannot write /dev/full"):
        write_atomic("/dev/full", "{}\n")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    write_atomic("/dev/null", "{}\n")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
