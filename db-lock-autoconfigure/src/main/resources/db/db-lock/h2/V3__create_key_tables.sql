-- The transaction and named modes. ${table}_keys: one row per key locked in the
-- transaction mode, which it locks (SELECT ... FOR UPDATE); rows stay after the lock ends.
-- The transaction mode's fencing tokens come from ${table}_token_seq (the lease tokens'
-- sequence), drawn on the caller's connection: a sequence is not transactional, so that a
-- holder whose transaction rolls back, or who dies, never gives a token back.
-- ${table}_key_tokens: each key's named-mode token counter, counted in autocommit; deleting
-- a row of it restarts its key's tokens: never delete rows of keys still in use.
CREATE TABLE ${table}_keys (
    lock_key VARCHAR(255) NOT NULL PRIMARY KEY
);

CREATE TABLE ${table}_key_tokens (
    lock_key    VARCHAR(255) NOT NULL PRIMARY KEY,
    token       BIGINT       NOT NULL DEFAULT 0,
    named_token BIGINT       NOT NULL DEFAULT 0
);
