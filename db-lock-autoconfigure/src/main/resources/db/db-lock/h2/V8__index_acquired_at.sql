-- The recovery job looks for holds taken before a time, oldest first: an index, so that it
-- reads and locks those rows alone instead of scanning (and, at REPEATABLE READ, locking)
-- the whole table.
CREATE INDEX ${table}_acquired_idx ON ${table} (acquired_at);
CREATE INDEX ${table}_rw_acquired_idx ON ${table}_rw (acquired_at);
