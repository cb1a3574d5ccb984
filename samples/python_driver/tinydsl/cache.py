"""The disk cache: a kernel's PTX and cubin under a key made of everything
that decides them (the MLIR text, the kernel's name, the C++ toolchain).

One file per entry, `<key>.kernel`: a JSON head line (sizes and a SHA-256 of
the payload), then the PTX and the cubin. Written to a temporary file and
renamed, so that concurrent workers and a killed process never leave a torn
entry; an entry that fails its check is a miss, and the next store replaces it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile


def key(*parts: str) -> str:
    """The entry's key: SHA-256 of the parts, 32 hex digits."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


class DiskCache:
    def __init__(self, directory: str):
        self.directory = os.path.abspath(directory)

    def _path(self, k):
        return os.path.join(self.directory, k + ".kernel")

    def load(self, k):
        """(ptx, cubin) for key `k`, or None (absent or failing its check)."""
        try:
            with open(self._path(k), "rb") as f:
                head = json.loads(f.readline())
                payload = f.read()
        except (OSError, ValueError):
            return None
        if (len(payload) != head.get("ptx", -1) + head.get("cubin", -1)
                or hashlib.sha256(payload).hexdigest() != head.get("sha256")):
            return None
        return payload[:head["ptx"]].decode(), payload[head["ptx"]:]

    def store(self, k, ptx: str, cubin: bytes) -> bool:
        """Writes the entry atomically; False (and the reason on stderr) if it cannot."""
        payload = ptx.encode() + cubin
        head = json.dumps({"ptx": len(payload) - len(cubin), "cubin": len(cubin),
                           "sha256": hashlib.sha256(payload).hexdigest()})
        tmp = None
        try:
            os.makedirs(self.directory, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(head.encode() + b"\n" + payload)
            os.replace(tmp, self._path(k))
            return True
        except OSError as e:
            if tmp is not None and os.path.exists(tmp):
                os.unlink(tmp)
            import sys
            print(f"python_driver: cannot store a cache entry in {self.directory}: {e}",
                  file=sys.stderr)
            return False
