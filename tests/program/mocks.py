"""Pulumi unit-test mocks that record every resource a program declares."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pulumi
from pulumi.runtime import settings
from pulumi.runtime.mocks import MockMonitor


class RecordingMonitor(MockMonitor):
    """Also records each resource's dependencies (URNs), which MockResourceArgs leaves out."""

    def __init__(self, mocks: RecordingMocks) -> None:
        super().__init__(mocks)
        self.recording = mocks

    def RegisterResource(self, request: Any) -> Any:
        self.recording.dependencies[request.name] = list(request.dependencies)
        self.recording.protected[request.name] = bool(request.protect)
        return super().RegisterResource(request)


class RecordingMocks(pulumi.runtime.Mocks):
    def __init__(self) -> None:
        self.resources: list[pulumi.runtime.MockResourceArgs] = []
        # Pulumi name -> the URNs it depends on
        self.dependencies: dict[str, list[str]] = {}
        # Pulumi name -> whether it was registered with protect=True
        self.protected: dict[str, bool] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.resources.append(args)
        outputs = dict(args.inputs)
        if args.typ.endswith(":Destination"):
            outputs["pools"] = {
                r: f"{args.inputs['arklow_name']}/{r}" for r in args.inputs["resources"]
            }
        return f"{args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[Any]]:
        return {}, []

    def of_type(self, kind: str) -> dict[str, dict[str, Any]]:
        return {r.name: r.inputs for r in self.resources if r.typ.endswith(f":{kind}")}


def _ensure_event_loop() -> None:
    try:
        loop = asyncio.get_event_loop_policy().get_event_loop()
    except RuntimeError:
        loop = None
    if loop is None or loop.is_closed():
        asyncio.set_event_loop(asyncio.new_event_loop())


@contextmanager
def mocked(config: dict[str, Any] | None = None) -> Iterator[RecordingMocks]:
    mocks = RecordingMocks()
    # The SDK schedules on the thread's current event loop; an earlier asyncio.run() (the async
    # client's tests) leaves the main thread with none, so each mocked program gets its own.
    _ensure_event_loop()
    pulumi.runtime.set_mocks(
        mocks, project="arklow", stack="dev", preview=False, monitor=RecordingMonitor(mocks)
    )
    pulumi.runtime.set_all_config(
        {k: v if isinstance(v, str) else json.dumps(v) for k, v in (config or {}).items()}
    )
    try:
        yield mocks
    finally:
        pulumi.runtime.set_all_config({})
        settings.reset_options()
