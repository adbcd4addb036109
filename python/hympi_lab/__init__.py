"""hympi-lab: the performance model, fits and advisor of hympi.

Modules: model (the papers' equations), fit (least squares), results
(reading hympi result documents and CSV), advise (ranking schemes),
plotting (figures; the only one importing matplotlib), cli and cli_*
(`hympi-lab`: the parser, and one module per command family).
"""

__version__ = "0.1.0"
