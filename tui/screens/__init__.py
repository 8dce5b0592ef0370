"""Modal dialogs: text prompts, confirmations, help."""
