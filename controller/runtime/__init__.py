"""The runtime: the links in memory, the poller, the commit, locks, the change feed, the clock.

It applies the pure core to what the tables report and commits the result through storage.
"""
