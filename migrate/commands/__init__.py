"""The application: the command line and what its commands run.

``cli`` parses options and hands a run to ``runner`` (files found by ``discover``, results
kept by ``cache``, configuration from ``config``); ``check``/``baseline``/``merge`` and the
feature commands (``convert_weights``, ``apply_parity``) sit beside it. Commands may use
the engine, the rules, the reports and parity; the engine, the rules and parity never
import them.
"""
