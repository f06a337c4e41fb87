"""`sslperf offload`: kernel crypto drivers and the afalg/devcrypto engines.

- drivers.py: what /proc/crypto offers, the driver the kernel picks, AF_ALG here;
- config.py: crossover sizes and the engine's openssl.cnf section;
- bench.py: the afalg cases (kernel against library) measured by the ordinary runner or read back
  from a run, and where the kernel clearly wins;
- render.py: the tables and lines the verbs print.
"""
