"""The rulebook: every rule the controller enforces, each in one place with its clause.

Texts: Indiana 68 IAC 10 (shared seeds). By subject: ``progression`` (10-1-1.1(c)-(d)),
``filing`` (10-1-1.1(e), 10-1-3, 10-1-4), ``integrity`` (10-1-6.2), ``records`` (10-6-5 and
10-8-5 (b)-(d)), ``wagers`` (10-7-5), ``house`` (the controller's own policies, which no
regulation asks for), ``odds`` (the bound on a jackpot's odds, adopted from New Jersey as
house policy and configurable) and ``software`` (the controller's check of its own software,
adopted as house policy from New York's, Mississippi's and New Jersey's texts); ``statement``
words what every surface states of the law it runs under (the jurisdiction, and demonstration
mode). Only these modules hold a clause citation or raise ``RuleViolation``; code elsewhere
calls them and never restates a limit.
"""

from controller.rules.violation import RuleViolation

__all__ = ["RuleViolation"]
