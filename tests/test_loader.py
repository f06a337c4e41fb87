"""The loader's own answer to which libssl and libcrypto a program uses (sslperf.libs.loader): real programs under
the system library, and programs compiled here that the real loader refuses (another soname, a newer symbol
version, an RPATH to another OpenSSL, static linking)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from sslperf.errors import SslperfError
from sslperf.libs import installed, loader
from sslperf.libs.model import Lib

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


@pytest.fixture(scope="module")
def system() -> Lib:
    return installed.find("system")


def system_dir(system: Lib) -> Path:
    return Path(system.info["shared_objects"]["libssl.so.3"]).resolve().parent


def compile_lib(where: Path, soname: str, source: str, version_script: str | None = None) -> Path:
    """A shared object named by `soname` in `where` (with a symbol-version script when given)."""
    where.mkdir(parents=True, exist_ok=True)
    c = where / f"{soname}.c"
    c.write_text(source)
    argv = ["gcc", "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(where / soname), str(c)]
    if version_script:
        (where / "v.map").write_text(version_script)
        argv.insert(1, f"-Wl,--version-script={where / 'v.map'}")
    subprocess.run(argv, check=True, timeout=120)
    return where / soname


def compile_program(path: Path, source: str, *link: str) -> Path:
    path.with_suffix(".c").write_text(source)
    subprocess.run(["gcc", "-o", str(path), str(path.with_suffix(".c")), *link], check=True, timeout=120)
    return path


def test_curl_and_a_python_client_load_the_system_librarys_own_files(system):
    curl = loader.check(["curl", "--version"], system)
    assert set(curl.objects) == {"libssl.so.3", "libcrypto.so.3"}
    assert all(path.parent == system_dir(system) for path in curl.objects.values()), curl.objects
    # Python's _ssl is dlopen'ed at `import ssl`: ldd of python3 would not show it, the loader's trace does.
    python = loader.check(["python3", "-c", "import ssl; ssl.create_default_context()"], system)
    assert python.objects["libssl.so.3"].parent == system_dir(system)


def test_only_the_tls_libraries_are_put_first_on_the_loaders_path(system, tmp_path):
    links = loader.linked(system_dir(system), tmp_path / "links")
    assert sorted(p.name for p in links.iterdir()) == ["libcrypto.so.3", "libssl.so.3"]
    assert all(p.resolve().parent == system_dir(system) for p in links.iterdir())
    env = loader.loader_env(links, {"LD_LIBRARY_PATH": "/opt/x"})
    assert env["LD_LIBRARY_PATH"] == f"{links}:/opt/x"


def test_a_statically_linked_program_is_refused(system, tmp_path):
    try:
        static = compile_program(tmp_path / "static", "int main(void) { return 0; }\n", "-static")
    except subprocess.CalledProcessError:
        pytest.skip("no static libc here")
    with pytest.raises(SslperfError) as refused:
        loader.check([str(static)], system)
    assert "statically linked" in refused.value.message and refused.value.exit_code == 2


def test_a_program_that_loads_no_tls_library_is_refused(system):
    with pytest.raises(SslperfError) as refused:
        loader.check(["true"], system)
    assert "loaded neither libssl nor libcrypto" in refused.value.message


def test_a_program_built_for_libssl_1_1_is_refused_on_3x(system, tmp_path):
    old = compile_lib(tmp_path / "old", "libssl.so.1.1", "int SSL_library_init(void) { return 1; }\n")
    program = compile_program(tmp_path / "needs11", "int SSL_library_init(void);\nint main(void) "
                              "{ return SSL_library_init() != 1; }\n", f"-L{old.parent}", "-l:libssl.so.1.1")
    with pytest.raises(SslperfError) as refused:
        loader.check([str(program)], system)
    message = refused.value.message
    assert "needs libssl.so.1.1" in message and "libssl.so.3" in message and "Nothing was measured" in message
    assert "1.1" in refused.value.hint


def test_a_program_needing_a_newer_symbol_version_is_refused(system, tmp_path):
    # A libcrypto.so.3 that exports a function at OPENSSL_3.2.0, as 3.2 does: a program linked against it needs
    # that version, which the system's 3.0 lacks; the real loader refuses it.
    newer = compile_lib(tmp_path / "newer", "libcrypto.so.3", "int EVP_new_in_32(void) { return 1; }\n",
                        "OPENSSL_3.2.0 { global: EVP_new_in_32; local: *; };\n")
    program = compile_program(tmp_path / "needs32", "int EVP_new_in_32(void);\nint main(void) "
                              "{ return EVP_new_in_32() != 1; }\n", f"-L{newer.parent}", "-l:libcrypto.so.3")
    with pytest.raises(SslperfError) as refused:
        loader.check([str(program)], system)
    assert "needs the symbol version OPENSSL_3.2.0" in refused.value.message
    assert system.version in refused.value.message and "newer release" in refused.value.hint


def test_a_program_whose_rpath_names_another_openssl_is_refused(system, tmp_path):
    other = compile_lib(tmp_path / "other", "libcrypto.so.3", "int OTHER_ONLY(void) { return 1; }\n")
    program = compile_program(tmp_path / "rpath", "int OTHER_ONLY(void);\nint main(void) { return OTHER_ONLY() "
                              "!= 1; }\n", f"-L{other.parent}", "-l:libcrypto.so.3",
                              f"-Wl,--disable-new-dtags,-rpath,{other.parent}")
    with pytest.raises(SslperfError) as refused:
        loader.check([str(program)], system)
    assert f"libcrypto.so.3 from {other.parent}" in refused.value.message


def test_a_failing_run_is_refused_with_its_exit_status(system):
    with pytest.raises(SslperfError) as refused:
        loader.check(["python3", "-c", "import ssl, sys; sys.exit(3)"], system)
    assert "exit 3" in refused.value.message


def test_a_static_build_has_no_shared_directory_to_give(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libssl.a").write_bytes(b"!<arch>\n")
    built = Lib("openssl-3.6.3", "built", "openssl", "3.6.3", prefix=tmp_path)
    with pytest.raises(SslperfError) as refused:
        loader.shared_dir(built)
    assert "static libraries" in refused.value.message
    assert "sslperf libs build openssl-3.6.3+shared" in refused.value.hint
    (tmp_path / "lib" / "libssl.so.3").write_bytes(b"")
    assert loader.shared_dir(built) == (tmp_path / "lib").resolve()


def test_unversioned_shared_objects_are_given_to_a_program_built_against_them(tmp_path):
    """BoringSSL and AWS-LC install libssl.so and libcrypto.so with no versioned soname: a program linked with them
    needs exactly those names, and the loader's path gives them (where a versioned one sits beside, as in a system
    directory, libssl.so is only the compiler's link and is not offered)."""
    lib_dir = tmp_path / "prefix" / "lib"
    crypto = compile_lib(lib_dir, "libcrypto.so", "int CRYPTO_num_locks(void) { return 1; }\n")
    compile_lib(lib_dir, "libssl.so", "int CRYPTO_num_locks(void);\nint SSL_library_init(void) "
                "{ return CRYPTO_num_locks(); }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-Wl,-soname,libssl.so", "-o", str(lib_dir / "libssl.so"),
                    str(lib_dir / "libssl.so.c"), f"-L{lib_dir}", "-lcrypto"], check=True, timeout=120)
    assert loader.provided(lib_dir) == ["libcrypto.so", "libssl.so"]
    program = compile_program(tmp_path / "bssl-client", "int SSL_library_init(void);\nint main(void) "
                              "{ return SSL_library_init() != 1; }\n", f"-L{lib_dir}", "-lssl", "-lcrypto")
    built = Lib("boringssl-4.22.0+shared", "built", "boringssl", "4.22.0", prefix=tmp_path / "prefix")
    loaded = loader.check([str(program)], built)
    assert loaded.objects == {"libssl.so": (lib_dir / "libssl.so").resolve(), "libcrypto.so": crypto.resolve()}
    # Beside a versioned one (a system directory with its -dev link), the plain name is no soname.
    (lib_dir / "libssl.so.3").symlink_to(lib_dir / "libssl.so")
    assert loader.provided(lib_dir) == ["libcrypto.so", "libssl.so.3"]
