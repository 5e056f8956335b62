"""Stub shifter: runs the command "inside the image" (marks the environment so the test can tell)."""

import os
import sys

os.environ["NTUI_STUB_SHIFTER"] = "1"
os.execvp(sys.argv[1], sys.argv[1:])
