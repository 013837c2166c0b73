"""Timing CUDA Graphs on a real GPU, and the real recordings shown where there is none.

- :mod:`.compare`: capture, replay, eager and end-to-end timings of one function.
- :mod:`.captured`: a step captured the way the timings need it (warm-up on a side stream),
  and the checks every timing function makes first.
- :mod:`.clocks`: the CUDA-event clock and the end-to-end host clock, and their spread.
- :mod:`.cumulative`: the measured cumulative totals of N eager iterations vs capture + N replays.
- :mod:`.profiled`: profiled timelines of the same loops, recorded apart from the timings.
- :mod:`.results`: what those return (:class:`~.results.Comparison`,
  :class:`~.results.CumulativeTotals`) and the keys a recording stores them under.
- :mod:`.break_even`: the break-even formula N* = C / (t_eager − t_replay), and the model's
  cumulative totals.
- :mod:`.workloads`: the kernels the lessons time (chains of elementwise kernels, a small MLP).
- :mod:`.side_stream`: the one side stream per device that warm-ups and captures share.
- :mod:`.machine`: provenance of a run (GPU, driver, versions, date).
- :mod:`.experiments`: what ``graphlab record`` runs; :mod:`.recordings` loads what it wrote;
  :mod:`.decoder` the toy decoder layer lesson 11 times and ``graphlab plan measure`` uses.
"""
