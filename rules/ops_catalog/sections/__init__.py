"""The ops catalog's entries, one data-only module per section (see ``_table.SECTIONS``)."""
