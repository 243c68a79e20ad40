"""scarguard: failure memory for tool-calling AI agents."""
