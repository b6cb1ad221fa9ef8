# Times NumPy's array lifecycle for io.datamem.benchmarks.NumPyTiming, which feeds this script to
# python3 on standard input:
#
#   python3 - REPEATS SECONDS_PER_REPEAT ELEMENTS...
#
# For each length n it times `a = np.empty(n); a[0] = 1.0; b = a[0]; del a` with timeit (garbage
# collection off, as timeit has it), REPEATS repeats of as many loops as fill SECONDS_PER_REPEAT,
# and prints one JSON object: the versions, and per length the loops per repeat and each repeat's
# ns per lifecycle. Without NumPy it prints why, and no figure.
import json
import platform
import sys
import timeit


def main():
    repeats = int(sys.argv[1])
    seconds = float(sys.argv[2])
    lengths = [int(a) for a in sys.argv[3:]]
    out = {"python": platform.python_implementation() + " " + platform.python_version()}
    try:
        import numpy as np
    except Exception as e:  # ImportError, or a NumPy that fails to load
        out["numpy"] = None
        out["reason"] = type(e).__name__ + ": " + str(e)
        print(json.dumps(out))
        return
    out["numpy"] = np.__version__
    cases = []
    for n in lengths:
        statement = "a = np.empty(%d); a[0] = 1.0; b = a[0]; del a" % n
        timer = timeit.Timer(statement, globals={"np": np})
        loops, elapsed = timer.autorange()  # also warms up
        loops = max(1, int(loops * seconds / elapsed))
        timer.timeit(loops)
        times = timer.repeat(repeat=repeats, number=loops)
        cases.append({"elements": n, "statement": statement, "loops": loops,
                      "ns": [t * 1e9 / loops for t in times]})
    out["cases"] = cases
    print(json.dumps(out))


main()
