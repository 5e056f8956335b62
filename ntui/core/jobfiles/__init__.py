"""The files a job writes next to its logs, as both sides see them: names, headers and formats.

The generated script writes them (:mod:`ntui.core.compose`) and ntui's readers parse them (:mod:`ntui.core.logs`,
:mod:`ntui.core.gpu`, :mod:`ntui.core.records`); each format has its one home here: the log file names and the
``ntui: rank N on NODE`` header (``lognames``), the GPU sample files (``samplefiles``).
"""
