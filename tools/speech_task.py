"""The embedded speech-enhancement task's definitions for the scripts of tools/ and the tests.

They live in the Python package (python/fixq/baselines/_speech_task.py) because the installed
`fixq demo` scores torch's rows with them; this module loads that file by its path, so the
scripts need neither a build nor an installed fixq, and re-exports it as `speech_task`.
"""
import importlib.util
import os
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location(
    "speech_task", os.path.join(_ROOT, "python", "fixq", "baselines", "_speech_task.py"))
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
_module.DEFAULT_DATA = os.path.join(_ROOT, "data", "speech")
sys.modules[__name__] = _module
