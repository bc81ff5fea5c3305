"""The floating-point warnings numpy gives for matrix products, off in this project's programs.

On some CPUs the BLAS library numpy ships with raises floating-point flags inside a product of
finite numbers (it computes on padding it never returns; numpy issues 24067 and 28967), and numpy
then warns "invalid value encountered in matmul" about a NaN that is nowhere in the result. On
the machine of docs/deduction.md that was about one run in twenty of `resistance-bot demo`, written
to its standard error, and the same warning reaches the bot's log. Every product the deduction and
the computer players compute multiplies finite numbers (0/1 counts, log-probabilities, weights),
and their results are checked where they are used (tests hold every probability to [0, 1]), so
the programs that run them ignore these flags.

This is process configuration, like `deduction.heap`: the programs enter it around all they do
(the bot, `python -m deduction`); a library user decides for their own process.
"""

from __future__ import annotations

import numpy as np


def spurious_flags_ignored() -> np.errstate:
    """A context in which numpy neither warns nor raises on floating-point flags (underflow, as by
    default, included); numpy's setting is a context variable, so tasks and threads started inside
    it keep it."""
    return np.errstate(all="ignore")
