"""The measuring core: the case catalog and suites, the one harness client,
the runner (pinning, worker processes, interleaving), loopback and thread
scaling, and the machine's environment."""
