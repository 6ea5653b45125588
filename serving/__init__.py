"""The parts of the web tier that an existing server does not give this app (README.md beside this file)."""
