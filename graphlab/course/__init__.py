"""The course as a learner meets it: its lessons, their exercises, and what the learner owns.

- :mod:`.syllabus`: the lessons as shipped, their titles and exercises, and the cell-metadata
  schema (``cell_metadata.schema.json``) that marks a solution cell.
- :mod:`.solutions`: the ``%%solution`` convention, a solution that runs only when revealed.
- :mod:`.progress`: the learner's check results, earned or revealed, kept for the user account.
- :mod:`.workspace`: the learner's own copy of the lessons, never overwritten, reset on request.
- :mod:`.banner`: what a notebook prints above a result: where it came from (live or recorded).
- :mod:`.links`: every link, badge and install line, derived from ``[project.urls]``.
- :mod:`.headings`: a lesson's section titles in a translation, for feedback in that language.
- ``lab_config/``: the JupyterLab settings ``graphlab lab`` runs the course with.

Running a workshop for many learners (readiness, measured lesson peaks, the instructor's view) is
:mod:`graphlab.workshop`. Notebooks write
``from graphlab.course import banner, live_or_recorded, timelines, timings``.
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
