"""Local directories, tarballs and git tags as sources."""

import shutil
import subprocess

import pytest

from sslperf.errors import SslperfError
from sslperf.libs import sources


def make_tree(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.mark.parametrize("files, flavor, version", [
    ({"VERSION.dat": 'MAJOR=3\nMINOR=4\nPATCH=1\nPRE_RELEASE_TAG=\n'}, "openssl", "3.4.1"),
    ({"VERSION.dat": 'MAJOR=3\nMINOR=5\nPATCH=0\nPRE_RELEASE_TAG=alpha1\n'}, "openssl", "3.5.0-alpha1"),
    ({"include/openssl/opensslv.h": '# define OPENSSL_VERSION_TEXT    "OpenSSL 1.1.1w  11 Sep 2023"\n'},
     "openssl", "1.1.1w"),
    ({"include/openssl/opensslv.h": '#define LIBRESSL_VERSION_TEXT "LibreSSL 3.8.2"\n'
      '#define OPENSSL_VERSION_TEXT LIBRESSL_VERSION_TEXT\n'}, "libressl", "3.8.2"),
    ({"include/openssl/base.h": '#define OPENSSL_IS_AWSLC 1\n#define AWSLC_VERSION_NUMBER_STRING "1.41.0"\n'},
     "aws-lc", "1.41.0"),
    ({"include/openssl/base.h": '#define OPENSSL_IS_BORINGSSL\n'}, "boringssl", "0"),
])
def test_detect(tmp_path, files, flavor, version):
    assert sources.detect(make_tree(tmp_path, files)) == (flavor, version)


def test_detect_refuses_other_trees(tmp_path):
    with pytest.raises(SslperfError, match="is not an OpenSSL, LibreSSL, BoringSSL or AWS-LC source tree"):
        sources.detect(make_tree(tmp_path, {"README": "hello"}))


def test_directory_digest_follows_contents(tmp_path):
    tree = make_tree(tmp_path / "src", {"VERSION.dat": 'MAJOR=3\nMINOR=4\nPATCH=1\n', "crypto/a.c": "int a;"})
    first = sources.from_directory(tree)
    assert (first.flavor, first.version, first.materialize()) == ("openssl", "3.4.1", tree.resolve())
    (tree / "crypto" / "a.c").write_text("int a = 1;")
    assert sources.from_directory(tree).digest != first.digest


def test_tarball_checked_and_unpacked(sslperf_dirs, tmp_path):
    import hashlib
    tree = make_tree(tmp_path / "openssl-3.4.1", {"VERSION.dat": 'MAJOR=3\nMINOR=4\nPATCH=1\n'})
    archive = shutil.make_archive(str(tmp_path / "openssl-3.4.1"), "gztar", tmp_path, tree.name)
    digest = hashlib.sha256(open(archive, "rb").read()).hexdigest()
    source = sources.from_tarball(archive, digest.upper())
    assert (source.flavor, source.version, source.digest) == ("openssl", "3.4.1", digest)
    assert (source.materialize() / "VERSION.dat").exists()


def test_git_tag(sslperf_dirs, tmp_path):
    repo = make_tree(tmp_path / "repo", {"VERSION.dat": 'MAJOR=3\nMINOR=2\nPATCH=0\n'})
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "v"], check=True)
    subprocess.run([*git, "tag", "openssl-3.2.0"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    source = sources.from_git(f"file://{repo}", "openssl-3.2.0")
    assert (source.flavor, source.version, source.digest) == ("openssl", "3.2.0", commit)
    with pytest.raises(SslperfError, match="failed"):
        sources.from_git(f"file://{repo}", "no-such-tag")
