"""The timing experiments that ``graphlab record`` runs on a GPU, and the files it writes.

Each experiment writes one recording, ``<name>.json`` (format: :mod:`graphlab.timing.recordings`),
with the machine's provenance in ``meta`` (GPU, driver, torch, CUDA, Python, UTC date, graphlab
version, the command line) and a profiled eager and graph timeline. Timings and timelines come
from separate runs: timings are never taken under the profiler. Profiled timelines keep two
iterations (one for 1000-kernel steps, to keep files small).

Settings: ``--quick`` runs a few small experiments with fewer repeats (for tests of the machinery);
its files say ``"quick": true`` in ``experiment`` and are not meant for the bundled folder.

One module per lesson, each documenting its experiments' names and the keys their files hold, in
the order ``graphlab record`` runs them:

- :mod:`.kernel_chains` (lesson 01): ``chain_<kernels>_k<numel>``, kernel gaps in chains of
  elementwise kernels;
- :mod:`.multi_stream` (lesson 09): ``fork_join_<2streams|1stream>_k<steps>_n<n>``, whether a
  replay keeps two branches' overlap;
- :mod:`.break_even` (lesson 06): ``break_even_<workload>``, the model's N* and the measured
  cumulative totals;
- :mod:`.full_vs_piecewise` (lesson 11): ``decoder_full_vs_piecewise``, a decoder layer as one
  graph, as pieces and eagerly.

:mod:`.torch_compile` (lesson 10) measures torch.compile's graphs into a file of its own schema,
with :func:`record_compiled` rather than ``graphlab record``. The machinery lives in
:mod:`.experiment` (what an experiment and a lesson are), :mod:`.plan` (the plan, found among
these modules) and :mod:`.recorder` (:func:`record` and the files it writes).

Adding a lesson's experiments
-----------------------------
Add one module to this package and nothing else. In it, define the experiments and a module-level
``LESSON = Lesson(kind=..., position=..., plan=...)``
(:class:`~graphlab.timing.experiments.experiment.Lesson`):

- ``kind``: the ``Experiment.kind`` of all its experiments, a kind no other lesson uses;
- ``position``: where they run in the plan, a number no other lesson uses (the lessons above
  stand at 10, 20, 30 and 40; pick 50 or more to run after them);
- ``plan(quick)``: its :class:`Experiment` list (``[]`` to leave ``--quick`` alone);
- ``describe``, ``capture``, ``profile``: only where the default (one workload timed with
  :func:`graphlab.compare`, captured, and profiled eagerly and as a replay) is not what the lesson
  records; see :mod:`.full_vs_piecewise` for all three.

:func:`experiments` then lists them, ``graphlab record --only NAME`` runs them and ``graphlab
record`` records them with the others. Import the module's own names from its module
(``graphlab.timing.experiments.<module>``).
"""

from __future__ import annotations

from .experiment import Experiment
from .full_vs_piecewise import (
    DECODER_BUCKETS,
    DECODER_KIND,
    DECODER_NAME,
    DECODER_PROFILED_BUCKET,
    DECODER_STEPS,
    SHORT_PROMPTS,
    capture_decoder_steps,
    decoder_batches,
    measure_decoder_modes,
    profile_decoder,
    recorded_decoder_timelines,
)
from .kernel_chains import CHAIN_KERNELS, CHAIN_SIZES
from .multi_stream import FORK_JOIN
from .plan import experiments, select
from .recorder import measure_experiment, record, write_recording
from .torch_compile import (
    COMPILED_DIR,
    COMPILED_NAME,
    COMPILED_SCHEMA,
    CUDAGRAPHS_LOGGER,
    NEW_SHAPES,
    GraphCalls,
    keep_every_output,
    kept_output_row,
    load_compiled,
    measure_compiled,
    record_compiled,
    watch_cudagraphs,
)

__all__ = [
    "CHAIN_KERNELS",
    "CHAIN_SIZES",
    "COMPILED_DIR",
    "COMPILED_NAME",
    "COMPILED_SCHEMA",
    "CUDAGRAPHS_LOGGER",
    "DECODER_BUCKETS",
    "DECODER_KIND",
    "DECODER_NAME",
    "DECODER_PROFILED_BUCKET",
    "DECODER_STEPS",
    "FORK_JOIN",
    "NEW_SHAPES",
    "SHORT_PROMPTS",
    "Experiment",
    "GraphCalls",
    "capture_decoder_steps",
    "decoder_batches",
    "experiments",
    "keep_every_output",
    "kept_output_row",
    "load_compiled",
    "measure_compiled",
    "measure_decoder_modes",
    "measure_experiment",
    "profile_decoder",
    "record",
    "record_compiled",
    "recorded_decoder_timelines",
    "select",
    "watch_cudagraphs",
    "write_recording",
]
