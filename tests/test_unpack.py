"""Source archives are unpacked safely on every Python ≥ 3.11: tarfile's
`data` filter arrived in 3.11.4 (Debian 12 has 3.11.2), and without it
paths.unpack makes the same refusals itself."""

import io
import tarfile

import pytest

from sslperf import paths


def archive(name, kind=tarfile.REGTYPE, link=""):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        member = tarfile.TarInfo(name)
        member.type, member.linkname = kind, link
        tar.addfile(member, io.BytesIO(b""))
    buffer.seek(0)
    return tarfile.open(fileobj=buffer)


@pytest.fixture(params=["with the data filter", "without it (Python < 3.11.4)"])
def python(request, monkeypatch):
    if request.param.startswith("without"):
        monkeypatch.delattr(tarfile, "data_filter")


@pytest.mark.parametrize("member", [("../evil",), ("a/link", tarfile.SYMTYPE, "../../outside"),
                                    ("a/hard", tarfile.LNKTYPE, "../outside"), ("a/dev", tarfile.CHRTYPE)])
def test_a_member_that_leaves_the_directory_or_is_a_device_is_refused(python, member, tmp_path):
    with pytest.raises(tarfile.TarError):
        paths.unpack(archive(*member), tmp_path / "into")
    assert not (tmp_path / "evil").exists() and not (tmp_path / "outside").exists()


def test_an_absolute_member_never_lands_at_its_absolute_path(python, tmp_path):
    outside = tmp_path / "outside" / "evil"
    try:
        paths.unpack(archive(str(outside)), tmp_path / "into")      # the data filter makes it relative
    except tarfile.TarError:
        pass                                                        # by hand it is refused
    assert not outside.exists()


@pytest.mark.parametrize("member", [("src/file.c",), ("src/link", tarfile.SYMTYPE, "file.c")])
def test_ordinary_members_are_unpacked(python, member, tmp_path):
    paths.unpack(archive(*member), tmp_path)
    assert (tmp_path / member[0]).is_symlink() or (tmp_path / member[0]).is_file()
