"""Inputs for the scale-policy benchmark (``bench/bench_scaling.py``): one topology and two traces.

Topology: 12 destinations, 40 lanes, 3 resources (gpu, cpu, llm), 4 shared pools:

- ``gpu-east`` (gpu): members ``t00``…``t05``, an Auto Scaling group of 8-unit nodes (2…30);
- ``gpu-west`` (gpu): members ``t06``…``t11``, a group of 4-unit nodes (2…60);
- ``cpu`` (cpu): every destination, 64 static units and a group of 16-unit nodes (1…40);
- ``llm`` (llm): ``t00``…``t03``, a fixed quota of 1,000 units and no group: the **coupled pool**.
  Their lanes cost gpu 1 + cpu 0.5 + llm 10, so the quota lets 100 gpu units of their work
  through: ``gpu-east`` must not buy replicas for more.

Every other lane costs gpu 1 + cpu 0.5. Demand is diurnal (each lane its own peak hour), with
noise on every row:

- **quiet lanes** (35 of them): 1…6 units, with mean-reverting noise of 5 % (week) or 10 % (noisy
  day) standard deviation;
- **noisy neighbours** (``t04/l0``, ``t07/l1``, ``t10/l0``): 10…40 units, 15 % noise, bursts of 5
  to 45 minutes at 2…4× about every four hours, and one-minute blips at 3× about every six hours;
  on day 4 of the week they ramp past every group's max for three hours;
- **flash crowd** (``t02/l0``, coupled through ``llm``, and ``t08/l0``): 20 minutes at 10× once a
  day, at a random time.

Traces: ``week`` has a row per lane every minute for 7 days (1-minute ticks); ``noisy_day`` a row
per lane every 5 minutes for one day, with twice the quiet noise (5-minute ticks).
"""

from __future__ import annotations

import csv
import math
import random
from pathlib import Path
from typing import Any

DESTINATIONS = 12
NOISY = ("t04/l0", "t07/l1", "t10/l0")
FLASH = ("t02/l0", "t08/l0")
COUPLED_DESTINATIONS = ("t00", "t01", "t02", "t03")


def lanes_of(d: int) -> int:
    return 4 if d < 4 else 3


def lane_keys() -> list[str]:
    return [f"t{d:02d}/l{k}" for d in range(DESTINATIONS) for k in range(lanes_of(d))]


def quiet_lanes() -> list[str]:
    return [key for key in lane_keys() if key not in NOISY and key not in FLASH]


def topology_document() -> dict[str, Any]:
    destinations = []
    for d in range(DESTINATIONS):
        name = f"t{d:02d}"
        coupled = name in COUPLED_DESTINATIONS
        resources = ["gpu", "cpu", "llm"] if coupled else ["gpu", "cpu"]
        cost = {"gpu": 1.0, "cpu": 0.5, **({"llm": 10.0} if coupled else {})}
        lanes = []
        for k in range(lanes_of(d)):
            key = f"{name}/l{k}"
            limit = 400.0 if key in NOISY or key in FLASH else 64.0
            weight = 1.0 if key in NOISY else 2.0
            lanes.append({"name": f"l{k}", "limit": limit, "weight": weight, "cost": cost})
        destinations.append({"name": name, "resources": resources, "lanes": lanes})
    east = [f"t{d:02d}" for d in range(6)]
    west = [f"t{d:02d}" for d in range(6, 12)]

    def asg(name: str, units: float, lo: int, hi: int, replicas: int) -> dict[str, Any]:
        return {
            "kind": "aws_asg",
            "name": name,
            "region": "us-east-1",
            "min_replicas": lo,
            "max_replicas": hi,
            "units_per_replica": units,
            "replicas": replicas,
        }

    pools = [
        {
            "name": "gpu-east",
            "resource": "gpu",
            "members": east,
            "scale_targets": [asg("gpu-east-asg", 8.0, 2, 30, 10)],
        },
        {
            "name": "gpu-west",
            "resource": "gpu",
            "members": west,
            "scale_targets": [asg("gpu-west-asg", 4.0, 2, 60, 20)],
        },
        {
            "name": "cpu",
            "resource": "cpu",
            "members": east + west,
            "capacity": 64.0,
            "scale_targets": [asg("cpu-asg", 16.0, 1, 40, 2)],
        },
        {
            "name": "llm",
            "resource": "llm",
            "members": list(COUPLED_DESTINATIONS),
            "capacity": 1000.0,
        },
    ]
    return {"destinations": destinations, "pools": pools}


def _diurnal(hours: float, low: float, high: float, peak: float) -> float:
    phase = math.cos((hours % 24 - peak) / 24 * 2 * math.pi)
    return low + (high - low) * (phase + 1) / 2


class _Noise:
    """Mean-reverting noise (AR(1)): ``x' = rho × x + N(0, sigma)``, a factor ``1 + x`` kept
    within [0.2, 3]; demand is queued and in-flight work, so it drifts rather than jumping."""

    def __init__(self, rng: random.Random, sigma: float, rho: float) -> None:
        self.rng, self.sigma, self.rho, self.x = rng, sigma, rho, 0.0

    def __call__(self) -> float:
        self.x = self.rho * self.x + self.rng.gauss(0.0, self.sigma)
        return min(3.0, max(0.2, 1.0 + self.x))


def _episodes(
    rng: random.Random, days: int, per_hour: float, shortest: float, longest: float, low: float,
    high: float,
) -> list[tuple[float, float, float]]:  # fmt: skip
    """Random ``(start, end, factor)`` episodes: Poisson starts, log-uniform lengths."""
    out, t = [], 0.0
    while True:
        t += rng.expovariate(per_hour / 3600)
        if t >= days * 86400:
            return out
        length = math.exp(rng.uniform(math.log(shortest), math.log(longest)))
        out.append((t, t + length, rng.uniform(low, high)))


def write_trace(
    path: Path, *, days: int, every_s: int, quiet_noise: float, seed: int, episodes: float = 1.0
) -> int:
    """Write one trace (see the module doc); returns its row count. ``episodes`` scales how
    often the noisy neighbours burst and blip (1: as the module doc says)."""
    rng = random.Random(seed)
    keys = lane_keys()
    peaks = {key: rng.uniform(0, 24) for key in keys}
    sizes = {key: (10.0, 40.0) if key in NOISY else (1.0, 6.0) for key in keys}
    rho = 0.9 ** (every_s / 60)  # the same drift per minute whatever the row interval
    noise = {
        key: _Noise(rng, (0.15 if key in NOISY else quiet_noise) * math.sqrt(1 - rho**2), rho)
        for key in keys
    }
    flash_at = {(key, day): rng.uniform(1, 23) * 3600 for key in FLASH for day in range(days)}
    # noisy neighbours: bursts (5 to 45 minutes at 2-4x, about one every four hours) and blips (one
    # minute at 3x, about one every six hours)
    bursts = {key: _episodes(rng, days, 0.25 * episodes, 300, 2700, 2, 4) for key in NOISY}
    blips = {key: _episodes(rng, days, episodes / 6, 60, 61, 3, 3) for key in NOISY}
    ramp_start, ramp_end = 3 * 86400 + 10 * 3600, 3 * 86400 + 13 * 3600  # day 4, 10:00-13:00
    rows = 0
    with path.open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle, lineterminator="\n")
        out.writerow(["time", "lane", "demand"])
        for t in range(0, days * 86400 + 1, every_s):
            hours = t / 3600
            for key in keys:
                low, high = sizes[key]
                value = _diurnal(hours, low, high, peaks[key]) * noise[key]()
                if key in NOISY:
                    for episodes in (bursts[key], blips[key]):
                        value *= next((f for a, b, f in episodes if a <= t < b), 1.0)
                    if days > 1 and ramp_start <= t < ramp_end:
                        value = max(value, 400.0 * (t - ramp_start) / (ramp_end - ramp_start))
                if key in FLASH:
                    start = flash_at[(key, int(t // 86400) % days)]
                    if start <= t % 86400 < start + 1200:
                        value *= 10
                out.writerow([t, key, round(value, 3)])
                rows += 1
    return rows


def write_inputs(folder: Path) -> dict[str, tuple[Path, Path, float]]:
    """The topology (YAML) and both traces in ``folder``: ``{name: (topology, trace, tick)}``."""
    import yaml

    folder.mkdir(parents=True, exist_ok=True)
    topology = folder / "scaling.yaml"
    topology.write_text(yaml.safe_dump(topology_document(), sort_keys=False), encoding="utf-8")
    week, day = folder / "week.csv", folder / "noisy_day.csv"
    write_trace(week, days=7, every_s=60, quiet_noise=0.05, seed=21)
    write_trace(day, days=1, every_s=300, quiet_noise=0.10, seed=22)
    return {"week": (topology, week, 60.0), "noisy_day": (topology, day, 300.0)}
