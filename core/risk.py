"""How much harm a call can do if the agent making it has drifted from its SOUL (seed 003,
ADR 0035): the runtime guardrail refuses a high-risk call while the agent's latest guard check
failed, and lets a low-risk one through (docs/evolution.md, "The runtime guardrail").

Every REST write (a view's `risk_levels`) and every MCP tool (`McpTool.risk`) declares one;
a read is low by rule. Undeclared counts as high (fail-closed), and a test keeps anything from
relying on that."""

from enum import StrEnum


class RiskLevel(StrEnum):
    LOW = "low"  # reads, and what has no side effect
    HIGH = "high"  # writes, deletes, anything with an effect outside the call
