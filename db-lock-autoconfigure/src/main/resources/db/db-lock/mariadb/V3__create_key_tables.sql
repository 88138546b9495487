-- The transaction mode: ${table}_keys, one row per key it has locked, which it locks
-- (SELECT ... FOR UPDATE); rows stay after the lock ends. The fencing tokens of the
-- transaction and named modes come from ${table}_keys_token_seq (the lease tokens come from
-- AUTO_INCREMENT), drawn when read: a sequence is not transactional, so that a holder whose
-- transaction rolls back, or who dies, never gives a token back.
CREATE TABLE ${table}_keys (
    lock_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    PRIMARY KEY (lock_key)
) ENGINE = InnoDB;

-- INCREMENT BY 0: by @@auto_increment_increment (1 on a single server); the only form a Galera
-- node accepts with a cache (the migration must run there, where the lease mode works)
CREATE SEQUENCE ${table}_keys_token_seq INCREMENT BY 0;
