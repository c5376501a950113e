"""Output paths are never destroyed: a regular file is replaced only by a whole output, anything
else (a device, a FIFO, a symlink's target) is written as it is, and a write that fails is one
line (kubesched/_outputs.py, the CLI's write-error line)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kubesched._outputs import open_output, write_output
from kubesched.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_failed_snapshot_leaves_the_file_that_was_there(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keep = tmp_path / "keep.yaml"
    keep.write_text("mine\n")
    code, _, err = run(capsys, "snapshot", "--server", "http://127.0.0.1:9", "-o", str(keep))
    assert code == 1 and err.startswith("kubesched: error: snapshot: ")
    assert keep.read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.yaml"]  # no temporary file left


def test_a_failed_snapshot_into_a_device_leaves_the_device(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run(capsys, "snapshot", "--server", "http://127.0.0.1:9", "-o", os.devnull)
    assert code == 1
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_a_regular_file_is_replaced_whole_with_its_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pods.yaml"
    out.write_text("old\n")
    out.chmod(0o640)
    code, _, err = run(capsys, "generate", "--pods", "3", "--nodes", "2", "--out", str(out))
    assert (code, err) == (0, "")
    assert "kind: Pod" in out.read_text()
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pods.yaml"]


def test_a_new_file_gets_the_umask_mode(tmp_path: Path) -> None:
    mask = os.umask(0o022)
    try:
        write_output(tmp_path / "new.txt", "x")
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644


def test_a_symlink_stays_a_symlink_and_its_target_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "real.yaml"
    target.write_text("old\n")
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    code, _, _ = run(capsys, "generate", "--pods", "2", "--nodes", "1", "--out", str(link))
    assert code == 0
    assert link.is_symlink() and "kind: Pod" in target.read_text()


def test_a_fifo_is_written_as_it_is(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_output(fifo, "through the pipe\n")
    reader.join(timeout=10)
    assert got == [b"through the pipe\n"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_an_error_while_writing_removes_only_the_temporary_file(tmp_path: Path) -> None:
    keep = tmp_path / "keep.txt"
    keep.write_text("mine\n")
    with pytest.raises(RuntimeError), open_output(keep) as out:
        out.write("half")
        raise RuntimeError("the command failed")
    assert keep.read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_an_unwritable_directory_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "generate", "--pods", "2", "--nodes", "1", "--out", str(tmp_path / "no" / "x.yaml"))
    assert code == 2
    assert len(err.splitlines()) == 1 and "cannot write" in err


@pytest.mark.parametrize(
    "argv",
    [["simulate"], ["simulate", "--output", "text"], ["generate", "--pods", "3", "--nodes", "2"]],
    ids=["simulate json", "simulate text", "generate"],
)
def test_a_full_disk_is_one_line(argv: list[str]) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "kubesched.cli", *argv], stdout=full, stderr=subprocess.PIPE, text=True, timeout=120
        )
    assert proc.returncode == 1
    assert proc.stderr == "kubesched: error: write error: No space left on device\n"
