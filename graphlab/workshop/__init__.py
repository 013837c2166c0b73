"""Running a workshop: whether a machine can host it, and every learner's progress.

- :mod:`.readiness`: can this machine host N learners (GPUs, memory cap, cores, host memory,
  ports, the extension)? The answer behind ``graphlab doctor --workshop N``.
- :mod:`.peaks`: each lesson's measured run time and peak memory (``peaks.json``, written by
  ``tools/measure_lessons.py``), which readiness and the instructor guide size a workshop with.
- :mod:`.hub_progress`: each learner's progress read from their server through JupyterHub, as a
  table of learners by lessons (``graphlab progress --hub URL``).
- :mod:`.instructor_view`: that table served as a JupyterHub service for the instructor.
"""
