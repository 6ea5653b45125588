"""Every install line of README.md, docs/*.md and the SDKs' READMEs runs as written, from a fresh
shell, where a user runs it: in a fresh clone (the files git tracks, copied) with a fresh virtualenv
`.venv` in it, and in a fresh npm project next to the clone, made by the README's own lines. What
they installed then imports from there (the server from its installed package, templates, static
files and migrations included) and the README's examples run from there against a live server.

An install line is a `pip install …` or `npm install …` command, found in the pages themselves:

* every block marked `<!-- shell: install -->`, run as a script;
* every inline code span holding one (`a && b` runs as a then b; the same command once).

A line that starts with `npm` runs in the npm project, any other in the clone. One virtualenv and
one npm project serve every line, in page order; the npm lines run beside the pip lines once the
README's lines have made the project. Lines that install editable (`pip install -e`) run last:
they point the venv at the clone's sources, so the installed packages are checked before them.

Kept lean (it runs in `make test`): the venv starts with a current pip (`--upgrade-deps`), whose
index handling costs half the CPU of the one Python bundles; npm prefers its cache. The clone's
sdk/typescript gets the checkout's node_modules (linked) and dist/ (copied, times kept) from the
`typescript_sdk` fixture, so `make dist` there finds them up to date and only packs (npm ci and
tsc would add a minute; the TypeScript tests build the same sources).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.servers import services_mode
from tests.docs.test_integration_examples import examples, fresh_shell_env
from tests.docs.test_typescript_examples import SDK

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "sdk" / "python" / "README.md",
    SDK / "README.md",
]
INSTALL = r"(?:\S*/)?(?:pip|npm) install\b"
# A fenced block right after the install marker; an inline code span holding an install command.
INSTALL_BLOCK = re.compile(r"<!-- shell: install -->\n```bash\n(.*?)\n```", re.DOTALL)
INLINE = re.compile(rf"(?<!`)`({INSTALL}[^`\n]*)`(?!`)")
# What the checks import: every integration the extras install, and the server's parts with data.
PYTHON_CHECK = """
import io
import django
import threadless, threadless.integrations.anthropic, threadless.integrations.langchain
import threadless.integrations.mcp_server, threadless.integrations.openai_agents
import factrules.lexicons
django.setup()
from django.contrib.staticfiles import finders
from django.core.management import call_command
from django.db.migrations.loader import MigrationLoader
from django.template.loader import get_template
call_command("check", stdout=io.StringIO())
for where in (
    threadless.__file__,
    factrules.lexicons.__file__,
    get_template("console/base.html").origin.name,
    get_template("widget/chat.html").origin.name,
    finders.find("threadless-widget.js"),
    finders.find("vendor/htmx.LICENSE"),
):
    print(where)
print(" ".join(sorted({app for app, _ in MigrationLoader(None, ignore_no_migrations=True).disk_migrations})))
"""
NODE_CHECK = """
const { Threadless } = await import("threadless");
await import("threadless/integrations/anthropic");
await import("threadless/integrations/vercel-ai");
const { MockLanguageModelV4 } = await import("ai/test");
console.log(typeof Threadless, typeof MockLanguageModelV4, typeof require);
"""


def install_lines() -> list[str]:
    """The install commands of the pages, in page order, each once."""
    found: list[str] = []
    for page in PAGES:
        text = page.read_text()
        found += INSTALL_BLOCK.findall(text)
        found += [part.strip() for span in INLINE.findall(text) for part in span.split(" && ")]
    return list(dict.fromkeys(found))


def _is_editable(line: str) -> bool:
    return re.search(r"pip install (?:\S+ )*-e\b", line) is not None


def test_every_install_command_of_the_pages_is_run():
    # One outside an install block or its own code span (a table cell, a sentence) would go unrun.
    for page in PAGES:
        text = page.read_text()
        covered = "".join(INSTALL_BLOCK.findall(text)) + "".join(INLINE.findall(text))
        assert len(re.findall(INSTALL, text)) == len(re.findall(INSTALL, covered)), page.name
    lines = install_lines()
    assert any(line.startswith("npm install") for line in lines)
    assert any("pip install -e" in line for line in lines)


def test_no_install_line_names_an_unpublished_package_by_name():
    # `pip install threadless` or `npm install threadless` would fetch whatever holds that name on
    # PyPI or npm (nothing yet: an error today, someone else's package tomorrow).
    named = re.compile(r"(?:pip|npm) install (?:\S+ )*'?threadless(?:-server)?(?:\[[a-z,]+\])?'?(?:\s|$)")
    assert [line for line in install_lines() if named.search(line)] == []


# What a new terminal on this machine has besides PATH: its locale, and how pip and npm reach the registries.
MACHINE = re.compile(
    r"HOME|LANG|LC_ALL|TMPDIR|USER|(?:PIP|npm_config|NPM_CONFIG)_\w+|\w+_(?:PROXY|proxy)|\w*CA_BUNDLE"
    r"|SSL_CERT_(?:FILE|DIR)|NODE_EXTRA_CA_CERTS"
)


def _fresh_shell(clone: Path) -> dict:
    """A new terminal with the clone's .venv activated: nothing of the test's own virtualenv."""
    venv_bin = str(Path(sys.executable).parent)
    path = [p for p in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep) if p != venv_bin]
    keep = {k: v for k, v in os.environ.items() if MACHINE.fullmatch(k)}
    return {
        **keep,
        "PATH": os.pathsep.join([str(clone / ".venv" / "bin"), *path]),
        "VIRTUAL_ENV": str(clone / ".venv"),
        "npm_config_prefer_offline": "true",  # npm's cache before the registry
    }


def _clone(dest: Path) -> Path:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


@dataclass
class Installed:
    clone: Path
    env: dict  # the fresh shell, the clone's .venv activated
    ran: list[str]
    checked: list[str]  # what PYTHON_CHECK printed before the editable installs

    @property
    def python(self) -> Path:
        return self.clone / ".venv" / "bin" / "python"

    @property
    def project(self) -> Path:
        """The npm project the README's lines made next to the clone."""
        [package] = self.clone.parent.glob("*/package.json")
        return package.parent

    def run(self, line: str) -> None:
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", line],
            cwd=self.project if line.startswith("npm") else self.clone,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        out = done.stdout + done.stderr
        assert done.returncode == 0, f"{line}\n{out[-4000:]}"
        assert "does not provide the extra" not in out, f"{line}\n{out[-4000:]}"
        self.ran.append(line)

    @property
    def elsewhere(self) -> Path:
        """A working directory outside the clone, so that its sources are not on sys.path."""
        path = self.clone.parent / "elsewhere"
        path.mkdir(exist_ok=True)
        return path

    def check_python(self) -> None:
        server = {
            "DJANGO_SETTINGS_MODULE": "threadless_site.settings",
            "THREADLESS_VAR_DIR": str(self.elsewhere / "var"),
        }
        done = subprocess.run(
            [str(self.python), "-c", PYTHON_CHECK],
            cwd=self.elsewhere,
            env={**self.env, **server},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        self.checked = done.stdout.splitlines()


@pytest.fixture(scope="module")
def installed(request, tmp_path_factory) -> Installed:
    """Every install line run; the installed Python packages checked before the editable ones."""
    if services_mode():
        pytest.skip("the install lines do not depend on the database or broker: `make test` runs them")
    typescript_sdk = request.getfixturevalue("typescript_sdk")
    clone = _clone(tmp_path_factory.mktemp("fresh") / "threadless")
    (clone / "sdk" / "typescript" / "node_modules").symlink_to(typescript_sdk / "node_modules")
    shutil.copytree(typescript_sdk / "dist", clone / "sdk" / "typescript" / "dist")
    venv.EnvBuilder(with_pip=True, upgrade_deps=True).create(clone / ".venv")
    done = Installed(clone=clone, env=_fresh_shell(clone), ran=[], checked=[])
    lines = install_lines()
    npm = [line for line in lines if line.startswith("npm")]
    pip = [line for line in lines if line not in npm and not _is_editable(line)]
    with ThreadPoolExecutor(max_workers=1) as beside:
        npm_done = None
        for line in pip:
            done.run(line)
            if npm_done is None and list(clone.parent.glob("*/package.json")):
                npm_done = beside.submit(lambda: [done.run(line) for line in npm])
        done.check_python()
        for line in [line for line in lines if _is_editable(line)]:
            done.run(line)
        assert npm_done is not None, "no install line made an npm project next to the clone"
        npm_done.result()
    return done


def test_the_install_lines_install_the_packages_and_the_server_with_its_files(installed):
    site = subprocess.run(
        [str(installed.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    *paths, apps = installed.checked
    assert len(paths) == 6 and [p for p in paths if not p.startswith(site + "/")] == []  # not the clone's
    assert {"chat", "memories", "projects", "proxy"} <= set(apps.split())  # the apps' migrations
    assert sorted(installed.ran) == sorted(install_lines())
    npm = json.loads((installed.project / "package.json").read_text())
    assert npm["type"] == "module"  # the README's lines made an ES module project
    assert set(npm["dependencies"]) == {"threadless", "ai", "@anthropic-ai/sdk", "openai", "tsx"}


def test_the_npm_project_imports_the_package_and_its_integrations(installed):
    done = subprocess.run(
        ["node", "--input-type=module", "-e", NODE_CHECK],
        cwd=installed.project,
        env=installed.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["function", "function", "undefined"]


@pytest.mark.parametrize(
    "name, command, expected",
    [
        ("readme-sdk", "python", ["You said: hi", "['user', 'assistant']"]),
        ("readme-memory-tool", "python", ["File created successfully at: /memories/notes.md"]),
        ("readme-sdk-ts", "npx tsx", ["You said: hi", "[ 'user', 'assistant' ]"]),
        ("vercel-ai", "node", ["Hello Ada!", "You are Ada.", "system,user,assistant,user"]),
    ],
)
def test_the_examples_run_where_the_lines_installed_them(
    installed, live_server_proc, name, command, expected
):
    lang, code = examples()[name]
    stem = "example_" + name.replace("-", "_")
    if command == "python":  # the clone's .venv, as the README runs it (`.venv/bin/python`)
        script = installed.elsewhere / f"{stem}.py"
        argv = [str(installed.python), script.name]
    else:
        script = installed.project / f"{stem}.{lang}"
        argv = [*command.split(), script.name]
    script.write_text(code)
    done = subprocess.run(
        argv,
        cwd=script.parent,
        env={**fresh_shell_env(live_server_proc), "npm_config_prefer_offline": "true"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == expected
    if name == "vercel-ai":  # the others delete their memory; the next run of this one starts afresh too
        from threadless import Threadless

        with Threadless(api_key=live_server_proc.key, base_url=live_server_proc.url) as memory:
            memory.delete_matching(external_id="docs-ai-user-42")
