"""The links in memory, kept in step with the database: the runtime that drives them.

Its parts, one subject each: ``link_memory`` (reading, checking and committing a link's
state; stale and inoperable links), ``link_readings`` (the poll path, and the tables held when
their readings cannot be recorded), ``link_commands`` (operator commands, recovery,
corrections) and ``hit_work`` (the technician's work after a hit).
"""

from __future__ import annotations

from controller.runtime.hit_work import HitWork
from controller.runtime.link_readings import LinkReadings


class LinkRuntime(HitWork, LinkReadings):
    """Every link of the floor in memory: polled, commanded and worked on after a hit."""
