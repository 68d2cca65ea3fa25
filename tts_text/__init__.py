"""Text handling shared by the client library and the speech server: where sentences end.

Imports nothing of either side, so both can depend on it (one set of sentence ends, one
abbreviation list: the server splits a response's text exactly as an agent chunks its tokens).
"""
