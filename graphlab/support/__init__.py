"""The bottom layer: helpers every other part may use, importing nothing of graphlab's but errors.

- :mod:`.atomic`: write a file whole or not at all.
- :mod:`.torch_internals`: the one place that touches PyTorch's private APIs.
- :mod:`.capture_errors`: the CUDA capture-error wordings, one table for all who match them.
- :mod:`.memory_cap`: the per-learner GPU memory cap, ``GRAPHLAB_GPU_MEMORY_GB``.
"""
