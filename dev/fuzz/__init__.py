"""The fuzz campaign (``python3 tools/dev.py fuzz``): ``generate`` makes cases,
``worker`` runs them in a child process, ``campaign`` pools workers, classifies,
minimises and reports. Scripts, not installed."""
