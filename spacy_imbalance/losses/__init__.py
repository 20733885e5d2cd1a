"""Token and span losses as thinc ``Loss`` classes (``thinc_losses``)."""
