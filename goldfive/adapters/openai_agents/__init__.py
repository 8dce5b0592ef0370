"""The OpenAI Agents SDK adapter: a goldfive task is one ``Runner.run`` of the user's ``Agent``.

``goldfive run mod:agent`` and ``Runner(agent=agent)`` build ``OpenAIAgentsAdapter(agent)`` for an
``agents.Agent`` (see ``goldfive.adapters.frameworks``). Install with
``pip install 'goldfive[openai-agents]'``; the core never imports this package.
"""

from goldfive.adapters.openai_agents.adapter import FRAMEWORK, OpenAIAgentsAdapter

__all__ = ["FRAMEWORK", "OpenAIAgentsAdapter"]
