"""Reading and analysing GPU timelines.

- :mod:`.events`: the flat table of events in integer nanoseconds, and the CUDA call names.
- :mod:`.kineto`: the reader for torch.profiler / Kineto Chrome traces (and graphlab's own JSON),
  column-wise for files (msgspec and numpy): :mod:`.kineto_stream` reads a plain trace's event
  list from the file a chunk at a time (:mod:`.kineto_halves` in two halves at once, given a
  helper process), :mod:`.kineto_chunks` cuts the event list of a file read whole into pieces,
  :mod:`.kineto_columns` turns their events into columns, :mod:`.duplicates` notes events written
  twice, :mod:`.decimals` reads times exactly and :mod:`.jsonfile` reads files within the memory
  available.
- :mod:`.gaps`: where the GPU idles, per stream and per device, graph replays included; its
  figures and report are in :mod:`.figures`, and those of many lanes as columns in :mod:`.lanes`.
- :mod:`.chrome`: the Chrome-trace writer (opens in Perfetto).
- :mod:`.timeline`: :class:`~.timeline.Timeline`, the public face on top of them.
"""
