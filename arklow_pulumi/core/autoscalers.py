"""Models of the clouds' own autoscalers, pure: the ``cloud-autoscaler`` baseline of ``arklow
simulate`` and ``what-if`` (docs/simulate.md). Arklow's allocation stays; each target is scaled as
its own cloud's autoscaler would scale its group on its pool's utilization, with the documented
behaviour and defaults:

- **AWS target tracking** (an Auto Scaling group's target tracking policy): the policy's
  CloudWatch alarms scale out when the metric has stood above the target value for 3 minutes
  (3 one-minute datapoints) and scale in when it has stood below it for 15 minutes (15
  datapoints); the new capacity is what brings the metric back to its target: the
  recommendation at the tick the alarm fires. Instances still launching or warming up count
  as capacity already asked for (never asked twice).
- **GCP MIG autoscaler**: scales out at once to the recommended size; scales in only to the
  highest recommendation of its stabilization period (10 minutes by default), so a group
  serves the peak load of the last 10 minutes. New VMs' initialization period only affects its
  metric, which the model takes from the pool's demand directly.

The recommendation is the single-tick sizing at the target utilization: with utilization
``u`` a pool needs ``demand / u`` units, so ``u = 1 / (1 + headroom)`` (the default) aims at
the same spare capacity as Arklow's own rule. Every count stays within the target's [min, max].
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from arklow_pulumi.core.limits import TargetKind
from arklow_pulumi.core.policy import TargetFigures, TargetStep, bounded, plain_step

AWS_SCALE_OUT_S = 180.0  # the scale-out alarm: 3 datapoints of 1 minute
AWS_SCALE_IN_S = 900.0  # the scale-in alarm: 15 datapoints of 1 minute
GCP_STABILIZATION_S = 600.0  # the MIG autoscaler's stabilization period


@dataclass(frozen=True, slots=True, kw_only=True)
class CloudAutoscalers:
    """The parameters of both models a user may set (``arklow simulate`` options).
    ``utilization``: the target utilization of every pool (``None``: 1 / (1 + its headroom))."""

    utilization: float | None = None
    aws_scale_out_s: float = AWS_SCALE_OUT_S
    aws_scale_in_s: float = AWS_SCALE_IN_S
    gcp_stabilization_s: float = GCP_STABILIZATION_S

    def headroom(self, pool_headroom: float) -> float:
        """The headroom the pool's recommendation is sized with under these models."""
        return pool_headroom if self.utilization is None else 1.0 / self.utilization - 1.0

    @property
    def window_s(self) -> float:
        """How long the recommendations the models read must be kept."""
        return max(self.aws_scale_in_s, self.gcp_stabilization_s)


DEFAULT_AUTOSCALERS = CloudAutoscalers()


def highest_since(history: Iterable[tuple[float, int]], since: float) -> int | None:
    """The highest recommendation at or after ``since`` in ``(at, replicas)`` pairs."""
    return max((r for at, r in history if at >= since), default=None)


def cloud_step(
    models: CloudAutoscalers,
    kind: TargetKind,
    target: TargetFigures,
    history: Iterable[tuple[float, int]],
    above_since: float | None,
    now: float,
) -> tuple[TargetStep, float | None]:
    """One target's count under its cloud's autoscaler, and since when its recommendation has
    stood above its current count (``None`` when it does not). ``history``: its earlier
    recommendations as ``(at, replicas)``, kept for :attr:`CloudAutoscalers.window_s` at least
    (a decreasing sequence is enough: only the highest of a period is read);
    ``target.recommended`` is this tick's."""
    t = target
    current, rec = t.current, t.recommended
    above = None if rec <= current else (now if above_since is None else above_since)
    wanted = current
    if kind == "aws_asg":
        if above is not None and now - above >= models.aws_scale_out_s:
            wanted = rec
        elif rec < current and now >= models.aws_scale_in_s:
            # the scale-in alarm: every recommendation of its period below the current count
            highest = highest_since(history, now - models.aws_scale_in_s)
            if highest is None or highest < current:
                wanted = rec
    elif rec > current:
        wanted = rec
    elif rec < current:
        highest = highest_since(history, now - models.gcp_stabilization_s)
        wanted = min(current, rec if highest is None or highest < rec else highest)
    return _bounded(t, wanted, now), above


def _bounded(t: TargetFigures, wanted: int, now: float) -> TargetStep:
    """The wanted count within the target's bounds, with its reason: the plain rule's when the
    model goes to the recommendation, else ``stabilized`` (an alarm period or the stabilization
    period still holds it), as the scale policy bounds and names its own."""
    if wanted == t.recommended:
        return plain_step(t, now)
    return bounded(t, wanted, "stabilized", now)
