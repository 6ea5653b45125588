"""The Python SDK as published: a wheel built from sdk/python, installed into a fresh venv."""

from __future__ import annotations

import email
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest
import threadless

SDK = Path(__file__).resolve().parents[2] / "sdk" / "python"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    shutil.copytree(SDK, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "-w",
            str(work / "dist"),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    [built] = (work / "dist").glob("threadless-*.whl")
    return built


def test_the_wheel_has_the_version_licence_typing_marker_and_metadata(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = f"threadless-{threadless.__version__}.dist-info"
        metadata = email.message_from_bytes(archive.read(f"{info}/METADATA"))
    assert wheel.name.startswith(f"threadless-{threadless.__version__}-py3-none-any")
    assert "threadless/py.typed" in names
    assert any(n.startswith(info) and n.endswith("LICENSE") for n in names)
    assert metadata["Version"] == threadless.__version__  # one source: threadless/_version.py
    assert metadata["License"] == "MIT" or "MIT" in (metadata["License-Expression"] or "")
    assert metadata["Requires-Python"] == ">=3.10"
    # httpx is the one dependency; the framework adapters' packages are extras only.
    assert [r for r in metadata.get_all("Requires-Dist") if "extra ==" not in r] == ["httpx<1,>=0.27"]
    assert metadata["Description-Content-Type"] == "text/markdown"
    readme = metadata.get_payload()
    assert "report_openai" in readme and "../" not in readme  # no links that break on PyPI
    assert not any(n.startswith(("tests/", "examples/")) for n in names)


def test_the_wheel_installs_into_a_fresh_venv_and_falls_back_there(wheel, tmp_path):
    env = tmp_path / "venv"
    venv.create(env, with_pip=False)
    python = env / "bin" / "python"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--disable-pip-version-check",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    # httpx (the one dependency) comes from this venv's site-packages; threadless must not.
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(site) / "_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    script = (
        "import importlib.resources, socket, threadless\n"
        "s = socket.socket(); s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]; s.close()\n"
        "m = threadless.Threadless(api_key='tl_proj_x', base_url=f'http://127.0.0.1:{port}', on_error=lambda "
        "e, c: None)\nreq = m.decorate(external_id='u1', messages=[{'role': 'user', 'content': 'hi'}])\n"
        "print(threadless.__file__)\n"
        "print(threadless.__version__, req.degraded, "
        "importlib.resources.files('threadless').joinpath('py.typed').is_file())\n"
    )
    out = subprocess.run(
        [str(python), "-c", script], check=True, capture_output=True, text=True, timeout=60
    ).stdout
    where, facts = out.strip().splitlines()
    assert where.startswith(site)
    assert facts == f"{threadless.__version__} True True"
