#!/usr/bin/env python3
"""bench/persistent_collections.py — TSL's persistent maps and vectors at N and 10 N, beside peers.

Workloads, each one loop over i < N (bench/persistent-collections.tsl):
  map-assoc     (assoc m i i) into one map, from {}
  map-get       (get m i) for every i
  map-dissoc    (dissoc m i) for every i, until the map is empty
  vector-conj   (conj v i) onto one vector, from []
  vector-nth    (nth v i) for every i
  vector-assoc  (assoc v i (- i)) for every i

Peers, in the same script: pyrsistent (Debian's python3-pyrsistent; PMap and the C
PVector) as the other persistent structures, and CPython's dict and list (mutable, no
structural sharing) as the baseline of what a loop of inserts costs at all. pyrsistent's
PMap is very slow at 10^6 (over a minute), so it runs at N/10 and 10 N/10 and its time is
scaled by 10: its growth is still measured over a factor of ten.

TSL times itself with now-ns around each loop. Median of RUNS runs per size; the growth
column is time(10 N) / time(N), 10 for a linear workload.

    /usr/bin/python3 bench/persistent_collections.py [path/to/tsl] [N] [runs]
"""
import os
import sys

from measure import cpu_model, timed, tsl_timings


def python_times(n, runs, persistent):
    if persistent:
        from pyrsistent import pmap, pvector
        empty_map, empty_vector = pmap(), pvector()
        assoc = lambda m, k, v: m.set(k, v)
        dissoc = lambda m, k: m.remove(k)
        conj = lambda v, x: v.append(x)
        vset = lambda v, i, x: v.set(i, x)
    else:
        empty_map, empty_vector = {}, []

        def assoc(m, k, v):
            m[k] = v
            return m

        def dissoc(m, k):
            del m[k]
            return m

        def conj(v, x):
            v.append(x)
            return v

        def vset(v, i, x):
            v[i] = x
            return v

    def build_map():
        m = empty_map if persistent else {}
        for i in range(n):
            m = assoc(m, i, i)
        return m

    def build_vector():
        v = empty_vector if persistent else []
        for i in range(n):
            v = conj(v, i)
        return v

    m, v = build_map(), build_vector()
    results = {"map-assoc": timed(build_map, runs, False), "vector-conj": timed(build_vector, runs, False)}

    def get_all():
        s = 0
        for i in range(n):
            s += m[i]
        return s

    def dissoc_all():
        mm = m if persistent else dict(m)
        for i in range(n):
            mm = dissoc(mm, i)

    def nth_all():
        s = 0
        for i in range(n):
            s += v[i]
        return s

    def assoc_vector_all():
        vv = v if persistent else list(v)
        for i in range(n):
            vv = vset(vv, i, -i)

    results["map-get"] = timed(get_all, runs, False)
    results["map-dissoc"] = timed(dissoc_all, runs, False)
    results["vector-nth"] = timed(nth_all, runs, False)
    results["vector-assoc"] = timed(assoc_vector_all, runs, False)
    return results


def main():
    tsl = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "build", "release", "repl", "tsl")
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    print(f"CPU: {cpu_model()}; CPython {sys.version.split()[0]}; median of {runs} runs; N = {n}")
    t_small, t_large = tsl_timings(tsl, "persistent-collections.tsl", n, runs), tsl_timings(tsl, "persistent-collections.tsl", 10 * n, runs)
    d_small, d_large = python_times(n, runs, False), python_times(10 * n, runs, False)
    p_small, p_large = python_times(n // 10, runs, True), python_times(n, runs, True)
    header = (f"{'workload':13} {'TSL N':>9} {'TSL 10N':>9} {'growth':>6}   {'pyrsistent 10N':>14} {'growth':>6} "
              f"{'TSL/pyr':>7}   {'dict/list 10N':>13} {'TSL/dict':>8}")
    print(header)
    for name in ("map-assoc", "map-get", "map-dissoc", "vector-conj", "vector-nth", "vector-assoc"):
        ts, tl = t_small[name], t_large[name]
        ps, pl = p_small[name] * 10, p_large[name] * 10  # at N/10 and N, scaled to N and 10 N
        dl = d_large[name]
        print(f"{name:13} {ts * 1e3:7.1f}ms {tl * 1e3:7.1f}ms {tl / ts:6.1f}   {pl * 1e3:12.1f}ms {pl / ps:6.1f} "
              f"{tl / pl:7.2f}   {dl * 1e3:11.1f}ms {tl / dl:8.2f}")
    print("growth = time(10 N) / time(N), 10 if linear; ratios below 1 mean TSL is faster")


if __name__ == "__main__":
    main()
