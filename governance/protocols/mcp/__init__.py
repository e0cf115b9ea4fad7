"""The MCP gateway (SPEC §14): agents' tool calls over MCP, through the same policy as a text."""
