"""Adapters to the agent frameworks people already use.

Each adapter is its own module, imported only when asked for (``import threadline`` imports
none of them, and none imports its framework until it is imported itself):

- [`threadline.interop.pydantic_ai`][threadline.interop.pydantic_ai]: ``to_pydantic_ai`` /
  ``from_pydantic_ai`` for pydantic-ai ``ModelMessage`` lists
  (``pip install "threadline[pydantic-ai]"``);
- [`threadline.interop.langchain`][threadline.interop.langchain]: ``to_langchain`` /
  ``from_langchain`` for LangChain ``BaseMessage`` lists and ``ThreadlineChatMessageHistory``
  (``pip install "threadline[langchain]"``);
- [`threadline.interop.openai_agents`][threadline.interop.openai_agents]:
  ``ThreadlineSession``, an OpenAI Agents SDK ``Session`` over any threadline store
  (``pip install "threadline[openai-agents]"``);
- [`threadline.interop.vercel`][threadline.interop.vercel]: ``from_ui_messages`` /
  ``to_ui_messages`` for the Vercel AI SDK's ``UIMessage`` JSON (no extra needed);
- [`threadline.interop.mcp`][threadline.interop.mcp]: ``tool_from_mcp``, ``result_from_mcp`` /
  ``result_to_mcp`` and MCP sampling (``from_sampling_messages`` /
  ``to_create_message_result``) for the Model Context Protocol (``pip install "threadline[mcp]"``).
- [`threadline.interop.otel`][threadline.interop.otel]: ``to_otel_messages`` /
  ``from_otel_messages`` for the OpenTelemetry GenAI message attributes (no extra needed), and
  ``record_model_call``, a span per model call (``pip install "threadline[otel]"``).

The law every adapter keeps: ``from_x(to_x(m))`` has the same content as ``m`` for everything
both sides carry; what one side cannot carry is listed on the adapter's docs page and tested.
"""
