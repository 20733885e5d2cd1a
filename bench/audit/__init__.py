"""The audit validated where the truth is known (issue 15, item 4): entities
removed from a complete corpus at random, the audit and cleanlab asked to
find them again, and the suspects restored (scripts/audit_validation.py)."""
