"""`sslperf bisect`: the release or commit where a case changed, and why.

space: the releases or commits between two ends; search: the binary search
and its verdicts (no building or measuring); session: building, measuring,
storing and explaining; render: what the command prints."""
