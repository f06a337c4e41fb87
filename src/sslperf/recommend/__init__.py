"""`sslperf recommend`: argued TLS server settings for one library.

- reuse.py: which stored runs it argues from (a recent one that holds every case, unless --fresh);
- evidence.py: the library's figures, from stored runs and measured now;
- costs.py: those figures by case, with their runs and the noise the runs recorded;
- weigh.py: every choice between two measured options asked of the one verdict rule (ties, CIs, noise);
- decide.py: the decisions, a pure function of the evidence;
- groups.py: whether X25519MLKEM768 goes first, from its measured handshake against X25519's (CPU and bytes);
- check.py: the library itself asked whether it accepts each setting;
- snippets.py: the settings as text, nginx, HAProxy, Apache or openssl.cnf, and as data.
"""
