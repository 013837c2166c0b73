"""Reading and analysing GPU timelines.

- :mod:`.events`: the flat table of events in integer nanoseconds, and the CUDA call names.
- :mod:`.kineto`: the reader for torch.profiler / Kineto Chrome traces (and graphlab's own JSON),
  column-wise for files (msgspec and numpy), with :mod:`.decimals` for exact times and
  :mod:`.jsonfile` for reading files within the memory available.
- :mod:`.gaps`: where the GPU idles, per stream and per device, graph replays included.
- :mod:`.chrome`: the Chrome-trace writer (opens in Perfetto).
- :mod:`.timeline`: :class:`~.timeline.Timeline`, the public face on top of them.
"""
