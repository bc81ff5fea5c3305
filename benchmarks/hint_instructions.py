"""Instructions one hint costs, counted by callgrind rather than timed: on a shared virtual
machine a timing moves by a third from one minute to the next, an instruction count does not.

    OPENBLAS_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file=one.out \\
        .venv/bin/python benchmarks/hint_instructions.py 1
    OPENBLAS_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file=many.out \\
        .venv/bin/python benchmarks/hint_instructions.py 101
    # instructions per hint: (summary of many.out - summary of one.out) / 100

The hint is the one `deduction_speed.py` times: 10 players, 4 spies, a full record (5 missions,
25 proposals), a Resistance seat's view, the behaviour model with its reasons.
"""

from __future__ import annotations

import sys

from deduction_speed import full_ten_player_record

from deduction.analysis import deduce
from deduction.heap import keep_freed_heap
from deduction.knowledge import Viewer
from deduction.reasons import explain


def main() -> None:
    hints = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    keep_freed_heap()  # as the bot runs
    record = full_ten_player_record().without_outcome()
    viewer = Viewer.resistance(0)
    for _ in range(hints):
        explain(record, deduce(record, viewer))


if __name__ == "__main__":
    main()
