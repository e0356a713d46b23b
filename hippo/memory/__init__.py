"""The Brain's domain: a memory's record, its types, Brain operations over the store, the audit log, supersession chains, conflicts, validity in time and the import screen."""
