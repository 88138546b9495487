-- A refused reader's or writer's attempt marks the key's writer intent as wanted (the
-- database's time), so that the JVM whose writers pass the key among themselves gives it up
-- at the end of a local turn. A writer that passes the key to the next writer of its JVM
-- leaves its intent expired rather than deleted, so that the mark outlives it.
ALTER TABLE ${table}_rw_intents ADD COLUMN wanted_at TIMESTAMPTZ NULL;
