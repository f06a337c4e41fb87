"""What `sslperf probe build`'s options become: the one Request a measuring verb would make of them (measure.verbs,
scale.sweep), so a probe carries the plan `sslperf speed`, `tls`, `api` or `scale` would run."""

from __future__ import annotations

from sslperf.errors import SslperfError
from sslperf.libs import targets
from sslperf.measure import plan, suites, verbs
from sslperf.measure.request import Request
from sslperf.scale import sweep

TARGETS = {t.name: t for t in targets.CROSS.values()}


def request(lib_names, case_ids, suite: str, depth: str | None, patterns, time_ms, samples, processes,
            target: str | None = None, thread_list: str | None = None, thread_mode: str = "own",
            seconds: float = 1.0) -> Request:
    lib_names = on_target(lib_names, target)
    if thread_list:
        made = sweep.request(lib_names, case_ids, patterns, thread_list, thread_mode, seconds, processes or 3,
                             True, True)
    else:
        chosen = suites.DEPTHS[depth or "default"]
        settings = plan.settings(chosen.target_ms if time_ms is None else time_ms,
                                 chosen.samples if samples is None else samples, None, False, processes)
        if suite == "tls":
            made = verbs.tls_handshake(lib_names, patterns, case_ids, chosen.name, settings)
        elif suite == "api" and not case_ids:
            made = verbs.api(lib_names, patterns, settings)
        else:
            made = verbs.speed(lib_names, patterns, case_ids, chosen.name, None, None, settings)
    made.source = "sslperf probe"
    made.labels = {**made.labels, "suite": "scale" if thread_list else suite}
    return made


def on_target(lib_names, target: str | None) -> list[str]:
    """The libraries as built for `target` (`--target aarch64-linux`: each name with its variant, `+aarch64`)."""
    if target is None or target == targets.native():
        return list(lib_names)
    if target not in TARGETS:
        raise SslperfError(f"`{target}` is not a target sslperf builds probes for. Nothing was built.",
                           hint=f"Targets: {', '.join([str(targets.native()), *TARGETS])}.")
    variant = TARGETS[target].variant
    return [name if name.split("+")[1:].count(variant) else f"{name}+{variant}" for name in lib_names]
