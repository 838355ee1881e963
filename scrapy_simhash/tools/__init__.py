"""Offline tools: functions behind the command line that work on whole feeds, indexes and
archives rather than one page at a time."""
