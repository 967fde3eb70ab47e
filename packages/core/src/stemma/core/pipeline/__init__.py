"""The Pipeline front door: steps over many artifacts, dispatched, executed and committed."""
