"""One Request for every measurement (issue 53): every measuring feature — the verbs, bisect, track, noise,
recommend, offload — hands a measure.request.Request to scheduler.measure, so the fleet can send any of them as
JSON; a library is named in it as `--lib` names it, a FIPS view by its spec, a second column by NAME#2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sslperf.cli import declared_params
from sslperf.errors import SslperfError
from sslperf.measure import verbs
from sslperf.measure.request import TWIN, Request, name_of

SRC = Path(__file__).resolve().parent.parent / "src" / "sslperf"


def test_no_feature_measures_around_a_request():
    """scheduler.measure takes a Request; measure_libs (libraries already in hand) is the scheduler's own, for
    tests and benches with fake or twin libraries. A feature calling it would be a measurement the fleet cannot
    send: this fails on one."""
    callers = sorted(str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if "measure_libs(" in p.read_text())
    assert callers == ["measure/scheduler.py"], callers
    made = sorted(str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                  if re.search(r"scheduler\.measure\((?!\s*(request\b|Request\(|self\b))", p.read_text()))
    assert made == [], made


def test_a_twin_is_the_same_library_in_a_column_of_its_own(sslperf_dirs):
    request = Request("sslperf noise", ["system", "system" + TWIN], ["digest/sha256/16"],
                      verbs.plan.settings(1, 1, None, True, 1))
    libs, cases = request.resolve()
    assert [lib.name for lib in libs] == ["system", "system#2"] and libs[0].prefix == libs[1].prefix
    assert [name_of(lib) for lib in libs] == request.libs and [c.id for c in cases] == ["digest/sha256/16"]
    with pytest.raises(SslperfError, match="named twice"):
        Request("x", ["system", "system"], ["digest/sha256/16"], request.settings).resolve()


def test_noise_is_a_request_that_repeats_and_travels_as_json(sslperf_dirs):
    """What `sslperf noise` and `sslperf fleet noise` send: the library and its twin, the quick suite, the runs as
    `repeat`, the plain threshold as a label; checked on the way in like any request."""
    request = verbs.from_params("noise", declared_params("noise", count=4, threshold=3.0, patterns=("digest/sha256",),
                                                         processes=3, no_pin=True))
    assert request.source == "sslperf noise" and request.libs == ["system", "system#2"] and request.repeat == 4
    assert request.labels == {"suite": "noise", "threshold": 0.03} and request.cases
    assert all("digest/sha256" in c for c in request.cases)
    again = Request.from_json(request.to_json())
    assert again.repeat == 4 and again.libs == request.libs and again.cases == request.cases
    for bad in (0, 21, "3", True):
        data = json.loads(request.to_json())
        data["repeat"] = bad
        with pytest.raises(SslperfError, match="repeat"):
            Request.from_json(json.dumps(data))
