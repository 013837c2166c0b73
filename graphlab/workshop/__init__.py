"""Running a workshop: every learner's progress as the instructor sees it.

:mod:`graphlab.workshop.hub_progress` reads each learner's progress from their server through
JupyterHub and lays it out as a table of learners by lessons (``graphlab progress --hub URL``);
:mod:`graphlab.workshop.instructor_view` serves that table as a JupyterHub service for the
instructor's browser.
"""
