"""The Textual terminal UI for goldfive. The core (``goldfive``) never imports this package."""
