"""Who leads, and what a leader may do under its lease: the electors (SQLite and PostgreSQL), the
loop leadership owns, and the fencing of every write and resize by the lease."""
