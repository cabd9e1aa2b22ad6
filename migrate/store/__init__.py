"""The signed on-disk store (docs/security.md): keys, MACs, atomic writes and pruning.

It stores bytes and JSON values for its owners; each owner (the runner's file reports,
the project's resolution, the rule catalog) keeps the codec of what it stores, so the
store knows no report format. Imports the engine only.
"""
