# Times a fresh Python's first NumPy array and the plain-loop lifecycles after it, for
# io.datamem.benchmarks.ColdStart, which feeds this script to python3 on standard input:
#
#   python3 - COUNT
#
# It times `import numpy`, then COUNT times `a = np.empty(8); a[3] = 1.5; b = a[3]; del a` in a
# plain for loop (no timeit: what a script does), and prints one JSON object with the versions, the
# import's milliseconds and the loop's ns per lifecycle. Without NumPy it prints why, and no figure.
import json
import platform
import sys
import time


def main():
    count = int(sys.argv[1])
    out = {"python": platform.python_implementation() + " " + platform.python_version()}
    t0 = time.perf_counter_ns()
    try:
        import numpy as np
    except Exception as e:  # ImportError, or a NumPy that fails to load
        out["numpy"] = None
        out["reason"] = type(e).__name__ + ": " + str(e)
        print(json.dumps(out))
        return
    t1 = time.perf_counter_ns()
    a = np.empty(8)
    a[3] = 1.5
    b = a[3]
    del a
    t2 = time.perf_counter_ns()
    for i in range(count):
        a = np.empty(8)
        a[3] = 1.5
        b = a[3]
        del a
    t3 = time.perf_counter_ns()
    out["numpy"] = np.__version__
    out["importMillis"] = (t1 - t0) / 1e6
    out["firstArrayMillis"] = (t2 - t0) / 1e6
    out["nextNanos"] = (t3 - t2) / count
    print(json.dumps(out))


main()
