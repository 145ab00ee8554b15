"""Summaries, plots and HTML reports."""
