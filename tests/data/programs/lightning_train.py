"""A program that uses Lightning (the long-run rule T8 reads this file; never run)."""

import lightning as L  # noqa: F401
