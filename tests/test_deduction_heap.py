"""The heap setting the hint-computing programs apply at start."""

from __future__ import annotations

import platform
import sys

import pytest

from deduction import heap


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc", reason="the setting is glibc's"
)
def test_glibc_accepts_the_trim_threshold():
    # This machine runs glibc; mallopt answers 1 only for a parameter it knows and a value it takes.
    assert heap.keep_freed_heap() is True


def test_nothing_is_set_where_there_is_no_glibc(monkeypatch):
    monkeypatch.setattr(heap.sys, "platform", "darwin")
    assert heap.keep_freed_heap() is False
