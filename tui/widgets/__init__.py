"""The main screen's widgets."""
