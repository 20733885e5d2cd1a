"""Trainable components (factories), one module each."""
