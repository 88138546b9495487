-- A refused attempt marks a held key as wanted (the database's time), so that its holder can
-- give it up at the end of a local turn.
ALTER TABLE ${table} ADD COLUMN wanted_at TIMESTAMPTZ NULL;
