"""sitedir.py PREFIX: where this Python imports modules installed under PREFIX.

configure runs it with the Python it found.  Automake's default,
PREFIX/lib/pythonX.Y/site-packages, is not searched by Debian's python3,
which looks in PREFIX/lib/pythonX.Y/dist-packages (PREFIX /usr/local) or
PREFIX/lib/python3/dist-packages (PREFIX /usr).  Prints the directory of
sys.path under PREFIX/lib that ends in -packages, preferring the
version's own; prints nothing when there is none (configure then keeps
automake's default).
"""
import os
import sys


def main():
    prefix = os.path.normpath(sys.argv[1])
    own = "python%d.%d" % sys.version_info[:2]
    found = [
        d
        for d in sys.path
        if d.startswith(prefix + "/lib/python") and d.endswith("-packages")
    ]
    found.sort(key=lambda d: (own not in d, not d.endswith("site-packages")))
    if found:
        print("${prefix}" + found[0][len(prefix):])


main()
