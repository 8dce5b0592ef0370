"""Claude Code as a goldfive agent, through the Claude Agent SDK:

    goldfive run examples.claude_agent:agent --goal "tidy the repo" --plan examples/claude_plan.json

``agent`` is plain ``ClaudeAgentOptions``: goldfive runs each task as one query on the run's
Claude Code session. Every permission Claude Code asks for (here: any Bash command that is not
read-only, any file edit) waits in the approvals pane under its tool_use id; ``a`` allows it,
``e`` edits its input first, ``x`` denies it with a reason Claude reads. Needs
``pip install 'goldfive[claude-agent-sdk]'`` and an ``ANTHROPIC_API_KEY`` (or another way of
signing Claude Code in); the tests run the same code offline against a scripted Messages API.
"""

from __future__ import annotations

from claude_agent_sdk import ClaudeAgentOptions

agent = ClaudeAgentOptions(
    system_prompt={"type": "preset", "preset": "claude_code"},
    allowed_tools=["Read", "Grep", "Glob"],  # reading needs nobody; everything else asks
    max_turns=30,
)
