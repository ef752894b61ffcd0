"""The policies of the cooperative-table demo: which parts of REVECA a robot uses.

A module of its own, without the agent's imports, so that the processes' command line (and the
world process, which runs no agent) reads the policies' names without importing the agent.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Policy:
    """Which parts of REVECA a robot uses."""

    name: str
    description: str
    validation: str = "trajectory"
    relevance: bool = True
    broadcast: bool = False
    k: int = 3


POLICIES: dict[str, Policy] = {
    p.name: p
    for p in (
        Policy("reveca", "REVECA: relevance, relative proximity, trajectory-based validation"),
        Policy("no-validation", "w/o validation: commit every plan at once", validation="never"),
        Policy(
            "always-ask", "always ask every collaborator before every plan", validation="always"
        ),
        Policy("full-comm", "broadcast perceived information before every action", broadcast=True),
        Policy(
            "distance-greedy", "w/o relevance: rank information by proximity only", relevance=False
        ),
    )
}
