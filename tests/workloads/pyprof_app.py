"""pyprof_app.py: a program with no spanstat in it, for spanstat --python
(tests/bats/pyprof.bats): nested functions, a method, a recursion, a
generator, an exception caught two levels up, two threads and a fork whose
child leaves through os._exit.  Each call's count is in a comment; with
"exit N" as its argument it prints sys.argv and __name__ and exits N."""
import os
import sys
import threading


def leaf(x):
    return x + 1


def mid(n):
    total = 0
    for i in range(n):
        total += leaf(i)
    return total


class Shape:
    def area(self):
        return mid(2)


def rec(n):
    return 0 if n == 0 else rec(n - 1)


def gen(n):
    for i in range(n):
        yield leaf(i)


def raiser():
    raise ValueError("caught two levels up")


def middle():
    raiser()


def catcher():
    try:
        middle()
    except ValueError:
        return 1


def worker(k):
    mid(k)


def forker():
    pid = os.fork()
    if pid == 0:
        mid(3)
        os._exit(0)
    os.waitpid(pid, 0)


def main():
    mid(3)  # main;mid 1, leaf 3
    Shape().area()  # main;Shape.area 1;mid 1;leaf 2
    rec(4)  # main;rec, five deep
    list(gen(3))  # main;gen 4 runs (3 yields and the end), leaf 3
    catcher()  # main;catcher;middle;raiser, 1 each
    len("ab"), len("cd")  # builtins.len 2 (--python=c)
    ts = [threading.Thread(target=worker, args=(2,)) for _ in range(2)]
    for t in ts:  # Thread.run;worker 2;mid 2;leaf 4
        t.start()
    for t in ts:
        t.join()
    forker()  # the child: <module>;main;forker again, mid 1, leaf 3


if len(sys.argv) > 2 and sys.argv[1] == "exit":
    print(__name__, " ".join(sys.argv[1:]))
    sys.exit(int(sys.argv[2]))
main()
