"""Hindsight's MCP server: the agent API as Model Context Protocol tools (official ``mcp`` SDK).

- ``operations``: what each tool does, over the REST API's own services, selectors and serializers;
- ``tools``: the MCP server, its tools' schemas and descriptions, and the call wrapper that runs an
  operation in a worker thread and turns API errors into tool errors;
- ``http``: Streamable HTTP at ``/mcp/`` (token authentication), mounted beside the Django site by
  ``config.asgi``; ``manage.py mcp_stdio`` serves the same tools over stdio.
"""
