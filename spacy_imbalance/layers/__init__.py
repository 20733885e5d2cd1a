"""Custom thinc layers of the architectures in ``models/``, one layer per module."""
