"""`sslperf recommend`: argued TLS server settings for one library.

- evidence.py: the library's figures, from stored runs and measured now;
- decide.py: the decisions, a pure function of the evidence;
- check.py: the library itself asked whether it accepts each setting;
- snippets.py: the settings as text, nginx, HAProxy, Apache or openssl.cnf, and as data.
"""
