"""Disk quotas for work dirs: a size-limited tmpfs mounted on each session's directory.

A full tmpfs answers ENOSPC, so a sample that fills the disk fails fast instead of filling
the host's disk; the runner reports it as ``disk_limit``. Mounting needs CAP_SYS_ADMIN
(root); without it runners fall back to RLIMIT_FSIZE per file and a size check after the
command (see ``dir_size``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from pathlib import Path

_MS_NOSUID = 2
_MS_NODEV = 4
_MS_REMOUNT = 32
_MNT_DETACH = 2
_FULL_MARGIN = 256 << 10  # bytes left that still count as full (block rounding, metadata)
_INODES = 1 << 16  # files a work dir may hold: also stops inode floods

_libc = ctypes.CDLL(None, use_errno=True)


def can_mount() -> bool:
    return os.geteuid() == 0


def _opts(size_mb: int, owner: tuple[int, int] | None) -> bytes:
    opts = f"size={size_mb}m,nr_inodes={_INODES},mode=0700"
    if owner is not None:
        opts += f",uid={owner[0]},gid={owner[1]}"
    return opts.encode()


def _call(result: int, what: str, path: Path) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}", str(path))


def mount_tmpfs(path: Path, size_mb: int, owner: tuple[int, int] | None = None) -> None:
    """Mount a tmpfs of ``size_mb`` MiB on ``path`` (nosuid, nodev; exec stays allowed:
    test binaries run from the work dir), its root owned by ``owner`` (uid, gid) if given.

    Raises:
        OSError: the mount failed (not root, no such directory).
    """
    flags = _MS_NOSUID | _MS_NODEV
    _call(_libc.mount(b"vibes-work", str(path).encode(), b"tmpfs", flags, _opts(size_mb, owner)),
          "mount tmpfs", path)  # fmt: skip


def resize_tmpfs(path: Path, size_mb: int, owner: tuple[int, int] | None = None) -> None:
    """Change the quota of a mounted work dir; shrinking below its use fails.

    Raises:
        OSError: the remount failed.
    """
    flags = _MS_REMOUNT | _MS_NOSUID | _MS_NODEV
    _call(_libc.mount(b"vibes-work", str(path).encode(), b"tmpfs", flags, _opts(size_mb, owner)),
          "remount tmpfs", path)  # fmt: skip


def unmount(path: Path) -> None:
    """Detach the work dir's tmpfs; the memory is freed once nothing holds it.

    Raises:
        OSError: the unmount failed for a reason other than "not mounted".
    """
    if _libc.umount2(str(path).encode(), _MNT_DETACH) != 0:
        err = ctypes.get_errno()
        if err not in (22, 2):  # EINVAL: not a mount point; ENOENT: gone already
            raise OSError(err, f"umount: {os.strerror(err)}", str(path))


def is_full(path: Path) -> bool:
    """True when the file system at ``path`` has (almost) no space or inodes left."""
    try:
        st = os.statvfs(path)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < _FULL_MARGIN or (st.f_files > 0 and st.f_favail == 0)


def dir_size(path: Path) -> int:
    """Bytes allocated under ``path`` (the fallback check where no tmpfs could be mounted)."""
    total = 0
    for root, dirs, files in os.walk(path):
        for name in files + dirs:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
    return total


class WorkDirQuotas:
    """The tmpfs quota of each session's work dir, for one runner. Thread-safe.

    Without the privilege to mount, ``enabled`` is False, nothing is mounted and
    ``exceeded`` falls back to measuring the directory.
    """

    def __init__(self, owner: tuple[int, int] | None = None) -> None:
        self.enabled = can_mount()
        self.owner = owner
        self._sizes: dict[Path, int] = {}
        self._lock = threading.Lock()

    def mount(self, path: Path, size_mb: int) -> None:
        """Raises: OSError: the mount failed."""
        if not self.enabled:
            return
        mount_tmpfs(path, size_mb, self.owner)
        with self._lock:
            self._sizes[path] = size_mb

    def fit(self, path: Path, size_mb: int) -> None:
        """Resize to ``size_mb`` if the session's quota differs. Raises: OSError."""
        with self._lock:
            current = self._sizes.get(path)
            if current is None or current == size_mb:
                return
            resize_tmpfs(path, size_mb, self.owner)
            self._sizes[path] = size_mb

    def release(self, path: Path) -> None:
        """Unmount (the files go with it). Raises: OSError: the unmount failed."""
        with self._lock:
            mounted = self._sizes.pop(path, None) is not None
        if mounted:
            unmount(path)

    def exceeded(self, path: Path, size_mb: int) -> bool:
        """Whether the work dir is full (tmpfs) or over ``size_mb`` (fallback)."""
        with self._lock:
            mounted = path in self._sizes
        return is_full(path) if mounted else dir_size(path) > size_mb << 20
