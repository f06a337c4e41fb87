"""`sslperf offload`: kernel crypto drivers and the afalg/devcrypto engines.

- drivers.py: what /proc/crypto offers, the driver the kernel picks, AF_ALG here;
- config.py: crossover sizes and the engine's openssl.cnf section;
- bench.py: the harness's AF_ALG-against-the-library bench, run or read back, analysed;
- render.py: the tables and lines the verbs print.
"""
