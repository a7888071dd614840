"""sitecustomize for spanstat --python (spanstat(1), SPAN SOURCES).

spanstat puts this file's directory first in the target's PYTHONPATH, so
that Python imports it at start-up (site.py), before the program runs.  It
first runs the sitecustomize the program would have had (the next one on
sys.path, as that module), takes its own directory out of sys.path again,
then starts the C profiler of the spanstat module (_spanstat.profile: every
Python function call a span, in every thread through threading.setprofile,
and in fork children through os.register_at_fork).  Nothing else changes:
sys.argv, __main__ and the exit status are the program's.  SPANSTAT_PYTHON
says what to trace: "py" (Python functions) or "c" (C functions called from
Python too)."""
import os
import sys


def _spanstat_start():
    here = os.path.dirname(os.path.abspath(__file__))
    others = [p for p in sys.path if os.path.abspath(p or ".") != here]
    # the program's own sitecustomize, if any, in our place
    import importlib.machinery
    import importlib.util

    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is not None and spec.loader is not None:
        ours = sys.modules.get("sitecustomize")
        mod = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = mod
        try:
            spec.loader.exec_module(mod)
        except Exception as err:
            # what site.py does with it (execsitecustomize), and the
            # profiler starts all the same
            sys.modules["sitecustomize"] = ours
            if isinstance(err, ImportError) and err.name == "sitecustomize":
                pass
            elif sys.flags.verbose:
                sys.excepthook(*sys.exc_info())
            else:
                sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                                 "%s: %s\n" % (err.__class__.__name__, err))
    # out of sys.path again (unless it is also spanstat.py's: the build tree)
    if not os.path.exists(os.path.join(here, "spanstat.py")):
        sys.path[:] = others
    what = os.environ.get("SPANSTAT_PYTHON", "")
    if what not in ("py", "c"):
        return
    try:
        import _spanstat
    except ImportError as e:
        sys.stderr.write("spanstat: --python: cannot load the profiler into %s: %s\n"
                         % (sys.executable, e))
        return
    if not _spanstat.available():
        return  # the span library is off here (a privileged process)
    import threading

    threading.setprofile(_spanstat.thread_hook)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_spanstat.after_fork)
    _spanstat.profile(c_calls=(what == "c"))


_spanstat_start()
del _spanstat_start
