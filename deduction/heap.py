"""Keep freed heap memory in the process for the next hint instead of giving it back at once.

A hint builds and frees a few hundred kilobytes of numpy arrays. glibc's malloc hands the free
memory at the top of its heap back to the kernel as soon as more of it lies there than its trim
threshold (128 KB at start, later twice the largest block it had mapped on its own), so the next
hint has the same pages faulted in and zeroed again. On the 2-core virtual machine of
docs/deduction.md that was a quarter to a third of a hint's time, and most of its variation from
one minute to the next.

This is process configuration, not deduction: the programs that compute hints call it once at
start (the bot, `python -m deduction`, benchmarks/deduction_speed.py); a library user decides
for their own process. Other C libraries (musl, macOS) are left as they are.
"""

from __future__ import annotations

import ctypes
import sys

M_TRIM_THRESHOLD = -1  # mallopt's parameter number for the trim threshold, from glibc's <malloc.h>
KEPT_FREE_BYTES = 32 * 1024 * 1024  # far above what one hint or one batch request allocates


def keep_freed_heap(kept_bytes: int = KEPT_FREE_BYTES) -> bool:
    """Ask glibc to keep up to `kept_bytes` of free memory at the top of its heap.

    Returns True where it did; False where the C library has no such setting."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library this process already runs on
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return mallopt(M_TRIM_THRESHOLD, kept_bytes) == 1
