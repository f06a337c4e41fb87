"""sslperf: a performance lab for OpenSSL-family crypto and TLS libraries."""

__version__ = "0.1.0"
