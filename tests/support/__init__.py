"""Test and demo scaffolding, kept out of the installed package (the wheel test checks it is absent).

* :mod:`tests.support.fakes`: ``FakeRunner`` (canned Slurm answers), ``result()``, ``FakeStream`` (the GPU
  watch step's stand-in).
* :mod:`tests.support.demo`: the demo cluster's canned answers, the frozen clock, ``settle`` / ``type_into``.
* :mod:`tests.support.screenshots_jobs`, ``screenshots_gpu``, ``screenshots_logs``: deterministic scenes of
  the jobs view and its panes.
* :mod:`tests.support.screenshots`: regenerates ``screenshots/*.svg`` (run it as ``scripts/screenshots``).
"""
