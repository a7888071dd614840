"""args_py.py: typed arguments from Python (spanstat.arg), for args.bats:
span "read" twice with int "bytes" 100 then 300, float "ratio" 0.5,
bool "hit" True, str "method" "GET"; an int past int64 "big" 2**63 (a
uint64), str "long" of 200 "é" (400 bytes: cut to 127 of them, never
inside one); outside every span, int "setup" -1; then bad calls, each
caught: a key with a space, an int past uint64, a key with a NUL."""
import spanstat

spanstat.arg("setup", -1)
for n in (100, 300):
    with spanstat.span("read"):
        spanstat.arg("bytes", n)
        spanstat.arg("ratio", 0.5)
        spanstat.arg("hit", True)
        spanstat.arg("method", "GET")
        spanstat.arg("big", 1 << 63)
        spanstat.arg("long", "\u00e9" * 200)
for key, value in (("two words", 1), ("huge", 1 << 64), ("nul\0key", 1)):
    try:
        spanstat.arg(key, value)
        print("accepted", key)
    except (ValueError, OverflowError) as e:
        print("refused", type(e).__name__)
