"""A plain M/G/4 FIFO queue in SimPy, the yardstick BenchmarkStageAgainstSimPy
times the schedule stage against (docs/benchmarks.md).

Usage: simpy_mg4.py JOBS

JOBS jobs arrive as a Poisson process of rate 1 and queue first come, first
served for one of 4 identical servers; each job's service time is lognormal
with mean 3.2 (coefficient of variation 1), so the servers are 80% busy, the
load the stage's benchmark offers its cluster. Every draw is seeded. Nothing
is written but one line at the end (the jobs served and their mean wait),
which the benchmark checks: the queue is timed with no output, the cheapest
SimPy simulation of it there is.
"""

import math
import random
import sys

import simpy

SERVERS = 4
MEAN_SERVICE = 3.2
CV = 1.0


def main():
    jobs = int(sys.argv[1])
    rng = random.Random(1)
    sigma = math.sqrt(math.log(1 + CV * CV))
    mu = math.log(MEAN_SERVICE) - sigma * sigma / 2
    env = simpy.Environment()
    servers = simpy.Resource(env, capacity=SERVERS)
    served = [0, 0.0]  # jobs served, their summed wait

    def job(service):
        arrived = env.now
        with servers.request() as req:
            yield req
            served[1] += env.now - arrived
            yield env.timeout(service)
        served[0] += 1

    def source():
        for _ in range(jobs):
            yield env.timeout(rng.expovariate(1.0))
            env.process(job(rng.lognormvariate(mu, sigma)))

    env.process(source())
    env.run()
    print("served %d mean_wait %.6f" % (served[0], served[1] / max(served[0], 1)))


if __name__ == "__main__":
    main()
