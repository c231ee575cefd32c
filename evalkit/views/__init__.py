"""Views read saved results, they never run: frames (the DataFrames API), tables and charts (the
report notebooks), styles (their colours) and the console summaries."""
