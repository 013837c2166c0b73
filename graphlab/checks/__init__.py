"""Exercise checkers of the course, one module per lesson.

Each ``check_*`` runs the learner's function on the live backend (``torch.cuda`` on a GPU, the CPU
emulator elsewhere) and checks what the lesson teaches, not only the numbers it returns: that the
graph was replayed (replays are counted), that the kernels were captured (counted in a replay),
that static inputs keep their memory, that kept outputs share no memory with the graph's buffers,
on several inputs whose answers are not round numbers. Then it either

- prints one ``PASSED ...: yours ... vs expected ...`` line,
- raises :class:`graphlab.errors.CheckFailed`, which a notebook shows as one short block (what is
  wrong, how to fix it, which section of the lesson to reread) without a traceback, or
- prints one "not attempted yet" line when the learner's function is still the stub.

Each result is stored with ``graphlab.course.progress.record(lesson, exercise, passed)``, the
exercise being the checker's name (``check_replay_with_new_inputs``), as the lesson's solution
cell names it.

======================  ====================================================================
lesson                  checkers
======================  ====================================================================
00 start here           :func:`check_busy_fraction`
01 kernel gaps          :func:`check_capture_chain`, :func:`check_kernels_per_replay`
02 static inputs        :func:`check_replay_with_new_inputs`
03 outputs              :func:`check_keep_outputs`
04 randomness           :func:`check_reproducible_replays`
05 dynamic shapes       :func:`check_run_padded`, :func:`check_padding_waste`
06 does it pay?         :func:`check_break_even`
07 training             :func:`check_captured_training`
08 memory               :func:`check_shared_pool`
09 multi-stream         :func:`check_fork_join`
10 torch.compile        :func:`check_compiled_replays`
11 full vs piecewise    :func:`check_dispatch`
12 changing a graph     :func:`check_repoint`
13 NCCL                 :func:`check_matching_replays`
14 which sizes          :func:`check_expected_step_time`, :func:`check_choose_sizes`
15 debugging capture    :func:`check_fixed_model`
16 your own model       :func:`check_fixed_branchy`, :func:`check_fixed_training`
======================  ====================================================================
"""

from .capture_sizes import check_choose_sizes, check_expected_step_time
from .compiled import check_compiled_replays
from .debugging import check_fixed_model
from .does_it_pay import check_break_even
from .dynamic_shapes import check_padding_waste, check_run_padded
from .graph_update import check_repoint
from .kernel_gaps import check_capture_chain, check_kernels_per_replay
from .memory import check_shared_pool
from .multi_stream import check_fork_join
from .nccl import check_matching_replays
from .outputs import check_keep_outputs
from .own_model import check_fixed_branchy, check_fixed_training
from .piecewise import check_dispatch
from .randomness import check_reproducible_replays
from .start_here import check_busy_fraction
from .static_inputs import check_replay_with_new_inputs
from .training import check_captured_training

__all__ = [
    "check_break_even",
    "check_busy_fraction",
    "check_capture_chain",
    "check_captured_training",
    "check_choose_sizes",
    "check_compiled_replays",
    "check_dispatch",
    "check_expected_step_time",
    "check_fixed_branchy",
    "check_fixed_model",
    "check_fixed_training",
    "check_fork_join",
    "check_keep_outputs",
    "check_kernels_per_replay",
    "check_matching_replays",
    "check_padding_waste",
    "check_replay_with_new_inputs",
    "check_repoint",
    "check_reproducible_replays",
    "check_run_padded",
    "check_shared_pool",
]
