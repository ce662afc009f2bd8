"""python3 -m fixq.baselines MODEL --data DIR [--repeats N]: one baseline's JSON (see
fixq.baselines). Exit status 3, with one line on stderr, when torch is not importable."""

import importlib
import pkgutil
import sys

import fixq.baselines as package


def main(argv):
    models = sorted(m.name for m in pkgutil.iter_modules(package.__path__) if not m.name.startswith("_"))
    if not argv or argv[0] not in models:
        given = f"'{argv[0]}'" if argv else "none"
        sys.stderr.write(f"python3 -m fixq.baselines: the first argument names a model ({', '.join(models)}); got {given}\n")
        return 2
    try:
        module = importlib.import_module(f"fixq.baselines.{argv[0]}")
    except ModuleNotFoundError as e:
        if e.name not in ("torch", "numpy"):
            raise
        sys.stderr.write(f"{e.name} is not importable by {sys.executable} ({e})\n")
        return 3
    return module.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
