from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..config import Workflow
from ..executor import Executor, LocalExecutor
from ..workspace import Workspace, digest


@dataclass
class Context:
    ws: Workspace
    executor: Executor = field(default_factory=lambda: LocalExecutor(1))
    force: bool = False

    @property
    def wf(self) -> Workflow:
        return self.ws.workflow


class Stage:
    name = "stage"
    # stages its command runs first, as one step (the build command finds the candidates)
    runs_after: tuple[type["Stage"], ...] = ()

    def key(self, ctx: Context) -> str:
        """What this stage's result depends on: upstream keys and its own settings."""
        raise NotImplementedError

    def run(self, ctx: Context) -> dict[str, Any]:
        raise NotImplementedError


def chain(*parts: Any) -> str:
    return digest(list(parts))
