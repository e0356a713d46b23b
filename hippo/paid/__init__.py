"""Paid calls: one guarded request to a chat endpoint, and the spend guard every paid call passes."""
