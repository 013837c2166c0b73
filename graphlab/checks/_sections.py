"""The sections of the lessons that the checkers send a learner back to, as the notebooks title
them (``## 3. Title``); a test keeps them in step with the notebooks."""

from __future__ import annotations

from ._core import Section

# 00 start here
READING = Section("00_start_here", 3, "Reading a timeline")
BUSY_EXERCISE = Section("00_start_here", 4, "Exercise: how busy was the GPU?")
# 01 kernel gaps
NOT_CHANGED = Section("01_kernel_gaps", 3, "What a graph does *not* change")
CHAIN_EXERCISE = Section("01_kernel_gaps", 6, "Exercise: capture the chain yourself")
KERNELS_EXERCISE = Section("01_kernel_gaps", 7, "Exercise: kernels of one replay")
# 02 static inputs
COPY_IN = Section("02_static_inputs", 2, "New inputs, the right way: copy into the captured tensor")
REBIND = Section("02_static_inputs", 3, "New inputs, the wrong way: rebind the name")
ACCUMULATE = Section("02_static_inputs", 4, "In-place updates accumulate")
# 03 outputs
BY_REFERENCE = Section("03_outputs", 2, "Keep the outputs by reference")
COPIES = Section("03_outputs", 3, "Keep copies")
# 04 randomness
SEEDING = Section("04_randomness", 2, "Reproducible replays: seed before replaying")
# 05 dynamic shapes
BUCKETS = Section("05_dynamic_shapes", 3, "One graph per bucket, and padding")
WASTE_EXERCISE = Section("05_dynamic_shapes", 6, "Exercise: how much work is padding?")
# 06 does it pay?
MODEL = Section("06_does_it_pay", 1, "The model")
# 07 training
RECIPE = Section("07_training", 1, "The recipe")
# 08 memory
SHARING = Section("08_memory", 2, "Every graph, its own pool — unless you share one")
# 09 multi-stream capture
FORK_JOIN = Section("09_multi_stream", 1, "Fork and join inside a capture")
UNJOINED = Section("09_multi_stream", 4, "Forget the join: the capture fails")
FORK_JOIN_EXERCISE = Section("09_multi_stream", 6, "Exercise: fork and join")
# 13 NCCL
MATCHING = Section("13_nccl", 4, "Why a mismatched replay hangs")
# 11 full vs piecewise
MAKE_UP = Section("11_full_vs_piecewise", 3, "A full graph: the make-up as data")
DISPATCHER = Section("11_full_vs_piecewise", 5, "A dispatcher and its key")
# 12 changing a graph
UPDATE = Section("12_changing_a_graph", 2, "Update the executable graph from another capture")
UPDATE_REFUSED = Section("12_changing_a_graph", 3, "What an update refuses, and what it accepts")
REPOINT_EXERCISE = Section("12_changing_a_graph", 6, "Exercise: point a graph at a new input")
# 14 which sizes to capture
PRICING = Section("14_capture_sizes", 3, "What a plan costs")
PLANNER = Section("14_capture_sizes", 5, "The planner against the default lists")
# 15 debugging a capture error
FIRST_ERROR = Section("15_debugging_capture", 2, "Read the first error, then the catalogue")
WHAT_WAS_CAPTURED = Section("15_debugging_capture", 5, "See what was captured")
DEBUG_EXERCISE = Section("15_debugging_capture", 8, "Exercise: fix the model")
# 16 your own model
FIX_BRANCHY = Section("16_your_own_model", 3, "Exercise: fix the branchy model")
FIX_TRAINING = Section("16_your_own_model", 5, "Exercise: fix the training step")

ALL = tuple(value for value in dict(globals()).values() if isinstance(value, Section))
