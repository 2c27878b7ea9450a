"""What a scrape of the controller holds: its sample names and each one's label names."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

# Labels Prometheus itself puts on every series it scrapes.
TARGET_LABELS = frozenset({"job", "instance"})


@dataclass(frozen=True)
class Exported:
    families: frozenset[str]
    labels: dict[str, frozenset[str]]  # sample name -> its label names

    @classmethod
    def of(cls, text: str) -> Exported:
        families, labels = set(), {}
        for family in text_string_to_metric_families(text):
            families.add(family.name)
            for sample in family.samples:
                labels[sample.name] = labels.get(sample.name, frozenset()) | frozenset(
                    sample.labels
                )
        return cls(frozenset(families), labels)

    @property
    def all_labels(self) -> frozenset[str]:
        return frozenset().union(*self.labels.values()) | TARGET_LABELS

    def family_of(self, sample: str) -> str | None:
        for suffix in ("", "_total", "_bucket", "_count", "_sum"):
            if suffix and not sample.endswith(suffix):
                continue
            base = sample[: len(sample) - len(suffix)] if suffix else sample
            if base in self.families:
                return base
        return None

    def problems(
        self, metrics: set[str], selected: dict[str | None, set[str]], grouping: set[str]
    ) -> list[str]:
        """What an expression names that this scrape does not have."""
        found = [f"metric {m}" for m in sorted(metrics) if m not in self.labels]
        for metric, names in selected.items():
            allowed = self.all_labels if metric is None else self.labels.get(metric, frozenset())
            found += [f"label {n} on {metric}" for n in sorted(names - allowed - TARGET_LABELS)]
        found += [f"label {n}" for n in sorted(grouping - self.all_labels)]
        return found
