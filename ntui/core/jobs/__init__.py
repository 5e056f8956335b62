"""Jobs: submitting, watching and acting on jobs; the models behind the jobs view.

Submitting a validated job (``submission``), resubmitting a recorded one (``resubmit``), the jobs view's model
(``model``), the queue's rows and poll policy (``queue``), actions on a job (``actions``), the recent jobs list
(``recent``) and a job's usage report (``report``).
"""
