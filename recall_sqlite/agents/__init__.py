"""What any coding agent reaches the store through, without a host of its own (issue 34):

mcp_server.py  `recall-sqlite mcp`: an MCP server over stdio (the official `mcp` SDK), one
               tool per library call, each answering answers.py's shape; the client
               configs `--print-config` prints
kept.py        the read-only store kept open between the server's reads, while nothing a
               fresh open would see differently has changed
"""
