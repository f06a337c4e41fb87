"""Runs across machines, placed by Dask's distributed scheduler.

sslperf does not schedule: a Dask scheduler does, and sslperf is a good
citizen of it. Each machine runs `sslperf fleet worker --tag TYPE`, a Dask
worker offering two resources: `machine:TYPE` (one unit, so a worker runs
one measurement at a time) and `build` (builds may share a machine). A
measurement also takes a lock of its host, so two workers on one host never
measure at once.

    cluster   reaching the scheduler, the machines it knows, serving a worker
    tasks     what runs on a worker: inventory, build, bundle, install, measure
    builds    a library matrix built across the cluster, copied as bundles
    suites    one suite sent to every machine type, watched, and its outcome
"""
