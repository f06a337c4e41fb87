"""Asking the library itself whether it accepts a TLS setting: the harness's
check-config applies the strings to a real SSL_CTX (or an openssl.cnf
through SSL_CTX_config) and answers with what the library made of them."""

from __future__ import annotations

from sslperf.errors import SslperfError
from sslperf.measure import harness_client
from sslperf.recommend.decide import Advice

CHECK_EXIT_CODES = (0, 1)      # check-config: 0 accepted, 1 rejected (with an "error" line saying why)


class LibraryCheck:
    """Asks the library itself (the harness's check-config) whether it accepts a setting."""

    def __init__(self, lib):
        self.lib = lib
        harness_client.harness_binary(lib)          # compiled now, before any question is asked

    def run(self, *settings: str) -> dict:
        """The harness's answer to `check-config KEY=VALUE...`: {"type": "config", "ciphers": [...], ...}
        when the library accepts them all, {"type": "error", "key", "value", "reason"} when not."""
        answer = harness_client.call(self.lib, "check-config", *settings, timeout=60, ok_codes=CHECK_EXIT_CODES)
        if not answer.lines:
            raise SslperfError(f"The harness for {self.lib.name} did not answer check-config: {answer.stderr[-300:]}")
        return answer.last

    def accepts(self, key: str, value: str) -> bool:
        return self.run(f"{key}={value}").get("type") == "config"

    def verify(self, result: Advice) -> None:
        """The final strings must be accepted whole, and the cipher string must
        resolve to exactly the suites asked for (OpenSSL drops unknown names)."""
        settings = [f"ciphers={result.cipher_string()}", f"groups={':'.join(g.tls_name for g in result.groups)}",
                    f"sigalgs={':'.join(result.sigalgs)}"]
        if result.flavor != "boringssl":
            settings.append(f"ciphersuites={':'.join(result.tls13_suites)}")
        answer = self.run(*settings)
        if answer.get("type") != "config":
            raise SslperfError(f"{self.lib.name} rejects the recommended {answer.get('key')} "
                               f"`{answer.get('value')}`: {answer.get('reason')}.",
                               hint="This is a gap in sslperf's tables for this library version; please report it.")
        resolved = [c["name"] for c in answer["ciphers"] if c["version"] != "TLSv1.3"]
        if resolved != list(dict.fromkeys(result.tls12_ciphers())) and not result.equal_preference:
            raise SslperfError(f"{self.lib.name} resolves the cipher string to {':'.join(resolved)}, not the "
                               f"suites recommended.", hint="Please report it: sslperf's tables need a fix.")
