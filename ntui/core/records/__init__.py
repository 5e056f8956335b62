"""Records: what ntui remembers of the jobs it submitted, and what became of each.

The history store (``history``), a job's record filled after it ended from accounting, the controller or its
logs (``record``), the final state of any one job (``outcome``) and submissions ntui lost track of
(``reconcile``).
"""
