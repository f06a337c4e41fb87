"""`sslperf profile`: where one case spends its time (named `profiling`, as
`profile` is a module of the standard library).

- record.py: the case run through the harness client under perf or callgrind;
- parse.py: the tools' reports read into one model (model.py);
- compare.py: two profiles matched by function name, and what changed most;
- render.py: the tables and lines the verb prints, and profile.json.
"""
