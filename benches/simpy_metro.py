"""The seed-000 metro-cluster study written in plain SimPy 4, as a speed yardstick.

This is the same model as the Rust engine's metro study, written the way a SimPy
user would write it: one process per outstanding I/O slot, ``simpy.Resource`` for
every FIFO transmitter and for the arrays' flash servers, ``env.timeout`` for
every delay. Time is integer nanoseconds. It exists so ``benches/`` can compare
simulated I/O completions per wall-clock second of the two engines on the same
model; it is not part of sanlab.

Model (Hosterman 2018, "Latency-based PSP in ESXi 6.7 Update 1: A test drive"):

* one VM, closed loop, ``IODEPTH`` (32) outstanding 32 KiB writes; a new write is
  issued as soon as one completes;
* 20 paths: 10 host<->local array (50 us one way), 7 host<->remote array (1 ms),
  3 host<->remote array "slow" (1.5 ms); every path link is 16 Gb/s per
  direction;
* a frame of B bytes holds its direction's transmitter for B*8/bandwidth
  (FIFO), then propagates for the link's one-way latency, i.e.
  ``arrival = max(now, link_free) + tx_time + latency``. Command, transfer-ready,
  status and replication-ack frames are 0 bytes; only data frames have a tx time;
* a write takes Hosterman 2018's six steps: (1) command host->array, (2) transfer
  ready array->host, (3) data host->array, (4) the receiving array forwards the
  data to its peer over the inter-array link (1 ms one way, 10 Gb/s per
  direction) while storing it locally, the peer stores it and (5) acks back
  over the inter-array link, (6) once both the local store and the peer's ack
  are done, status array->host;
* flash write service ("NVRAM ack"): fixed 20 us on one of 64 parallel servers
  per array;
* path selection: round robin switching path after every I/O (ESXi RR
  ``iops=1``) over all 20 paths (``rr_iops1``) or over the 10 local paths only
  (``alua_rr``, the preferred-array ALUA case).

There is no warm-up: the 32 writes are issued at t=0 and every write completed
by the end of the simulated duration counts. The model has no randomness; the
``seed`` argument is accepted so the signature matches the engine's.

Run:  .venv/bin/python benches/simpy_metro.py --variant rr_iops1 --duration 10
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import simpy

# --- scenario constants (Hosterman 2018) -------------------------------------------

NS_PER_US = 1_000
NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000

IODEPTH = 32
IO_BYTES = 32 * 1024

PATH_GROUPS = (  # (group name, number of paths, one-way latency, array served)
    ("local", 10, 50 * NS_PER_US, "local"),
    ("remote", 7, 1 * NS_PER_MS, "remote"),
    ("remote_slow", 3, 1_500 * NS_PER_US, "remote"),
)
PATH_BANDWIDTH_BPS = 16_000_000_000

INTER_ARRAY_LATENCY_NS = 1 * NS_PER_MS
INTER_ARRAY_BANDWIDTH_BPS = 10_000_000_000

FLASH_SERVERS = 64
FLASH_WRITE_NS = 20 * NS_PER_US

VARIANTS = {
    "rr_iops1": ("local", "remote", "remote_slow"),  # RR iops=1 over all 20 paths
    "alua_rr": ("local",),  # RR iops=1 over the active-optimized (local) paths
}


def tx_time_ns(nbytes: int, bandwidth_bps: int) -> int:
    """Serialisation time of a frame, rounded up to a whole nanosecond."""
    return -(-nbytes * 8 * NS_PER_S // bandwidth_bps)


# --- components ----------------------------------------------------------------


class Link:
    """One direction of a link: a FIFO transmitter followed by propagation delay."""

    def __init__(self, env: simpy.Environment, latency_ns: int, bandwidth_bps: int):
        self.env = env
        self.latency_ns = latency_ns
        self.bandwidth_bps = bandwidth_bps
        self.transmitter = simpy.Resource(env, capacity=1)

    def send(self, nbytes: int):
        with self.transmitter.request() as req:
            yield req
            yield self.env.timeout(tx_time_ns(nbytes, self.bandwidth_bps))
        yield self.env.timeout(self.latency_ns)


class Array:
    """A flash array in an active-active pair."""

    def __init__(self, env: simpy.Environment, name: str):
        self.env = env
        self.name = name
        self.flash = simpy.Resource(env, capacity=FLASH_SERVERS)
        self.peer: Array | None = None
        self.to_peer: Link | None = None  # inter-array link, this array -> peer

    def store(self):
        with self.flash.request() as req:
            yield req
            yield self.env.timeout(FLASH_WRITE_NS)

    def replicate(self, nbytes: int):
        yield from self.to_peer.send(nbytes)  # (4) forward the data to the peer
        yield from self.peer.store()
        yield from self.peer.to_peer.send(0)  # (5) the peer's ack

    def write(self, nbytes: int):
        local = self.env.process(self.store())
        remote = self.env.process(self.replicate(nbytes))
        yield local & remote


class Path:
    """A host port -> array port path: one link each way, and the array behind it."""

    def __init__(self, env: simpy.Environment, name: str, group: str, latency_ns: int, array: Array):
        self.name = name
        self.group = group
        self.array = array
        self.to_array = Link(env, latency_ns, PATH_BANDWIDTH_BPS)
        self.to_host = Link(env, latency_ns, PATH_BANDWIDTH_BPS)

    def write(self, nbytes: int):
        yield from self.to_array.send(0)  # (1) command
        yield from self.to_host.send(0)  # (2) transfer ready
        yield from self.to_array.send(nbytes)  # (3) data
        yield from self.array.write(nbytes)  # (4)+(5) replicate and store
        yield from self.to_host.send(0)  # (6) status


class RoundRobin:
    """ESXi VMW_PSP_RR with iops=1: the next path after every I/O."""

    def __init__(self, paths: list[Path]):
        self.paths = paths
        self.next_index = 0

    def select(self) -> Path:
        path = self.paths[self.next_index]
        self.next_index = (self.next_index + 1) % len(self.paths)
        return path


class Stats:
    def __init__(self):
        self.ios = 0
        self.count = {name: 0 for name, *_ in PATH_GROUPS}
        self.latency_ns = {name: 0 for name, *_ in PATH_GROUPS}

    def record(self, group: str, latency_ns: int):
        self.ios += 1
        self.count[group] += 1
        self.latency_ns[group] += latency_ns

    def mean_ms(self, group: str) -> float:
        if self.count[group] == 0:
            return math.nan
        return self.latency_ns[group] / self.count[group] / NS_PER_MS


def io_slot(env: simpy.Environment, psp: RoundRobin, stats: Stats):
    """One of the VM's IODEPTH outstanding I/Os: issue, wait, record, issue again."""
    while True:
        path = psp.select()
        start = env.now
        yield from path.write(IO_BYTES)
        stats.record(path.group, env.now - start)


def build(env: simpy.Environment, variant: str) -> RoundRobin:
    local = Array(env, "local")
    remote = Array(env, "remote")
    local.peer, remote.peer = remote, local
    local.to_peer = Link(env, INTER_ARRAY_LATENCY_NS, INTER_ARRAY_BANDWIDTH_BPS)
    remote.to_peer = Link(env, INTER_ARRAY_LATENCY_NS, INTER_ARRAY_BANDWIDTH_BPS)
    arrays = {"local": local, "remote": remote}

    paths = []
    for group, count, latency_ns, array in PATH_GROUPS:
        for i in range(count):
            paths.append(Path(env, f"{group}{i}", group, latency_ns, arrays[array]))
    usable = [p for p in paths if p.group in VARIANTS[variant]]
    return RoundRobin(usable)


def run(variant: str, duration_s: float, seed: int = 1) -> dict:
    """Simulate ``duration_s`` seconds of the metro study; ``seed`` is unused (no randomness)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {', '.join(VARIANTS)}")
    if not duration_s > 0:
        raise ValueError(f"duration_s must be > 0, got {duration_s!r}")
    duration_ns = round(duration_s * NS_PER_S)

    wall_start = time.perf_counter()
    env = simpy.Environment()
    psp = build(env, variant)
    stats = Stats()
    for _ in range(IODEPTH):
        env.process(io_slot(env, psp, stats))
    env.run(until=duration_ns)
    wall_s = time.perf_counter() - wall_start

    return {
        "ios": stats.ios,
        "iops": stats.ios / (duration_ns / NS_PER_S),
        "wall_s": wall_s,
        "lat_ms_local": stats.mean_ms("local"),
        "lat_ms_remote": stats.mean_ms("remote"),
        "lat_ms_remote_slow": stats.mean_ms("remote_slow"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=sorted(VARIANTS), default="rr_iops1")
    parser.add_argument("--duration", type=float, default=10.0, help="simulated seconds (default 10)")
    parser.add_argument("--seed", type=int, default=1, help="accepted for parity; the model is deterministic")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    args = parser.parse_args(argv)
    if not args.duration > 0:
        parser.error(f"--duration must be > 0, got {args.duration}")

    result = run(args.variant, args.duration, args.seed)
    ios_per_wall_s = result["ios"] / result["wall_s"]
    if args.json:
        out = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in result.items()}
        out.update(variant=args.variant, duration_s=args.duration, ios_per_wall_s=ios_per_wall_s)
        print(json.dumps(out))
    else:
        print(f"variant            {args.variant}")
        print(f"simulated          {args.duration:g} s")
        print(f"ios                {result['ios']}")
        print(f"iops               {result['iops']:.1f}")
        print(f"lat_ms_local       {result['lat_ms_local']:.4f}")
        print(f"lat_ms_remote      {result['lat_ms_remote']:.4f}")
        print(f"lat_ms_remote_slow {result['lat_ms_remote_slow']:.4f}")
        print(f"wall_s             {result['wall_s']:.3f}")
        print(f"ios_per_wall_s     {ios_per_wall_s:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
