"""What a long run watches of its own process: resident memory, open file descriptors,
asyncio tasks and threads; and how each moved over the run (start, end, peak, growth per
hour fitted over the samples)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["ProcessSample", "Trend", "open_fds", "rss_mb", "sample", "threads"]


def _status(field: str) -> str:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return line.split()[1]
    raise RuntimeError(f"no {field} in /proc/self/status")


def rss_mb() -> float:
    """The process's resident memory (VmRSS), in MB."""
    return int(_status("VmRSS")) / 1024


def threads() -> int:
    """The process's threads, all of them (the interpreter's and the libraries' own)."""
    return int(_status("Threads"))


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@dataclass(frozen=True)
class ProcessSample:
    at_s: float  # since the run started
    rss_mb: float
    fds: int
    tasks: int
    threads: int


def sample(at_s: float) -> ProcessSample:
    """The figures now; asyncio's tasks of the running loop."""
    return ProcessSample(
        at_s=at_s,
        rss_mb=rss_mb(),
        fds=open_fds(),
        tasks=len(asyncio.all_tasks()),
        threads=threads(),
    )


@dataclass(frozen=True)
class Trend:
    """One figure over a run: at its start and end, its peak, and the growth per hour of the
    least-squares line through every sample (noise in single samples averages out)."""

    name: str
    start: float
    end: float
    peak: float
    per_hour: float

    @classmethod
    def of(cls, name: str, samples: Sequence[ProcessSample], start: ProcessSample,
           end: ProcessSample) -> Trend:  # fmt: skip
        def value(s: ProcessSample) -> float:
            return float(getattr(s, name))

        xs = [s.at_s / 3600 for s in samples]
        ys = [value(s) for s in samples]
        n = len(xs)
        slope = 0.0
        if n >= 2:
            mx, my = sum(xs) / n, sum(ys) / n
            var = sum((x - mx) ** 2 for x in xs)
            if var > 0:
                slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var
        return cls(name, value(start), value(end), max([*ys, value(start), value(end)]), slope)

    @property
    def growth(self) -> float:
        return self.end - self.start
