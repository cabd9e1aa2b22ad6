"""The command line (click): options, help texts, exit codes. Everything a command does
is asked of the floors below (run, project, report, parity, api)."""
