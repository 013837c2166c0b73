"""The bottom layer: helpers every other part may use, importing nothing of graphlab's but errors.

- :mod:`.atomic`: write a file whole or not at all.
- :mod:`.backups`: the names of the copies graphlab keeps instead of deleting.
- :mod:`.json_text`: JSON someone else wrote (progress, lessons, records), read safely.
- :mod:`.printable`: text from files, made safe to print on a terminal.
- :mod:`.shorten`: an error message cut to a readable length, after a whole sentence.
- :mod:`.memory`: how much more memory this process may use, to refuse work too big up front.
- :mod:`.memory_cap`: the per-learner GPU memory cap, ``GRAPHLAB_GPU_MEMORY_GB``.
- :mod:`.nvidia_smi`: the machine's GPUs as nvidia-smi lists them, without a CUDA context.
- :mod:`.torch_internals`: the one place that touches PyTorch's private APIs.
- :mod:`.capture_errors`: the CUDA capture-error wordings, one table for all who match them.
- :mod:`.graph_updates`: what the GPU and the emulator say when a graph is listed or changed.
- :mod:`.lazy_iri_syntax`: jsonschema's IRI checker, built when first used instead of at import.
"""
