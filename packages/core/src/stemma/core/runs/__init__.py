"""Run views the command line and the dashboard share: run rows, lookup, watching, stale runs."""
