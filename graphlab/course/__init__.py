"""What the course notebooks share: banners that say where a result came from, and links.

Notebooks write ``from graphlab.course import banner, live_or_recorded, timelines, timings``.
"""

from .banner import as_recorded, banner, live_or_recorded, timelines, timings
from .links import (
    DISTRIBUTION,
    INSTALL_MARKER,
    binder_badge,
    colab_badge,
    install_cell_source,
    refresh_links,
    repository_url,
)

__all__ = [
    "DISTRIBUTION",
    "INSTALL_MARKER",
    "as_recorded",
    "banner",
    "binder_badge",
    "colab_badge",
    "install_cell_source",
    "live_or_recorded",
    "refresh_links",
    "repository_url",
    "timelines",
    "timings",
]
