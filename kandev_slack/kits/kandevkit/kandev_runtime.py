"""Install the Kandev runtime binaries into a cache directory the tests (and the preview) own.

The runtime is the npm package ``@kdlbs/runtime-linux-x64`` (a tarball of Go binaries). It is
fetched with ``npm pack`` and unpacked into ``<repo>/.cache/kandev-runtime/<version>/`` once
(outside a checkout, ``~/.cache/kandev-slack/kandev-runtime/<version>/``); later runs reuse it.
A file lock keeps parallel processes from racing on the install. ``KANDEV_RUNTIME_DIR``
overrides the target directory.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

KANDEV_VERSION = "0.95.1"
NPM_PACKAGE = "@kdlbs/runtime-linux-x64"
RUNTIME_DIR_ENV = "KANDEV_RUNTIME_DIR"


def _default_cache_root() -> Path:
    """The checkout's ``.cache`` when installed from one (``pip install -e .``), else the
    user's cache directory."""
    checkout = Path(__file__).resolve().parents[3]
    if (checkout / "pyproject.toml").is_file():
        return checkout / ".cache" / "kandev-runtime"
    return Path.home() / ".cache" / "kandev-slack" / "kandev-runtime"


DEFAULT_CACHE_ROOT = _default_cache_root()

# Every binary of the package: the launcher refuses to start when any agentctl helper is missing.
RUNTIME_FILES = (
    "kandev",
    "agentctl",
    "agentctl-linux-amd64",
    "agentctl-linux-arm64",
    "agentctl-darwin-amd64",
    "agentctl-darwin-arm64",
)
_MARKER = ".installed"


class RuntimeInstallError(RuntimeError):
    """The Kandev runtime could not be installed or does not run."""


def runtime_dir(version: str = KANDEV_VERSION) -> Path:
    """Where the runtime of ``version`` lives (installed or not)."""
    override = os.environ.get(RUNTIME_DIR_ENV)
    if override:
        return Path(override).expanduser().resolve()
    return DEFAULT_CACHE_ROOT / version


def binaries(directory: Path) -> dict[str, Path]:
    """Paths of the runtime binaries inside an installed runtime directory."""
    return {name: directory / "bin" / name for name in RUNTIME_FILES}


def ensure_runtime(version: str = KANDEV_VERSION) -> Path:
    """Return a directory whose ``bin/`` holds a working ``kandev`` of ``version``.

    Installs it with ``npm pack`` when missing. Safe to call from many processes at once.
    """
    target = runtime_dir(version)
    if _is_installed(target, version):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    lock_path = target.parent / f".{target.name}.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not _is_installed(target, version):
                _install(target, version)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return target


def _is_installed(target: Path, version: str) -> bool:
    marker = target / _MARKER
    if not marker.is_file() or marker.read_text().strip() != version:
        return False
    return all(path.is_file() for path in binaries(target).values())


def _install(target: Path, version: str) -> None:
    if shutil.which("npm") is None:
        raise RuntimeInstallError("npm is not on PATH; it is needed to fetch the Kandev runtime")
    with tempfile.TemporaryDirectory(prefix=".kandev-install-", dir=target.parent) as tmp:
        work = Path(tmp)
        tarball = _npm_pack(f"{NPM_PACKAGE}@{version}", work)
        staged = work / "runtime"
        _extract(tarball, staged)
        _verify(staged / "bin" / "kandev", version)
        (staged / _MARKER).write_text(version + "\n")
        if target.exists():
            shutil.rmtree(target)
        staged.rename(target)


def _npm_pack(spec: str, destination: Path) -> Path:
    proc = subprocess.run(
        ["npm", "pack", spec, "--pack-destination", str(destination), "--silent"],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeInstallError(
            f"npm pack {spec} failed ({proc.returncode}): {proc.stderr[-2000:]}"
        )
    tarballs = sorted(destination.glob("*.tgz"))
    if len(tarballs) != 1:
        raise RuntimeInstallError(f"npm pack {spec} produced {tarballs!r}, expected one .tgz")
    return tarballs[0]


def _extract(tarball: Path, staged: Path) -> None:
    bin_dir = staged / "bin"
    bin_dir.mkdir(parents=True)
    wanted = {f"package/bin/{name}": name for name in RUNTIME_FILES}
    found: set[str] = set()
    with tarfile.open(tarball, "r:gz") as archive:
        for member in archive:
            name = wanted.get(member.name)
            if name is None or not member.isfile():
                continue
            source = archive.extractfile(member)
            if source is None:
                continue
            destination = bin_dir / name
            with source, destination.open("wb") as out:
                shutil.copyfileobj(source, out, length=1 << 20)
            destination.chmod(0o755)
            found.add(name)
    missing = set(RUNTIME_FILES) - found
    if missing:
        raise RuntimeInstallError(f"{tarball.name} lacks {sorted(missing)}")


def _verify(kandev: Path, version: str) -> None:
    proc = subprocess.run(
        [str(kandev), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    reported = (proc.stdout + proc.stderr).strip()
    if proc.returncode != 0 or version not in reported:
        raise RuntimeInstallError(
            f"{kandev} --version exited {proc.returncode} with {reported!r}; expected {version}"
        )
