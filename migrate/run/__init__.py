"""The scheduler: a run's settings, paths become jobs, jobs run over worker processes
with a progress bar, and each job's cached file report is encoded and decoded here.

Imports the project, the store, the report (for what a cached entry pre-renders), the
engine and the rules; nothing here parses the command line.
"""
