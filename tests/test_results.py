from sslperf.results import LibInfo, Measurement, Run, merge


def run_of(lib: str, cases: list[str], mask=None) -> Run:
    run = Run.new({}, {"mask": mask})
    run.libs = [LibInfo(lib, "openssl", "3", lib, "default", "built")]
    run.measurements = [Measurement(c, "kex", "key exchange", c, "derive", None, "record", lib, "ok", None, "ops", 0,
                                    [10], [1000], [1000]) for c in cases]
    return run


def test_merge_keeps_a_name_across_runs_of_different_cases():
    merged = merge([run_of("system", ["kex/x25519/derive"]), run_of("system", ["kex/x448/derive"])])
    assert [lib.name for lib in merged.libs] == ["system"]
    assert {m.lib for m in merged.measurements} == {"system"} and len(merged.measurements) == 2


def test_merge_tells_apart_the_same_case_measured_twice():
    merged = merge([run_of("system", ["kex/x25519/derive"]), run_of("system", ["kex/x25519/derive"], "no-aesni")])
    names = [lib.name for lib in merged.libs]
    assert names[1] == "system@no-aesni" and names[0].startswith("system@")
