"""The typed model (issue 53): a Measurement carries its parsed case, and its figures are a mapping checked
against the figure registry wherever they come from."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from sslperf import figures
from sslperf.cases.ids import parse
from sslperf.results import Measurement, Run, measurement_from_dict


def handshake() -> Measurement:
    return Measurement.of(parse("tls/handshake/tls1.3/x25519/ecdsa-p256/shared"), "system", unit="ops", ops=[5],
                          wall_ns=[10], cpu_ns=[9], figures={figures.PROCESS: [7]})


def test_a_measurement_carries_its_parsed_case():
    m = handshake()
    assert m.parsed.family == "tls" and m.parsed.part("group") == "x25519" and m.parsed.id == m.case
    assert m.parts["template"] == "tls/handshake" and m.parts["cert"] == "ecdsa-p256"
    imported = dataclasses.replace(m, case="digest/md5/16/speed-compat")        # an import's: shape only
    assert imported.parsed.algorithm == "md5" and dataclasses.replace(m, case="not/a/case").parsed is None


def test_figures_are_checked_against_the_registry_however_they_are_set():
    m = handshake()
    assert isinstance(m.figures, figures.Figures) and m.figures[figures.PROCESS] == [7]
    with pytest.raises(ValueError, match="`proccess` is not a figure sslperf declares"):
        m.figures["proccess"] = [1]                         # a misspelt name
    with pytest.raises(ValueError, match="not a figure sslperf declares"):
        m.figures = {"made_up": [1]}
    with pytest.raises(ValueError, match="not a list of numbers"):
        m.figures.setdefault(figures.ROUND, ["one"])
    with pytest.raises(ValueError, match="not a figure sslperf declares"):
        m.figures.update(nonsense=[1])
    m.figures[figures.WAIT] = [np.int64(3)]                 # numpy's numbers are numbers
    assert m.figures[figures.WAIT] == [3]


def test_a_run_read_back_keeps_its_figures_typed_and_refuses_an_undeclared_one():
    run = Run("r", "2026-01-01T00:00:00", {}, {})
    run.measurements = [handshake()]
    again = Run.from_dict(json.loads(run.to_json()))
    assert isinstance(again.measurements[0].figures, figures.Figures)
    data = json.loads(run.to_json())["measurements"][0]
    data["figures"]["typo"] = [1]
    with pytest.raises(ValueError, match="`typo`"):
        measurement_from_dict(data)
