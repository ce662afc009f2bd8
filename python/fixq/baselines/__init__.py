"""fixq.baselines: what a PyTorch user would otherwise run, scored as ``fixq demo`` scores
fixq, for the demo's tables.

One module per demo model (``charlm``, ...), each with ``main(argv)``: it reads the model's
files from ``--data DIR`` (``data/<model>/`` in the repository, ``share/fixq/<model>/``
once installed), runs torch's float model and its quantized versions with the demo's
protocol, and prints one JSON document on stdout::

    {"torch_version": ..., "rows": [{"name": ..., "engine": ... or null,
                                     <the demo's metrics>, "us_per_step": ...}, ...]}

A row that cannot be computed (an engine this torch lacks) has ``"error"`` instead of
numbers. Bad options or files are one line on stderr and a nonzero exit.

``python3 -m fixq.baselines MODEL --data DIR [--repeats N]`` runs one (``__main__.py``);
that is how ``fixq demo`` gets its PyTorch rows (src/cli/demo_data.h). The modules need
torch; this package itself does not.
"""

import argparse
import sys


class OneLineParser(argparse.ArgumentParser):
    """Bad options are one line on stderr and exit status 2, as the fixq CLI's."""

    def __init__(self, model, **kwargs):
        super().__init__(prog=f"python3 -m fixq.baselines {model}", **kwargs)

    def error(self, message):
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(2)
