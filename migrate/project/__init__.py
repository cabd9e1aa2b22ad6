"""The whole repository: which files to analyse, its config, the project index's pass and
its stored resolution, backend pins, notebook facts, git state and the baseline file.

Imports the engine and the store only; nothing here runs rules or renders a report.
"""
