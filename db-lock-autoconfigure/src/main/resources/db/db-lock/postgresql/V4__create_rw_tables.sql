-- The read/write modes. ${table}_rw: one row per holder, reader ('R') or writer ('W'), each
-- with its own lease and a fencing token from ${table}_token_seq (the lease tokens'
-- sequence), drawn when the row is inserted (a writer's row is inserted only once no reader
-- holds the key), so that tokens increase per key across readers and writers.
-- ${table}_rw_intents: the one writer of a key that waits for it or holds it, with a lease
-- renewed while it waits; a live intent keeps new readers out (write preference).
CREATE TABLE ${table}_rw (
    lock_key    VARCHAR(255) NOT NULL,
    owner       VARCHAR(128) NOT NULL,
    token       BIGINT       NOT NULL,
    kind        CHAR(1)      NOT NULL,
    acquired_at TIMESTAMPTZ  NOT NULL,
    expires_at  TIMESTAMPTZ  NOT NULL,
    PRIMARY KEY (lock_key, owner)
);

CREATE INDEX ${table}_rw_expires_idx ON ${table}_rw (expires_at);

CREATE TABLE ${table}_rw_intents (
    lock_key   VARCHAR(255) NOT NULL PRIMARY KEY,
    owner      VARCHAR(128) NOT NULL,
    expires_at TIMESTAMPTZ  NOT NULL
);

CREATE INDEX ${table}_rw_intents_expires_idx ON ${table}_rw_intents (expires_at);
