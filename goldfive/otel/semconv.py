"""The OpenTelemetry names goldfive's traces use, in one place.

Pinned: the GenAI semantic conventions of OpenTelemetry semantic-conventions v1.41.1 (gen-ai
agent spans: ``invoke_workflow``, ``invoke_agent``, ``execute_tool``; inference: ``chat``; the
``gen_ai.usage.*`` attributes), plus the ``plan`` operation from the GenAI conventions'
own repository (open-telemetry/semantic-conventions-genai, "Add plan operation", #97, not yet
in a numbered release). Written as strings, not imported from opentelemetry-semantic-conventions,
whose GenAI module is incubating and moves between releases.
"""

from __future__ import annotations

SEMCONV_VERSION = "1.41.1+genai-plan"
SCHEMA_URL = "https://opentelemetry.io/schemas/1.41.1"

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
CONVERSATION_ID = "gen_ai.conversation.id"
WORKFLOW_NAME = "gen_ai.workflow.name"
AGENT_NAME = "gen_ai.agent.name"
AGENT_ID = "gen_ai.agent.id"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
ERROR_TYPE = "error.type"
#: What Langfuse and Phoenix group traces by (OpenTelemetry's session.id; OpenInference's too).
SESSION_ID = "session.id"
#: OpenInference's span kind (CHAIN, AGENT, TOOL, LLM): how Phoenix draws a span. Set next to
#: the GenAI attributes, never instead of them.
OPENINFERENCE_KIND = "openinference.span.kind"

OP_WORKFLOW = "invoke_workflow"
OP_PLAN = "plan"
OP_AGENT = "invoke_agent"
OP_TOOL = "execute_tool"
OP_CHAT = "chat"

#: Model name prefixes -> gen_ai.provider.name well-known values.
PROVIDERS = (
    (("gpt-", "o1", "o3", "o4", "chatgpt", "openai"), "openai"),
    (("claude", "anthropic"), "anthropic"),
    (("gemini", "models/gemini", "google"), "gcp.gemini"),
    (("mistral", "codestral"), "mistral_ai"),
    (("deepseek",), "deepseek"),
    (("grok",), "x_ai"),
)


def provider_of(model: str) -> str:
    """The provider a model name says (its best guess; "" when it says nothing)."""
    name = model.lower()
    for prefix in ("openai:", "anthropic:", "google-gla:", "google-vertex:", "openai/", "anthropic/"):
        if name.startswith(prefix):
            return {"openai": "openai", "anthropic": "anthropic"}.get(prefix.rstrip(":/"), "gcp.gemini")
    for prefixes, provider in PROVIDERS:
        if name.startswith(prefixes):
            return provider
    return ""
