"""A memory system behind an MCP server: the adapter that evaluates one through a mapping file
(`adapter.McpSystem`, `--system mcp:…`; the mapping's model in `mapping`, its templates in
`templates`, its check against the server's tool schemas in `schema`), the client session
(`session`, with `processes` for stdio servers), the server that serves any system over MCP
(`server`, `evalkit serve --mcp`) and `evalkit mcp inspect` (`inspection`). Needs the `mcp`
extra."""
