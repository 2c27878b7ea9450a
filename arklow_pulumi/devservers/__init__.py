"""Local stand-ins for cloud APIs the project calls, for tests, the demo and development."""
