"""The runtime controller: the tick loop, its HTTP API and metrics, and the process wiring."""
