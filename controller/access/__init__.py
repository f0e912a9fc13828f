"""Who may act: people and display tokens, passwords, and the duties two people share."""
