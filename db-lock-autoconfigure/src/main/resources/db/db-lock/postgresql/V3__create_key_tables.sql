-- The transaction mode: ${table}_keys, one row per key it has locked, which it locks
-- (SELECT ... FOR UPDATE); rows stay after the lock ends. The fencing tokens of the
-- transaction and named modes come from ${table}_token_seq (the lease tokens' sequence),
-- drawn when read: a sequence is not transactional, so that a holder whose transaction
-- rolls back, or who dies, never gives a token back.
CREATE TABLE ${table}_keys (
    lock_key VARCHAR(255) NOT NULL PRIMARY KEY
);
